/*
 * final_draw.c - the adaptive method's final rows on a big table, two ways from one model: the
 * bundled Adult table tiled k times (encoded as test/unit/adult_data.h does), one dp_adaptive_run
 * at epsilon (delta 1e-6), then the same model's rows drawn by GUM from the independent fill (30
 * iterations, dp_privsyn_sample: the draw before the sub-model start) and by dp_adaptive_sample
 * (the sub-model's rows, then GUM), each with one thread.  The model's noise comes from the unit
 * tests' fixed stream seeded by seed (dp_random_test_seed), so that a seed names one model on
 * every build: two builds' draws from it differ by the draw alone.  Prints the mean 2-way TVD over every
 * pair and the mean 3-way TVD over 80 fixed triples against the real rows (over the codes, not
 * evaluate.py's bins), and the CPU seconds of each draw.  No assertion: a benchmark.
 *
 * Usage (from the checkout's top): make bench/bin/final_draw && bench/bin/final_draw [k] [epsilon] [seed] [sub]
 * With "sub", only dp_adaptive_sample's two draws are made (the draw of dp_adaptive_run's rows).
 */
/* the benches link the unit tests' library, which has the seam (dp_random.h) */
#define DPSYNTH_TEST_RNG

#include <time.h>

#include "dp_accounting.h"
#include "dp_adaptive.h"
#include "dp_env.h"
#include "dp_gum.h"
#include "dp_random.h"
#include "../test/unit/adult_data.h"

#include "final_rows.h"

int
main(int argc, char **argv)
{
	uint32_t	sizes[ADULT_COLS],
				k = argc > 1 ? (uint32_t) atoi(argv[1]) : 6;
	double		eps = argc > 2 ? atof(argv[2]) : 1,
				c0;
	int			seed = argc > 3 ? atoi(argv[3]) : 1;
	bool		sub_only = argc > 4 && strcmp(argv[4], "sub") == 0;
	acol	   *cols = calloc(ADULT_COLS, sizeof(acol));
	dp_codes	src,
				big,
				syn;
	dp_privsyn_params p;
	dp_adaptive_stats st;
	dp_privsyn_result res;
	dp_prng		rng;
	dp_gum_params g;
	dp_adaptive_draw how;
	char		what[128];

	argv0 = argv[0];
	if (!adult_tiled(k, &src, &big, cols, sizes))
		return 1;
	if (bench_model(&big, sizes, eps, 1, (uint64_t) seed, &p, &rng, &res, &st, &c0) != 0)
		return 1;
	printf("Adult x%u (%llu rows), epsilon %g, seed %d: %u k-way marginals\n", k,
		   (unsigned long long) big.nrows, eps, seed, res.n_kway);
	dp_gum_default_params(&g);
	g.iterations = dp_adaptive_final_iters(g.iterations);
	g.maxent_cells = DP_ADAPTIVE_MAXENT_CELLS;
	g.jtree_cells = DP_ADAPTIVE_JTREE_CELLS;
	for (int rep = 0; rep < 2; rep++)
	{
		if (!sub_only)
		{
			c0 = cpu_seconds();
			if (dp_privsyn_sample(&res, ADULT_COLS, sizes, big.nrows, &g, &rng, &syn) != 0)
				return 1;
			report("GUM from the independent fill, 30 iterations", &big, &syn, sizes, cpu_seconds() - c0);
			dp_codes_free(&syn);
		}
		c0 = cpu_seconds();
		if (dp_adaptive_sample(&res, ADULT_COLS, sizes, big.nrows, &g, &rng, &syn, &how) != 0)
			return 1;
		snprintf(what, sizeof(what), "dp_adaptive_sample (sub-model %u marginals)", how.sub_margs);
		report(what, &big, &syn, sizes, cpu_seconds() - c0);
		dp_codes_free(&syn);
	}
	dp_privsyn_result_free(&res);
	dp_codes_free(&big);
	dp_codes_free(&src);
	free(cols);
	return 0;
}
