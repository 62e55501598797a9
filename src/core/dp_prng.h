/*
 * dp_prng.h - a fast, seedable pseudo-random generator for POST-PROCESSING only.
 *
 * xoshiro256** (Blackman & Vigna, "Scrambled linear pseudorandom number generators", 2021),
 * seeded by SplitMix64 from a 64-bit seed, or from libsodium when no seed is given.
 *
 * Use it only where the randomness touches no private data: sampling synthetic rows from noisy
 * statistics that have already been released, decoding a released cell into a value, shuffling
 * released rows.  It may be seeded because a seed there reveals nothing (PRIVACY.md, "Noise").
 * It is NOT cryptographically secure and must never decide privacy noise: that is the job of
 * dp_random / dp_sampler, which read libsodium's CSPRNG and cannot be seeded.
 *
 * Not thread-safe per generator (each caller owns its dp_prng).  Pure C: no PostgreSQL headers.
 */
#ifndef DP_PRNG_H
#define DP_PRNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct dp_prng
{
	uint64_t	s[4];			/* never all zero */
} dp_prng;

/* State = the first four SplitMix64 outputs from seed (the reference seeding of xoshiro). */
void		dp_prng_seed(dp_prng *p, uint64_t seed);

/* State from dp_random_bytes (libsodium); for unseeded (non-reproducible) post-processing. */
void		dp_prng_seed_random(dp_prng *p);

/* Next 64-bit output of xoshiro256**. */
uint64_t	dp_prng_next(dp_prng *p);

/*
 * Exactly uniform on [0, n) (Lemire's multiply-shift with rejection, no modulo bias).
 * n == 0 is read as 2^64, i.e. a uniform 64-bit word.
 */
uint64_t	dp_prng_below(dp_prng *p, uint64_t n);

/* Uniform on [0, 1): a multiple of 2^-53 (top 53 bits of one output). */
double		dp_prng_unit(dp_prng *p);

/* dst[i] = dp_prng_below(p, n) for i = 0..m-1, in that order (the same stream, one call). */
void		dp_prng_below_fill_u32(dp_prng *p, uint32_t n, uint32_t *dst, size_t m);

/* Uniformly random permutation of a[0..n) in place (Fisher-Yates, via dp_prng_below). */
void		dp_prng_shuffle_u32(dp_prng *p, uint32_t *a, size_t n);

#endif							/* DP_PRNG_H */
