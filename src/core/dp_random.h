/*
 * dp_random.h - cryptographically secure randomness for privacy noise.
 *
 * Every random bit that decides privacy noise comes from libsodium's CSPRNG
 * (randombytes_buf).  There is deliberately no seed and no way to make the
 * stream reproducible: predictable noise is no noise (PRIVACY.md, "Noise").
 *
 * Bytes are buffered per process for speed.  The buffer remembers the pid
 * that filled it and is wiped and discarded when a different process (a
 * fork()ed PostgreSQL backend that inherited the postmaster's memory) tries
 * to use it, so no two processes ever consume the same bytes.  Every byte
 * handed out is zeroed in the buffer at once: it is used exactly once and
 * does not linger in memory after the noise it decided has been drawn.
 *
 * Not thread-safe: one buffer per process (PostgreSQL backends are
 * single-threaded).
 *
 * Plain C (no PostgreSQL headers); link with -lsodium.
 */
#ifndef DP_RANDOM_H
#define DP_RANDOM_H

#include <stddef.h>
#include <stdint.h>

/*
 * Initializes libsodium.  Returns 0 on success (also when it was already
 * initialized), -1 if the CSPRNG is unavailable; the caller must then refuse
 * to draw noise.  Calling it is recommended (e.g. from _PG_init) so that a
 * failure is reported cleanly; if it was not called, the first draw
 * initializes libsodium itself and abort()s on failure rather than continue
 * without a secure source.
 */
extern int	dp_random_init(void);

/* Fills buf with n bytes from the CSPRNG, each uniform and independent. */
extern void dp_random_bytes(void *buf, size_t n);

/*
 * Exactly uniform on [0, n) by rejection sampling (no modulo bias).  n >= 1;
 * n == 0 is read as 2^64, i.e. a uniform 64-bit word.
 */
extern uint64_t dp_random_uniform(uint64_t n);

/* Exactly uniform on [0, n), 128-bit; n == 0 is read as 2^128. */
extern unsigned __int128 dp_random_uniform128(unsigned __int128 n);

/*
 * The unit tests' seam, compiled only into their library (the Makefile's -DDPSYNTH_TEST_RNG;
 * the extension's build refuses the define): from this call on, the bytes are a fixed stream of
 * seed, so that a statistical bar in a test gives the same verdict on every run.  Never in the
 * extension: there the noise cannot be seeded (above).
 */
#ifdef DPSYNTH_TEST_RNG
extern void dp_random_test_seed(uint64_t seed);
#endif

/*
 * Internal interface for dp_sampler.c.
 *
 * The fork check costs a getpid() system call (~50 ns), which would dominate
 * a sampler that makes a dozen small draws per sample.  So each public entry
 * point of the samplers calls dp_random_fork_guard() once and then uses the
 * _unguarded draws.  That is sound because a single-threaded process cannot
 * fork() in the middle of one of our calls.  Do not use the _unguarded
 * functions anywhere else.
 */
extern void dp_random_fork_guard(void);
extern uint64_t dp_random_uniform_unguarded(uint64_t n);
extern unsigned __int128 dp_random_uniform128_unguarded(unsigned __int128 n);

#endif							/* DP_RANDOM_H */
