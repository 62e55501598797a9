/*
 * gum_bench.c - PrivSyn in the pure C core on the bundled Adult table tiled to N rows (default
 * 1,000,000), encoded as test/unit/adult_data.h does (domain.json, equal-width bins): the core of
 * what `dp_synthesize('adult_1m', epsilon => 1)` computes, without the server.  Prints seconds per
 * phase, the number of marginals GUM iterates and its iterations.  No assertion: a benchmark.
 *
 * Usage (from the checkout's top): make bench-gum && bench/bin/gum_bench [rows] [epsilon] [runs] [iters]
 * With iters, GUM runs exactly that many iterations (no early stop), to compare the cost of one.
 */
#include <time.h>

#include "dp_accounting.h"
#include "dp_privsyn.h"
#include "../test/unit/adult_data.h"

typedef struct Iters
{
	uint32_t	iters;
	double		err;
} Iters;

static int
on_gum(void *arg, const dp_progress *pr)
{
	uint32_t	iter = (uint32_t) pr->done;
	uint32_t	iters = (uint32_t) pr->total;
	double		err = pr->err;
	(void) iters;
	if (err >= 0 && getenv("GUM_TRACE"))
		fprintf(stderr, "iter %u err %.6f\n", iter, err);
	if (err >= 0)
	{
		((Iters *) arg)->iters = iter;
		((Iters *) arg)->err = err;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	uint64_t	rows = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	double		eps = argc > 2 ? atof(argv[2]) : 1.0;
	int			runs = argc > 3 ? atoi(argv[3]) : 1;
	int			fixed = argc > 4 ? atoi(argv[4]) : 0;
	acol	   *cols = calloc(ADULT_COLS, sizeof(acol));
	uint32_t	sizes[ADULT_COLS];
	dp_codes	src,
				big;
	uint16_t	row[ADULT_COLS];

	argv0 = argv[0];
	if (!load_adult(&src, cols, sizes, UINT64_MAX))
	{
		fprintf(stderr, "run from the checkout's top: data/adult not found\n");
		return 2;
	}
	dp_codes_init(&big, ADULT_COLS, rows);
	for (uint64_t i = 0; i < rows; i++)
	{
		for (uint32_t j = 0; j < ADULT_COLS; j++)
			row[j] = src.col[j][i % src.nrows];
		dp_codes_append(&big, row);
	}
	printf("# Adult tiled to %llu rows, epsilon %g, delta 1e-6 (rho %.5f)\n",
		   (unsigned long long) rows, eps, dp_zcdp_rho(eps, 1e-6));
	for (int r = 0; r < runs; r++)
	{
		dp_privsyn_params p;
		dp_privsyn_result res;
		dp_prng		rng;
		Iters		it = {0, 0};
		int			rc;

		dp_privsyn_default_params(&p);
		p.rho = dp_zcdp_rho(eps, 1e-6);
		p.gum.progress = on_gum;
		dp_set_threads(getenv("GUM_THREADS") ? (uint32_t) atoi(getenv("GUM_THREADS")) : 1);
		if (fixed > 0)
		{
			p.gum.iterations = (uint32_t) fixed;
			p.gum.tolerance = -1;
		}
		p.gum.progress_arg = &it;
		dp_prng_seed_random(&rng);
		memset(&res, 0, sizeof(res));
		rc = dp_privsyn_run(&big, sizes, &p, &rng, &res);
		printf("run %d: rc %d, %u one-way + %u k-way marginals, GUM %u iterations (mean L1 %.5f); "
			   "seconds: one_way %.3f select %.3f publish %.3f consistency %.3f gum %.3f (GUM phase / iterations %.3f)\n",
			   r + 1, rc, res.n_oneway, res.n_kway, it.iters, it.err,
			   res.seconds[DP_PHASE_ONEWAY], res.seconds[DP_PHASE_SELECT], res.seconds[DP_PHASE_PUBLISH],
			   res.seconds[DP_PHASE_CONSIST], res.seconds[DP_PHASE_GUM],
			   it.iters ? res.seconds[DP_PHASE_GUM] / it.iters : 0.0);
		if (rc == 0 && getenv("GUM_FIDELITY"))
			printf("run %d: mean 2-way TVD against the table: %.5f\n", r + 1, mean_tvd2(&big, &res.synth, sizes));
		fflush(stdout);
	}
	return 0;
}
