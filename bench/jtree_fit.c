/*
 * jtree_fit.c - the junction tree's fit of the adaptive method's final model on the bundled Adult
 * table (the final draw's fit on a table of Adult's size), with its passes fused where that gives
 * the same bits (dp_jtree_fit) and with every scaling in a pass of its own (the unit tests'
 * seam dp_jtree_test_no_fuse), alternated in one process: one dp_adaptive_run with the noise
 * from the unit tests' fixed stream (dp_random_test_seed), then R rounds, each fitting the model
 * once each way (the order alternated), and the fitted potentials compared bit for bit.  Prints
 * the tree, the sweeps, whether every fit gave the same bits, and the CPU milliseconds of each
 * way's fits (median and mean).  No assertion but the bits: a benchmark.
 *
 * Usage (from the checkout's top): make bench/bin/jtree_fit && bench/bin/jtree_fit [seed] [rounds] [k]
 *   (defaults 1 9 1: noise seed, rounds, Adult tiled k times)
 */
/* the benches link the unit tests' library, which has the seam (dp_random.h, dp_jtree.h) */
#define DPSYNTH_TEST_RNG

#include <time.h>

#include "dp_accounting.h"
#include "dp_adaptive.h"
#include "dp_env.h"
#include "dp_jtree.h"
#include "dp_maxent.h"
#include "dp_random.h"
#include "../test/unit/adult_data.h"
#include "rows_hash.h"

/* One fit of the model's tree: its CPU seconds; the fitted potentials into *pot (allocated) */
static double
fit_once(const dp_privsyn_result *res, bool fuse, double **pot, uint64_t *ncells, int *sweeps, uint32_t *ncl)
{
	dp_jtree	t;
	double		c0,
				c1;
	uint64_t	n = 0;

	memset(&t, 0, sizeof(t));
	if (dp_jtree_build(&t, res->margs, res->nmargs, ADULT_COLS, res->merged_sizes, DP_ADAPTIVE_JTREE_CELLS) != 0)
	{
		fprintf(stderr, "no tree: %s\n", dp_last_error());
		exit(1);
	}
	dp_jtree_test_no_fuse(!fuse);
	c0 = cpu_seconds();
	*sweeps = dp_jtree_fit(&t, res->margs, res->nmargs, dp_jtree_sweeps(&t, res->margs, res->nmargs), DP_MAXENT_TOL,
						   NULL, NULL);
	c1 = cpu_seconds();
	dp_jtree_test_no_fuse(false);
	for (uint32_t i = 0; i < t.ncliques; i++)
		n += t.cl[i].ncells + t.cl[i].sep_cells;
	*pot = malloc(sizeof(double) * n);
	n = 0;
	for (uint32_t i = 0; i < t.ncliques; i++)
	{
		memcpy(*pot + n, t.cl[i].P, sizeof(double) * t.cl[i].ncells);
		n += t.cl[i].ncells;
		memcpy(*pot + n, t.cl[i].S, sizeof(double) * t.cl[i].sep_cells);
		n += t.cl[i].sep_cells;
	}
	*ncells = n;
	*ncl = t.ncliques;
	dp_jtree_free(&t);
	return c1 - c0;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	uint64_t	seed = argc > 1 ? (uint64_t) atoll(argv[1]) : 1;
	int			rounds = argc > 2 ? atoi(argv[2]) : 9;
	uint32_t	k = argc > 3 ? (uint32_t) atoi(argv[3]) : 1,
				sizes[ADULT_COLS],
				ncl = 0;
	acol	   *cols = calloc(ADULT_COLS, sizeof(acol));
	dp_codes	src,
				big;
	dp_privsyn_params p;
	dp_adaptive_stats st;
	dp_privsyn_result res;
	dp_prng		rng;
	double	   *ms[2],
				sum[2] = {0, 0};
	bool		same = true;
	int			sweeps = 0;
	uint64_t	ncells = 0;

	argv0 = argv[0];
	if (!adult_tiled(k, &src, &big, cols, sizes))
		return 2;
	dp_privsyn_default_params(&p);
	p.rho = dp_zcdp_rho(1, 1e-6);
	dp_set_threads(1);
	dp_random_test_seed(seed);
	dp_prng_seed(&rng, seed);
	if (dp_adaptive_run(&big, sizes, &p, &rng, &res, &st) != 0)
	{
		fprintf(stderr, "dp_adaptive_run: %s\n", dp_last_error());
		return 1;
	}
	ms[0] = calloc(rounds * 2, sizeof(double));
	ms[1] = ms[0] + rounds;
	for (int r = 0; r < rounds; r++)
		for (int h = 0; h < 2; h++)
		{
			bool		fuse = (r + h) % 2 == 0;
			double	   *pot[2];
			uint64_t	n[2];
			int			sw;

			ms[fuse][r] = 1e3 * fit_once(&res, fuse, &pot[0], &n[0], &sw, &ncl);
			sum[fuse] += ms[fuse][r];
			if (r == 0 && h == 0)
			{
				sweeps = sw;
				ncells = n[0];
			}
			/* the other way once more, for the bits */
			(void) fit_once(&res, !fuse, &pot[1], &n[1], &sw, &ncl);
			same = same && n[0] == n[1] && memcmp(pot[0], pot[1], sizeof(double) * n[0]) == 0;
			free(pot[0]);
			free(pot[1]);
		}
	qsort(ms[0], rounds, sizeof(double), cmp_double);
	qsort(ms[1], rounds, sizeof(double), cmp_double);
	printf("Adult x%u, noise seed %llu: %u k-way marginals, tree of %u cliques, %llu potential cells, %d sweeps; "
		   "potentials %s; fit CPU ms, fused: median %.1f mean %.1f; passes apart: median %.1f mean %.1f (%d each)\n",
		   k, (unsigned long long) seed, res.n_kway, ncl, (unsigned long long) ncells, sweeps,
		   same ? "identical" : "DIFFERENT", ms[1][rounds / 2], sum[1] / rounds, ms[0][rounds / 2], sum[0] / rounds,
		   rounds);
	dp_privsyn_result_free(&res);
	dp_codes_free(&big);
	dp_codes_free(&src);
	free(cols);
	free(ms[0]);
	return same ? 0 : 1;
}
