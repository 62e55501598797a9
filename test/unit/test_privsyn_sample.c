/*
 * test_privsyn_sample.c - unit tests of dp_privsyn_sample (src/core/dp_privsyn.c): drawing
 * synthetic rows again from a released PrivSyn model, as dp_sample does from a stored one.
 *
 * - dp_privsyn_run's own synthetic rows are exactly what dp_privsyn_sample draws from the model
 *   it released with the same generator state (synthesis and sampling cannot diverge);
 * - the same model, row count and seed give identical codes; another seed other codes;
 * - the sampled rows reproduce the model's marginals (over merged codes) to a small normalised L1,
 *   and the members of a merged rare code come back in proportion to their released counts, or,
 *   4 members or more, to those counts shrunk toward their mean as their noise warrants;
 * - 8,000,000 rows, drawn in levels (a full GUM on 1M rows, the last level its copies): the
 *   model's marginals are reproduced and the same seed gives the same rows (a last level that
 *   ignored the level below fails it: L1 1.57);
 * - any row count (0, 1, more than the model's total); invalid models are refused;
 * - with params.consume, both methods take the table over (recoded in place to merged codes,
 *   left empty) and their rows still follow its one-way shares;
 * - 20,000 members of one merged code come back in proportion (binary search over cumulative
 *   weights), with a heartbeat every 65,536 rows that can cancel the split;
 * - from 2^19 rows (DP_SPLIT_NODRAW_ROWS) a merged code with one member of positive weight is
 *   split without a draw, one with several still draws in proportion; below, every row of a
 *   merged code of several members takes a draw, as before (the generator's state says which).
 * The table: 6,000 rows of 4 dependent columns, one with rare values; a large rho (noise is
 * small) so that the bars below test sampling, not noise.  The noise itself is libsodium's and
 * unseeded, so these checks hold for any noise draw (the rare values are far below 3 sigma).
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
#include "dp_marg.h"
#include "dp_privsyn.h"
#include "dp_prng.h"
#include "dp_random.h"
#include "unit.h"

#define NCOLS 4
#define NROWS 6000

static const uint32_t sizes[NCOLS] = {3, 5, 12, 4};

/* a: 3 values; b depends on a; c (12 codes, the last 7 rare); d depends on b and c */
static void
make_table(dp_codes *t)
{
	dp_prng		p;
	uint16_t	row[NCOLS];

	dp_prng_seed(&p, 2024);
	dp_codes_init(t, NCOLS, NROWS);
	for (uint32_t i = 0; i < NROWS; i++)
	{
		row[0] = (uint16_t) dp_prng_below(&p, 3);
		row[1] = (uint16_t) ((row[0] * 2 + dp_prng_below(&p, 2)) % 5);
		row[2] = i < 7 ? (uint16_t) (5 + i) : (uint16_t) dp_prng_below(&p, 5);
		row[3] = (uint16_t) ((row[1] + (row[2] % 2) + (dp_prng_below(&p, 10) == 0)) % 4);
		dp_codes_append(t, row);
	}
}

static bool
same_codes(const dp_codes *x, const dp_codes *y)
{
	if (x->nrows != y->nrows || x->ncols != y->ncols)
		return false;
	for (uint32_t j = 0; j < x->ncols; j++)
		if (x->nrows && memcmp(x->col[j], y->col[j], sizeof(uint16_t) * x->nrows) != 0)
			return false;
	return true;
}

/* the sampled rows in merged codes, to compare with the model's marginals */
static void
to_merged(const dp_privsyn_result *res, const dp_codes *s, dp_codes *out)
{
	dp_codes_init(out, NCOLS, s->nrows ? s->nrows : 1);
	for (uint32_t j = 0; j < NCOLS; j++)
		for (uint64_t i = 0; i < s->nrows; i++)
			out->col[j][i] = res->code_map[j][s->col[j][i]];
	out->nrows = s->nrows;
}

/* the largest normalised L1 between a model marginal and the same marginal of sample s */
static double
worst_model_l1(const dp_privsyn_result *res, const dp_codes *s)
{
	dp_codes	m;
	double		worst = 0;

	to_merged(res, s, &m);
	for (uint32_t k = 0; k < res->nmargs; k++)
	{
		dp_marg		x;

		dp_marg_init(&x, res->margs[k].nattrs, res->margs[k].attrs, res->merged_sizes);
		dp_marg_count(&x, &m);
		worst = fmax(worst, dp_marg_l1(&res->margs[k], &x, true));
		dp_marg_free(&x);
	}
	dp_codes_free(&m);
	return worst;
}

/*
 * n rows from model under seed: the rows asked for, every model marginal reproduced to L1 <
 * 0.05, and the same rows again under the same seed ("where": how they were drawn).
 */
static void
sample_checked(const dp_privsyn_result *model, uint64_t n, uint64_t seed, const char *where)
{
	dp_prng		rng;
	dp_codes	s1,
				s2;
	double		worst;
	int			rc;

	dp_prng_seed(&rng, seed);
	rc = dp_privsyn_sample(model, NCOLS, sizes, n, NULL, &rng, &s1);
	unit_check(rc == 0 && s1.nrows == n, "%llu rows sampled %s (rc %d)", (unsigned long long) n, where, rc);
	if (rc != 0)
		return;
	worst = worst_model_l1(model, &s1);
	unit_check(worst < 0.05, "the rows %s reproduce every model marginal to L1 < 0.05 (worst %.4f)", where, worst);
	dp_prng_seed(&rng, seed);
	rc = dp_privsyn_sample(model, NCOLS, sizes, n, NULL, &rng, &s2);
	unit_check(rc == 0 && same_codes(&s1, &s2), "the same seed gives the same rows %s", where);
	if (rc == 0)
		dp_codes_free(&s2);
	dp_codes_free(&s1);
}

/* counts the split's heartbeats (iter = iters = 1; GUM's own calls have iters = its iterations) */
typedef struct split_beats
{
	int			calls;
	int			cancel_at;		/* > 0: cancel at this heartbeat */
} split_beats;

static int
count_split_beats(void *arg, const dp_progress *pr)
{
	uint32_t	iter = (uint32_t) pr->done;
	uint32_t	iters = (uint32_t) pr->total;
	double		err = pr->err;
	split_beats *b = arg;

	/* the split's heartbeats: iter = iters (GUM is done), err = -1; GUM's own fill heartbeat
	 * (iter 0 here: no target is iterated) is not counted */
	if (iter == iters && iters > 0 && err < 0)
		return ++b->calls == b->cancel_at;
	return 0;
}

/*
 * 7. A lone rare code (a column's NULL/other cell that nothing fills, as income's) is merged with
 * the most populous other code instead of staying a near-empty code of every marginal holding
 * the column; two or more rare codes are merged among themselves as before.
 */
static void
test_lone_rare(void)
{
	const uint32_t lsizes[2] = {3, 2};
	dp_codes	t;
	dp_privsyn_params p;
	dp_privsyn_result res;
	dp_prng		rng;
	uint16_t	row[2];
	uint64_t	empty_rows = 0;
	double		thr;
	int			rc;

	dp_prng_seed(&rng, 7);
	dp_codes_init(&t, 2, 2000);
	for (uint32_t i = 0; i < 2000; i++)
	{
		row[0] = (uint16_t) (i % 10 < 7 ? 0 : 1);	/* 1,400 and 600 rows; code 2 never */
		row[1] = (uint16_t) (row[0] == 0 ? dp_prng_below(&rng, 10) < 8 : dp_prng_below(&rng, 10) < 2);
		dp_codes_append(&t, row);
	}
	dp_privsyn_default_params(&p);
	p.rho = 5;
	memset(&res, 0, sizeof(res));
	rc = dp_privsyn_run(&t, lsizes, &p, &rng, &res);
	thr = dp_privsyn_rare_threshold(p.rho, 2);
	unit_check(thr > 4.0 && thr < 4.5 && dp_privsyn_rare_threshold(0, 2) == 0 &&
			   dp_privsyn_rare_threshold(1, 0) == 0,
			   "rare threshold: 3 sigma of the one-way noise (rho 5, 2 columns: %.3f, ~4.24)", thr);
	if (rc == 0 && res.oneway_noisy[0][2] >= thr)
		/* the noise lifted the empty code over 3 sigma (p ~ 0.001): then nothing is rare */
		unit_check(res.merged_sizes[0] == 3 && res.merged_codes == 0,
				   "an empty code released above the threshold stays a code of its own");
	else
		unit_check(rc == 0 && res.merged_sizes[0] == 2 && res.code_map[0][2] == res.code_map[0][0] &&
				   res.code_map[0][0] != res.code_map[0][1] && res.merged_sizes[1] == 2 &&
				   res.merged_codes == 2,
				   "a lone rare code joins the most populous other code (merged sizes %u, %u; %u merged codes)",
				   res.merged_sizes[0], res.merged_sizes[1], res.merged_codes);
	for (uint64_t i = 0; rc == 0 && i < res.synth.nrows; i++)
		empty_rows += res.synth.col[0][i] == 2;
	unit_check(rc == 0 && empty_rows <= res.synth.nrows / 100,
			   "the empty code comes back only as its released count says (%llu of %llu rows)",
			   (unsigned long long) empty_rows, (unsigned long long) res.synth.nrows);
	if (rc == 0)
		dp_privsyn_result_free(&res);
	dp_codes_free(&t);
}

/*
 * 8. dp_rare_merge on fixed released counts (threshold 10).  Categories (ordered 0): PrivSyn's
 * merge, unchanged.  Ordered codes (bins): a run of rare codes is merged with itself, a run still
 * light joins its lighter neighbour, so every merged code is an interval of bins; the NULL cell
 * after the bins follows the category rule.
 */
static bool
map_is(const uint16_t *map, const uint16_t *want, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		if (map[k] != want[k])
			return false;
	return true;
}

static void
test_rare_merge(void)
{
	uint16_t	map[10];
	uint32_t	nm,
				nc;

	/* categories: rare 1, 3 and 4 become one code (numbered at 1); the rest keep theirs */
	{
		const double x[6] = {50, 3, 40, 2, -1, 30};
		const uint16_t want[6] = {0, 1, 2, 1, 1, 3};

		nc = dp_rare_merge(x, 6, 0, 10, map, &nm);
		unit_check(nc == 4 && nm == 3 && map_is(map, want, 6),
				   "categories: the rare codes become one code (%u codes, %u merged)", nc, nm);
	}
	/* categories: a lone rare code joins the most populous other code (the first of a tie) */
	{
		const double x[4] = {20, 50, 3, 40};
		const uint16_t want[4] = {0, 1, 1, 2};
		const double tie[4] = {40, 20, 3, 40};
		const uint16_t want_tie[4] = {0, 1, 0, 2};

		nc = dp_rare_merge(x, 4, 0, 10, map, &nm);
		unit_check(nc == 3 && nm == 2 && map_is(map, want, 4),
				   "categories: a lone rare code joins the most populous code (%u codes, %u merged)", nc, nm);
		nc = dp_rare_merge(tie, 4, 0, 10, map, &nm);
		unit_check(nc == 3 && nm == 2 && map_is(map, want_tie, 4),
				   "categories: of two equally populous codes, the first takes the lone rare code (%u codes, %u merged)",
				   nc, nm);
	}
	/* bins: the same counts as ordered values: 1 joins 0 or 2 (the lighter, 2), 3-4 join 5 */
	{
		const double x[6] = {50, 3, 40, 2, -1, 30};
		const uint16_t want[6] = {0, 1, 1, 2, 2, 2};

		nc = dp_rare_merge(x, 6, 6, 10, map, &nm);
		unit_check(nc == 3 && nm == 5 && map_is(map, want, 6),
				   "bins: a light run of rare bins joins its lighter neighbour (%u codes, %u merged)", nc, nm);
	}
	/* bins: a run heavy enough in all stays a code of its own; a rare first bin joins bin 1;
	 * the rare NULL cell (code 7) joins the most populous bin that is not rare (code 5) */
	{
		const double x[8] = {4, 60, 6, 5, 7, 80, 25, 1};
		const uint16_t want[8] = {0, 0, 1, 1, 1, 2, 3, 2};

		nc = dp_rare_merge(x, 8, 7, 10, map, &nm);
		unit_check(nc == 4 && nm == 7 && map_is(map, want, 8),
				   "bins: a heavy run is one code, an end bin joins its neighbour, the NULL cell a bin (%u codes, %u merged)",
				   nc, nm);
	}
	/* bins, all rare: one code */
	{
		const double x[3] = {1, 2, 3};
		const uint16_t want[3] = {0, 0, 0};

		nc = dp_rare_merge(x, 3, 3, 10, map, &nm);
		unit_check(nc == 1 && nm == 3 && map_is(map, want, 3), "bins, all rare: one code");
	}
	/* nothing rare: the identity */
	{
		const double x[3] = {11, 20, 30};
		const uint16_t want[3] = {0, 1, 2};

		nc = dp_rare_merge(x, 3, 3, 10, map, &nm);
		unit_check(nc == 3 && nm == 0 && map_is(map, want, 3) &&
				   dp_rare_merge(x, 3, 0, 10, map, &nm) == 3 && nm == 0 && map_is(map, want, 3),
				   "nothing rare: every code keeps its own");
	}
}

/*
 * A merged code's members split back by their released counts shrunk toward their mean
 * (positive-part James-Stein, dp_privsyn_sample): column a's codes 0-5 are one merged code
 * (released 150, -50, 150, -50, 150, -50: mean 50, sum of squares 60,000, k - 3 = 3), codes 6 and
 * 7 their own.  With the one-way marginal's rho 1e-5 (sigma^2 50,000: the counts spread less than
 * their noise) the factor is 0 and every member is drawn, a sixth each; with rho 0.01 (sigma^2
 * 50) it is 0.9975 and the members released at -50 are not drawn, the others a third each; with
 * no rho (a model made without one) the split is in proportion to max(count, 0).
 */
static void
test_split_shrink(void)
{
	static const uint32_t hsizes[1] = {8};
	static const double rhos[4] = {1e-5, 0.01, 0, 1e-5};
	static const char *const what[4] = {"rho 1e-5: the counts spread less than their noise, every member a sixth",
		"rho 0.01: little noise, the members released at -50 are not drawn, the others a third each",
		"no rho in the model: in proportion to max(count, 0)",
	"rho 1e-5, a model as dp_sample loads it (n_oneway not set): shrunk as the synthesis was, a sixth each"};
	uint32_t	hmerged[1] = {3};
	uint16_t	map_a[8] = {0, 0, 0, 0, 0, 0, 1, 2};
	uint16_t   *maps[1] = {map_a};
	double		one_a[8] = {150, -50, 150, -50, 150, -50, 300, 300};
	double	   *ones[1] = {one_a};

	for (int t = 0; t < 4; t++)
	{
		dp_privsyn_result hm;
		dp_marg		marg;
		dp_prng		rng;
		dp_codes	s;
		uint32_t	a = 0;
		uint64_t	count[8] = {0},
					group = 0;
		bool		ok;
		int			rc;

		memset(&hm, 0, sizeof(hm));
		dp_marg_init(&marg, 1, &a, hmerged);
		marg.cells[0] = 400, marg.cells[1] = 300, marg.cells[2] = 300;
		marg.rho = rhos[t];
		hm.margs = &marg;
		hm.nmargs = 1;
		hm.n_oneway = t == 3 ? 0 : 1;
		hm.total = 1000;
		hm.merged_sizes = hmerged;
		hm.code_map = maps;
		hm.oneway_noisy = ones;
		dp_prng_seed(&rng, 7);
		rc = dp_privsyn_sample(&hm, 1, hsizes, 30000, NULL, &rng, &s);
		for (uint64_t i = 0; rc == 0 && i < s.nrows; i++)
			count[s.col[0][i]]++;
		for (int c = 0; c < 6; c++)
			group += count[c];
		ok = rc == 0 && group > 10000;
		for (int c = 0; ok && c < 6; c++)
		{
			double		share = (double) count[c] / group,
						want = t == 0 || t == 3 ? 1.0 / 6 : c % 2 ? 0 : 1.0 / 3;

			ok = fabs(share - want) < 0.02;
		}
		unit_diag("merged code of 6 members, %s: drawn %llu %llu %llu %llu %llu %llu", rhos[t] > 0 ? "with rho" : "no rho",
				  (unsigned long long) count[0], (unsigned long long) count[1], (unsigned long long) count[2],
				  (unsigned long long) count[3], (unsigned long long) count[4], (unsigned long long) count[5]);
		unit_check(ok, "%s", what[t]);
		if (rc == 0)
			dp_codes_free(&s);
		dp_marg_free(&marg);
	}
}

/* dp_privsyn_run releases a model; its rows are dp_privsyn_sample's from that model */
static void
check_run(const dp_codes *data, dp_privsyn_params *p, dp_prng *rng, dp_privsyn_result *res)
{
	dp_codes	s1;
	int			rc;

	memset(res, 0, sizeof(*res));
	rc = dp_privsyn_run(data, sizes, p, rng, res);
	unit_check(rc == 0 && res->nmargs == NCOLS + res->n_kway && res->n_kway >= 1,
			   "dp_privsyn_run releases a model (%u one-way + %u k-way marginals)", res->n_oneway, res->n_kway);
	unit_check(fabs(res->total - NROWS) < 20 && res->synth.nrows == dp_privsyn_default_rows(res),
			   "default rows: the consistent noisy total, %.1f", res->total);
	unit_check(res->merged_sizes[2] < sizes[2] && res->merged_sizes[0] == sizes[0],
			   "the rare values of column c are merged (%u merged codes of %u)", res->merged_sizes[2], sizes[2]);

	/* 1. synthesis = sampling of the released model with the same generator state */
	dp_prng_seed(rng, 99);
	rc = dp_privsyn_sample(res, NCOLS, sizes, res->synth.nrows, &p->gum, rng, &s1);
	unit_check(rc == 0 && same_codes(&s1, &res->synth),
			   "dp_privsyn_run's rows are dp_privsyn_sample's from its model, same seed (%llu rows)",
			   (unsigned long long) s1.nrows);
	dp_codes_free(&s1);
}

/*
 * 1c. dp_privsyn_params.prior: a one-way count with an earlier release of it becomes their
 * inverse-variance mean (either method).  With the exact counts as that release and a variance
 * of 1e-6 (the run's own noise at rho 0.01 is tens of rows), column 0's first two codes come out
 * within 0.01 of their exact counts; its third (variance 0: no estimate) keeps its own noise.
 */
static void
check_prior(const dp_codes *data, dp_privsyn_params *p, dp_prng *rng)
{
	double		exact0[3] = {0, 0, 0},
				var0[3] = {1e-6, 1e-6, 0};
	const double *est[NCOLS] = {exact0},
			   *var[NCOLS] = {var0};
	dp_oneway_prior prior = {est, var};
	double		rho = p->rho;

	for (uint64_t i = 0; i < data->nrows; i++)
		exact0[data->col[0][i]] += 1;
	p->prior = &prior;
	p->rho = 0.01;
	for (int method = 0; method < 2; method++)
	{
		dp_privsyn_result r;
		int			rc;
		double		near = 0,
					far2 = 0;

		memset(&r, 0, sizeof(r));
		rc = method == 0 ? dp_privsyn_run(data, sizes, p, rng, &r) : dp_adaptive_run(data, sizes, p, rng, &r, NULL);
		unit_check(rc == 0, "prior (%s): runs", method ? "adaptive" : "privsyn");
		if (rc != 0)
			continue;
		near = fmax(fabs(r.oneway_noisy[0][0] - exact0[0]), fabs(r.oneway_noisy[0][1] - exact0[1]));
		far2 = fabs(r.oneway_noisy[0][2] - exact0[2]);
		unit_check(near < 0.01, "prior (%s): codes with an estimate of variance 1e-6 within %.4f of it (< 0.01)",
				   method ? "adaptive" : "privsyn", near);
		unit_check(far2 >= 0.01, "prior (%s): a code without one keeps its own noise (%.2f off)",
				   method ? "adaptive" : "privsyn", far2);
		dp_privsyn_result_free(&r);
	}
	/*
	 * The top-up is decided from the first one-way release alone, the prior combined after it:
	 * 6,000 rows at rho 0.01 are far above the top-up's threshold, so none is drawn; with a prior
	 * of 0 rows on every code (variance 1e-6) combined first, the total it reads would be about 0
	 * and the top-up would take its largest share.
	 */
	{
		double		zero[NCOLS][12] = {{0}},
					tiny[NCOLS][12];
		const double *zest[NCOLS],
				   *zvar[NCOLS];
		dp_oneway_prior zprior = {zest, zvar};
		dp_privsyn_result r;
		dp_adaptive_stats st;
		int			rc;

		for (uint32_t j = 0; j < NCOLS; j++)
		{
			for (uint32_t c = 0; c < 12; c++)
				tiny[j][c] = 1e-6;
			zest[j] = zero[j];
			zvar[j] = tiny[j];
		}
		p->prior = &zprior;
		memset(&r, 0, sizeof(r));
		memset(&st, 0, sizeof(st));
		rc = dp_adaptive_run(data, sizes, p, rng, &r, &st);
		unit_check(rc == 0 && st.rho_topup == 0 && fabs(r.oneway_noisy[0][0]) < 0.01,
				   "prior (adaptive): the top-up is decided before the prior is combined (top-up %g, "
				   "code 0 at %.4f, the prior's 0)", st.rho_topup, rc == 0 ? r.oneway_noisy[0][0] : -1.0);
		if (rc == 0)
			dp_privsyn_result_free(&r);
	}
	p->prior = NULL;
	p->rho = rho;
}

static void
check_consume(const dp_codes *data, dp_privsyn_params *p, dp_prng *rng)
{
	int			rc;

	/* 1b. consume: either method takes a copy of the table over (recoded in place, left empty) */
	for (int method = 0; method < 2; method++)
	{
		dp_codes	copy;
		dp_privsyn_result r2;
		double		worst = 0;

		dp_codes_init(&copy, NCOLS, data->nrows);
		for (uint32_t j = 0; j < NCOLS; j++)
			memcpy(copy.col[j], data->col[j], sizeof(uint16_t) * data->nrows);
		copy.nrows = data->nrows;
		p->consume = &copy;
		memset(&r2, 0, sizeof(r2));
		rc = method == 0 ? dp_privsyn_run(&copy, sizes, p, rng, &r2) :
			dp_adaptive_run(&copy, sizes, p, rng, &r2, NULL);
		p->consume = NULL;
		/* the rows still follow the table's one-way shares: the recoding read the right codes */
		for (uint32_t j = 0; rc == 0 && j < NCOLS; j++)
		{
			double		l1 = 0;

			for (uint32_t v = 0; v < sizes[j]; v++)
			{
				uint64_t	a = 0,
							b = 0;

				for (uint64_t i = 0; i < data->nrows; i++)
					a += data->col[j][i] == v;
				for (uint64_t i = 0; i < r2.synth.nrows; i++)
					b += r2.synth.col[j][i] == v;
				l1 += fabs((double) a / data->nrows - (double) b / r2.synth.nrows);
			}
			worst = fmax(worst, l1);
		}
		unit_check(rc == 0 && copy.col == NULL && copy.nrows == 0 && copy.ncols == 0 && worst < 0.05,
				   "%s with consume: the table is taken over and left empty, one-way L1 of the rows %.4f < 0.05",
				   method == 0 ? "dp_privsyn_run" : "dp_adaptive_run", worst);
		dp_codes_free(&copy);
		dp_privsyn_result_free(&r2);
	}
}

/* s1: the first of the three samples, kept for the checks after this one */
static void
check_seeds(const dp_privsyn_result *res, dp_prng *rng, dp_codes *s1)
{
	dp_codes	s2,
				s3;
	uint64_t	n;
	int			rc;

	/* 2. same seed, same rows; another seed, other rows */
	n = 5000;
	dp_prng_seed(rng, 7);
	rc = dp_privsyn_sample(res, NCOLS, sizes, n, NULL, rng, s1);
	dp_prng_seed(rng, 7);
	rc |= dp_privsyn_sample(res, NCOLS, sizes, n, NULL, rng, &s2);
	dp_prng_seed(rng, 8);
	rc |= dp_privsyn_sample(res, NCOLS, sizes, n, NULL, rng, &s3);
	unit_check(rc == 0 && s1->nrows == n, "5,000 rows sampled three times");
	unit_check(same_codes(s1, &s2), "the same seed gives identical codes");
	unit_check(!same_codes(s1, &s3), "another seed gives other codes");
	dp_codes_free(&s2);
	dp_codes_free(&s3);
}

static void
check_marginals(const dp_privsyn_result *res, const dp_codes *s1)
{
	dp_codes	merged;

	/* 3. the sample reproduces the model's marginals */
	to_merged(res, s1, &merged);
	double		worst = 0,
				sum = 0;

	for (uint32_t k = 0; k < res->nmargs; k++)
	{
		dp_marg		m;
		double		e;

		dp_marg_init(&m, res->margs[k].nattrs, res->margs[k].attrs, res->merged_sizes);
		dp_marg_count(&m, &merged);
		e = dp_marg_l1(&res->margs[k], &m, true);
		sum += e;
		worst = e > worst ? e : worst;
		dp_marg_free(&m);
	}
	unit_diag("normalised L1 of the sample against the model: mean %.4f, worst %.4f over %u marginals",
			  sum / res->nmargs, worst, res->nmargs);
	unit_check(worst < 0.05, "every model marginal reproduced to L1 < 0.05 (worst %.4f)", worst);
	dp_codes_free(&merged);
}

static void
check_levels(const dp_privsyn_result *res)
{
	/*
	 * 3b. From DP_SAMPLE_LEVEL_FACTOR * DP_SAMPLE_MIN_COARSE rows on, the rows come in levels: a
	 * full GUM on about 1M rows, then the last level, its copies with DP_SAMPLE_LAST_ITERS
	 * iterations.  The rows still reproduce the model's marginals, and the same seed gives the
	 * same rows.
	 */
	{
		uint64_t	big = (uint64_t) DP_SAMPLE_LEVEL_FACTOR * DP_SAMPLE_MIN_COARSE;

		sample_checked(res, big, 11, "in levels");
	}

	/*
	 * 3c. Below that, a model with many marginals gets one coarse level (dp_privsyn_sample_coarse:
	 * rows x marginals above DP_SAMPLE_WIDE_WORK).  The rule on the wide table of bench/wide.sh
	 * and on Adult at 1M rows, then a run through the level: the model's k-way marginals repeated
	 * until it has 256 or more, sampled at just over DP_SAMPLE_WIDE_WORK / nmargs rows.
	 */
	unit_check(dp_privsyn_sample_coarse(600000, 342) == 150000 &&
			   dp_privsyn_sample_coarse(1000000, 60) == 1000000 &&
			   dp_privsyn_sample_coarse(7000000, DP_SAMPLE_WIDE_MARGS) == 7000000 &&
			   dp_privsyn_sample_coarse(7000000, DP_SAMPLE_WIDE_MARGS + 1) == 437500 &&
			   dp_privsyn_sample_coarse(200000, 10000) == 200000 &&
			   dp_privsyn_sample_coarse(4000000, 1000) == 250000,
			   "the coarse level: 150,000 of 600,000 rows at 342 marginals; none for Adult at 1M rows, nor "
			   "at 7M rows for %u marginals (437,500 for one more), nor when n / 4 would fall under %u rows; "
			   "4M rows at 1,000 marginals: 62,500 is too few, so 250,000",
			   (unsigned) DP_SAMPLE_WIDE_MARGS,
			   (unsigned) DP_SAMPLE_WIDE_MIN_COARSE);
	{
		dp_privsyn_result wm = *res;
		dp_marg    *wmargs;
		uint32_t	nw = res->nmargs;
		uint64_t	n,
					c;

		while (nw < 2 * DP_SAMPLE_WIDE_MARGS)
			nw += res->n_kway;
		wmargs = malloc(sizeof(dp_marg) * nw);
		for (uint32_t k = 0; k < nw; k++)
			wmargs[k] = res->margs[k < res->nmargs ? k : res->n_oneway + (k - res->nmargs) % res->n_kway];
		wm.margs = wmargs;
		wm.nmargs = nw;
		wm.n_kway = nw - res->n_oneway;
		n = (uint64_t) (DP_SAMPLE_WIDE_WORK / nw) + 1000;
		c = dp_privsyn_sample_coarse(n, nw);
		unit_check(c > 0 && c < n && c >= n / 4 - 1 && (double) c * nw <= DP_SAMPLE_WIDE_WORK / 2,
				   "%u marginals at %llu rows: a coarse level of %llu rows", nw, (unsigned long long) n,
				   (unsigned long long) c);
		sample_checked(&wm, n, 12, "through the coarse level");
		free(wmargs);
	}
}

static void
check_merged_members(const dp_privsyn_result *res, const dp_codes *s1)
{
	/* 4. a merged code's members: only those of positive weight are drawn (their released counts,
	 * shrunk toward their mean in a merged code of 4 members or more; the proportions are checked
	 * on hand-made models below and in test_split_shrink) */
	uint32_t	members[12] = {0};
	double		wts[64] = {0};
	uint32_t	g = 0;
	bool		ok = true;
	double		weight = 0;

	for (uint32_t c = 0; c < sizes[2]; c++)
		members[res->code_map[2][c]]++;
	for (uint32_t k = 1; k < res->merged_sizes[2]; k++)
		if (members[k] > members[g])
			g = k;
	/* each member's weight as the split computes it: max(z, 0), or, among 4 or more, z shrunk
	 * toward the members' mean by (k - 3) sigma^2 / sum (z - m)^2, sigma^2 from the one-way
	 * marginal's rho (computed here independently of dp_privsyn.c's split_weights) */
	{
		double		mean = 0,
					ss = 0,
					sigma2 = 0,
					shrink = 1;

		for (uint32_t k = 0; k < res->nmargs; k++)
			if (res->margs[k].nattrs == 1 && res->margs[k].attrs[0] == 2 && res->margs[k].rho > 0)
			{
				sigma2 = dp_gaussian_sigma2(res->margs[k].rho, 1.0);
				break;
			}
		for (uint32_t c = 0; c < sizes[2]; c++)
			if (res->code_map[2][c] == g)
				mean += res->oneway_noisy[2][c] / members[g];
		for (uint32_t c = 0; c < sizes[2]; c++)
			if (res->code_map[2][c] == g)
				ss += (res->oneway_noisy[2][c] - mean) * (res->oneway_noisy[2][c] - mean);
		if (members[g] >= 4 && sigma2 > 0)
			shrink = ss > 0 ? fmax(0, 1 - (members[g] - 3) * sigma2 / ss) : 0;
		for (uint32_t c = 0; c < sizes[2]; c++)
		{
			double		w = members[g] >= 4 && sigma2 > 0
				? fmax(mean + shrink * (res->oneway_noisy[2][c] - mean), 0)
				: fmax(res->oneway_noisy[2][c], 0);

			wts[c] = w;
			if (res->code_map[2][c] == g)
				weight += w;
		}
	}
	/* (all weights zero: the members are drawn uniformly) */
	for (uint64_t i = 0; i < s1->nrows; i++)
		if (res->code_map[2][s1->col[2][i]] == g)
			ok &= wts[s1->col[2][i]] > 0 || weight == 0;
	unit_check(members[g] >= 2 && ok,
			   "a merged code of %u members: only members of positive weight (their released counts, shrunk among 4 or more) are drawn",
			   members[g]);
}

static void
check_row_counts(const dp_privsyn_result *res, dp_prng *rng)
{
	dp_codes	s1;
	int			rc;

	/* 5. row counts: none, one, more than the total */
	rc = dp_privsyn_sample(res, NCOLS, sizes, 0, NULL, rng, &s1);
	unit_check(rc == 0 && s1.nrows == 0, "0 rows");
	dp_codes_free(&s1);
	rc = dp_privsyn_sample(res, NCOLS, sizes, 1, NULL, rng, &s1);
	unit_check(rc == 0 && s1.nrows == 1, "1 row");
	dp_codes_free(&s1);
	rc = dp_privsyn_sample(res, NCOLS, sizes, 3 * NROWS, NULL, rng, &s1);
	unit_check(rc == 0 && s1.nrows == 3 * NROWS, "three times the model's total");
	{
		bool		in_range = true;

		for (uint32_t j = 0; j < NCOLS; j++)
			for (uint64_t i = 0; i < s1.nrows; i++)
				in_range &= s1.col[j][i] < sizes[j];
		unit_check(in_range, "every code inside its column's domain");
	}
	dp_codes_free(&s1);
}

static void
check_hand_model(dp_prng *rng)
{
	dp_codes	s1;
	int			rc;

	/* 5b. a model made by hand: the split of a merged code follows the released counts */
	dp_privsyn_result hm;
	static const uint32_t hsizes[2] = {4, 2};
	uint32_t	hmerged[2] = {3, 2};
	uint16_t	map_a[4] = {0, 0, 1, 2},
				map_b[2] = {0, 1};
	uint16_t   *maps[2] = {map_a, map_b};
	double		one_a[4] = {300, 100, 300, 300},
				one_b[2] = {500, 500};
	double	   *ones[2] = {one_a, one_b};
	dp_marg		margs[3];
	uint32_t	a = 0,
				b = 1,
				ab[2] = {0, 1};
	uint64_t	count[4] = {0};
	static const double ab_cells[6] = {300, 100, 100, 200, 100, 200};

	memset(&hm, 0, sizeof(hm));
	dp_marg_init(&margs[0], 1, &a, hmerged);
	dp_marg_init(&margs[1], 1, &b, hmerged);
	dp_marg_init(&margs[2], 2, ab, hmerged);
	margs[0].cells[0] = 400, margs[0].cells[1] = 300, margs[0].cells[2] = 300;
	margs[1].cells[0] = 500, margs[1].cells[1] = 500;
	memcpy(margs[2].cells, ab_cells, sizeof(ab_cells));
	hm.margs = margs;
	hm.nmargs = 3;
	hm.n_oneway = 2;
	hm.n_kway = 1;
	hm.total = 1000;
	hm.merged_sizes = hmerged;
	hm.code_map = maps;
	hm.oneway_noisy = ones;
	dp_prng_seed(rng, 1);
	rc = dp_privsyn_sample(&hm, 2, hsizes, 20000, NULL, rng, &s1);
	for (uint64_t i = 0; i < s1.nrows; i++)
		count[s1.col[0][i]]++;
	unit_check(rc == 0 && s1.nrows == 20000, "a hand-made model is sampled");
	unit_diag("merged code {0, 1} (released 300 : 100): drawn %llu : %llu",
			  (unsigned long long) count[0], (unsigned long long) count[1]);
	unit_check(fabs((double) count[0] / (count[0] + count[1]) - 0.75) < 0.02 &&
			   fabs((count[0] + count[1]) / 20000.0 - 0.4) < 0.01,
			   "its merged code is split 3 : 1 as released, and keeps its 40%% share");
	dp_codes_free(&s1);
	for (int k = 0; k < 3; k++)
		dp_marg_free(&margs[k]);
}

static void
check_split_back(dp_prng *rng)
{
	dp_codes	s1;

	/*
	 * 7. many merged codes split back: a binary search over cumulative weights (the right
	 * proportions), with a heartbeat (progress with iter = iters, err = -1) every 65,536 rows, through
	 * which the split can be cancelled.
	 */
	enum {NMEMBERS = 20000, NSPLIT = 200000};
	uint32_t	bsizes[1] = {NMEMBERS};
	uint32_t	bmerged[1] = {1};
	uint16_t   *bmap = calloc(NMEMBERS, sizeof(uint16_t));
	double	   *bw = malloc(sizeof(double) * NMEMBERS);
	uint16_t   *bmaps[1] = {bmap};
	double	   *bws[1] = {bw};
	dp_marg		bm;
	uint32_t	attr0 = 0;
	dp_privsyn_result big;
	dp_gum_params gp;
	split_beats beats = {0, 0};
	double		mean = 0,
				wsum = 0,
				expect = 0;
	int			rc;

	for (uint32_t k = 0; k < NMEMBERS; k++)
	{
		bw[k] = k + 1.0;	/* member k drawn with probability (k + 1) / sum */
		wsum += bw[k];
		expect += (double) k * bw[k];
	}
	expect /= wsum;
	dp_marg_init(&bm, 1, &attr0, bmerged);
	bm.cells[0] = NSPLIT;
	memset(&big, 0, sizeof(big));
	big.margs = &bm;
	big.nmargs = 1;
	big.n_oneway = 1;
	big.total = NSPLIT;
	big.merged_sizes = bmerged;
	big.code_map = bmaps;
	big.oneway_noisy = bws;
	dp_gum_default_params(&gp);
	gp.progress = count_split_beats;
	gp.progress_arg = &beats;
	dp_prng_seed(rng, 5);
	rc = dp_privsyn_sample(&big, 1, bsizes, NSPLIT, &gp, rng, &s1);
	for (uint64_t i = 0; i < s1.nrows; i++)
		mean += s1.col[0][i];
	mean /= NSPLIT;
	unit_diag("%d members: mean member drawn %.1f, expected %.1f; %d heartbeats", NMEMBERS, mean, expect,
			  beats.calls);
	unit_check(rc == 0 && s1.nrows == NSPLIT && fabs(mean - expect) < 0.01 * expect,
			   "20,000 merged members come back in proportion to their weights");
	unit_check(beats.calls == NSPLIT / 65536, "the split beats every 65,536 rows");
	dp_codes_free(&s1);
	beats.calls = 0;
	beats.cancel_at = 1;
	rc = dp_privsyn_sample(&big, 1, bsizes, NSPLIT, &gp, rng, &s1);
	unit_check(rc == -1 && beats.calls == 1, "a heartbeat of the split cancels it");
	dp_marg_free(&bm);
	free(bmap);
	free(bw);
}

static void
check_invalid(dp_privsyn_result *res, dp_prng *rng)
{
	dp_codes	s1;

	/* 6. invalid models */
	uint16_t	saved = res->code_map[1][0];

	res->code_map[1][0] = (uint16_t) res->merged_sizes[1];
	unit_check(dp_privsyn_sample(res, NCOLS, sizes, 10, NULL, rng, &s1) == -2,
			   "a merged code out of range is refused");
	res->code_map[1][0] = saved;
	unit_check(dp_privsyn_sample(res, 0, sizes, 10, NULL, rng, &s1) == -2,
			   "no columns is refused");
}

static void
check_zero_total(dp_privsyn_result *res, dp_prng *rng)
{
	dp_codes	s1;
	int			rc;

	/* 7. a model with nothing released to follow (noisy total 0, marginals zeroed, as the
	 * consistency step leaves them): uniform columns, not a failure */
	uint32_t	seen = 0;

	res->total = 0;
	for (uint32_t k = 0; k < res->nmargs; k++)
		memset(res->margs[k].cells, 0, sizeof(double) * res->margs[k].ncells);
	rc = dp_privsyn_sample(res, NCOLS, sizes, 3000, NULL, rng, &s1);
	for (uint64_t i = 0; rc == 0 && i < s1.nrows; i++)
		seen |= 1u << s1.col[0][i];
	unit_check(rc == 0 && s1.nrows == 3000 && seen == 7,
			   "a model with a zero total samples uniform columns (rc %d, %llu rows, codes of a seen %x)",
			   rc, (unsigned long long) s1.nrows, seen);
	if (rc == 0)
		dp_codes_free(&s1);
}

static bool
same_state(const dp_prng *a, const dp_prng *b)
{
	return memcmp(a->s, b->s, sizeof(a->s)) == 0;
}

static void
check_split_nodraw(void)
{
	/*
	 * 8. the split without draws (dp_privsyn_split, DP_SPLIT_NODRAW_ROWS): column 0's one merged
	 * code has members 0 (released 900), 1 (released -5: weight 0) and 2 (released 100); column
	 * 1's has members 0 (released 700) and 1 (released -3).  From 2^19 rows, column 1's rows all
	 * become member 0 with no draw (the generator's state untouched when column 0 draws
	 * nothing either); below 2^19, a draw for each row of both columns, as before; column 0 draws
	 * either way, members 0 and 2 in proportion 9 : 1, never 1.
	 */
	uint32_t	nsizes[2] = {3, 2};
	uint32_t	nmerged[2] = {1, 1};
	uint16_t	map0[3] = {0, 0, 0},
				map1[2] = {0, 0};
	double		w0[3] = {900, -5, 100},
				w1[2] = {700, -3};
	uint16_t   *maps[2] = {map0, map1};
	double	   *ws[2] = {w0, w1};
	dp_privsyn_result m;
	const uint64_t big = DP_SPLIT_NODRAW_ROWS;

	memset(&m, 0, sizeof(m));
	m.merged_sizes = nmerged;
	m.code_map = maps;
	m.oneway_noisy = ws;
	for (int pass = 0; pass < 3; pass++)
	{
		/* pass 0: 2^19 rows, column 1 only split (column 0 all member 0 already: no merge to
		 * split there, map0 one member); pass 1: 2^19 rows, both; pass 2: 2^19 - 1 rows, both */
		uint64_t	n = pass < 2 ? big : big - 1;
		uint16_t	map0_one[3] = {0, 1, 2};
		uint32_t	one_sizes[2] = {3, 1};
		dp_codes	rows;
		dp_prng		rng,
					before;
		uint64_t	c0[3] = {0, 0, 0},
					c1[2] = {0, 0};
		int			rc;

		if (pass == 0)
		{
			/* column 0 not merged: three merged codes, each its own member */
			maps[0] = map0_one;
			one_sizes[0] = 3;
			m.merged_sizes = one_sizes;
			m.merged_sizes[1] = 1;
		}
		else
		{
			maps[0] = map0;
			m.merged_sizes = nmerged;
		}
		dp_codes_init(&rows, 2, n);
		for (uint64_t i = 0; i < n; i++)
		{
			uint16_t	r[2] = {0, 0};

			dp_codes_append(&rows, r);
		}
		dp_prng_seed(&rng, 17);
		before = rng;
		rc = dp_privsyn_split(&m, 2, nsizes, n, NULL, &rng, &rows);
		for (uint64_t i = 0; i < n; i++)
		{
			c0[rows.col[0][i]]++;
			c1[rows.col[1][i]]++;
		}
		if (pass == 0)
			unit_check(rc == 0 && c0[0] == n && c1[0] == n && same_state(&before, &rng),
					   "from 2^19 rows a merged code with one member of positive weight is split without a draw (rc %d, column 1: %llu of %llu member 0)",
					   rc, (unsigned long long) c1[0], (unsigned long long) n);
		else
		{
			double		share = (double) c0[2] / (double) n;

			unit_check(rc == 0 && c1[0] == n && c0[1] == 0 && fabs(share - 0.1) < 5 * sqrt(0.09 / n),
					   "%s rows: merged members drawn in proportion, never the one of weight 0 (rc %d, member 2's share %.4f of 0.1, member 1 %llu rows)",
					   pass == 1 ? "2^19" : "2^19 - 1", rc, share, (unsigned long long) c0[1]);
			if (pass == 2)
			{
				/* below 2^19 column 1's rows draw too: one draw a row in each column */
				dp_prng		alone = before;

				for (uint64_t i = 0; i < 2 * n; i++)
					(void) dp_prng_unit(&alone);
				unit_check(same_state(&alone, &rng),
						   "below 2^19 rows every row of a merged code of several members takes a draw, as before");
			}
			else
			{
				dp_prng		alone = before;

				for (uint64_t i = 0; i < n; i++)
					(void) dp_prng_unit(&alone);
				unit_check(same_state(&alone, &rng),
						   "from 2^19 rows only the merged code of several positive members draws (one draw a row)");
			}
		}
		dp_codes_free(&rows);
	}
	m.merged_sizes = nmerged;
	maps[0] = map0;
}

int
main(void)
{
	dp_codes	data;
	dp_privsyn_params p;
	dp_privsyn_result res;
	dp_prng		rng;
	dp_codes	s1;

	if (dp_random_init() != 0)
	{
		printf("not ok 1 - libsodium\n1..1\n");
		return 1;
	}
	test_rare_merge();
	make_table(&data);
	dp_privsyn_default_params(&p);
	p.rho = 5;
	dp_prng_seed(&rng, 99);
	check_run(&data, &p, &rng, &res);
	check_consume(&data, &p, &rng);
	check_prior(&data, &p, &rng);
	check_seeds(&res, &rng, &s1);
	check_marginals(&res, &s1);
	check_levels(&res);
	check_merged_members(&res, &s1);
	dp_codes_free(&s1);
	check_row_counts(&res, &rng);
	check_hand_model(&rng);
	check_split_back(&rng);
	check_split_nodraw();
	check_invalid(&res, &rng);
	check_zero_total(&res, &rng);
	dp_codes_free(&data);
	dp_privsyn_result_free(&res);
	test_lone_rare();
	test_split_shrink();
	return unit_done();
}
