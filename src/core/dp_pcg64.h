/*
 * dp_pcg64.h - numpy's default_rng(seed), bit for bit, for the evaluation only.
 *
 * The reference evaluator (tools/evaluate.py of the development datasets; docs/EVALUATION.md) draws
 * its 3-way triples and its range queries from np.random.default_rng(12345).  To report the same numbers from SQL we draw them
 * from the same stream: numpy's SeedSequence (an integer seed < 2^32), its PCG64 bit generator
 * (128-bit LCG, XSL-RR output, one buffered 32-bit half), Lemire's bounded integers and
 * Generator.choice(n, k, replace=False) (Floyd's algorithm, then a shuffle), as in numpy 1.17 to
 * at least 1.26.  test/unit/test_eval.c checks the streams against numbers numpy printed.
 *
 * This is NOT a source of privacy noise (that is dp_random.c, libsodium): it only chooses which
 * statistics an owner-side quality report looks at, reproducibly.
 */
#ifndef DP_PCG64_H
#define DP_PCG64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct dp_pcg64
{
	unsigned __int128 state;
	unsigned __int128 inc;
	bool		has_uint32;		/* the high half of the last 64-bit output, not yet used */
	uint32_t	uinteger;
} dp_pcg64;

/* np.random.default_rng(seed) */
extern void dp_pcg64_seed(dp_pcg64 *g, uint32_t seed);

extern uint64_t dp_pcg64_next64(dp_pcg64 *g);
extern uint32_t dp_pcg64_next32(dp_pcg64 *g);

/* g.integers(low, high) for high - low <= 2^32 (numpy's random_bounded_uint64, Lemire). */
extern int64_t dp_pcg64_integers(dp_pcg64 *g, int64_t low, int64_t high);

/*
 * g.choice(n, k, replace=False) into out[k], for n <= 10000 or k <= n / 50 (Floyd's algorithm and
 * the shuffle numpy applies; numpy's other branch, a tail shuffle, is not needed here: returns
 * false then; false too when its scratch cannot be allocated, dp_env.h's dp_alloc).  n < 2^32.
 */
extern bool dp_pcg64_choice(dp_pcg64 *g, int64_t n, int64_t k, int64_t *out);

#endif
