/*
 * dp_adaptive_draw.c - the adaptive method's estimates and its final rows (see dp_adaptive.h,
 * steps 3 and 5): post-processing of the released marginals only.
 */
#include "dp_adaptive.h"
#include "dp_adaptive_cand.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp_consist.h"
#include "dp_internal.h"
#include "dp_jtree.h"
#include "dp_maxent.h"
#include "dp_random.h"

/*
 * The estimate (post-processing): margs[0..nmargs) copied, made consistent, and GUM draws
 * dp_adaptive_est_rows(total) rows from them into synth (freed and made anew).
 */
int
dpa_estimate(const dp_marg *margs, uint32_t nmargs, uint32_t d, const uint32_t *sizes,
			 const dp_gum_params *gum, dp_prng *rng, dp_codes *synth, double *total)
{
	dp_marg    *work = dp_zalloc(sizeof(dp_marg) * nmargs);
	dp_codes	next = {0};
	dp_gum_params prm = *gum;
	uint64_t	ns;
	bool		warm;
	int			rc = 0;

	if (!work)
		return dp_nomem("could not allocate the marginals of a round's estimate");
	for (uint32_t k = 0; k < nmargs; k++)
		if (dp_marg_copy(&work[k], &margs[k]) != 0)
		{
			for (uint32_t j = 0; j < k; j++)
				dp_marg_free(&work[j]);
			dp_free(work);
			return dp_nomem("could not allocate the marginals of a round's estimate");
		}
	*total = dp_consist(work, nmargs, DP_ADAPTIVE_EST_CONSIST_ITERS);
	/*
	 * The first estimate fixes the number of rows; every later one is warm, from the previous
	 * estimate's rows, which already follow all but the newest measurements.
	 */
	warm = synth->nrows > 0 && synth->ncols == d;
	ns = warm ? synth->nrows : dp_adaptive_est_rows(*total);
	prm.start = warm ? synth : NULL;
	/* by the estimates' size: whether they hold every row, are capped, or hold more rows */
	if (warm)
		prm.iterations = dp_adaptive_warm_iters(ns);
	if (*total < 0 || dp_codes_init(&next, d, ns) != 0)
		rc = -2;				/* dp_consist or dp_codes_init said why */
	else if (!(*total >= 0.5))
	{
		/* under half a row: the marginals may keep no positive cell; uniform rows, as
		 * dp_privsyn_sample */
		for (uint32_t j = 0; j < d; j++)
			for (uint64_t i = 0; i < ns; i++)
				next.col[j][i] = (uint16_t) dp_prng_below(rng, sizes[j]);
		next.nrows = ns;
	}
	else
	{
		prm.counting = dp_adaptive_huge_counting(prm.counting, *total);
		rc = dp_gum_run(work, nmargs, d, sizes, ns, &prm, rng, &next);
		if (rc == -1)
			rc = dp_cancelled();
		else if (rc != 0)
			rc = dp_invalid("GUM could not synthesize a round's estimate from the measured marginals");
	}
	for (uint32_t k = 0; k < nmargs; k++)
		dp_marg_free(&work[k]);
	dp_free(work);
	dp_codes_free(synth);
	*synth = next;
	return rc;
}

/*
 * Step 5: whether the last estimate (m rows) is the final GUM's start for n rows.  It must hold
 * every row (m below DP_ADAPTIVE_SYNTH_ROWS, so not capped: a capped estimate, of either size,
 * has at least DP_ADAPTIVE_SYNTH_ROWS rows) and have about the n rows asked for,
 * 0.95 n <= m <= 1.25 n; dp_gum_params.start then draws n of m > n rows uniformly without
 * replacement, or copies n - m of m < n rows twice.  A function of the estimate's size only.
 */
bool
dpa_final_from_estimate(uint64_t m, uint64_t n)
{
	return m > 0 && dpa_estimate_uncapped(m) && n > 0 &&
		(double) m >= 0.95 * (double) n && (double) m <= 1.25 * (double) n;
}

/*
 * Step 5 when the model's junction tree is too large to draw on: n rows (merged codes, into out,
 * initialised here) drawn from the maximum-entropy distribution of a sub-model, the one-way
 * marginals and then the k-way ones in the order they were measured while the tree of those kept
 * stays within DP_ADAPTIVE_JTREE_CELLS (dp_jtree_build_greedy).  Post-processing of the released
 * marginals only.  Returns 0; 1 when no sub-model could be fitted (out empty); -1 if cancelled;
 * -2 on allocation failure.
 */
static int
submodel_rows(const dp_privsyn_result *model, uint32_t d, uint64_t n, const dp_gum_params *gum,
			  dp_prng *rng, dp_codes *out, dp_adaptive_draw *how)
{
	dp_marg    *kept = dp_alloc(sizeof(dp_marg) * model->nmargs);
	uint32_t	nkept = 0;
	dp_jtree	t;
	int			rc;

	memset(out, 0, sizeof(*out));
	if (!kept)
		return dp_nomem("could not allocate the final sub-model");
	rc = dp_jtree_build_greedy(&t, model->margs, model->nmargs, d, d, model->merged_sizes,
							   DP_ADAPTIVE_JTREE_CELLS, kept, &nkept);
	if (rc == 0)
	{
		how->sub_margs = nkept;
		how->sub_cells = t.cells;
		rc = dp_jtree_fit(&t, kept, nkept, dp_adaptive_submodel_sweeps(dp_jtree_sweeps(&t, kept, nkept), n),
						  DP_MAXENT_TOL,
						  gum->progress, gum->progress_arg);
		if (rc > 0)
			rc = dp_codes_init(out, d, n) != 0 ? -2 :
				dp_jtree_draw_chunked(&t, n, dp_adaptive_draw_chunk(n), rng, out, gum->progress,
									  gum->progress_arg);
		else if (rc == 0)
			rc = 1;
		dp_jtree_free(&t);
	}
	dp_free(kept);
	if (rc != 0)
	{
		dp_codes_free(out);
		how->sub_margs = 0;
		how->sub_cells = 0;
	}
	return rc < 0 ? rc : rc > 0 ? 1 : 0;
}

bool
dp_adaptive_draws_submodel(const dp_privsyn_result *model, uint32_t d, uint64_t nrows, const dp_gum_params *gum)
{
	return gum && !gum->start && model->total >= 0.5 && model->nmargs > d && nrows > 0 &&
		nrows < (uint64_t) DP_SAMPLE_LEVEL_FACTOR * DP_SAMPLE_MIN_COARSE &&
		d <= DP_ADAPTIVE_TREE_COLS && dp_adaptive_tree_bound(model->total) == 0 &&
		!dp_privsyn_draws_maxent(model, d, gum);
}

int
dp_adaptive_sample(const dp_privsyn_result *model, uint32_t d, const uint32_t *sizes, uint64_t nrows,
				   const dp_gum_params *gum, dp_prng *rng, dp_codes *synth, dp_adaptive_draw *how)
{
	dp_gum_params prm = *gum;
	dp_codes	start = {0};
	int			rc;

	memset(how, 0, sizeof(*how));
	if (dp_adaptive_draws_submodel(model, d, nrows, gum))
	{
		rc = submodel_rows(model, d, nrows, gum, rng, &start, how);
		if (rc < 0)
		{
			memset(synth, 0, sizeof(*synth));
			return rc == -1 ? dp_cancelled() : rc;
		}
		if (rc == 0)
		{
			uint32_t	kway = 0,
						w;

			for (uint32_t k = 0; k < model->nmargs; k++)
				kway += model->margs[k].nattrs >= 2;
			w = dp_adaptive_submodel_iters(kway, nrows);
			prm.start = &start;
			if (prm.iterations > w)
				prm.iterations = w;
			prm.counting = dp_adaptive_huge_counting(prm.counting, (double) nrows);
			prm.maxent_cells = 0;	/* known too large: no second build of the whole tree */
			prm.jtree_cells = 0;
			/* GUM on chunks of the draw's chunks, each on its own (dp_gum_run_chunked) */
			prm.independent_chunk = dp_adaptive_gum_chunk(nrows);
			/* many rows, few iterations: the errors from the visits, no recount at their ends */
			prm.visit_errors = prm.independent_chunk > 0;
		}
	}
	rc = dp_privsyn_sample(model, d, sizes, nrows, &prm, rng, synth);
	dp_codes_free(&start);
	return rc;
}
