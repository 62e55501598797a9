/*
 * final_ident.c - the adaptive method's whole run (the rounds with their estimates, the model,
 * the final rows) on the bundled Adult table tiled k times, with the noise drawn from a fixed
 * stream (the unit tests' library: dp_random_test_seed), so that the same build gives the same
 * model and the same rows on every run.  Prints the model's size, the rows' FNV-1a 64 hash
 * (every column's codes, row by row), the run's phase seconds and its CPU seconds (the process's,
 * helper threads included): run it before and after a speed change, the hashes must be equal and
 * the CPU seconds say what the change saved on that model.  No assertion: a benchmark.
 *
 * Usage (from the checkout's top): make bench/bin/final_ident &&
 *        bench/bin/final_ident [k] [threads] [noise seed] [epsilon]   (defaults: 31 2 1 1)
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
#include "rows_hash.h"



int
main(int argc, char **argv)
{
	uint32_t	sizes[ADULT_COLS],
				k = argc > 1 ? (uint32_t) atoi(argv[1]) : 31,
				threads = argc > 2 ? (uint32_t) atoi(argv[2]) : 2;
	uint64_t	seed = argc > 3 ? (uint64_t) atoll(argv[3]) : 1;
	double		eps = argc > 4 ? atof(argv[4]) : 1,
				c0;
	acol	   *cols = calloc(ADULT_COLS, sizeof(acol));
	dp_codes	src,
				big;
	dp_privsyn_params p;
	dp_adaptive_stats st;
	dp_privsyn_result res;
	dp_prng		rng;

	argv0 = argv[0];
	if (!adult_tiled(k, &src, &big, cols, sizes))
		return 2;
	if (bench_model(&big, sizes, eps, threads, seed, &p, &rng, &res, &st, &c0) != 0)
		return 1;
	printf("Adult x%u (%llu rows), %u threads, epsilon %g, noise seed %llu: %u k-way marginals, rows %016llx (%llu), cpu %.2f s; seconds:",
		   k, (unsigned long long) big.nrows, threads, eps, (unsigned long long) seed, res.n_kway,
		   (unsigned long long) fnv_rows(&res.synth), (unsigned long long) res.synth.nrows,
		   cpu_seconds() - c0);
	for (int ph = 0; ph < DP_PHASE_COUNT; ph++)
		printf(" %.3f", res.seconds[ph]);
	printf("\n");
	dp_privsyn_result_free(&res);
	dp_codes_free(&big);
	dp_codes_free(&src);
	free(cols);
	return 0;
}
