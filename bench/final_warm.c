/*
 * final_warm.c - the adaptive method's final rows on a big table with fewer or more warm GUM
 * iterations after the sub-model's rows: the bundled Adult table tiled k times (as final_draw.c),
 * one dp_adaptive_run at epsilon (delta 1e-6), then from that one model, for each warm iteration
 * count W of the list, `reps` draws by dp_adaptive_sample with one thread (dp_adaptive_sample
 * cuts W to dp_adaptive_submodel_iters of the model's k-way marginals: a larger W needs a build
 * with larger DP_ADAPTIVE_SUBMODEL_WARM_ITERS and DP_ADAPTIVE_SUBMODEL_WARM_VISITS).
 * Prints each draw's mean 2-way TVD over every pair and mean 3-way TVD over 80 fixed triples
 * against the real rows (over the codes), its CPU seconds, and the CPU seconds at the end of each
 * GUM iteration, and the mean L1 error of the iterated marginals there.  One model for every W,
 * so that the draws differ by W and the draw's seed only.
 * No assertion: a benchmark.
 *
 * Usage (from the checkout's top): make bench/bin/final_warm &&
 *        bench/bin/final_warm [k] [epsilon] [seed] [reps] [W ...]   (default W: 5 3 2)
 */
/* the benches link the unit tests' library, which has the seam (dp_random.h): the model's noise
 * comes from a fixed stream, so that a seed names one model */
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
				k = argc > 1 ? (uint32_t) atoi(argv[1]) : 31;
	double		eps = argc > 2 ? atof(argv[2]) : 1,
				c0;
	int			seed = argc > 3 ? atoi(argv[3]) : 1,
				reps = argc > 4 ? atoi(argv[4]) : 2;
	uint32_t	ws[16] = {5, 3, 2},
				nw = 3;
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
	iter_log	iters = {.clock = cpu_seconds, .gum_only = false};
	char		what[128];

	argv0 = argv[0];
	if (argc > 5)
		for (nw = 0; nw < 16 && 5 + (int) nw < argc; nw++)
			ws[nw] = (uint32_t) atoi(argv[5 + nw]);
	if (!adult_tiled(k, &src, &big, cols, sizes))
		return 1;
	if (bench_model(&big, sizes, eps, 1, (uint64_t) seed, &p, &rng, &res, &st, &c0) != 0)
		return 1;
	printf("Adult x%u (%llu rows), epsilon %g, seed %d: %u k-way marginals (model: cpu %.2f s)\n", k,
		   (unsigned long long) big.nrows, eps, seed, res.n_kway, cpu_seconds() - c0);
	for (int rep = 0; rep < reps; rep++)
		for (uint32_t w = 0; w < nw; w++)
		{
			dp_gum_default_params(&g);
			g.iterations = ws[w];
			g.maxent_cells = DP_ADAPTIVE_MAXENT_CELLS;
			g.jtree_cells = DP_ADAPTIVE_JTREE_CELLS;
			g.progress = iter_log_progress;
			g.progress_arg = &iters;
			iters.n = 0;
			c0 = cpu_seconds();
			if (dp_adaptive_sample(&res, ADULT_COLS, sizes, big.nrows, &g, &rng, &syn, &how) != 0)
				return 1;
			snprintf(what, sizeof(what), "W %u, draw %d (sub-model %u marginals)", ws[w], rep + 1, how.sub_margs);
			report(what, &big, &syn, sizes, cpu_seconds() - c0);
			printf("    cpu at the end of each iteration:");
			for (uint32_t i = 0; i < iters.n; i++)
				printf(" %.2f", iters.cpu[i] - c0);
			printf("\n    mean L1 error of the iterated marginals at each iteration's end:");
			for (uint32_t i = 0; i < iters.n; i++)
				printf(" %.4f", iters.err[i]);
			printf("\n");
			dp_codes_free(&syn);
		}
	dp_privsyn_result_free(&res);
	dp_codes_free(&big);
	dp_codes_free(&src);
	free(cols);
	return 0;
}
