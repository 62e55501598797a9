/*
 * dp_privsyn.c - PrivSyn end to end (see dp_privsyn.h for the privacy arithmetic).
 */
#include "dp_privsyn.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dp_accounting.h"
#include "dp_internal.h"
#include "dp_consist.h"
#include "dp_counts.h"
#include "dp_jtree.h"
#include "dp_maxent.h"
#include "dp_sampler.h"
#include "dp_select.h"

#define RARE_SIGMAS		3.0		/* PRIVSYN.md step 3 */

void
dp_privsyn_default_params(dp_privsyn_params *p)
{
	memset(p, 0, sizeof(*p));
	p->gamma = 5000;
	dp_gum_default_params(&p->gum);
}

/* Discrete Gaussian noise on every cell (the marginal's rho is set by the caller). */
static int
add_noise(dp_marg *m, double rho)
{
	dp_dgauss	g;

	if (dp_dgauss_init(&g, dp_gaussian_sigma2(rho, 1.0)) != 0 ||
		dp_noise_counts_f64(&g, m->cells, m->cells, m->ncells) != 0)
		return -1;
	m->rho = rho;
	return 0;
}

/*
 * A one-way marginal's noisy counts y[0 .. n) (variance v1 each) combined with an earlier
 * release's estimates est[] (variances var[]): the inverse-variance mean, code by code, where the
 * estimate has a finite positive variance (dp_oneway_prior).  Returns the codes combined.
 * Post-processing.
 */
static uint32_t
oneway_combine(double *y, uint32_t n, double v1, const double *est, const double *var)
{
	uint32_t	done = 0;

	for (uint32_t c = 0; c < n; c++)
		if (isfinite(var[c]) && var[c] > 0 && isfinite(est[c]) && v1 > 0)
		{
			y[c] = (y[c] / v1 + est[c] / var[c]) / (1.0 / v1 + 1.0 / var[c]);
			done++;
		}
	return done;
}

#define PROGRESS(phase, frac) \
	do { if (dp_report(p->progress, p->progress_arg, (phase), (frac), 1, -1) != 0) { rc = dp_cancelled(); goto done; } } while (0)
#define FAIL(call) do { rc = (call); goto done; } while (0)

double
dp_rare_threshold(double rho_oneway, uint32_t d)
{
	dp_dgauss	g;

	if (d == 0 || !(rho_oneway > 0) || dp_dgauss_init(&g, dp_gaussian_sigma2(rho_oneway / d, 1.0)) != 0)
		return 0;
	return RARE_SIGMAS * sqrt(dp_dgauss_sigma2(&g));
}

double
dp_method_rare_threshold(dp_plan_call call, double rho, uint32_t d)
{
	dp_schedule s;

	if (dp_schedule_method(call, rho, d, false, &s) != 0)
		return 0;
	return dp_rare_threshold(dp_schedule_rho(&s, DP_RELEASE_ONEWAY), d);
}

double
dp_privsyn_rare_threshold(double rho, uint32_t d)
{
	return dp_method_rare_threshold(DP_CALL_PRIVSYN, rho, d);
}

/*
 * Column j's one-way marginal of data (plus extra's exact counts, totals under 2^53), released with
 * rho (discrete Gaussian, sensitivity 1) into one, initialised here and freed on failure.  Returns
 * 0, or the pipeline's error (dp_nomem, dp_invalid: the noise out of the sampler's range).
 */
static int
release_oneway(const dp_codes *data, const uint32_t *sizes, uint32_t j, const dp_extra_counts *extra,
			   double rho, dp_marg *one)
{
	if (dp_marg_init(one, 1, &j, sizes) != 0)
		return dp_nomem("could not allocate a one-way marginal");
	dp_marg_count(one, data);
	if (extra)
		for (uint32_t c = 0; c < sizes[j]; c++)
			one->cells[c] += (double) extra->oneway[j][c];
	if (add_noise(one, rho) != 0)
	{
		dp_marg_free(one);
		return dp_invalid("the one-way marginals' noise is out of the sampler's range");
	}
	return 0;
}

int
dp_privsyn_oneway_stage(const dp_codes *data, const uint32_t *sizes, const uint32_t *ordered,
						double rho_oneway, const dp_schedule *topup, double *rho_topup,
						dp_privsyn_result *out, dp_marg *margs,
						dp_codes *merged, dp_codes *consume, const dp_extra_counts *extra,
						const dp_oneway_prior *prior)
{
	uint32_t	d = data->ncols,
				nmerged;
	double		rho1 = rho_oneway / d;
	double		rare_below = dp_rare_threshold(rho_oneway, d);
	uint32_t	nmargs = 0;
	double		rho2 = 0;

	if (d == 0)
		return dp_invalid("the table to synthesize has no column");
	if (!(rare_below > 0))
		return dp_invalid("rho is not positive, or the one-way marginals' noise is out of the sampler's range");
	out->merged_sizes = dp_zalloc(sizeof(uint32_t) * d);
	out->code_map = dp_zalloc(sizeof(uint16_t *) * d);
	out->oneway_noisy = dp_zalloc(sizeof(double *) * d);
	if (!out->merged_sizes || !out->code_map || !out->oneway_noisy)
		return dp_nomem("could not allocate the rare-value merge's maps");
	out->n_oneway = d;			/* what dp_privsyn_result_free releases, should a step below fail */
	/* ---- 1. one-way marginals: rho_oneway over the d columns ---- */
	for (uint32_t j = 0; j < d; j++)
	{
		dp_marg		one;
		int			rc = release_oneway(data, sizes, j, extra, rho1, &one);

		if (rc != 0)
			return rc;
		if (!(out->oneway_noisy[j] = dp_zalloc(sizeof(double) * sizes[j])))
		{
			dp_marg_free(&one);
			return dp_nomem("could not allocate the released one-way counts");
		}
		dp_spend_record(&out->spend, DP_RELEASE_ONEWAY, rho1, 1);
		memcpy(out->oneway_noisy[j], one.cells, sizeof(double) * sizes[j]);
		dp_marg_free(&one);
	}

	/*
	 * ---- 1b. the adaptive method's top-up (dp_oneway_topup, dp_schedule.h): decided from the
	 * released total and public sizes only, every column released again with rho2 = topup / d
	 * (discrete Gaussian, sensitivity 1, drawn from the rounds' pool), and the two releases of a
	 * cell combined by their precisions, rho1 z1 + rho2 z2 over rho1 + rho2 (post-processing): a
	 * count with noise of variance about 1 / (2 (rho1 + rho2)) ----
	 */
	if (rho_topup)
		*rho_topup = 0;
	if (topup)
	{
		double		total = 0,
					t;

		for (uint32_t j = 0; j < d; j++)
			for (uint32_t c = 0; c < sizes[j]; c++)
				total += out->oneway_noisy[j][c];
		t = dp_oneway_topup(topup, sizes, total / d);
		rho2 = t / d;
		for (uint32_t j = 0; j < d && rho2 > 0; j++)
		{
			dp_marg		one;
			int			rc = release_oneway(data, sizes, j, extra, rho2, &one);

			if (rc != 0)
				return rc;
			dp_spend_record(&out->spend, DP_RELEASE_ONEWAY, rho2, 1);
			for (uint32_t c = 0; c < sizes[j]; c++)
				out->oneway_noisy[j][c] = (rho1 * out->oneway_noisy[j][c] + rho2 * one.cells[c]) / (rho1 + rho2);
			dp_marg_free(&one);
		}
		if (rho2 > 0)
		{
			rare_below = dp_rare_threshold(rho_oneway + t, d);
			rho1 += rho2;
			if (rho_topup)
				*rho_topup = t;
		}
	}

	/*
	 * ---- 1c. the counts this call's discovery released for the bins it learned (dp_oneway_prior):
	 * each combined with the one-way count by inverse variance, that of rho1 (the top-up's
	 * included); post-processing of two releases with independent noise ----
	 */
	for (uint32_t j = 0; prior && prior->est && prior->var && j < d; j++)
		if (prior->est[j] && prior->var[j])
		{
			if (!out->oneway_prior && !(out->oneway_prior = dp_zalloc(sizeof(uint32_t) * d)))
				return dp_nomem("could not allocate the one-way marginals' prior counts");
			out->oneway_prior[j] = oneway_combine(out->oneway_noisy[j], sizes[j], dp_gaussian_sigma2(rho1, 1.0),
												  prior->est[j], prior->var[j]);
		}

	/*
	 * ---- 2. rare values (post-processing): per column, the codes whose released count is
	 * below 3 sigma are merged (dp_rare_merge, dp_privsyn.h) ----
	 */
	for (uint32_t j = 0; j < d; j++)
	{
		out->code_map[j] = dp_zalloc(sizeof(uint16_t) * sizes[j]);
		if (!out->code_map[j])
			return dp_nomem("could not allocate the rare-value merge's maps");
		out->merged_sizes[j] = dp_rare_merge(out->oneway_noisy[j], sizes[j],
											 ordered ? ordered[j] : 0, rare_below,
											 out->code_map[j], &nmerged);
		if (out->merged_sizes[j] == 0)
			return dp_nomem("could not allocate the rare-value merge's maps");
		out->merged_codes += nmerged;
	}
	if (consume == data)
	{
		/* recoded in place: the caller's table becomes merged (no second copy of n x d codes) */
		for (uint32_t j = 0; j < d; j++)
			for (uint64_t i = 0; i < consume->nrows; i++)
				consume->col[j][i] = out->code_map[j][consume->col[j][i]];
		*merged = *consume;
		memset(consume, 0, sizeof(*consume));
	}
	else
	{
		if (dp_codes_init(merged, d, data->nrows) != 0)
			return dp_nomem("could not allocate the table recoded to merged codes");
		for (uint32_t j = 0; j < d; j++)
			for (uint64_t i = 0; i < data->nrows; i++)
				merged->col[j][i] = out->code_map[j][data->col[j][i]];
		merged->nrows = data->nrows;
	}
	for (uint32_t j = 0; j < d; j++)
	{
		dp_marg    *one = &margs[nmargs++];

		if (dp_marg_init(one, 1, &j, out->merged_sizes) != 0)
		{
			dp_codes_free(merged);
			return dp_nomem("could not allocate a one-way marginal");
		}
		for (uint32_t k = 0; k < sizes[j]; k++)
			one->cells[out->code_map[j][k]] += out->oneway_noisy[j][k];
		/*
		 * rho is only the consistency step's weight here (post-processing): a merged cell sums
		 * several released cells and is noisier than this weight says, which costs accuracy only.
		 */
		one->rho = rho1;
	}
	out->n_oneway = d;
	return 0;
}

int
dp_privsyn_run(const dp_codes *data, const uint32_t *sizes, const dp_privsyn_params *p, dp_prng *rng,
			   dp_privsyn_result *out)
{
	uint32_t	d = data->ncols;
	uint32_t	m = d * (d - 1) / 2;
	dp_schedule sched;
	double		rho2,
				rho3;
	dp_codes	merged = {0};
	double	   *scores = NULL;
	uint8_t    *selected = NULL;
	uint32_t	(*sets)[DP_MARG_MAX_ATTRS] = NULL;
	uint32_t   *set_sizes = NULL;
	uint64_t   *cells = NULL;
	double	   *rho_j = NULL;
	uint32_t	nsets = 0;
	dp_marg    *margs = NULL;
	uint32_t	nmargs = 0;
	uint64_t	nrows;
	double		t0;
	int			rc = 0;

	memset(out, 0, sizeof(*out));
	dp_clear_error();
	if (d == 0)
		return dp_invalid("the table to synthesize has no column");
	if (p->extra)
		return dp_invalid("the PrivSyn method reads every row itself: it takes no counts from elsewhere");
	/* the budget of every release, from the schedule (dp_schedule.h) */
	if (dp_schedule_method(DP_CALL_PRIVSYN, p->rho, d, false, &sched) != 0 ||
		!(dp_rare_threshold(dp_schedule_rho(&sched, DP_RELEASE_ONEWAY), d) > 0))	/* noise out of range */
		return dp_invalid("rho is not positive, or the one-way marginals' noise is out of the sampler's range");
	rho2 = dp_schedule_rho(&sched, DP_RELEASE_INDIF);
	rho3 = dp_schedule_rho(&sched, DP_RELEASE_PUBLISH);
	/* Combine publishes at most one set per selected pair (cliques replace >= 3 pairs each) */
	margs = dp_zalloc(sizeof(dp_marg) * ((size_t) d + (m > 0 ? m : 1)));
	sets = dp_zalloc(sizeof(*sets) * (m > 0 ? m : 1));
	set_sizes = dp_zalloc(sizeof(uint32_t) * (m > 0 ? m : 1));
	if (!margs || !sets || !set_sizes)
		FAIL(dp_nomem("could not allocate the marginal sets of PrivSyn's selection"));

	t0 = dp_now();
	PROGRESS(DP_PHASE_ONEWAY, 0);
	rc = dp_privsyn_oneway_stage(data, sizes, NULL, dp_schedule_rho(&sched, DP_RELEASE_ONEWAY), NULL, NULL, out, margs, &merged,
								 p->consume, NULL, p->prior);
	if (rc != 0)
		goto done;
	nmargs = d;
	out->seconds[DP_PHASE_ONEWAY] = dp_now() - t0;

	/* ---- 3-5. InDif (the schedule's DP_RELEASE_INDIF), DenseMarg and Combine (post-processing) ---- */
	t0 = dp_now();
	PROGRESS(DP_PHASE_SELECT, 0);
	if (m > 0)
	{
		scores = dp_zalloc(sizeof(double) * m);
		selected = dp_zalloc(m);
		if (!scores || !selected)
			FAIL(dp_nomem("could not allocate the pairs' InDif scores"));
		if (dp_indif_noisy(&merged, out->merged_sizes, rho2, scores) != 0)
			FAIL(dp_invalid("could not compute the noisy InDif scores: too many columns, or their noise is out of the sampler's range"));
		dp_spend_record(&out->spend, DP_RELEASE_INDIF, rho2, m);
		PROGRESS(DP_PHASE_SELECT, 0.5);
		if (dp_densemarg(d, scores, out->merged_sizes, rho3, selected) == DP_SELECT_ERROR)
			FAIL(dp_invalid("DenseMarg could not select marginals from the InDif scores"));
		nsets = dp_combine(d, selected, scores, out->merged_sizes, p->gamma, sets, set_sizes,
						   m);
		if (nsets == DP_SELECT_ERROR)
			FAIL(dp_invalid("Combine could not merge the selected pairs into marginals"));
	}
	out->seconds[DP_PHASE_SELECT] = dp_now() - t0;

	/* ---- 6. publish the selected marginals: DP_RELEASE_PUBLISH, rho_j ~ c_j^(2/3) ---- */
	t0 = dp_now();
	PROGRESS(DP_PHASE_PUBLISH, 0);
	if (nsets > 0)
	{
		cells = dp_zalloc(sizeof(uint64_t) * nsets);
		rho_j = dp_zalloc(sizeof(double) * nsets);
		if (!cells || !rho_j)
			FAIL(dp_nomem("could not allocate the publication's budget split"));
		for (uint32_t s = 0; s < nsets; s++)
		{
			dp_marg    *mk = &margs[nmargs + s];

			if (dp_marg_init(mk, set_sizes[s], sets[s], out->merged_sizes) != 0)
				FAIL(dp_nomem("could not allocate a selected marginal"));
			cells[s] = mk->ncells;
		}
		dp_publication_split(cells, nsets, rho3, rho_j);
		for (uint32_t s = 0; s < nsets; s++)
		{
			dp_marg    *mk = &margs[nmargs + s];

			dp_marg_count(mk, &merged);
			if (add_noise(mk, rho_j[s]) != 0)
				FAIL(dp_invalid("a selected marginal's noise is out of the sampler's range"));
			dp_spend_record(&out->spend, DP_RELEASE_PUBLISH, rho_j[s], 1);
			PROGRESS(DP_PHASE_PUBLISH, (s + 1.0) / nsets);
		}
		nmargs += nsets;
	}
	out->n_kway = nsets;
	out->seconds[DP_PHASE_PUBLISH] = dp_now() - t0;

	/* The private data is no longer needed: everything below is post-processing. */
	dp_codes_free(&merged);

	/* ---- 7. consistency and non-negativity ---- */
	t0 = dp_now();
	PROGRESS(DP_PHASE_CONSIST, 0);
	out->total = dp_consist(margs, nmargs, 100);
	if (out->total < 0)
		FAIL(-2);				/* dp_consist said why */
	out->seconds[DP_PHASE_CONSIST] = dp_now() - t0;

	/* ---- 8-9. GUM, and merged codes split back (post-processing, dp_privsyn_sample) ---- */
	t0 = dp_now();
	PROGRESS(DP_PHASE_GUM, 0);
	out->margs = margs;
	out->nmargs = nmargs;
	margs = NULL;				/* out owns them */
	nrows = p->rows ? p->rows : dp_privsyn_default_rows(out);
	if (p->max_rows && nrows > p->max_rows)
		nrows = p->max_rows;	/* the default (noisy) count, capped: post-processing */
	rc = dp_privsyn_sample(out, d, sizes, nrows, &p->gum, rng, &out->synth);
	if (rc != 0)
		goto done;
	out->seconds[DP_PHASE_GUM] = dp_now() - t0;
	PROGRESS(DP_PHASE_GUM, 1);

done:
	dp_codes_free(&merged);
	dp_free(scores);
	dp_free(selected);
	dp_free(sets);
	dp_free(set_sizes);
	dp_free(cells);
	dp_free(rho_j);
	if (margs)
	{
		/* not handed over to out: zeroed slots past nmargs are harmless to free */
		for (uint32_t k = 0; k < d + (m > 0 ? m : 1); k++)
			dp_marg_free(&margs[k]);
		dp_free(margs);
	}
	if (rc != 0)
		dp_privsyn_result_free(out);
	return rc;
}

void
dp_privsyn_result_free(dp_privsyn_result *r)
{
	for (uint32_t k = 0; r->margs && k < r->nmargs; k++)
		dp_marg_free(&r->margs[k]);
	dp_free(r->margs);
	for (uint32_t j = 0; j < r->n_oneway; j++)
	{
		if (r->code_map)
			dp_free(r->code_map[j]);
		if (r->oneway_noisy)
			dp_free(r->oneway_noisy[j]);
	}
	dp_free(r->code_map);
	dp_free(r->oneway_noisy);
	dp_free(r->merged_sizes);
	dp_free(r->oneway_prior);
	dp_codes_free(&r->synth);
	memset(r, 0, sizeof(*r));
}

uint64_t
dp_privsyn_sample_coarse(uint64_t nrows, uint64_t nmargs)
{
	uint64_t	m = nrows;

	if (nmargs <= DP_SAMPLE_WIDE_MARGS || (double) nrows * (double) nmargs <= DP_SAMPLE_WIDE_WORK)
		return nrows;
	while ((double) m * (double) nmargs > DP_SAMPLE_WIDE_WORK / 2 &&
		   m / DP_SAMPLE_WIDE_FACTOR >= DP_SAMPLE_WIDE_MIN_COARSE)
		m /= DP_SAMPLE_WIDE_FACTOR;
	return m;
}

uint64_t
dp_privsyn_default_rows(const dp_privsyn_result *model)
{
	return (uint64_t) llround(fmax(model->total, 0));
}

/*
 * dp_privsyn_maxent_path; with build false, 2 whenever a tree may be tried (sample_maxent builds
 * it and leaves GUM to draw when it is too large: one build instead of two)
 */
static int
maxent_path(const dp_privsyn_result *model, uint32_t d, const dp_gum_params *gum, bool build,
			uint64_t *cells)
{
	dp_jtree	t;
	uint64_t	whole = dp_maxent_cells(d, model->merged_sizes);

	if (cells)
		*cells = 0;
	if (!gum || model->total < 0.5 || model->nmargs == 0)
		return 0;
	if (gum->maxent_cells > 0 && whole <= gum->maxent_cells)
	{
		if (cells)
			*cells = whole;
		return 1;
	}
	if (gum->jtree_cells == 0)
		return 0;
	if (!build)
		return 2;
	/* a build that fails (-2: no memory) leaves GUM to draw, as a tree too large does */
	if (dp_jtree_build(&t, model->margs, model->nmargs, d, model->merged_sizes, gum->jtree_cells) != 0)
		return 0;
	if (cells)
		*cells = t.cells;
	dp_jtree_free(&t);
	return 2;
}

int
dp_privsyn_maxent_path(const dp_privsyn_result *model, uint32_t d, const dp_gum_params *gum, uint64_t *cells)
{
	return maxent_path(model, d, gum, true, cells);
}

bool
dp_privsyn_draws_maxent(const dp_privsyn_result *model, uint32_t d, const dp_gum_params *gum)
{
	return dp_privsyn_maxent_path(model, d, gum, NULL) != 0;
}

/*
 * The rows from the maximum-entropy distribution of the model's marginals (dp_maxent.h, or
 * dp_jtree.h on path 2), n rows into out; 1 when the marginals' supports leave no distribution
 * or the junction tree is too large (the caller then runs GUM).
 */
static int
sample_maxent(const dp_privsyn_result *model, uint32_t d, uint64_t nrows, const dp_gum_params *prm,
			  int path, dp_prng *rng, dp_codes *out)
{
	uint64_t	ncells;
	double	   *P;
	int			rc;

	if (path == 2)
	{
		dp_jtree	t;

		rc = dp_jtree_build(&t, model->margs, model->nmargs, d, model->merged_sizes, prm->jtree_cells);
		if (rc != 0)
			return 1;			/* too large (or no memory for the tree): GUM draws */
		rc = dp_jtree_fit(&t, model->margs, model->nmargs, dp_jtree_sweeps(&t, model->margs, model->nmargs),
						  DP_MAXENT_TOL, prm->progress, prm->progress_arg);
		if (rc > 0)
			rc = dp_jtree_draw(&t, nrows, rng, out, prm->progress, prm->progress_arg);
		else if (rc == 0)
			rc = 1;
		dp_jtree_free(&t);
		return rc;
	}
	ncells = dp_maxent_cells(d, model->merged_sizes);
	P = dp_alloc(sizeof(double) * ncells);
	if (!P)
		return dp_nomem("could not allocate the maximum-entropy distribution");
	rc = dp_maxent_fit(model->margs, model->nmargs, d, model->merged_sizes, P,
					   dp_maxent_sweeps(ncells, model->nmargs), DP_MAXENT_TOL,
					   prm->progress, prm->progress_arg);
	if (rc > 0)
		rc = dp_maxent_draw(P, d, model->merged_sizes, nrows, rng, out, prm->progress, prm->progress_arg);
	else if (rc == 0)
		rc = 1;					/* no distribution: the caller draws by GUM */
	dp_free(P);
	return rc;
}

/*
 * GUM on the model's marginals, n rows into out.  From DP_SAMPLE_LEVEL_FACTOR * DP_SAMPLE_MIN_COARSE
 * rows on, coarse to fine: the coarsest level, n / 8^k rows (the largest k that keeps it at
 * DP_SAMPLE_MIN_COARSE rows or more), runs GUM in full from the independent fill; every finer
 * level, 8 times larger and n last, starts from the level below, each row a copy of one of its
 * rows (dp_gum_params.start), and runs at most DP_SAMPLE_WARM_ITERS iterations, the last level
 * DP_SAMPLE_LAST_ITERS.  The copies already follow the marginals (a cold start at n needs 25 to
 * 45 iterations to get there).  Below that, a model with many marginals gets one coarse level
 * (dp_privsyn_sample_coarse), then n rows warm from it with DP_SAMPLE_WARM_ITERS iterations.
 * A function of the model, nrows and rng only.
 */
static int
sample_gum(const dp_privsyn_result *model, uint32_t d, uint64_t nrows, const dp_gum_params *gum,
		   dp_prng *rng, dp_codes *out, bool *chunked)
{
	dp_gum_params prm,
				warm;
	dp_codes	below = {0};
	uint64_t	m = nrows;
	uint32_t	last_iters = DP_SAMPLE_LAST_ITERS;
	bool		one_level = false,
				exact;
	int			rc;

	if (gum)
		prm = *gum;
	else
		dp_gum_default_params(&prm);
	*chunked = false;
	/*
	 * a small joint domain or junction tree: the maximum-entropy distribution, no GUM
	 * (dp_gum_params.maxent_cells and jtree_cells)
	 */
	{
		int			path = maxent_path(model, d, &prm, false, NULL);

		if (path != 0)
		{
			rc = sample_maxent(model, d, nrows, &prm, path, rng, out);
			if (rc != 1)
				return rc;
		}
	}
	/* a caller's start (the adaptive method's last estimate): one warm run at n, no levels */
	if (prm.start && prm.start->nrows > 0 && prm.start->ncols == d)
	{
		/* independent chunks (dp_gum_params.independent_chunk) when the start holds the n rows */
		*chunked = prm.independent_chunk > 0 && prm.independent_chunk < nrows && prm.start->nrows == nrows;
		if (*chunked)
			return dp_gum_run_chunked(model->margs, model->nmargs, d, model->merged_sizes, nrows,
									  prm.independent_chunk, &prm, rng, out);
		return dp_gum_run(model->margs, model->nmargs, d, model->merged_sizes, nrows, &prm, rng, out);
	}
	prm.start = NULL;
	while (m / DP_SAMPLE_LEVEL_FACTOR >= DP_SAMPLE_MIN_COARSE)
		m /= DP_SAMPLE_LEVEL_FACTOR;
	if (m == nrows)
	{
		/* many marginals: one coarse level, then n warm from its copies (dp_privsyn_sample_coarse) */
		m = dp_privsyn_sample_coarse(nrows, model->nmargs);
		one_level = true;
		last_iters = DP_SAMPLE_WARM_ITERS;
	}
	if (m == nrows)
		return dp_gum_run(model->margs, model->nmargs, d, model->merged_sizes, nrows, &prm, rng, out);
	/* the exact 1-way counts (dp_gum_params.one_way_exact): the rows of n only, not the levels' */
	exact = prm.one_way_exact;
	prm.one_way_exact = false;
	warm = prm;
	if (warm.iterations > DP_SAMPLE_WARM_ITERS)
		warm.iterations = DP_SAMPLE_WARM_ITERS;
	if (dp_codes_init(&below, d, m) != 0)
		return -2;
	rc = dp_gum_run(model->margs, model->nmargs, d, model->merged_sizes, m, &prm, rng, &below);
	while (rc == 0)
	{
		dp_codes	level = {0};
		uint64_t	next = !one_level && m * DP_SAMPLE_LEVEL_FACTOR * DP_SAMPLE_LEVEL_FACTOR <= nrows ?
			m * DP_SAMPLE_LEVEL_FACTOR : nrows;

		warm.start = &below;
		if (next == nrows)
		{
			/*
			 * the last level: the copies of the level below as they are (DP_SAMPLE_LAST_ITERS), or
			 * after a model's one coarse level, DP_SAMPLE_WARM_ITERS
			 */
			if (warm.iterations > last_iters)
				warm.iterations = last_iters;
			warm.one_way_exact = exact;
			rc = dp_gum_run(model->margs, model->nmargs, d, model->merged_sizes, nrows, &warm, rng, out);
			break;
		}
		if (dp_codes_init(&level, d, next) != 0)
			rc = -2;
		else
			rc = dp_gum_run(model->margs, model->nmargs, d, model->merged_sizes, next, &warm, rng, &level);
		dp_codes_free(&below);
		below = level;
		m = next;
	}
	dp_codes_free(&below);
	return rc;
}

/*
 * The noise variance of column j's released one-way counts (model->oneway_noisy[j]): from the rho
 * of its one-way marginal in the model (the schedule's, or for the adaptive method the sum over
 * its released measurements), 0 when the model has none with a positive rho (the split then stays
 * proportional).  Every marginal is searched, not the first n_oneway: a model loaded for
 * dp_sample does not set n_oneway, and must split as the synthesis that stored it did.  A one-way
 * marginal measured again by the adaptive rounds carries the sum of both rho, which understates the
 * first release's variance: the shrinkage below is then weaker, never stronger.
 */
static double
oneway_sigma2(const dp_privsyn_result *model, uint32_t j)
{
	for (uint32_t k = 0; k < model->nmargs; k++)
		if (model->margs[k].nattrs == 1 && model->margs[k].attrs[0] == j && model->margs[k].rho > 0)
			return dp_gaussian_sigma2(model->margs[k].rho, 1.0);
	return 0;
}

/*
 * The weights w[0..k) among which a merged code's k members are drawn, from their released
 * one-way counts z[0..k), each with Gaussian noise of variance sigma2.  Members merged as rare
 * have counts of the noise's order, and drawing in proportion to max(z, 0) follows the noise:
 * a member of 50 rows released with sigma 200 gets anywhere from nothing to several times its
 * share.  With k >= 4 members and sigma2 known, z is shrunk toward the members' mean m by the
 * positive-part James-Stein factor s = max(0, 1 - (k - 3) sigma2 / sum (z - m)^2) (James & Stein
 * 1961, Efron & Morris 1973: under the unconditional Gaussian model it has a lower expected squared
 * error than z for every k >= 4 true counts; members chosen because their counts fell below a
 * threshold are not that model, so here it is a heuristic, measured on the shared tables),
 * w = max(m + s (z - m), 0): where the counts spread no more than their noise, s = 0 and
 * the members are drawn uniformly; where they spread far more, s -> 1 and w -> max(z, 0).  Fewer
 * members, or sigma2 0: w = max(z, 0).  Post-processing of released counts and a public variance.
 */
static void
split_weights(const double *z, uint32_t k, double sigma2, double *w)
{
	double		mean = 0,
				ss = 0,
				shrink;

	if (k < 4 || !(sigma2 > 0))
	{
		for (uint32_t i = 0; i < k; i++)
			w[i] = fmax(z[i], 0);
		return;
	}
	for (uint32_t i = 0; i < k; i++)
		mean += z[i];
	mean /= k;
	for (uint32_t i = 0; i < k; i++)
		ss += (z[i] - mean) * (z[i] - mean);
	shrink = ss > 0 ? fmax(0, 1 - (k - 3) * sigma2 / ss) : 0;
	for (uint32_t i = 0; i < k; i++)
		w[i] = fmax(mean + shrink * (z[i] - mean), 0);
}

/*
 * A member of the merged code whose members' cumulative weights are cum[lo .. hi) (hi - lo > 1),
 * drawn in proportion to the weights (uniformly when they are all zero): one draw from rng.
 */
static inline uint32_t
split_pick(const double *cum, uint32_t lo, uint32_t hi, dp_prng *rng)
{
	double		total = cum[hi - 1];

	if (total > 0)
	{
		double		u = dp_prng_unit(rng) * total;
		uint32_t	a = lo,
					b = hi - 1;

		/* the first member whose cumulative weight exceeds u (the last if none): binary
		 * search, O(log members) per row */
		while (a < b)
		{
			uint32_t	mid = a + (b - a) / 2;

			if (cum[mid] <= u)
				a = mid + 1;
			else
				b = mid;
		}
		return a;
	}
	return lo + (uint32_t) dp_prng_below(rng, hi - lo);
}

/*
 * One column's split of merged codes: each merged code's members (members[first[g] ..
 * first[g + 1])) and their cumulative weights (cum, split_weights); same: no merge in the column
 * (every merged code its own one member, the same code): no draw.  With nodraw (from
 * DP_SPLIT_NODRAW_ROWS rows), lut and draw as split_col_nodraw sets them.
 */
typedef struct split_col
{
	uint32_t   *first,
			   *members;
	double	   *cum;
	uint16_t   *lut;
	uint8_t    *draw;
	bool		same,
				any,			/* nodraw: some merged code takes a draw */
				ident;			/* nodraw: every row keeps its code, no draw */
} split_col;

static void
split_col_free(split_col *sc)
{
	dp_free(sc->first);
	dp_free(sc->members);
	dp_free(sc->cum);
	dp_free(sc->lut);
	dp_free(sc->draw);
	memset(sc, 0, sizeof(*sc));
}

/* Column j's split (split_col); with nodraw its lut and draw too.  Returns 0 or -2. */
static int
split_col_make(const dp_privsyn_result *model, uint32_t j, const uint32_t *sizes, bool nodraw, split_col *sc)
{
	/* per merged code: its members and their cumulative weights */
	uint32_t	ms = model->merged_sizes[j];
	const uint16_t *map = model->code_map[j];
	uint32_t   *fill = dp_zalloc(sizeof(uint32_t) * ms);
	double	   *z = dp_zalloc(sizeof(double) * sizes[j]);
	double		sigma2 = oneway_sigma2(model, j);

	memset(sc, 0, sizeof(*sc));
	sc->first = dp_zalloc(sizeof(uint32_t) * (ms + 1));
	sc->members = dp_zalloc(sizeof(uint32_t) * sizes[j]);
	sc->cum = dp_zalloc(sizeof(double) * sizes[j]);
	if (!sc->first || !sc->members || !sc->cum || !fill || !z)
	{
		dp_free(fill);
		dp_free(z);
		split_col_free(sc);
		return dp_nomem("could not allocate the split of merged codes back to their members");
	}
	for (uint32_t k = 0; k < sizes[j]; k++)
		sc->first[map[k] + 1]++;
	for (uint32_t g = 0; g < ms; g++)
		sc->first[g + 1] += sc->first[g];
	for (uint32_t k = 0; k < sizes[j]; k++)
	{
		uint32_t	g = map[k];

		sc->members[sc->first[g] + fill[g]++] = k;
	}
	dp_free(fill);
	for (uint32_t g = 0; g < ms; g++)
	{
		double		acc = 0;
		uint32_t	k = sc->first[g + 1] - sc->first[g];

		for (uint32_t i = 0; i < k; i++)
			z[i] = model->oneway_noisy[j][sc->members[sc->first[g] + i]];
		split_weights(z, k, sigma2, sc->cum + sc->first[g]);
		for (uint32_t i = sc->first[g]; i < sc->first[g + 1]; i++)
		{
			acc += sc->cum[i];
			sc->cum[i] = acc;
		}
	}
	dp_free(z);
	/* no merge in this column (every merged code its own one member, the same code): the
	 * rows stay as they are, and no draw is made for them (none is for a one-member code) */
	sc->same = ms == sizes[j];
	for (uint32_t g = 0; g < ms && sc->same; g++)
		sc->same = sc->first[g + 1] - sc->first[g] == 1 && sc->members[sc->first[g]] == g;
	if (sc->same || !nodraw)
		return 0;
	/*
	 * From DP_SPLIT_NODRAW_ROWS rows, a merged code with one member of positive weight
	 * (the others' weights zero: rare members whose released counts fell to zero or below)
	 * gives its rows that member without a draw: the draw below picks it with probability 1,
	 * so the rows' distribution is the same; only the draws left out change which of the
	 * generator's outputs the other codes' rows take.  Below that, every row of a merged
	 * code of several members takes a draw.
	 */
	sc->lut = dp_zalloc(sizeof(uint16_t) * ms);
	sc->draw = dp_zalloc(ms);
	if (!sc->lut || !sc->draw)
	{
		split_col_free(sc);
		return dp_nomem("could not allocate the split of merged codes back to their members");
	}
	for (uint32_t g = 0; g < ms; g++)
	{
		uint32_t	lo = sc->first[g],
					hi = sc->first[g + 1],
					npos = 0,
					pos = lo;

		for (uint32_t i = lo; i < hi; i++)
			if (sc->cum[i] > (i == lo ? 0 : sc->cum[i - 1]))
			{
				npos++;
				pos = i;
			}
		/* several members of positive weight: a draw; none: uniform, a draw as well */
		sc->draw[g] = hi - lo > 1 && npos != 1;
		/* a merged code has at least one member (the code map covers every code) */
		sc->lut[g] = hi > lo ? (uint16_t) sc->members[hi - lo > 1 ? pos : lo] : 0;
		sc->any |= sc->draw[g];
	}
	/* every merged code its one member, the same code (no member of positive weight
	 * merged in, no draw): the rows stay as they are */
	sc->ident = !sc->any;
	for (uint32_t g = 0; g < ms && sc->ident; g++)
		sc->ident = sc->lut[g] == g;
	return 0;
}

/* rows [b, e) of a column split in place by its nodraw split (split_col_make) */
static inline void
split_col_rows(const split_col *sc, uint16_t *col, uint64_t b, uint64_t e, dp_prng *rng)
{
	if (sc->any)
		for (uint64_t i = b; i < e; i++)
		{
			uint32_t	g = col[i];

			col[i] = sc->draw[g] ? (uint16_t) sc->members[split_pick(sc->cum, sc->first[g], sc->first[g + 1], rng)] :
				sc->lut[g];
		}
	else
		for (uint64_t i = b; i < e; i++)
			col[i] = sc->lut[col[i]];
}

/*
 * dp_privsyn.h: the split of merged codes, in place (a row's merged code is read before its own
 * code is written: no second n x d table).
 */
int
dp_privsyn_split(const dp_privsyn_result *model, uint32_t d, const uint32_t *sizes, uint64_t nrows,
				 const dp_gum_params *gum, dp_prng *rng, dp_codes *synth)
{
	for (uint32_t j = 0; j < d; j++)
	{
		split_col	sc;
		bool		nodraw = nrows >= DP_SPLIT_NODRAW_ROWS;

		if (split_col_make(model, j, sizes, nodraw, &sc) != 0)
			return -2;
		if (sc.same)
		{
			split_col_free(&sc);
			continue;
		}
		if (nodraw)
		{
			for (uint64_t b = 0; !sc.ident && b < nrows; b += 65536)
			{
				uint64_t	e = nrows - b < 65536 ? nrows : b + 65536;

				split_col_rows(&sc, synth->col[j], b, e, rng);
				/* a heartbeat every 64k rows: cancel and statement_timeout get in */
				if ((e & 0xFFFF) == 0)
				{
					dp_check_interrupts();
					if (gum && dp_report(gum->progress, gum->progress_arg, DP_PHASE_GUM, gum->iterations,
										 gum->iterations, -1) != 0)
					{
						split_col_free(&sc);
						return dp_cancelled();
					}
				}
			}
			split_col_free(&sc);
			continue;
		}
		for (uint64_t i = 0; i < nrows; i++)
		{
			uint32_t	g = synth->col[j][i];
			uint32_t	lo = sc.first[g],
						hi = sc.first[g + 1];
			uint32_t	pick = lo;

			/* a heartbeat every 64k rows: cancel and statement_timeout get in */
			if ((i & 0xFFFF) == 0xFFFF)
				dp_check_interrupts();
			if ((i & 0xFFFF) == 0xFFFF && gum &&
				dp_report(gum->progress, gum->progress_arg, DP_PHASE_GUM, gum->iterations, gum->iterations, -1) != 0)
			{
				split_col_free(&sc);
				return dp_cancelled();
			}
			if (hi - lo > 1)
				pick = split_pick(sc.cum, lo, hi, rng);
			synth->col[j][i] = (uint16_t) sc.members[pick];
		}
		split_col_free(&sc);
	}
	return 0;
}

/*
 * The split of a chunk's rows (dp_gum_params.chunk_post, from DP_SPLIT_NODRAW_ROWS rows): every
 * column's nodraw split made beforehand on the calling thread; the chunk's rows split column by
 * column with the chunk's own generator.  Pure computation: safe on a helper.
 */
typedef struct split_plan
{
	uint32_t	d;
	split_col  *col;
} split_plan;

static int
split_chunk(void *arg, dp_codes *rows, dp_prng *rng)
{
	const split_plan *sp = arg;

	for (uint32_t j = 0; j < sp->d; j++)
		if (!sp->col[j].same && !sp->col[j].ident)
			split_col_rows(&sp->col[j], rows->col[j], 0, rows->nrows, rng);
	return 0;
}

static void
split_plan_free(split_plan *sp)
{
	for (uint32_t j = 0; sp->col && j < sp->d; j++)
		split_col_free(&sp->col[j]);
	dp_free(sp->col);
	sp->col = NULL;
}

static int
split_plan_make(const dp_privsyn_result *model, uint32_t d, const uint32_t *sizes, split_plan *sp)
{
	sp->d = d;
	sp->col = dp_zalloc(sizeof(split_col) * d);
	if (sp->col == NULL)
		return dp_nomem("could not allocate the split of merged codes back to their members");
	for (uint32_t j = 0; j < d; j++)
		if (split_col_make(model, j, sizes, true, &sp->col[j]) != 0)
			return -2;
	return 0;
}

int
dp_privsyn_sample(const dp_privsyn_result *model, uint32_t d, const uint32_t *sizes, uint64_t nrows,
				  const dp_gum_params *gum, dp_prng *rng, dp_codes *synth)
{
	dp_codes	synth_merged;
	split_plan	plan = {0};
	bool		split_done = false;

	memset(synth, 0, sizeof(*synth));
	dp_clear_error();
	if (d == 0 || model->nmargs == 0 || !model->merged_sizes || !model->code_map || !model->oneway_noisy)
		return dp_invalid("the model has no column, no marginal, or no rare-value merge");
	for (uint32_t j = 0; j < d; j++)
	{
		if (sizes[j] == 0 || model->merged_sizes[j] == 0 || model->merged_sizes[j] > sizes[j])
			return dp_invalid("the model's merged sizes disagree with its columns' sizes");
		for (uint32_t k = 0; k < sizes[j]; k++)
			if (model->code_map[j][k] >= model->merged_sizes[j])
				return dp_invalid("the model's rare-value merge maps a code out of range");
	}

	/* ---- GUM on the model's marginals, over merged codes ---- */
	if (dp_codes_init(&synth_merged, d, nrows ? nrows : 1) != 0)
		return -2;				/* dp_codes_init said why */
	if (nrows > 0 && !(model->total >= 0.5))	/* under half a row: may have no positive cell */
	{
		/*
		 * Nothing released to follow (a noisy total of 0 zeroes every consistent marginal):
		 * every column uniform over its merged codes, rather than a failure that would depend
		 * on the release.
		 */
		uint16_t   *row = dp_zalloc(sizeof(uint16_t) * d);

		if (!row)
		{
			dp_codes_free(&synth_merged);
			return dp_nomem("could not allocate a uniform synthetic row");
		}
		for (uint64_t i = 0; i < nrows; i++)
		{
			int			rc = 0;

			for (uint32_t j = 0; j < d; j++)
				row[j] = (uint16_t) dp_prng_below(rng, model->merged_sizes[j]);
			if (dp_codes_append(&synth_merged, row) != 0)
				rc = -2;		/* dp_codes_append said why */
			else if ((i & 0xFFFF) == 0xFFFF && gum &&
					 dp_report(gum->progress, gum->progress_arg, DP_PHASE_GUM, gum->iterations, gum->iterations, -1) != 0)
				rc = dp_cancelled();	/* the same heartbeat as the split's */
			if (rc != 0)
			{
				dp_free(row);
				dp_codes_free(&synth_merged);
				return rc;
			}
		}
		dp_free(row);
	}
	else if (nrows > 0)
	{
		dp_gum_params prm;
		int			rc = 0;

		/*
		 * GUM in independent chunks (dp_gum_params.independent_chunk): each chunk's merged codes
		 * split on its own thread with its own generator, and handed to the caller's chunk_sink
		 * as they finish, in order
		 */
		if (gum)
			prm = *gum;
		else
			dp_gum_default_params(&prm);
		prm.chunk_post = NULL;
		if (prm.independent_chunk > 0 && nrows >= DP_SPLIT_NODRAW_ROWS)
		{
			rc = split_plan_make(model, d, sizes, &plan);
			prm.chunk_post = split_chunk;
			prm.chunk_post_arg = &plan;
		}
		else
			prm.chunk_sink = NULL;
		if (rc == 0)
			rc = sample_gum(model, d, nrows, &prm, rng, &synth_merged, &split_done);
		split_plan_free(&plan);
		if (rc != 0)
		{
			dp_codes_free(&synth_merged);
			if (rc == -1)
				return dp_cancelled();
			return dp_invalid("could not synthesize rows from the model's marginals");
		}
	}

	/*
	 * ---- split merged codes back among their members, by their released one-way counts
	 * shrunk toward the members' mean as their noise warrants (split_weights) ----
	 * In place, row by row (a row's merged code is read before its own code is written): no
	 * second n x d table.
	 */
	*synth = synth_merged;
	if (!split_done)
	{
		int			rc = dp_privsyn_split(model, d, sizes, nrows, gum, rng, synth);

		if (rc != 0)
		{
			dp_codes_free(synth);
			return rc;
		}
	}
	synth->nrows = nrows;
	return 0;
}
