/*
 * test_adaptive_est.c - the rounds' estimates (dp_adaptive_draw.c, dpa_estimate; dp_adaptive.h
 * step 3a) on Adult's marginals (exact counts stand in for released ones: dpa_estimate reads
 * nothing else):
 *
 * - a warm capped estimate (8,192 and 16,384 rows) is DP_ADAPTIVE_EST_CHUNKS independent GUM runs
 *   (dp_gum_run_chunked's rows, row for row), the same rows on 1 and 2 threads, and its fit to
 *   the targets is about that of one GUM run over all its rows;
 * - the first (cold) estimate and a warm one that holds every row are one GUM run (dp_gum_run's
 *   rows), as before;
 * - an estimate never hands its rows to the caller's chunk sink or post-processing (the final
 *   rows' params, which the rounds' GUM params are a copy of);
 * - the rule: which estimates are chunked, and the chunk's rows.
 */
#include <math.h>
#include <string.h>

#include "unit.h"

#include "dp_adaptive.h"
#include "dp_adaptive_cand.h"
#include "dp_codes.h"
#include "dp_consist.h"
#include "dp_env.h"
#include "dp_gum.h"
#include "dp_marg.h"
#include "dp_prng.h"
#include "dp_random.h"
#include "adult_data.h"

/* the pairs a warm estimate has that the first had not (a round's new measurements) */
#define NEW_PAIRS 4

/* a caller's chunk sink and post-processing (the final rows'): an estimate calls neither */
static int	foreign_calls;

static int
count_sink(void *arg, const dp_codes *rows, uint64_t first, uint64_t total, struct dp_gum_stream *stream)
{
	(void) arg;
	(void) rows;
	(void) first;
	(void) total;
	(void) stream;
	foreign_calls++;
	return 0;
}

static int
count_post(void *arg, dp_codes *rows, dp_prng *rng)
{
	(void) arg;
	(void) rows;
	(void) rng;
	foreign_calls++;
	return 0;
}

/* Adult's 15 one-way marginals and 20 pairs (a chain and some more), exact counts, into m */
static uint32_t
adult_margs(const dp_codes *t, const uint32_t *sizes, dp_marg *m)
{
	static const uint32_t pairs[20][2] = {
		{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 9}, {9, 10},
		{10, 11}, {11, 12}, {12, 13}, {13, 14}, {0, 14}, {3, 14}, {5, 7}, {7, 9}, {6, 14}, {4, 12}};
	uint32_t	n = 0;

	for (uint32_t j = 0; j < ADULT_COLS; j++)
	{
		dp_marg_init(&m[n], 1, &j, sizes);
		dp_marg_count(&m[n++], t);
	}
	for (uint32_t k = 0; k < 20; k++)
	{
		dp_marg_init(&m[n], 2, pairs[k], sizes);
		dp_marg_count(&m[n++], t);
	}
	return n;
}

static bool
same_rows(const dp_codes *a, const dp_codes *b)
{
	if (a->nrows != b->nrows || a->ncols != b->ncols)
		return false;
	for (uint32_t j = 0; j < a->ncols; j++)
		if (memcmp(a->col[j], b->col[j], sizeof(uint16_t) * a->nrows) != 0)
			return false;
	return true;
}

/* the mean L1 (normalised) of rows' k-way marginals against the targets' */
static double
fit_l1(const dp_marg *m, uint32_t nm, const dp_codes *rows)
{
	double		sum = 0;
	uint32_t	n = 0;

	for (uint32_t k = 0; k < nm; k++)
	{
		dp_marg		c;

		if (m[k].nattrs < 2)
			continue;
		dp_marg_copy(&c, &m[k]);
		dp_marg_count(&c, rows);
		sum += dp_marg_l1(&c, &m[k], true);
		n++;
		dp_marg_free(&c);
	}
	return sum / n;
}

/*
 * One warm estimate of `m` (its first, cold, of the targets scaled to `total` rows): the rows of
 * dpa_estimate on `threads` threads into *est, and those of GUM run as step 3a did before the
 * chunks (dp_gum_run over all of them) and of dp_gum_run_chunked from the same generator's state
 * into *one and *chunked.  False when a call failed.
 */
static bool
warm_estimate(const dp_marg *margs, uint32_t nm, const uint32_t *sizes, double total, uint32_t threads,
			  dp_codes *first, dp_codes *est, dp_codes *one, dp_codes *chunked)
{
	dp_marg		scaled[64],
				work[64];
	dp_gum_params g,
				prm;
	dp_prng		rng,
				r2;
	double		t1,
				t2;
	int			rc;
	uint64_t	ns;

	for (uint32_t k = 0; k < nm; k++)
	{
		double		f = total / dp_marg_total(&margs[k]);

		dp_marg_copy(&scaled[k], &margs[k]);
		for (uint64_t q = 0; q < scaled[k].ncells; q++)
			scaled[k].cells[q] *= f;
	}
	dp_gum_default_params(&g);
	/* the caller's params as the glue passes them (dp_privsyn_params.gum): the final rows' sink */
	g.chunk_sink = count_sink;
	g.chunk_post = count_post;
	dp_set_threads(threads);
	dp_prng_seed(&rng, 17);
	memset(first, 0, sizeof(*first));
	rc = dpa_estimate(scaled, nm - NEW_PAIRS, ADULT_COLS, sizes, &g, &rng, first, &t1);
	ns = first->nrows;
	/* the warm one: dpa_estimate from a copy of the first's rows */
	dp_codes_init(est, ADULT_COLS, ns);
	for (uint32_t j = 0; rc == 0 && j < ADULT_COLS; j++)
		memcpy(est->col[j], first->col[j], sizeof(uint16_t) * ns);
	est->nrows = ns;
	r2 = rng;
	rc |= dpa_estimate(scaled, nm, ADULT_COLS, sizes, &g, &rng, est, &t2);
	/* the same targets, made consistent as dpa_estimate makes them, GUM run both ways */
	for (uint32_t k = 0; k < nm; k++)
		dp_marg_copy(&work[k], &scaled[k]);
	dp_consist(work, nm, DP_ADAPTIVE_EST_CONSIST_ITERS);
	prm = g;
	prm.chunk_sink = NULL;
	prm.chunk_post = NULL;
	prm.start = first;
	prm.iterations = dp_adaptive_warm_iters(ns);
	prm.counting = dp_adaptive_huge_counting(prm.counting, t2);
	dp_codes_init(one, ADULT_COLS, ns);
	dp_codes_init(chunked, ADULT_COLS, ns);
	rng = r2;
	rc |= dp_gum_run(work, nm, ADULT_COLS, sizes, ns, &prm, &rng, one);
	rng = r2;
	rc |= dp_gum_run_chunked(work, nm, ADULT_COLS, sizes, ns, dpa_estimate_chunk(ns), &prm, &rng, chunked);
	for (uint32_t k = 0; k < nm; k++)
	{
		dp_marg_free(&scaled[k]);
		dp_marg_free(&work[k]);
	}
	dp_set_threads(1);
	return rc == 0 && fabs(t1 - t2) < 1e-6 * t1;
}

static void
test_rule(void)
{
	unit_check(DP_ADAPTIVE_EST_CHUNKS == 2 && !dpa_estimate_chunked(DP_ADAPTIVE_SYNTH_ROWS - 1) &&
			   !dpa_estimate_chunked(1) && dpa_estimate_chunked(DP_ADAPTIVE_SYNTH_ROWS) &&
			   dpa_estimate_chunked(DP_ADAPTIVE_SYNTH_ROWS_BIG),
			   "capped estimates (8,192 and 16,384 rows) are chunked, those holding every row are not");
	unit_check(dpa_estimate_chunk(DP_ADAPTIVE_SYNTH_ROWS) == 4096 && dpa_estimate_chunk(DP_ADAPTIVE_SYNTH_ROWS_BIG) == 8192 &&
			   dpa_estimate_chunk(8193) == 4097,
			   "a chunk holds ceil(m / %d) rows (%llu of 8,192, %llu of 16,384)", DP_ADAPTIVE_EST_CHUNKS,
			   (unsigned long long) dpa_estimate_chunk(DP_ADAPTIVE_SYNTH_ROWS),
			   (unsigned long long) dpa_estimate_chunk(DP_ADAPTIVE_SYNTH_ROWS_BIG));
}

static void
test_estimates(void)
{
	acol	   *cols = calloc(ADULT_COLS, sizeof(acol));
	uint32_t	sizes[ADULT_COLS];
	dp_codes	src;
	dp_marg		margs[64];
	uint32_t	nm;
	/* released totals: capped at 8,192 rows (Adult's), at 16,384 (a big table's), every row */
	static const double totals[3] = {32561, 1000000, 5000};

	if (!load_adult(&src, cols, sizes, UINT64_MAX))
	{
		unit_check(false, "Adult: data/adult found and parsed");
		free(cols);
		return;
	}
	nm = adult_margs(&src, sizes, margs);
	foreign_calls = 0;
	for (int i = 0; i < 3; i++)
	{
		dp_codes	first[2],
					est[2],
					one[2],
					chunked[2];
		bool		ok = true;

		for (uint32_t t = 0; t < 2; t++)
			ok &= warm_estimate(margs, nm, sizes, totals[i], t + 1, &first[t], &est[t], &one[t], &chunked[t]);
		unit_check(ok, "estimates of Adult's marginals scaled to %.0f rows", totals[i]);
		if (ok)
		{
			uint64_t	ns = est[0].nrows;
			bool		capped = !dpa_estimate_uncapped(ns);
			double		fe = fit_l1(margs, nm, &est[0]),
						fo = fit_l1(margs, nm, &one[0]),
						ff = fit_l1(margs, nm, &first[0]);

			unit_check(same_rows(&first[0], &first[1]) && same_rows(&est[0], &est[1]),
					   "a total of %.0f: the estimates' %llu rows the same on 1 and 2 threads", totals[i],
					   (unsigned long long) ns);
			if (capped)
			{
				unit_check(same_rows(&est[0], &chunked[0]) && !same_rows(&est[0], &one[0]),
						   "a total of %.0f: the warm capped estimate (%llu rows) is %d independent GUM runs of %llu rows "
						   "(dp_gum_run_chunked's rows), not one over all of them", totals[i],
						   (unsigned long long) ns, DP_ADAPTIVE_EST_CHUNKS,
						   (unsigned long long) dpa_estimate_chunk(ns));
				unit_diag("a total of %.0f: mean 2-way L1 to the targets: chunked %.4f, one run %.4f, the cold first %.4f",
						  totals[i], fe, fo, ff);
				unit_check(fe < 1.5 * fo,
						   "a total of %.0f: the chunked estimate's fit (mean 2-way L1 %.4f) within 1.5 x one run's (%.4f)",
						   totals[i], fe, fo);
			}
			else
				unit_check(same_rows(&est[0], &one[0]) && ns == (uint64_t) totals[i],
						   "a total of %.0f: the warm estimate holding every row (%llu) is one GUM run's rows", totals[i],
						   (unsigned long long) ns);
		}
		for (uint32_t t = 0; t < 2; t++)
		{
			dp_codes_free(&first[t]);
			dp_codes_free(&est[t]);
			dp_codes_free(&one[t]);
			dp_codes_free(&chunked[t]);
		}
	}
	unit_check(foreign_calls == 0, "the estimates called the caller's chunk sink or post-processing %d times (none)",
			   foreign_calls);
	for (uint32_t k = 0; k < nm; k++)
		dp_marg_free(&margs[k]);
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
	test_rule();
	test_estimates();
	return unit_done();
}
