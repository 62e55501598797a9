/*
 * dp_prng.c - xoshiro256** for post-processing randomness (see dp_prng.h for what it may be used
 * for, and what never).
 *
 * The generator and its seeding are transcribed from the reference C code by Blackman & Vigna
 * (https://prng.di.unimi.it/xoshiro256starstar.c, splitmix64.c); test_prng.c checks them against
 * the published output vectors.
 */
#include "dp_prng.h"

#include "dp_random.h"

static inline uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t	z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

void
dp_prng_seed(dp_prng *p, uint64_t seed)
{
	uint64_t	x = seed;

	/*
	 * SplitMix64's output function is a bijection of its counter, so four consecutive outputs are
	 * distinct and the state is never all zero.
	 */
	for (int i = 0; i < 4; i++)
		p->s[i] = splitmix64(&x);
}

void
dp_prng_seed_random(dp_prng *p)
{
	do
		dp_random_bytes(p->s, sizeof(p->s));
	while ((p->s[0] | p->s[1] | p->s[2] | p->s[3]) == 0);	/* the one forbidden state */
}

/*
 * The generator's step and the bounded draw as static functions, so that the exported ones and
 * the shuffle below call them directly (an exported function of a shared library is called
 * through its PLT entry, even from this file).
 */
static inline uint64_t
next_of(dp_prng *p)
{
	uint64_t   *s = p->s;
	uint64_t	result = rotl(s[1] * 5, 7) * 9;
	uint64_t	t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

static inline uint64_t
below_of(dp_prng *p, uint64_t n)
{
	unsigned __int128 m;
	uint64_t	low;

	if (n == 0)
		return next_of(p);

	/*
	 * Lemire, "Fast random integer generation in an interval" (2019): floor(x * n / 2^64) is
	 * uniform once the low words below (2^64 mod n) are rejected, which leaves every result with
	 * exactly floor(2^64 / n) preimages.
	 */
	m = (unsigned __int128) next_of(p) * n;
	low = (uint64_t) m;
	if (low < n)
	{
		uint64_t	threshold = (0 - n) % n;	/* 2^64 mod n */

		while (low < threshold)
		{
			m = (unsigned __int128) next_of(p) * n;
			low = (uint64_t) m;
		}
	}
	return (uint64_t) (m >> 64);
}

uint64_t
dp_prng_next(dp_prng *p)
{
	return next_of(p);
}

uint64_t
dp_prng_below(dp_prng *p, uint64_t n)
{
	return below_of(p, n);
}

void
dp_prng_below_fill_u32(dp_prng *p, uint32_t n, uint32_t *dst, size_t m)
{
	for (size_t i = 0; i < m; i++)
		dst[i] = (uint32_t) below_of(p, n);
}

double
dp_prng_unit(dp_prng *p)
{
	return (double) (next_of(p) >> 11) * 0x1.0p-53;
}

void
dp_prng_shuffle_u32(dp_prng *p, uint32_t *a, size_t n)
{
	for (size_t i = n; i > 1; i--)
	{
		size_t		j = (size_t) below_of(p, i);
		uint32_t	tmp = a[i - 1];

		a[i - 1] = a[j];
		a[j] = tmp;
	}
}
