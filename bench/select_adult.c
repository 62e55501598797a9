/*
 * select_adult.c - the adaptive method's selection phase (its rounds) in the pure C core on the
 * bundled Adult table tiled to N rows (default 32,561: Adult itself), encoded as
 * test/unit/adult_data.h does (domain.json, equal-width bins; the binned columns ordered, as the
 * server declares them, so that the coarse twins of step 2d are offered).  For each run: the
 * rounds, the estimates made, the selection phase's wall seconds and the whole run's CPU seconds
 * (every thread of the process), and the mean 2-way TVD of the rows against the table.  No
 * assertion: a benchmark.
 *
 * Usage (from the checkout's top): make bench/bin/select_adult &&
 *        bench/bin/select_adult [rows] [epsilon] [runs] [first seed] [threads]
 *        (defaults: 32561 1 5 1 2; seeds first seed .. first seed + runs - 1)
 */
#include <time.h>

#include "dp_accounting.h"
#include "dp_adaptive.h"
#include "../test/unit/adult_data.h"

static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
	uint64_t	rows = argc > 1 ? strtoull(argv[1], NULL, 10) : 32561;
	double		eps = argc > 2 ? atof(argv[2]) : 1.0;
	int			runs = argc > 3 ? atoi(argv[3]) : 5;
	uint64_t	seed0 = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
	uint32_t	threads = argc > 5 ? (uint32_t) atoi(argv[5]) : 2;
	acol	   *cols = calloc(ADULT_COLS, sizeof(acol));
	uint32_t	sizes[ADULT_COLS],
				ordered[ADULT_COLS];
	dp_codes	src,
				big;
	uint16_t	row[ADULT_COLS];
	double		sel_sum = 0,
				cpu_sum = 0,
				tvd_sum = 0;

	argv0 = argv[0];
	if (!load_adult(&src, cols, sizes, UINT64_MAX))
	{
		fprintf(stderr, "run from the checkout's top: data/adult not found\n");
		return 2;
	}
	for (uint32_t j = 0; j < ADULT_COLS; j++)
		ordered[j] = cols[j].categorical ? 0 : cols[j].nbins;
	dp_codes_init(&big, ADULT_COLS, rows);
	for (uint64_t i = 0; i < rows; i++)
	{
		for (uint32_t j = 0; j < ADULT_COLS; j++)
			row[j] = src.col[j][i % src.nrows];
		dp_codes_append(&big, row);
	}
	dp_set_threads(threads);
	printf("# Adult tiled to %llu rows, epsilon %g, delta 1e-6, %u threads\n", (unsigned long long) rows, eps,
		   threads);
	for (int r = 0; r < runs; r++)
	{
		dp_privsyn_params p;
		dp_privsyn_result res;
		dp_adaptive_stats st;
		dp_prng		rng;
		double		c0,
					cpu,
					tvd = 0;
		int			rc;

		dp_privsyn_default_params(&p);
		p.rho = dp_zcdp_rho(eps, 1e-6);
		p.ordered = ordered;
		dp_prng_seed(&rng, seed0 + (uint64_t) r);
		memset(&st, 0, sizeof(st));
		c0 = cpu_now();
		rc = dp_adaptive_run(&big, sizes, &p, &rng, &res, &st);
		cpu = cpu_now() - c0;
		if (rc == 0)
			tvd = mean_tvd2(&big, &res.synth, sizes);
		printf("seed %llu: rc %d, %u rounds, %u estimates, %u k-way, %u coarse picks; select %.3f s, gum %.3f s, run cpu %.3f s; tvd2 %.5f\n",
			   (unsigned long long) (seed0 + (uint64_t) r), rc, st.rounds, st.estimates, res.n_kway,
			   st.coarse_measured, res.seconds[DP_PHASE_SELECT], res.seconds[DP_PHASE_GUM], cpu, tvd);
		sel_sum += res.seconds[DP_PHASE_SELECT];
		cpu_sum += cpu;
		tvd_sum += tvd;
		fflush(stdout);
		if (rc == 0)
			dp_privsyn_result_free(&res);
	}
	printf("mean: select %.4f s, run cpu %.4f s, tvd2 %.5f\n", sel_sum / runs, cpu_sum / runs, tvd_sum / runs);
	return 0;
}
