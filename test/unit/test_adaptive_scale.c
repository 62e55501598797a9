/*
 * test_adaptive_scale.c - unit tests of src/core/dp_adaptive.c by the table's size (the rest of
 * the adaptive method's tests are test_adaptive.c's):
 *
 * - the rounds' estimate size as a function of the released total (dp_adaptive_est_rows);
 * - two threads on Adult tiled 4 times: the budget and a quality bar;
 * - Adult's first 5,000 rows (s = 1): rounds and anneals as under AIM's bar alone;
 * - Adult repeated 8 times (260,488 rows, s = 16: estimates of DP_ADAPTIVE_SYNTH_ROWS_BIG rows): the
 *   rounds anneal and stop near Adult's count (the old bar, AIM's alone, never annealed there: 0
 *   anneals and 120 rounds), with a quality bar;
 * - the rounds' scoring from bit sets, and counts of more rows than the scanned table's (p->extra).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_accounting.h"
#include "dp_adaptive.h"
#include "dp_codes.h"
#include "dp_env.h"
#include "dp_marg.h"
#include "dp_prng.h"
#include "dp_random.h"
#include "unit.h"
#include "adult_data.h"
#include "dp_jtree.h"

/* Adult's rows repeated k times into big, its columns' sizes into sizes; false when not found */
static bool
load_adult_tiled(uint32_t k, dp_codes *big, uint32_t *sizes)
{
	acol	   *cols = calloc(ADULT_COLS, sizeof(acol));
	dp_codes	src;
	bool		ok = load_adult(&src, cols, sizes, UINT64_MAX);

	if (!ok)
		unit_check(false, "Adult: data/adult found and parsed");
	else
	{
		dp_codes_init(big, ADULT_COLS, k * src.nrows);
		for (uint32_t j = 0; j < ADULT_COLS; j++)
			for (uint64_t i = 0; i < k * src.nrows; i++)
				big->col[j][i] = src.col[j][i % src.nrows];
		big->nrows = k * src.nrows;
		dp_codes_free(&src);
	}
	free(cols);
	return ok;
}

/*
 * The adaptive method at rho 0.024356 (epsilon 1) on Adult tiled `times` times, on `threads`
 * threads, the synthesis's PRNG seeded with seed: false where Adult is not there (the test then
 * skips), else rc is the run's.
 */
static bool
run_tiled(uint32_t times, uint32_t threads, uint64_t seed, dp_codes *big, uint32_t *sizes,
		  dp_privsyn_params *p, dp_privsyn_result *res, dp_adaptive_stats *st, int *rc)
{
	dp_prng		rng;

	if (!load_adult_tiled(times, big, sizes))
		return false;
	dp_privsyn_default_params(p);
	p->rho = 0.024356;
	dp_set_threads(threads);
	dp_prng_seed(&rng, seed);
	*rc = dp_adaptive_run(big, sizes, p, &rng, res, st);
	return true;
}

/*
 * Two threads on Adult tiled 4 times (130,244 rows): the exact counts (64 candidates of 130k rows
 * per chunk), the rounds' scoring and the final GUM all split over threads.  The noise comes
 * from libsodium and cannot be seeded (by design), so two runs cannot be compared row for row;
 * the budget and the quality bar of test_adult catch counts that a split got wrong.
 */
static void
test_threads(void)
{
	uint32_t	sizes[ADULT_COLS];
	dp_codes	big;
	dp_privsyn_result res;
	dp_privsyn_params p;
	dp_adaptive_stats st;
	double		spent,
				ours;
	int			rc;

	if (!run_tiled(4, 2, 11, &big, sizes, &p, &res, &st, &rc))
		return;
	unit_check(rc == 0, "dp_adaptive_run on Adult x4 with 2 threads (%u rounds)", st.rounds);
	if (rc != 0)
		goto out;
	spent = st.rho_oneway + st.rho_select + st.rho_measure;
	unit_check(spent <= p.rho && spent >= p.rho * (1 - 1e-6), "2 threads: the budget adds up (%.9g of %.9g)",
			   spent, p.rho);
	ours = mean_tvd2(&big, &res.synth, sizes);
	unit_check(ours < 0.05, "2 threads: mean 2-way TVD %.4f below 0.05 (4x the rows of test_adult)", ours);
	dp_privsyn_result_free(&res);
out:
	dp_codes_free(&big);
	dp_set_threads(1);		/* the default again, for the tests after this one */
}

/* the iterations a GUM run reports (progress calls with an error, not heartbeats), and its iters */
typedef struct iter_count
{
	uint32_t	calls,
				iters;
} iter_count;

static int
count_iterations(void *arg, const dp_progress *p)
{
	iter_count *c = arg;

	if (p->err >= 0)
	{
		c->calls++;
		c->iters = (uint32_t) p->total;
	}
	return 0;
}

/*
 * The rounds' estimate size as a function of the released total (dp_adaptive_est_rows, step 3a):
 * every row up to DP_ADAPTIVE_SYNTH_ROWS, then DP_ADAPTIVE_SYNTH_ROWS up to 131,072 rows (the
 * total over which the rounds bound no tree), DP_ADAPTIVE_SYNTH_ROWS_BIG above.  The values on
 * either side of each step are pinned, and so is the threshold's tie to dp_adaptive_tree_bound.
 */
static void
test_est_rows(void)
{
	static const struct
	{
		double		total;
		uint64_t	rows;
	}			cases[] = {
		{0, 1}, {0.4, 1}, {1, 1}, {100.4, 100}, {100.6, 101}, {8191.4, 8191}, {8192, 8192},
		{32561, 8192}, {131072, 8192}, {131072.5, DP_ADAPTIVE_SYNTH_ROWS_BIG},
		{195366, DP_ADAPTIVE_SYNTH_ROWS_BIG}, {1e6, DP_ADAPTIVE_SYNTH_ROWS_BIG},
		{1e12, DP_ADAPTIVE_SYNTH_ROWS_BIG},
	};
	bool		ok = true;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (dp_adaptive_est_rows(cases[i].total) != cases[i].rows)
		{
			ok = false;
			unit_diag("total %.1f: %llu estimate rows, expected %llu", cases[i].total,
					  (unsigned long long) dp_adaptive_est_rows(cases[i].total),
					  (unsigned long long) cases[i].rows);
		}
	unit_check(ok, "estimate rows: min(total, 8,192) up to 131,072 released rows, %d above",
			   DP_ADAPTIVE_SYNTH_ROWS_BIG);
	unit_check(dp_adaptive_est_rows(NAN) == 1 && dp_adaptive_est_rows(-5) == 1,
			   "estimate rows: a total that is not a number of at least one row gives 1 row");
	unit_check(dp_adaptive_tree_bound(131072) > 0 && dp_adaptive_tree_bound(131072.5) == 0 &&
			   DP_ADAPTIVE_SYNTH_ROWS_BIG > DP_ADAPTIVE_SYNTH_ROWS && DP_ADAPTIVE_SYNTH_ROWS_BIG < 131072,
			   "the larger estimates start where the rounds bound no tree; the cap is below that total");
}

/*
 * The rounds cut on huge tables (step 3): from a released total of DP_ADAPTIVE_HUGE_ROWS rows
 * (2^19), a round selects ceil(d / 4) marginals instead of ceil(d / 8), and the cap on distinct
 * k-way marginals is 2^25 / total instead of 2^27 / total (at least min(4 d, 128) either way).  Below it both rules are the earlier
 * ones: pinned at the sizes of ../shared/datasets (at most 36k rows), of bench/heaped.sh's table
 * (195,366 rows, 10 columns: its at most 16 d = 160 selections stay under either cap) and just
 * under the threshold; above it at Adult's 1M-row copy (15 columns: a batch of 4, 60 marginals, the floor 4 d).
 */
static void
test_huge_rules(void)
{
	static const struct
	{
		uint32_t	d;
		double		total;
		uint32_t	batch;
		uint64_t	kmax;
	}			cases[] = {
		{15, 32561, 2, 4122}, {10, 195366, 2, 687}, {15, 195366, 2, 687}, {100, 195366, 13, 687},
		{15, 524287, 2, 256}, {15, 524288, 4, 64}, {15, 1e6, 4, 60}, {10, 1e6, 3, 40},
		{100, 1e6, 25, 128}, {15, 9768300, 4, 60}, {1, 1e6, 1, 33}, {8, 32561, 1, 4122},
		{30, 600000, 8, 120},
	};
	bool		ok = true;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (dp_adaptive_batch(cases[i].d, cases[i].total) != cases[i].batch ||
			dp_adaptive_max_kway(cases[i].d, cases[i].total) != cases[i].kmax)
		{
			ok = false;
			unit_diag("d %u, total %.0f: batch %u (expected %u), at most %llu k-way marginals (expected %llu)",
					  cases[i].d, cases[i].total, dp_adaptive_batch(cases[i].d, cases[i].total), cases[i].batch,
					  (unsigned long long) dp_adaptive_max_kway(cases[i].d, cases[i].total),
					  (unsigned long long) cases[i].kmax);
		}
	unit_check(ok, "the rounds' batch and k-way cap: ceil(d / 8) and 2^27 / total below %.0f released rows, "
			   "ceil(d / 4) and 2^25 / total from there", DP_ADAPTIVE_HUGE_ROWS);
	unit_check(DP_ADAPTIVE_HUGE_ROWS > 195366 && (double) DP_ADAPTIVE_SELECTIONS_MAX * 10 < DP_ADAPTIVE_GUM_WORK / 195366,
			   "the heaped table (195,366 rows, 10 columns) is under the threshold and its cap cannot bind");
}

/*
 * Adult repeated 8 times: s = 16, since the estimates hold DP_ADAPTIVE_SYNTH_ROWS_BIG rows over
 * 131,072 (dp_adaptive_est_rows).  The estimate's resolution enters the rounds' bar, so the rounds
 * anneal and end near Adult's own count instead of running to T / B with none; the bars below ask
 * for that, for the budget to add up, for a cold-started GUM from a bounded sub-model, and for
 * dp_sample's draw to repeat with the same seed (bench/RESULTS.md holds the runs' figures).
 */
static void
test_large_n(void)
{
	uint32_t	sizes[ADULT_COLS];
	dp_codes	big;
	dp_privsyn_result res;
	dp_privsyn_params p;
	dp_adaptive_stats st;
	dp_prng		rng;
	double		spent,
				ours;
	int			rc;

	if (!run_tiled(8, 1, 13, &big, sizes, &p, &res, &st, &rc))
		return;
	unit_check(rc == 0, "dp_adaptive_run on Adult x8");
	if (rc != 0)
		goto out;
	unit_check(st.selections == 16 * ADULT_COLS && st.anneals >= 1 && st.rounds >= 10 && st.rounds < 120,
			   "Adult x8 (s = 16): T = %.0f (16 d), %u rounds of at most T / B = 120, %u anneals",
			   st.selections, st.rounds, st.anneals);
	spent = st.rho_oneway + st.rho_select + st.rho_measure;
	unit_check(!st.final_warm && res.synth.nrows > 200000 && st.est_rows == DP_ADAPTIVE_SYNTH_ROWS_BIG &&
			   st.triples == 0,
			   "Adult x8: %llu synthetic rows from a cold start (the estimate has %llu), no triples",
			   (unsigned long long) res.synth.nrows, (unsigned long long) st.est_rows);
	unit_check(spent <= p.rho && spent >= p.rho * (1 - 1e-6), "Adult x8: the budget adds up (%.9g of %.9g)",
			   spent, p.rho);
	unit_check(st.tree_builds == 0 && st.final_tree_cells == 0,
			   "Adult x8: no tree bound at 32 cells a row over 2^22 (%u trees built); GUM draws", st.tree_builds);
	unit_check(st.final_sub_margs > ADULT_COLS && st.final_sub_margs <= res.nmargs &&
			   st.final_sub_cells > 0 && st.final_sub_cells <= DP_ADAPTIVE_JTREE_CELLS,
			   "Adult x8: GUM starts from a sub-model of %u of %u marginals on a tree of %llu cells (at most 2^22)",
			   st.final_sub_margs, res.nmargs, (unsigned long long) st.final_sub_cells);
	{
		/* dp_sample's draw: the same seed, the same rows; under the threshold, dp_privsyn_sample's */
		dp_gum_params g;
		dp_codes	a,
					b;
		dp_adaptive_draw how,
					how2;
		double		keep = res.total;
		bool		same = true;

		dp_gum_default_params(&g);
		g.iterations = dp_adaptive_final_iters(g.iterations);
		g.maxent_cells = DP_ADAPTIVE_MAXENT_CELLS;
		g.jtree_cells = DP_ADAPTIVE_JTREE_CELLS;
		dp_prng_seed(&rng, 5);
		rc = dp_adaptive_sample(&res, ADULT_COLS, sizes, 50000, &g, &rng, &a, &how);
		dp_prng_seed(&rng, 5);
		rc |= dp_adaptive_sample(&res, ADULT_COLS, sizes, 50000, &g, &rng, &b, &how2);
		for (uint32_t j = 0; rc == 0 && j < ADULT_COLS; j++)
			same &= memcmp(a.col[j], b.col[j], sizeof(uint16_t) * 50000) == 0;
		unit_check(rc == 0 && same && how.sub_margs > ADULT_COLS && how.sub_margs == how2.sub_margs,
				   "dp_adaptive_sample: a seed's 50,000 rows again row for row, from the sub-model (%u marginals)",
				   how.sub_margs);
		dp_codes_free(&a);
		dp_codes_free(&b);
		{
			/* GUM after the sub-model's rows: dp_adaptive_submodel_iters at most, asked for 30 */
			iter_count	c = {0, 0};
			dp_gum_params gc = g;
			uint32_t	w = dp_adaptive_submodel_iters(res.n_kway, 50000);
			dp_privsyn_result wide = res;
			/*
			 * every k-way marginal listed `times` times: twice, or more when the model has too few
			 * k-way marginals for 2^19 rows to reach the work bound (DP_ADAPTIVE_FINAL_WORK over
			 * 2^19 rows and 5 iterations: more than 102), which the check at 2^19 rows below needs;
			 * the model's size follows the run's noise
			 */
			uint32_t	times = res.n_kway > 0 && 2 * res.n_kway <= 102 ? 102 / res.n_kway + 1 : 2;
			dp_marg    *twice = malloc(sizeof(dp_marg) * (res.nmargs + (times - 1) * res.n_kway));

			gc.progress = count_iterations;
			gc.progress_arg = &c;
			dp_prng_seed(&rng, 5);
			rc = dp_adaptive_sample(&res, ADULT_COLS, sizes, 50000, &gc, &rng, &a, &how);
			unit_check(rc == 0 && how.sub_margs > ADULT_COLS && g.iterations > DP_ADAPTIVE_SUBMODEL_WARM_ITERS &&
					   c.calls >= 1 && c.calls <= w && c.iters == w,
					   "dp_adaptive_sample from the sub-model: %u GUM iterations of %u (asked for %u, at most %u for %u k-way marginals)",
					   c.calls, c.iters, g.iterations, w, res.n_kway);
			dp_codes_free(&a);

			/*
			 * the same model with every k-way marginal listed `times` times: that many times the
			 * visits an iteration, so fewer iterations (the released values are the same; a test of the budget only)
			 */
			if (twice)
			{
				uint32_t	nw = 0;

				for (uint32_t k = 0; k < res.nmargs; k++)
				{
					twice[nw++] = res.margs[k];
					for (uint32_t t = 1; t < times && res.margs[k].nattrs >= 2; t++)
						twice[nw++] = res.margs[k];
				}
				wide.margs = twice;
				wide.nmargs = nw;
				c.calls = c.iters = 0;
				dp_prng_seed(&rng, 5);
				rc = dp_adaptive_sample(&wide, ADULT_COLS, sizes, 50000, &gc, &rng, &a, &how);
				unit_check(rc == 0 && c.iters == dp_adaptive_submodel_iters(times * res.n_kway, 50000) &&
						   c.iters < DP_ADAPTIVE_SUBMODEL_WARM_ITERS && c.calls >= 1 && c.calls <= c.iters,
						   "dp_adaptive_sample, %u k-way marginals: %u GUM iterations of %u (at most %d)",
						   times * res.n_kway, c.calls, c.iters, DP_ADAPTIVE_SUBMODEL_WARM_ITERS);
				if (rc == 0)
					dp_codes_free(&a);

				/*
				 * the same model asked for 2^19 rows: the rows asked for reach the work bound, so
				 * fewer iterations again (the rows' number is the caller's, not the model's)
				 */
				{
					uint32_t	was = c.iters,
								big = dp_adaptive_submodel_iters(times * res.n_kway, (uint64_t) DP_ADAPTIVE_HUGE_ROWS);

					unsigned long recounts;
					uint64_t	chunks = ((uint64_t) DP_ADAPTIVE_HUGE_ROWS + dp_adaptive_gum_chunk((uint64_t) DP_ADAPTIVE_HUGE_ROWS) - 1) /
						dp_adaptive_gum_chunk((uint64_t) DP_ADAPTIVE_HUGE_ROWS);

					c.calls = c.iters = 0;
					dp_prng_seed(&rng, 5);
					(void) dp_gum_test_recounts();
					rc = dp_adaptive_sample(&wide, ADULT_COLS, sizes, (uint64_t) DP_ADAPTIVE_HUGE_ROWS, &gc, &rng, &a, &how);
					recounts = dp_gum_test_recounts();
					unit_check(rc == 0 && c.iters == big && big < was && c.calls >= 1 && c.calls <= c.iters &&
							   a.nrows == (uint64_t) DP_ADAPTIVE_HUGE_ROWS,
							   "dp_adaptive_sample of %.0f rows, %u k-way marginals: %u GUM iterations of %u (%u at 50,000 rows)",
							   DP_ADAPTIVE_HUGE_ROWS, times * res.n_kway, c.calls, c.iters, was);
					/*
					 * there a marginal's error is taken at its visit (dp_gum_params.visit_errors): a
					 * chunk recounts each marginal once to start and at most once a visit, never at
					 * an iteration's end
					 */
					unit_diag("dp_adaptive_sample of %.0f rows: %lu recounts in %llu chunks of %u marginals, %u iterations",
							  DP_ADAPTIVE_HUGE_ROWS, recounts, (unsigned long long) chunks, wide.nmargs, big);
					unit_check(rc == 0 && recounts <= chunks * wide.nmargs * (big + 1),
							   "dp_adaptive_sample of %.0f rows: no recount at a GUM iteration's end (%lu recounts, at most %llu)",
							   DP_ADAPTIVE_HUGE_ROWS, recounts, (unsigned long long) (chunks * wide.nmargs * (big + 1)));
					/* there GUM runs on the draw's chunks on their own: the same rows on 2 threads */
					if (rc == 0)
					{
						dp_codes	a2;
						bool		same2 = true;

						dp_set_threads(2);
						dp_prng_seed(&rng, 5);
						rc = dp_adaptive_sample(&wide, ADULT_COLS, sizes, (uint64_t) DP_ADAPTIVE_HUGE_ROWS, &gc, &rng, &a2, &how);
						dp_set_threads(1);
						for (uint32_t j = 0; rc == 0 && j < ADULT_COLS; j++)
							same2 = same2 && memcmp(a.col[j], a2.col[j], sizeof(uint16_t) * a.nrows) == 0;
						unit_check(rc == 0 && same2 && a2.nrows == a.nrows && how.sub_margs > 0,
								   "dp_adaptive_sample of %.0f rows from a sub-model (%u marginals): the same rows on 1 and 2 threads",
								   DP_ADAPTIVE_HUGE_ROWS, how.sub_margs);
						if (rc == 0)
							dp_codes_free(&a2);
						dp_codes_free(&a);
					}
				}
				free(twice);
			}
		}
		res.total = 131072;		/* a released total with a tree bound: dp_privsyn_sample alone */
		dp_prng_seed(&rng, 5);
		rc = dp_adaptive_sample(&res, ADULT_COLS, sizes, 50000, &g, &rng, &a, &how);
		dp_prng_seed(&rng, 5);
		rc |= dp_privsyn_sample(&res, ADULT_COLS, sizes, 50000, &g, &rng, &b);
		same = true;
		for (uint32_t j = 0; rc == 0 && j < ADULT_COLS; j++)
			same &= memcmp(a.col[j], b.col[j], sizeof(uint16_t) * 50000) == 0;
		unit_check(rc == 0 && same && how.sub_margs == 0,
				   "dp_adaptive_sample at a total of 131,072: dp_privsyn_sample's rows, row for row");
		dp_codes_free(&a);
		dp_codes_free(&b);
		res.total = keep;
	}
	ours = mean_tvd2(&big, &res.synth, sizes);
	unit_check(ours < 0.0185, "Adult x8: mean 2-way TVD %.4f below 0.0185 (%u pairs measured; rows by %s, tree %llu cells, %u unbounded)", ours, res.n_kway,
			   st.final_maxent ? "maximum entropy" : "GUM", (unsigned long long) st.final_tree_cells, st.tree_unbounded);
	dp_privsyn_result_free(&res);
out:
	dp_codes_free(&big);
}

/*
 * Adult's first 5,000 rows: the estimate holds every row (s = 1: v = 0, or about 1e-4 y when the
 * noisy total rounds down), so the rounds behave as under AIM's bar alone: a few anneals and a
 * count of rounds well inside 6-20.  A bar too high anneals every round (4 rounds), one too low
 * never (120): either fails the check.
 */
static void
test_small_n(void)
{
	acol	   *cols = calloc(ADULT_COLS, sizeof(acol));
	uint32_t	sizes[ADULT_COLS];
	dp_codes	src;
	dp_privsyn_result res;
	dp_privsyn_params p;
	dp_adaptive_stats st;
	dp_prng		rng;
	int			rc;

	if (!load_adult(&src, cols, sizes, 5000))
	{
		unit_check(false, "Adult: data/adult found and parsed");
		free(cols);
		return;
	}
	dp_privsyn_default_params(&p);
	p.rho = 0.024356;
	dp_prng_seed(&rng, 17);
	rc = dp_adaptive_run(&src, sizes, &p, &rng, &res, &st);
	unit_check(rc == 0 && st.rounds >= 6 && st.rounds <= 20 && st.anneals >= 1 && st.anneals <= 4,
			   "Adult's first 5,000 rows (s = 1): %u rounds, %u anneals (6-20 rounds, 1-4 anneals)",
			   st.rounds, st.anneals);
	unit_check(rc == 0 && st.triples > 0 && st.triples <= DP_ADAPTIVE_TRIPLES_PER_COL * ADULT_COLS,
			   "Adult's first 5,000 rows (the estimates hold every row): %u triple candidates, %u measured",
			   st.triples, st.triples_measured);
	/* warm from the last estimate, unless drawn by maximum entropy (a small junction tree) */
	unit_check(rc == 0 && st.final_warm == !st.final_maxent && res.synth.nrows > 4800 && res.synth.nrows < 5200,
			   "Adult's first 5,000 rows: %llu synthetic rows, %s",
			   rc == 0 ? (unsigned long long) res.synth.nrows : 0ULL,
			   st.final_maxent ? "by maximum entropy" : "started from the last estimate");
	if (rc == 0)
		dp_privsyn_result_free(&res);
	/* fewer rows asked for than the estimate has: a uniform draw of them (the cut), or cold */
	for (int k = 0; k < 2; k++)
	{
		p.rows = k == 0 ? 4500 : 1000;
		rc = dp_adaptive_run(&src, sizes, &p, &rng, &res, &st);
		unit_check(rc == 0 && res.synth.nrows == p.rows && st.final_warm == (k == 0 && !st.final_maxent),
				   "Adult's first 5,000 rows, rows => %llu: %llu rows, %s start",
				   (unsigned long long) p.rows, rc == 0 ? (unsigned long long) res.synth.nrows : 0ULL,
				   st.final_warm ? "a warm" : "a cold");
		if (rc == 0)
			dp_privsyn_result_free(&res);
	}
	dp_codes_free(&src);
	free(cols);
}

/*
 * The rounds' scoring counts small candidates of the estimate from bit sets: the counts must
 * be the histogram's, cell for cell, for columns from 1 code to past the bit sets' limit, and
 * row counts that are not a multiple of 64, nor of 512 (the words counted eight at a time where
 * the processor has VPOPCNTQ, the rest one by one: 700 rows are 11 words, 8 and 3).
 */
static void
test_bits(void)
{
	static const uint32_t sizes[] = {1, 2, 3, 7, 11, 64, 65, 200, 2, 5};
	const uint32_t d = sizeof(sizes) / sizeof(sizes[0]);
	const uint64_t rows[] = {1, 63, 64, 65, 700, 1000, 8191};
	dp_prng		rng;

	dp_prng_seed(&rng, 23);
	/* every row count twice: as this processor counts, then as one without VPOPCNTQ */
	for (size_t rr = 0; rr < 2 * sizeof(rows) / sizeof(rows[0]); rr++)
	{
		size_t		r = rr % (sizeof(rows) / sizeof(rows[0]));
		dp_codes	t;
		int64_t		bad;

		if (dp_codes_init(&t, d, rows[r]) != 0)
		{
			unit_check(false, "bit sets: a table of %llu rows", (unsigned long long) rows[r]);
			return;
		}
		for (uint32_t c = 0; c < d; c++)
			for (uint64_t i = 0; i < rows[r]; i++)
				/* skewed: most rows in code 0, as merged columns are */
				t.col[c][i] = (uint16_t) (dp_prng_below(&rng, 3) == 0 ? 0 : dp_prng_below(&rng, sizes[c]));
		t.nrows = rows[r];
		dp_adaptive_test_no_vpopcnt(rr >= sizeof(rows) / sizeof(rows[0]));
		bad = dp_adaptive_bits_check(&t, sizes);
		dp_adaptive_test_no_vpopcnt(false);
		unit_check(bad < -2, "bit sets and histogram agree on %llu rows%s: %lld (cells differing, or -2 - marginals compared)",
				   (unsigned long long) rows[r], rr >= sizeof(rows) / sizeof(rows[0]) ? " without VPOPCNTQ" : "",
				   (long long) bad);
		dp_codes_free(&t);
	}
}

/*
 * Counts from elsewhere (dp_privsyn_params.extra, docs/DISTRIBUTED.md): Adult's rows split in
 * two, the first part the run's table, the second given as its exact one-way and pair counts
 * (as shards would send them).  At a rho so large that the discrete Gaussian draws 0 on every
 * cell (sigma about 0.001), every released marginal is an exact count: those of ALL the rows,
 * over the merged codes, for the split run, and of the first part alone without the counts.
 * Also: all the rows given as counts (an empty table), the PrivSyn method refusing them, and
 * counts without their pairs refused.
 */
static void
extra_counts_of(const dp_codes *t, uint64_t from, uint64_t to, const uint32_t *sizes, uint64_t **one,
				uint64_t **pair)
{
	uint32_t	d = t->ncols;
	size_t		k = 0;

	for (uint32_t j = 0; j < d; j++)
	{
		one[j] = calloc(sizes[j], sizeof(uint64_t));
		for (uint64_t i = from; i < to; i++)
			one[j][t->col[j][i]]++;
	}
	for (uint32_t a = 0; a < d; a++)
		for (uint32_t b = a + 1; b < d; b++, k++)
		{
			pair[k] = calloc((size_t) sizes[a] * sizes[b], sizeof(uint64_t));
			for (uint64_t i = from; i < to; i++)
				pair[k][(size_t) t->col[a][i] * sizes[b] + t->col[b][i]]++;
		}
}

/* the largest |released - exact| over the model's marginals, exact counted on rows [0, n) of t */
static double
worst_vs_exact(const dp_privsyn_result *res, const dp_codes *t, uint64_t n)
{
	dp_codes	m;
	double		worst = 0;

	dp_codes_init(&m, t->ncols, n ? n : 1);
	for (uint32_t j = 0; j < t->ncols; j++)
		for (uint64_t i = 0; i < n; i++)
			m.col[j][i] = res->code_map[j][t->col[j][i]];
	m.nrows = n;
	for (uint32_t k = 0; k < res->nmargs; k++)
	{
		dp_marg		x;

		dp_marg_init(&x, res->margs[k].nattrs, res->margs[k].attrs, res->merged_sizes);
		dp_marg_count(&x, &m);
		for (uint64_t c = 0; c < x.ncells; c++)
			worst = fmax(worst, fabs(x.cells[c] - res->margs[k].cells[c]));
		dp_marg_free(&x);
	}
	dp_codes_free(&m);
	return worst;
}

static void
test_extra(void)
{
	acol	   *cols = calloc(ADULT_COLS, sizeof(acol));
	uint32_t	sizes[ADULT_COLS];
	enum {NPAIRS = ADULT_COLS * (ADULT_COLS - 1) / 2};
	uint64_t   *one[ADULT_COLS],
			   *pair[NPAIRS],
			   *all1[ADULT_COLS],
			   *all2[NPAIRS];
	dp_extra_counts ex,
				exall;
	dp_codes	src,
				part,
				empty;
	dp_privsyn_params p;
	dp_privsyn_result res;
	dp_adaptive_stats st;
	dp_prng		rng;
	uint64_t	cut;
	int			rc;
	double		w;

	if (!load_adult(&src, cols, sizes, UINT64_MAX))
	{
		unit_check(false, "Adult: data/adult found and parsed");
		free(cols);
		return;
	}
	cut = src.nrows / 3;
	dp_codes_init(&part, ADULT_COLS, cut);
	for (uint32_t j = 0; j < ADULT_COLS; j++)
		memcpy(part.col[j], src.col[j], sizeof(uint16_t) * cut);
	part.nrows = cut;
	extra_counts_of(&src, cut, src.nrows, sizes, one, pair);
	ex = (dp_extra_counts) {src.nrows - cut, (const uint64_t *const *) one, (const uint64_t *const *) pair};

	dp_privsyn_default_params(&p);
	p.rho = 1e6;
	p.rows = 1000;
	p.extra = &ex;
	dp_prng_seed(&rng, 21);
	rc = dp_adaptive_run(&part, sizes, &p, &rng, &res, &st);
	unit_check(rc == 0 && res.n_kway >= 1 && st.triples == 0, "a run over %llu rows plus the counts of %llu more "
			   "(%u k-way marginals, no triples)", (unsigned long long) cut, (unsigned long long) (src.nrows - cut),
			   rc == 0 ? res.n_kway : 0);
	if (rc == 0)
	{
		w = worst_vs_exact(&res, &src, src.nrows);
		unit_check(w < 1e-6 && fabs(res.total - src.nrows) < 1e-6,
				   "it releases the counts of all %llu rows (worst cell off by %.3g, total %.1f)",
				   (unsigned long long) src.nrows, w, res.total);
		dp_privsyn_result_free(&res);
	}

	p.extra = NULL;
	rc = dp_adaptive_run(&part, sizes, &p, &rng, &res, &st);
	if (rc == 0)
	{
		w = worst_vs_exact(&res, &src, cut);
		unit_check(w < 1e-6 && fabs(res.total - cut) < 1e-6 && worst_vs_exact(&res, &src, src.nrows) > 100,
				   "without the counts, those of its own %llu rows", (unsigned long long) cut);
		dp_privsyn_result_free(&res);
	}
	else
		unit_check(false, "a run over the first part alone (rc %d)", rc);

	/* every row elsewhere: an empty table */
	extra_counts_of(&src, 0, src.nrows, sizes, all1, all2);
	exall = (dp_extra_counts) {src.nrows, (const uint64_t *const *) all1, (const uint64_t *const *) all2};
	dp_codes_init(&empty, ADULT_COLS, 1);
	p.extra = &exall;
	rc = dp_adaptive_run(&empty, sizes, &p, &rng, &res, &st);
	unit_check(rc == 0 && worst_vs_exact(&res, &src, src.nrows) < 1e-6,
			   "an empty table plus the counts of every row: the counts of every row (rc %d)", rc);
	if (rc == 0)
		dp_privsyn_result_free(&res);

	/*
	 * The cap on distinct k-way marginals: its rule (dp_adaptive_max_kway: 2^27 / total, or
	 * 2^25 / total from 2^19 rows, at least min(4 d, 128)), then a run of Adult's counts with the cap set to 10 (p.max_kway): the
	 * budget of 1e6 makes 28-50 selections before anneals spend it, so the cap is reached and the
	 * selections after it measure again.
	 */
	p.max_kway = 10;
	rc = dp_adaptive_run(&empty, sizes, &p, &rng, &res, &st);
	p.max_kway = 0;
	unit_check(rc == 0 && st.max_kway == 10 && res.n_kway == 10 && st.remeasured > 0 &&
			   dp_adaptive_max_kway(ADULT_COLS, 9768300) == 4 * ADULT_COLS &&
			   dp_adaptive_max_kway(100, 600000) == 128 && dp_adaptive_max_kway(100, 500000) == 268 &&
			   dp_adaptive_max_kway(100, 3e6) == 128 &&
			   dp_adaptive_max_kway(ADULT_COLS, 32561) == 4122 && dp_adaptive_max_kway(ADULT_COLS, 0) == 1u << 27 &&
			   dp_adaptive_max_kway(ADULT_COLS, NAN) == 1u << 27,
			   "at most %u distinct k-way marginals (set): %u measured, %u selections measured again",
			   st.max_kway, rc == 0 ? res.n_kway : 0, st.remeasured);
	if (rc == 0)
		dp_privsyn_result_free(&res);

	/* counts that are not those of one set of rows: refused (a pair's total off by one) */
	all2[NPAIRS - 1][0]++;
	p.extra = &exall;
	rc = dp_adaptive_run(&empty, sizes, &p, &rng, &res, &st);
	unit_check(rc != 0 && strstr(dp_last_error(), "one set of rows") != NULL,
			   "counts whose pairs do not add up to their rows are refused: %s", dp_last_error());
	all2[NPAIRS - 1][0]--;

	/*
	 * More rows than 2^31 elsewhere (3e9, all in one cell): no refusal (it would depend on the
	 * rows' number after the charge); the candidates' counts are clamped, the one-way marginals
	 * (doubles) are not.
	 */
	{
		static const uint32_t bsizes[2] = {2, 2};
		uint64_t	b0[2] = {3000000000u, 0},
					b1[2] = {3000000000u, 0},
					b01[4] = {3000000000u, 0, 0, 0};
		const uint64_t *bone[2] = {b0, b1},
				   *bpair[1] = {b01};
		dp_extra_counts bex = {3000000000u, bone, bpair};
		dp_codes	bempty;

		dp_codes_init(&bempty, 2, 1);
		p.extra = &bex;
		p.rho = 1;
		rc = dp_adaptive_run(&bempty, bsizes, &p, &rng, &res, &st);
		unit_check(rc == 0 && res.total > 2.1e9 && res.total < 3.0e9 + 1e3,
				   "3e9 rows counted elsewhere: no refusal; the pair's cell clamped at 2^31 - 1 pulls the "
				   "consistent total to %.4g (rc %d%s%s)", rc == 0 ? res.total : 0, rc, rc ? ": " : "",
				   rc ? dp_last_error() : "");
		if (rc == 0)
			dp_privsyn_result_free(&res);
		dp_codes_free(&bempty);
		p.rho = 1e6;
		p.extra = &exall;
	}

	/* refused: the PrivSyn method, and counts without their pairs */
	rc = dp_privsyn_run(&part, sizes, &p, &rng, &res);
	unit_check(rc != 0 && strstr(dp_last_error(), "PrivSyn") != NULL,
			   "the PrivSyn method refuses counts from elsewhere: %s", dp_last_error());
	exall.pair = NULL;
	rc = dp_adaptive_run(&part, sizes, &p, &rng, &res, &st);
	unit_check(rc != 0 && strstr(dp_last_error(), "pair") != NULL, "counts without the pairs' are refused: %s",
			   dp_last_error());

	/*
	 * A small table (3,000 rows: the estimates hold every row) takes triples, but not with counts
	 * from elsewhere: a triple's counts would be read from the table.
	 */
	{
		dp_codes	small,
					half;
		uint64_t   *s1[ADULT_COLS],
				   *s2[NPAIRS];
		dp_extra_counts sex;
		uint32_t	without,
					with;

		dp_codes_free(&src);
		load_adult(&src, cols, sizes, 3000);
		small = src;
		dp_codes_init(&half, ADULT_COLS, 1500);
		for (uint32_t j = 0; j < ADULT_COLS; j++)
			memcpy(half.col[j], small.col[j], sizeof(uint16_t) * 1500);
		half.nrows = 1500;
		extra_counts_of(&small, 1500, small.nrows, sizes, s1, s2);
		sex = (dp_extra_counts) {small.nrows - 1500, (const uint64_t *const *) s1, (const uint64_t *const *) s2};
		p.rho = 0.024356;
		p.rows = 0;
		p.extra = NULL;
		rc = dp_adaptive_run(&small, sizes, &p, &rng, &res, &st);
		without = rc == 0 ? st.triples : 0;
		if (rc == 0)
			dp_privsyn_result_free(&res);
		p.extra = &sex;
		rc = dp_adaptive_run(&half, sizes, &p, &rng, &res, &st);
		with = rc == 0 ? st.triples : UINT32_MAX;
		if (rc == 0)
			dp_privsyn_result_free(&res);
		unit_check(without > 0 && with == 0,
				   "3,000 rows: %u triple candidates over the table, %u with half of it counted elsewhere", without, with);
		for (uint32_t j = 0; j < ADULT_COLS; j++)
			free(s1[j]);
		for (uint32_t k = 0; k < NPAIRS; k++)
			free(s2[k]);
		dp_codes_free(&half);
	}

	for (uint32_t j = 0; j < ADULT_COLS; j++)
		free(one[j]), free(all1[j]);
	for (uint32_t k = 0; k < NPAIRS; k++)
		free(pair[k]), free(all2[k]);
	dp_codes_free(&empty);
	dp_codes_free(&part);
	dp_codes_free(&src);
	free(cols);
}

int
main(int argc, char **argv)
{
	(void) argc;
	argv0 = argv[0];
	if (dp_random_init() != 0)
	{
		printf("not ok 1 - libsodium\n1..1\n");
		return 1;
	}
	test_est_rows();
	test_huge_rules();
	test_threads();
	test_small_n();
	test_large_n();
	test_bits();
	test_extra();
	return unit_done();
}
