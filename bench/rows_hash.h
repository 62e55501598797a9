/*
 * rows_hash.h - what bench/gum_ident.c and bench/final_ident.c print of a draw: an FNV-1a hash of
 * the rows' codes (two draws are the same rows exactly when the hashes agree), and the process's
 * CPU seconds; the bundled Adult table tiled k times, the input of the benches that run the
 * adaptive method on it; and that run (bench_model).  A bench header, not part of the extension.
 */
#ifndef BENCH_ROWS_HASH_H
#define BENCH_ROWS_HASH_H

#include <stdint.h>
#include <time.h>

#include <stdio.h>

#include "dp_accounting.h"
#include "dp_adaptive.h"
#include "dp_codes.h"
#include "dp_env.h"
#include "dp_random.h"
#include "../test/unit/adult_data.h"

static inline uint64_t
fnv_rows(const dp_codes *t)
{
	uint64_t	h = 1469598103934665603ULL;

	for (uint64_t i = 0; i < t->nrows; i++)
		for (uint32_t j = 0; j < t->ncols; j++)
		{
			uint16_t	v = t->col[j][i];

			h = (h ^ (v & 0xff)) * 1099511628211ULL;
			h = (h ^ (v >> 8)) * 1099511628211ULL;
		}
	return h ^ t->nrows;
}

static inline double
cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/*
 * Adult's codes into src (cols and sizes as load_adult fills them) and its rows repeated k times
 * into big.  Returns false, with a message, when data/adult is not found (run from the checkout's
 * top).
 */
static inline bool
adult_tiled(uint64_t k, dp_codes *src, dp_codes *big, acol *cols, uint32_t *sizes)
{
	if (!load_adult(src, cols, sizes, UINT64_MAX))
	{
		fprintf(stderr, "run from the checkout's top: data/adult not found\n");
		return false;
	}
	dp_codes_init(big, ADULT_COLS, k * src->nrows);
	for (uint32_t j = 0; j < ADULT_COLS; j++)
		for (uint64_t i = 0; i < k * src->nrows; i++)
			big->col[j][i] = src->col[j][i % src->nrows];
	big->nrows = k * src->nrows;
	return true;
}

#ifdef DPSYNTH_TEST_RNG		/* the fixed stream: a bench that defines it before its includes */
/*
 * The benches' model: dp_adaptive_run on big at epsilon eps (delta 1e-6) with the default
 * parameters (into *p) on threads threads, the noise from the unit tests' fixed stream
 * (dp_random_test_seed) and the generator both seeded by seed; *c0 the process's CPU seconds at
 * the run's start.  0, or 1 with the error printed.
 */
static inline int
bench_model(const dp_codes *big, const uint32_t *sizes, double eps, uint32_t threads, uint64_t seed,
			dp_privsyn_params *p, dp_prng *rng, dp_privsyn_result *res, dp_adaptive_stats *st,
			double *c0)
{
	dp_privsyn_default_params(p);
	p->rho = dp_zcdp_rho(eps, 1e-6);
	dp_set_threads(threads);
	dp_random_test_seed(seed);
	dp_prng_seed(rng, seed);
	*c0 = cpu_seconds();
	if (dp_adaptive_run(big, sizes, p, rng, res, st) != 0)
	{
		fprintf(stderr, "dp_adaptive_run: %s\n", dp_last_error());
		return 1;
	}
	return 0;
}
#endif

#endif							/* BENCH_ROWS_HASH_H */
