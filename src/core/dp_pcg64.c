/*
 * dp_pcg64.c - numpy's default_rng, bit for bit (see dp_pcg64.h).  The constants and the order of
 * operations are numpy's (numpy/random/bit_generator.pyx, src/pcg64, distributions.c,
 * _generator.pyx); any change here changes which triples and queries the report uses.
 */
#include "dp_pcg64.h"

#include "dp_env.h"

#include <string.h>

typedef unsigned __int128 u128;

/* ---- SeedSequence(seed).generate_state(4, uint64), pool size 4 ---- */

#define SS_INIT_A 0x43b0d7e5u
#define SS_MULT_A 0x931e8875u
#define SS_INIT_B 0x8b51f9ddu
#define SS_MULT_B 0x58f38dedu
#define SS_MIX_L 0xca01f9ddu
#define SS_MIX_R 0x4973f715u
#define SS_XSHIFT 16
#define SS_POOL 4

static uint32_t
ss_hashmix(uint32_t value, uint32_t *hash_const)
{
	value ^= *hash_const;
	*hash_const *= SS_MULT_A;
	value *= *hash_const;
	value ^= value >> SS_XSHIFT;
	return value;
}

static uint32_t
ss_mix(uint32_t x, uint32_t y)
{
	uint32_t	r = SS_MIX_L * x - SS_MIX_R * y;

	return r ^ (r >> SS_XSHIFT);
}

/* The pool of a one-word entropy, then 8 words of state read as 4 little-endian uint64. */
static void
seed_sequence(uint32_t seed, uint64_t out[4])
{
	uint32_t	pool[SS_POOL];
	uint32_t	hc = SS_INIT_A;
	uint32_t	words[8];

	for (int i = 0; i < SS_POOL; i++)
		pool[i] = ss_hashmix(i == 0 ? seed : 0, &hc);
	for (int src = 0; src < SS_POOL; src++)
		for (int dst = 0; dst < SS_POOL; dst++)
			if (src != dst)
				pool[dst] = ss_mix(pool[dst], ss_hashmix(pool[src], &hc));
	hc = SS_INIT_B;
	for (int i = 0; i < 8; i++)
	{
		uint32_t	v = pool[i % SS_POOL];

		v ^= hc;
		hc *= SS_MULT_B;
		v *= hc;
		v ^= v >> SS_XSHIFT;
		words[i] = v;
	}
	for (int i = 0; i < 4; i++)
		out[i] = (uint64_t) words[2 * i] | ((uint64_t) words[2 * i + 1] << 32);
}

/* ---- PCG64: pcg_setseq_128_xsl_rr_64 ---- */

#define PCG_MULT (((u128) 0x2360ED051FC65DA4ULL << 64) | 0x4385DF649FCCF645ULL)

static void
pcg_step(dp_pcg64 *g)
{
	g->state = g->state * PCG_MULT + g->inc;
}

void
dp_pcg64_seed(dp_pcg64 *g, uint32_t seed)
{
	uint64_t	s[4];

	seed_sequence(seed, s);
	memset(g, 0, sizeof(*g));
	/* pcg64_set_seed: seed = (s[0] << 64 | s[1]), inc = (s[2] << 64 | s[3]) */
	g->inc = ((((u128) s[2] << 64) | s[3]) << 1) | 1u;
	g->state = 0;
	pcg_step(g);
	g->state += ((u128) s[0] << 64) | s[1];
	pcg_step(g);
}

uint64_t
dp_pcg64_next64(dp_pcg64 *g)
{
	uint64_t	hi,
				lo;
	unsigned	rot;

	pcg_step(g);
	hi = (uint64_t) (g->state >> 64);
	lo = (uint64_t) g->state;
	rot = (unsigned) (hi >> 58);
	hi ^= lo;
	return (hi >> rot) | (hi << ((64 - rot) & 63));
}

uint32_t
dp_pcg64_next32(dp_pcg64 *g)
{
	uint64_t	next;

	if (g->has_uint32)
	{
		g->has_uint32 = false;
		return g->uinteger;
	}
	next = dp_pcg64_next64(g);
	g->has_uint32 = true;
	g->uinteger = (uint32_t) (next >> 32);
	return (uint32_t) next;
}

/* random_bounded_uint64(off = 0, rng, use_masked = false) for rng < 2^32: 0..rng inclusive */
static uint64_t
bounded32(dp_pcg64 *g, uint32_t rng)
{
	uint32_t	rng_excl;
	uint64_t	m;
	uint32_t	leftover;

	if (rng == 0)
		return 0;
	if (rng == 0xFFFFFFFFu)
		return dp_pcg64_next32(g);
	rng_excl = rng + 1;
	m = (uint64_t) dp_pcg64_next32(g) * rng_excl;
	leftover = (uint32_t) m;
	if (leftover < rng_excl)
	{
		const uint32_t threshold = (UINT32_MAX - rng) % rng_excl;

		while (leftover < threshold)
		{
			m = (uint64_t) dp_pcg64_next32(g) * rng_excl;
			leftover = (uint32_t) m;
		}
	}
	return m >> 32;
}

int64_t
dp_pcg64_integers(dp_pcg64 *g, int64_t low, int64_t high)
{
	return low + (int64_t) bounded32(g, (uint32_t) (high - low - 1));
}

/* _shuffle_int(n, first = 1, data) */
static void
shuffle(dp_pcg64 *g, int64_t n, int64_t *data)
{
	for (int64_t i = n - 1; i >= 1; i--)
	{
		int64_t		j = (int64_t) bounded32(g, (uint32_t) i);
		int64_t		t = data[j];

		data[j] = data[i];
		data[i] = t;
	}
}

bool
dp_pcg64_choice(dp_pcg64 *g, int64_t n, int64_t k, int64_t *out)
{
	uint64_t	mask,
				set_size;
	uint64_t   *set;

	if (k < 0 || k > n || (n > 10000 && k > n / 50))
		return false;
	/* smallest power of two above 1.2 k, as numpy's _gen_mask */
	set_size = (uint64_t) (1.2 * (double) k);
	mask = set_size;
	for (int s = 1; s < 64; s <<= 1)
		mask |= mask >> s;
	set = dp_alloc((mask + 1) * sizeof(uint64_t));
	if (set == NULL)
		return false;
	memset(set, 0xff, (mask + 1) * sizeof(uint64_t));
	for (int64_t j = n - k; j < n; j++)
	{
		uint64_t	val = bounded32(g, (uint32_t) j);
		uint64_t	loc = val & mask;

		while (set[loc] != UINT64_MAX && set[loc] != val)
			loc = (loc + 1) & mask;
		if (set[loc] == UINT64_MAX)
		{
			set[loc] = val;
			out[j - n + k] = (int64_t) val;
		}
		else
		{
			loc = (uint64_t) j & mask;
			while (set[loc] != UINT64_MAX)
				loc = (loc + 1) & mask;
			set[loc] = (uint64_t) j;
			out[j - n + k] = j;
		}
	}
	dp_free(set);
	shuffle(g, k, out);
	return true;
}
