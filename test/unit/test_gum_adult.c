/*
 * test_gum_adult.c - unit tests of src/core/dp_gum.c on the real UCI Adult table (data/adult,
 * 32,561 rows):
 *
 * - the bar: exact 1-way and 2-way marginals fed to GUM with n = 32,561; the mean normalised 2-way
 *   L1 error after GUM is reported and asserted below a measured bar, and the run time is reported;
 * - the same rows with every thread count, and cancellation with threads;
 * - the grouped layout of a wide component: the same rows with every counting mode and thread count.
 *
 * The small synthetic cases are test_gum.c's, the failures test_gum_errors.c's.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dp_codes.h"
#include "dp_env.h"
#include "dp_gum.h"
#include "dp_marg.h"
#include "dp_prng.h"
#include "unit.h"
#include "unit_gum.h"


/* ---------- the real Adult table ---------- */

#include "adult_data.h"

/* pairs by column name */
static const char *adult_pairs[][2] = {
	{"income", "age"}, {"income", "education"}, {"income", "marital_status"},
	{"income", "occupation"}, {"income", "relationship"}, {"income", "sex"},
	{"income", "hours_per_week"}, {"income", "capital_gain"}, {"income", "workclass"},
	{"education", "education_num"}, {"education", "occupation"}, {"education", "age"},
	{"age", "marital_status"}, {"age", "relationship"}, {"age", "hours_per_week"},
	{"sex", "relationship"}, {"sex", "occupation"}, {"sex", "hours_per_week"},
	{"relationship", "marital_status"}, {"race", "native_country"}, {"occupation", "workclass"},
};
#define NPAIRS ((uint32_t) (sizeof(adult_pairs) / sizeof(adult_pairs[0])))

static uint32_t
col_of(const acol *cols, const char *name)
{
	for (uint32_t j = 0; j < ADULT_COLS; j++)
		if (strcmp(cols[j].name, name) == 0)
			return j;
	fprintf(stderr, "no column %s\n", name);
	exit(2);
}

static int
count_iters(void *arg, const dp_progress *pr)
{
	uint32_t	iter = (uint32_t) pr->done;
	uint32_t	iters = (uint32_t) pr->total;
	double		err = pr->err;
	(void) iters;
	((uint32_t *) arg)[0] = iter;
	((double *) ((uint32_t *) arg + 2))[0] = err;
	return 0;
}

static void
run_adult(const dp_codes *src, const acol *cols, const uint32_t *sizes, uint64_t n, const char *label)
{
	dp_marg		tg[ADULT_COLS + NPAIRS];
	uint32_t	nt = 0;
	dp_codes	out;
	dp_prng		rng;
	dp_gum_params p;
	double		t0,
				dt,
				sum2 = 0,
				max2 = 0,
				sum1 = 0,
				ind = 0;
	int			rc;
	uint32_t	st[4] = {0, 0, 0, 0};

	for (uint32_t i = 0; i < NPAIRS; i++)
	{
		uint32_t	a[2] = {col_of(cols, adult_pairs[i][0]), col_of(cols, adult_pairs[i][1])};

		exact_marg(&tg[nt++], src, 2, a, sizes);
	}
	add_one_ways(tg, &nt, src, sizes);

	/* baseline for scale: 0 iterations (core columns independent, leaves still appended) */
	dp_gum_default_params(&p);
	p.iterations = 0;
	dp_prng_seed(&rng, 2024);
	dp_codes_init(&out, ADULT_COLS, 0);
	dp_gum_run(tg, nt, ADULT_COLS, sizes, n, &p, &rng, &out);
	for (uint32_t i = 0; i < NPAIRS; i++)
		ind += l1_of(&tg[i], &out, sizes) / NPAIRS;
	dp_codes_free(&out);

	dp_gum_default_params(&p);
	p.progress = count_iters;
	p.progress_arg = st;
	dp_prng_seed(&rng, 2024);
	dp_codes_init(&out, ADULT_COLS, 0);
	t0 = now_s();
	rc = dp_gum_run(tg, nt, ADULT_COLS, sizes, n, &p, &rng, &out);
	dt = now_s() - t0;
	unit_check(rc == 0 && out.nrows == n, "%s: GUM runs, %llu rows (rc %d)", label,
			   (unsigned long long) n, rc);
	for (uint32_t i = 0; i < NPAIRS; i++)
	{
		double		e = l1_of(&tg[i], &out, sizes);

		sum2 += e;
		if (e > max2)
			max2 = e;
	}
	for (uint32_t i = NPAIRS; i < nt; i++)
		sum1 += l1_of(&tg[i], &out, sizes);
	unit_diag("%s: %llu rows, %u 2-way + %u 1-way exact targets, %u iterations (last mean L1 of "
			  "iterated targets %.5f), %.3f s", label, (unsigned long long) n, NPAIRS, ADULT_COLS,
			  st[0], *(double *) (st + 2), dt);
	unit_diag("%s: 2-way L1 mean %.5f, max %.5f (0 iterations: mean %.4f); 1-way L1 mean %.5f",
			  label, sum2 / NPAIRS, max2, ind, sum1 / ADULT_COLS);
	/*
	 * Measured (seed 2024, full table, default parameters: early stop after ~40 iterations):
	 * mean 2-way L1 0.0045 (seeds 1..8: 0.0044 - 0.0052; 200 iterations without early stop:
	 * 0.0056), max 0.022, mean 1-way 0.0007; independent columns give a mean of ~0.31.  The
	 * bars are about 1.5 times the measured values.
	 */
	unit_check(sum2 / NPAIRS < 0.007, "%s: mean 2-way L1 %.5f < 0.007", label, sum2 / NPAIRS);
	unit_check(max2 < 0.035, "%s: max 2-way L1 %.5f < 0.035", label, max2);
	unit_check(sum1 / ADULT_COLS < 0.002, "%s: mean 1-way L1 %.5f < 0.002", label, sum1 / ADULT_COLS);
	unit_diag("%s: GUM time %.3f s (timed in bench/gum.sh, not here)", label, dt);
	dp_codes_free(&out);

	/* all 200 iterations (no early stop): the time the brief asks about */
	p.tolerance = -1;
	dp_prng_seed(&rng, 2024);
	dp_codes_init(&out, ADULT_COLS, 0);
	t0 = now_s();
	rc = dp_gum_run(tg, nt, ADULT_COLS, sizes, n, &p, &rng, &out);
	dt = now_s() - t0;
	sum2 = 0;
	for (uint32_t i = 0; i < NPAIRS; i++)
		sum2 += l1_of(&tg[i], &out, sizes);
	unit_diag("%s: without early stop, %u iterations: 2-way L1 mean %.5f, %.3f s", label, st[0],
			  sum2 / NPAIRS, dt);
	unit_check(rc == 0 && st[0] == 200 && sum2 / NPAIRS < 0.009,
			   "%s: 200 iterations, mean 2-way L1 %.5f < 0.009 (%.3f s)", label,
			   sum2 / NPAIRS, dt);
	dp_codes_free(&out);
	free_targets(tg, nt);
}

/*
 * The rows do not depend on the number of threads (parts): Adult tiled to 120,000 rows (above the
 * size at which GUM cuts the table into parts), 12 iterations, seed 7, with 1, 2 and 3 threads.
 * Also heartbeats between chunks of moves: in the first iteration over 600,000 rows, visits move
 * more rows than one chunk, so there are more heartbeats than columns filled plus visits.
 */
static int
count_beats_then_cancel(void *arg, const dp_progress *pr)
{
	uint32_t	iter = (uint32_t) pr->done;
	uint32_t	iters = (uint32_t) pr->total;
	double		err = pr->err;
	(void) iter;
	(void) iters;
	if (err < 0)
	{
		++*(int *) arg;
		return 0;
	}
	return 1;					/* the end of the first iteration */
}

static void
test_threads(const dp_codes *src, const acol *cols, const uint32_t *sizes)
{
	const uint64_t n = 120000;
	dp_marg		tg[ADULT_COLS + NPAIRS];
	uint32_t	nt = 0;
	dp_codes	out[3];
	bool		same = true;
	int			beats = 0,
				rc;

	for (uint32_t i = 0; i < NPAIRS; i++)
	{
		uint32_t	a[2] = {col_of(cols, adult_pairs[i][0]), col_of(cols, adult_pairs[i][1])};

		exact_marg(&tg[nt++], src, 2, a, sizes);
	}
	add_one_ways(tg, &nt, src, sizes);
	for (uint32_t t = 0; t < 3; t++)
	{
		dp_gum_params p;
		dp_prng		rng;

		dp_gum_default_params(&p);
		p.iterations = 12;
		dp_set_threads(t + 1);
		dp_prng_seed(&rng, 7);
		dp_codes_init(&out[t], ADULT_COLS, 0);
		rc = dp_gum_run(tg, nt, ADULT_COLS, sizes, n, &p, &rng, &out[t]);
		unit_check(rc == 0 && out[t].nrows == n, "threads %u: GUM runs on %llu rows (rc %d)", t + 1,
				   (unsigned long long) n, rc);
	}
	for (uint32_t t = 1; t < 3; t++)
		for (uint32_t j = 0; j < ADULT_COLS && same; j++)
			same = out[t].nrows == n && memcmp(out[0].col[j], out[t].col[j], sizeof(uint16_t) * n) == 0;
	unit_check(same, "1, 2 and 3 threads give the same rows under the same seed");
	for (uint32_t t = 0; t < 3; t++)
		dp_codes_free(&out[t]);

	/*
	 * A coarse warm start (dp_privsyn_sample's levels): Adult's 32,561 rows as the start of
	 * 120,000, each copied 3 or 4 times.  Without iterations the rows keep the start's one-way
	 * shares (appended columns follow their targets, here the same table's); with 5 iterations,
	 * 1 and 2 threads give the same rows.
	 */
	for (uint32_t t = 0; t < 3; t++)
	{
		dp_gum_params p;
		dp_prng		rng;

		dp_gum_default_params(&p);
		p.iterations = t == 0 ? 0 : 5;
		dp_set_threads(t == 2 ? 2 : 1);
		p.start = src;
		dp_prng_seed(&rng, 7);
		dp_codes_init(&out[t], ADULT_COLS, 0);
		rc = dp_gum_run(tg, nt, ADULT_COLS, sizes, n, &p, &rng, &out[t]);
		unit_check(rc == 0 && out[t].nrows == n, "coarse start, %u iterations, %u threads: %llu rows (rc %d)",
				   p.iterations, dp_threads(), (unsigned long long) n, rc);
	}
	{
		double		worst = 0;

		for (uint32_t j = 0; j < ADULT_COLS && out[0].nrows == n; j++)
		{
			double		l1 = 0;

			for (uint32_t v = 0; v < sizes[j]; v++)
			{
				uint64_t	a = 0,
							b = 0;

				for (uint64_t i = 0; i < src->nrows; i++)
					a += src->col[j][i] == v;
				for (uint64_t i = 0; i < n; i++)
					b += out[0].col[j][i] == v;
				l1 += fabs((double) a / src->nrows - (double) b / n);
			}
			worst = fmax(worst, l1);
		}
		unit_check(out[0].nrows == n && worst < 0.01,
				   "coarse start without iterations: one-way shares of the start, L1 at most %.5f < 0.01", worst);
	}
	same = true;
	for (uint32_t j = 0; j < ADULT_COLS && same; j++)
		same = out[1].nrows == n && out[2].nrows == n &&
			memcmp(out[1].col[j], out[2].col[j], sizeof(uint16_t) * n) == 0;
	unit_check(same, "coarse start: 1 and 2 threads give the same rows under the same seed");
	for (uint32_t t = 0; t < 3; t++)
		dp_codes_free(&out[t]);

	/*
	 * A start with more rows than asked for (the adaptive method's final rows from its last
	 * estimate): 20,000 of Adult's 32,561, drawn without replacement.  Without iterations the
	 * rows keep the start's joint up to the draw; a cold start without iterations fills the
	 * core columns independently, so its 2-way shares are far from the start's.
	 */
	{
		const uint64_t few = 20000;
		double		tvd[2] = {0, 0};	/* mean 2-way L1 against src: warm, cold */
		int			rcs[2];
		dp_codes	o[2];

		for (int w = 0; w < 2; w++)
		{
			dp_gum_params p;
			dp_prng		rng;
			uint32_t	pairs = 0;

			dp_gum_default_params(&p);
			dp_set_threads(1);
			p.iterations = 0;
			p.start = w == 0 ? src : NULL;
			dp_prng_seed(&rng, 9);
			dp_codes_init(&o[w], ADULT_COLS, 0);
			rcs[w] = dp_gum_run(tg, nt, ADULT_COLS, sizes, few, &p, &rng, &o[w]);
			for (uint32_t a = 0; a < ADULT_COLS && rcs[w] == 0 && o[w].nrows == few; a++)
				for (uint32_t b = a + 1; b < ADULT_COLS; b++)
				{
					double	   *x = calloc((size_t) sizes[a] * sizes[b], sizeof(double)),
							   *y = calloc((size_t) sizes[a] * sizes[b], sizeof(double)),
								l1 = 0;

					for (uint64_t i = 0; i < src->nrows; i++)
						x[src->col[a][i] * sizes[b] + src->col[b][i]] += 1.0 / src->nrows;
					for (uint64_t i = 0; i < few; i++)
						y[o[w].col[a][i] * sizes[b] + o[w].col[b][i]] += 1.0 / few;
					for (uint32_t q = 0; q < sizes[a] * sizes[b]; q++)
						l1 += fabs(x[q] - y[q]);
					tvd[w] += l1;
					pairs++;
					free(x);
					free(y);
				}
			tvd[w] /= pairs ? pairs : 1;
		}
		unit_check(rcs[0] == 0 && rcs[1] == 0 && o[0].nrows == few && tvd[0] < 0.05 && tvd[0] < 0.5 * tvd[1],
				   "a start of more rows than asked for: %llu rows keep its joint, mean 2-way L1 %.4f (cold start %.4f)",
				   (unsigned long long) o[0].nrows, tvd[0], tvd[1]);
		dp_codes_free(&o[0]);
		dp_codes_free(&o[1]);
	}

	{
		dp_gum_params p;
		dp_prng		rng;
		dp_codes	o;

		dp_gum_default_params(&p);
		dp_set_threads(2);
		p.progress = count_beats_then_cancel;
		p.progress_arg = &beats;
		dp_prng_seed(&rng, 7);
		dp_codes_init(&o, ADULT_COLS, 0);
		rc = dp_gum_run(tg, nt, ADULT_COLS, sizes, 600000, &p, &rng, &o);
		/* without heartbeats inside visits there would be at most one per column filled and one
		 * per visit: ADULT_COLS + NPAIRS */
		unit_check(rc == -1 && o.nrows == 0 && beats > (int) (ADULT_COLS + NPAIRS),
				   "heartbeats within visits: %d by the end of the first iteration over 600,000 rows, > %u "
				   "columns + targets; cancelled (rc %d)", beats, ADULT_COLS + NPAIRS, rc);
		dp_codes_free(&o);
	}
	free_targets(tg, nt);
	dp_set_threads(1);		/* the default again, for the tests after this one */
}

/*
 * Counting modes (dp_gum.h): incremental, lazy and automatic counting give the same rows, on a
 * wide workload (every pair of Adult's 15 columns: 105 marginals in one component, where every
 * duplicate touches them all) with 1 and 2 threads, and with 2 threads on 70,000 rows (two parts).
 * The times show why the automatic mode goes lazy there (informational, not asserted).
 */
static void
test_counting_modes(const dp_codes *src, const uint32_t *sizes)
{
	const uint32_t npairs = ADULT_COLS * (ADULT_COLS - 1) / 2;
	dp_marg    *tg = calloc(npairs + ADULT_COLS, sizeof(dp_marg));
	uint32_t	nt = 0;
	const uint64_t ns[2] = {src->nrows, 70000};

	for (uint32_t a = 0; a < ADULT_COLS; a++)
		for (uint32_t b = a + 1; b < ADULT_COLS; b++)
		{
			uint32_t	at[2] = {a, b};

			exact_marg(&tg[nt++], src, 2, at, sizes);
		}
	add_one_ways(tg, &nt, src, sizes);
	for (int v = 0; v < 3; v++)
	{
		uint32_t	threads = v == 0 ? 1 : 2;
		uint64_t	n = ns[v == 2];
		dp_codes	out[3];
		double		secs[3];
		bool		same = true;

		for (int mode = 0; mode < 3; mode++)
		{
			dp_gum_params p;
			dp_prng		rng;
			double		t0 = now_s();
			int			rc;

			dp_gum_default_params(&p);
			p.iterations = 8;
			dp_set_threads(threads);
			p.counting = mode == 0 ? DP_GUM_COUNT_INCREMENTAL : mode == 1 ? DP_GUM_COUNT_LAZY : DP_GUM_COUNT_AUTO;
			dp_prng_seed(&rng, 11);
			dp_codes_init(&out[mode], ADULT_COLS, 0);
			rc = dp_gum_run(tg, nt, ADULT_COLS, sizes, n, &p, &rng, &out[mode]);
			secs[mode] = now_s() - t0;
			unit_check(rc == 0 && out[mode].nrows == n, "counting mode %d, %u thread(s), %llu rows: GUM runs (rc %d)",
					   mode, threads, (unsigned long long) n, rc);
		}
		for (int mode = 1; mode < 3; mode++)
			for (uint32_t j = 0; j < ADULT_COLS && same; j++)
				same = out[mode].nrows == n && memcmp(out[0].col[j], out[mode].col[j], sizeof(uint16_t) * n) == 0;
		unit_check(same, "105 pairs, %u thread(s), %llu rows: incremental, lazy and automatic counting give the same rows",
				   threads, (unsigned long long) n);
		printf("# 105 pairs, %u thread(s), %llu rows, 8 iterations: incremental %.2f s, lazy %.2f s, auto %.2f s\n",
			   threads, (unsigned long long) n, secs[0], secs[1], secs[2]);
		for (int mode = 0; mode < 3; mode++)
			dp_codes_free(&out[mode]);
	}
	free_targets(tg, nt);
	free(tg);
	dp_set_threads(1);		/* the default again, for the tests after this one */
}

/*
 * The grouped layout (dp_gum.c: a component of 24 columns or more keeps its 8-bit codes in groups,
 * several bytes to a row): three copies of Adult's 15 columns (the second and third shifted by one
 * and two rows), 45 columns in one component (two groups), pairs (j, j + 1) and (j, j + 2) within
 * each copy and (j, j + 15) across copies, 70,000 rows (two parts).  Incremental, lazy and
 * automatic counting with 1 and 2 threads give the same rows, the column-major layout
 * (dp_gum_params.layout) gives them too, and the iterations bring the pairs close to their
 * targets.
 */
#define GROUPED_ROWS_HASH 0x09cb9e9866203c07ULL

static void
test_grouped(const dp_codes *src, const uint32_t *sizes)
{
	const uint32_t ncols = 3 * ADULT_COLS;
	const uint64_t n = 70000;
	uint32_t	wsizes[3 * ADULT_COLS];
	dp_codes	wide;
	dp_marg    *tg = calloc(6 * ncols, sizeof(dp_marg));
	uint32_t	nt = 0,
				npairs;
	uint16_t	row[3 * ADULT_COLS];
	dp_codes	out[8];
	bool		same = true,
				same_cm = true;
	double		l1 = 0,
				l1_0 = 0;

	for (uint32_t j = 0; j < ncols; j++)
		wsizes[j] = sizes[j % ADULT_COLS];
	dp_codes_init(&wide, ncols, src->nrows);
	for (uint64_t i = 0; i < src->nrows; i++)
	{
		for (uint32_t j = 0; j < ncols; j++)
			row[j] = src->col[j % ADULT_COLS][(i + j / ADULT_COLS) % src->nrows];
		dp_codes_append(&wide, row);
	}
	for (uint32_t c = 0; c < 3; c++)
		for (uint32_t j = 0; j < ADULT_COLS; j++)
			for (uint32_t d = 1; d <= 2; d++)
				if (j + d < ADULT_COLS)
				{
					uint32_t	at[2] = {c * ADULT_COLS + j, c * ADULT_COLS + j + d};

					exact_marg(&tg[nt++], &wide, 2, at, wsizes);
				}
	for (uint32_t j = 0; j + ADULT_COLS < ncols; j++)
	{
		uint32_t	at[2] = {j, j + ADULT_COLS};

		exact_marg(&tg[nt++], &wide, 2, at, wsizes);
	}
	npairs = nt;
	add_one_ways(tg, &nt, &wide, wsizes);
	/*
	 * v 0-5: the grouped layout (3 counting modes x 1 and 2 threads); 6: no iteration; 7, 8: the
	 * column-major layout, 1 and 2 threads
	 */
	for (int v = 0; v < 9; v++)
	{
		dp_gum_params p;
		dp_prng		rng;
		dp_codes	o;
		int			rc;

		dp_gum_default_params(&p);
		p.iterations = v == 6 ? 0 : 6;
		p.tolerance = -1;
		dp_set_threads(v % 2 == 0 ? 1 : 2);
		p.counting = v / 2 == 0 ? DP_GUM_COUNT_INCREMENTAL : v / 2 == 1 ? DP_GUM_COUNT_LAZY : DP_GUM_COUNT_AUTO;
		if (v >= 7)
		{
			dp_set_threads(v == 7 ? 1 : 2);
			p.counting = DP_GUM_COUNT_AUTO;
			p.layout = DP_GUM_LAYOUT_COLUMN_MAJOR;
		}
		dp_prng_seed(&rng, 23);
		dp_codes_init(&o, ncols, 0);
		rc = dp_gum_run(tg, nt, ncols, wsizes, n, &p, &rng, &o);
		unit_check(rc == 0 && o.nrows == n, "%s layout, %u iterations, counting %d, %u thread(s): GUM runs (rc %d)",
				   v >= 7 ? "column-major" : "grouped", p.iterations, p.counting, dp_threads(), rc);
		for (uint32_t i = 0; i < npairs && (v == 0 || v == 6); i++)
			*(v == 6 ? &l1_0 : &l1) += l1_of(&tg[i], &o, wsizes) / npairs;
		if (v == 6)
			dp_codes_free(&o);
		else
			out[v < 6 ? v : v - 1] = o;
	}
	for (int v = 1; v < 6; v++)
		for (uint32_t j = 0; j < ncols && same; j++)
			same = out[v].nrows == n && memcmp(out[0].col[j], out[v].col[j], sizeof(uint16_t) * n) == 0;
	unit_check(same, "grouped layout, %u columns, %u pairs: the three counting modes with 1 and 2 threads give the same rows",
			   ncols, npairs);
	for (int v = 6; v < 8; v++)
		for (uint32_t j = 0; j < ncols && same_cm; j++)
			same_cm = out[v].nrows == n && memcmp(out[0].col[j], out[v].col[j], sizeof(uint16_t) * n) == 0;
	unit_check(same_cm, "the column-major layout (1 and 2 threads) gives the grouped layout's rows");
	{
		/*
		 * The rows of this run, pinned (first derived 2026-11-26 from a build with the grouped
		 * layout off): a change to GUM's arithmetic or random stream changes this value, and must
		 * be deliberate; re-derive it with GUM_PRINT_HASH=1 once the test above passes.
		 */
		uint64_t	h = 1469598103934665603ULL;

		for (uint32_t j = 0; j < ncols; j++)
			for (uint64_t i = 0; i < out[0].nrows; i++)
				h = (h ^ out[0].col[j][i]) * 1099511628211ULL;
		if (getenv("GUM_PRINT_HASH"))
			fprintf(stderr, "grouped hash %016llx\n", (unsigned long long) h);
		unit_check(h == GROUPED_ROWS_HASH, "grouped layout: the pinned rows (hash %016llx)", (unsigned long long) h);
	}
	unit_check(l1 < l1_0 / 3, "grouped layout: mean 2-way L1 %.5f after 6 iterations < 1/3 of 0 iterations' %.4f",
			   l1, l1_0);
	for (int v = 0; v < 8; v++)
		dp_codes_free(&out[v]);
	free_targets(tg, nt);
	free(tg);
	dp_codes_free(&wide);
	dp_set_threads(1);		/* the default again, for the tests after this one */
}

static void
test_adult(void)
{
	acol	   *cols = calloc(ADULT_COLS, sizeof(acol));
	uint32_t	sizes[ADULT_COLS];
	dp_codes	src;

	if (!load_adult(&src, cols, sizes, UINT64_MAX))
	{
		unit_check(false, "Adult: data/adult/adult_train.csv and domain.json found and parsed");
		dp_codes_free(&src);
		free(cols);
		return;
	}
	unit_check(src.nrows == 32561, "Adult: %llu rows loaded", (unsigned long long) src.nrows);
	run_adult(&src, cols, sizes, src.nrows, "Adult");
	test_threads(&src, cols, sizes);
	test_counting_modes(&src, sizes);
	test_grouped(&src, sizes);
	dp_codes_free(&src);
	free(cols);
}
int
main(int argc, char **argv)
{
	(void) argc;
	argv0 = argv[0];
	test_adult();
	return unit_done();
}
