/*
 * dp_adaptive.c - adaptive measurement in rounds (see dp_adaptive.h for the method and its
 * privacy arithmetic).
 */
#include "dp_adaptive.h"
#include "dp_adaptive_cand.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp_accounting.h"
#include "dp_binning.h"
#include "dp_plan.h"
#include "dp_internal.h"
#include "dp_jtree.h"
#include "dp_maxent.h"
#include "dp_consist.h"
#include "dp_counts.h"
#include "dp_random.h"
#include "dp_sampler.h"

#define SCORE_UNITS		1024	/* scores on a grid of 1/1024 */
/*
 * Sensitivity of a pair's or a triple's integer score, in grid units: one row moves one exact count by 1, so
 * sum |x - y| moves by at most 1 (1024 units); every term is computed in double (x < 2^32 is exact,
 * the subtraction errs by at most 2^-21, i.e. 2^-11 units) and rounded to the nearest unit, which
 * adds at most 1 unit to the change of the one term that moved (the others are computed from the
 * same operands).  A column's score is half of it (weight 1/2).
 */
#define SCORE_SENS		(SCORE_UNITS + 1)
#define COUNT_CHUNK			64	/* candidates counted between two progress reports */

/* ---- the method ---- */

/*
 * Whether the model's marginals with candidate c added keep their junction tree within bound
 * cells (step 3b): a candidate measured before adds nothing; one inside a clique of the current
 * tree adds no edge; otherwise the tree is built with it.  A function of the released selections
 * and the public sizes only.  scratch: room for nmargs + 1 marginals' headers.
 */
typedef struct TreeFit
{
	const dp_marg *margs;
	uint32_t	nmargs,
				d;
	const uint32_t *sizes;
	const struct Cand *cand;
	uint64_t	bound;
	const dp_jtree *cur;		/* the current model's tree (NULL: none within bound) */
	dp_marg    *scratch;
	uint32_t	builds;
	uint8_t    *fit;			/* per fine candidate: 0 not checked, 1 fits, 2 does not (NULL: none) */
} TreeFit;

static bool
tree_fits(void *arg, uint32_t r)
{
	TreeFit    *f = arg;
	const Cand *c = &f->cand[r];
	dp_marg    *x = &f->scratch[f->nmargs];
	dp_jtree	t;
	int			rc;

	/* a coarse candidate adds what its fine twin adds: one check for both, measured with it */
	if (c->coarse)
	{
		r = c->twin;
		c = &f->cand[r];
	}
	if (c->meas >= 0)
		return true;
	if (f->fit && f->fit[r])
		return f->fit[r] == 1;
	for (uint32_t i = 0; f->cur && i < f->cur->ncliques; i++)
	{
		uint32_t	hits = 0;

		for (uint32_t k = 0; k < c->nattrs; k++)
			for (uint32_t a = 0; a < f->cur->cl[i].nattrs; a++)
				hits += f->cur->cl[i].attrs[a] == c->attrs[k];
		if (hits == c->nattrs)
			return true;
	}
	memcpy(f->scratch, f->margs, sizeof(dp_marg) * f->nmargs);
	memset(x, 0, sizeof(dp_marg));
	x->nattrs = c->nattrs;
	for (uint32_t k = 0; k < c->nattrs; k++)
	{
		x->attrs[k] = c->attrs[k];
		x->sizes[k] = f->sizes[c->attrs[k]];
	}
	f->builds++;
	rc = dp_jtree_build(&t, f->scratch, f->nmargs + 1, f->d, f->sizes, f->bound);
	if (rc == 0)
		dp_jtree_free(&t);
	if (f->fit)
		f->fit[r] = rc == 0 ? 1 : 2;
	return rc == 0;				/* too large, or a build that failed: not offered */
}

/*
 * Measures candidate cd: its exact counts x plus discrete Gaussian noise g (rho) on every cell.
 * A candidate measured before is averaged with its earlier measurement, weights in proportion to
 * their rho (the average of Gaussian measurements with rho a and b is one with rho a + b).  A
 * coarse candidate (cand[cd->twin] its fine pair) is measured over its runs' cells, and that
 * measurement, spread over the fine cells by the released one-way shares inside each run
 * (dpa_coarse_expand: post-processing), is the fine pair's: the model keeps the merged codes.
 * Its weight is rho too: its run totals have the noise of a measurement at rho, and inside a run
 * it says only what the one-way counts say.
 */
static int
measure(Cand *cd, Cand *cand, const Coarse *co, const uint32_t *x, const uint32_t *sizes, dp_dgauss *g,
		double rho, dp_marg *margs, uint32_t *nmargs)
{
	dp_marg		noisy;
	Cand	   *fine = cd->coarse ? &cand[cd->twin] : cd;

	if (dp_marg_init(&noisy, fine->nattrs, fine->attrs, sizes) != 0)
		return -2;
	if (cd->coarse)
	{
		double	   *z = dp_alloc(sizeof(double) * cd->cells);

		if (!z)
		{
			dp_marg_free(&noisy);
			return -2;
		}
		for (uint64_t q = 0; q < cd->cells; q++)
			z[q] = (double) x[q];
		if (dp_noise_counts_f64(g, z, z, cd->cells) != 0)
		{
			dp_free(z);
			dp_marg_free(&noisy);
			return -2;
		}
		dpa_coarse_expand(co, fine, sizes, z, noisy.cells);
		dp_free(z);
		noisy.spread = true;
		cd = fine;
	}
	else
	{
		for (uint64_t q = 0; q < cd->cells; q++)
			noisy.cells[q] = (double) x[q];
		if (dp_noise_counts_f64(g, noisy.cells, noisy.cells, cd->cells) != 0)
		{
			dp_marg_free(&noisy);
			return -2;
		}
	}
	noisy.rho = rho;
	if (cd->meas < 0)
	{
		cd->meas = (int32_t) *nmargs;
		margs[(*nmargs)++] = noisy;
	}
	else
	{
		dp_marg    *old = &margs[cd->meas];
		double		wsum = old->rho + noisy.rho;

		for (uint64_t q = 0; q < cd->cells; q++)
			old->cells[q] = (old->cells[q] * old->rho + noisy.cells[q] * noisy.rho) / wsum;
		old->rho = wsum;
		old->spread = old->spread || noisy.spread;
		dp_marg_free(&noisy);
	}
	return 0;
}

/*
 * Step 2b: the focus pairs, measured once each before the rounds (see dp_adaptive.h); returns
 * what they cost (0 with no focus), or -1 on failure.
 */
static double
measure_focus(Cand *cand, uint32_t ncand, const uint32_t *counts, const uint32_t *sizes,
			  const uint8_t *focus, dp_rounds *rounds, dp_marg *margs, uint32_t *nmargs,
			  uint32_t *npairs)
{
	uint32_t	F = 0;
	double		rho_f;
	dp_dgauss	g;

	*npairs = 0;
	if (!focus)
		return 0;
	for (uint32_t k = 0; k < ncand; k++)
		F += cand[k].nattrs == 2 && !cand[k].coarse && (focus[cand[k].attrs[0]] || focus[cand[k].attrs[1]]);
	if (F == 0)
		return 0;
	rho_f = dp_rounds_focus(rounds, F);	/* drawn from the pool: at most R / 2 in all */
	if (dp_dgauss_init(&g, dp_gaussian_sigma2(rho_f, 1.0)) != 0)
	{
		dp_invalid("the focus pairs' noise scale is out of range");	/* recorded: the first failure wins */
		return -1;
	}
	for (uint32_t k = 0; k < ncand; k++)
	{
		Cand	   *cd = &cand[k];

		if (cd->nattrs != 2 || cd->coarse || !(focus[cd->attrs[0]] || focus[cd->attrs[1]]))
			continue;
		if (measure(cd, cand, NULL, counts + cd->offset, sizes, &g, rho_f, margs, nmargs) != 0)
			return -1;
	}
	*npairs = F;
	return (double) F * rho_f;
}

/*
 * Scoring, split over threads: candidates [k0, k1) against the estimate, each with its own
 * scratch.  The scores do not depend on the split.  No hook is called from here (see
 * dp_run_parallel).
 */
typedef struct Scorer
{
	const Cand *cand;
	uint32_t	k0,
				k1;
	const uint32_t *counts;		/* the exact counts */
	const dp_codes *synth;
	const Bits *bits;			/* synth's bit sets, or NULL */
	const uint32_t *sizes;
	double		total;
	double		sigma;			/* of this round's measurement */
	const dp_marg *margs;		/* the measurements so far (a candidate's: cand->meas) */
	const Coarse *co;			/* the runs of the coarse candidates */
	int64_t    *score;
	double	   *y;				/* maxcells */
	double	   *yf,				/* maxcells, after y's: a coarse candidate's estimated counts */
			   *zc;				/* maxcells, after yf: its fine twin's measurement summed over the runs */
	uint32_t   *ycnt;			/* maxcells */
	uint32_t   *lane;			/* LANES * LANE_CELLS */
} Scorer;

/*
 * The estimate's counts of candidate cd (y, scaled to total), a coarse one's as its fine twin's
 * (into yf) summed over the runs; cnt, lane, yf: scratch of maxcells, LANES * LANE_CELLS, maxcells.
 */
static void
est_counts(const Cand *cand, const Cand *cd, const Coarse *co, const dp_codes *synth, const Bits *bits,
		   const uint32_t *sizes, double total, double *y, uint32_t *cnt, uint32_t *lane, double *yf)
{
	if (!cd->coarse)
	{
		dpa_est_counts(cd, synth, bits, sizes, total, y, cnt, lane);
		return;
	}
	dpa_est_counts(&cand[cd->twin], synth, bits, sizes, total, yf, cnt, lane);
	dpa_coarse_sum(co, &cand[cd->twin], sizes, yf, y);
}

/* Candidate k's score against y, the estimate's counts at its resolution. */
static int64_t
score_one(const Scorer *s, uint32_t k, const double *y)
{
	const Cand *ck = &s->cand[k];
	const uint32_t *xk = s->counts + ck->offset;
	int64_t		e = 0,
				bias;

	for (uint64_t q = 0; q < ck->cells; q++)
		e += llround(fabs((double) xk[q] - y[q]) * SCORE_UNITS);
	if (ck->coarse && s->cand[ck->twin].meas >= 0)
	{
		/* the fine twin's measurement so far, at the runs' resolution */
		const dp_marg *z = &s->margs[s->cand[ck->twin].meas];

		dpa_coarse_sum(s->co, &s->cand[ck->twin], s->sizes, z->cells, s->zc);
		bias = llround(dp_adaptive_remeasure_floor(s->zc, z->rho, y, ck->cells, s->sigma) * SCORE_UNITS);
	}
	else if (!ck->coarse && ck->meas >= 0)
		bias = llround(dp_adaptive_remeasure_floor(s->margs[ck->meas].cells, s->margs[ck->meas].rho, y,
												   ck->cells, s->sigma) * SCORE_UNITS);
	else
		bias = llround(dp_adaptive_score_floor(y, ck->cells, s->sigma, s->total, s->synth->nrows) * SCORE_UNITS);
	return ck->nattrs >= 2 ? e - bias : (e - bias) / 2;
}

/*
 * Candidates [k0, k1): each fine one from the estimate's counts, and its coarse twin (cand[sib])
 * from the same counts summed over the runs, by this thread whatever the twin's index (so every
 * score is written by one thread, and a coarse candidate costs no second count of the estimate).
 */
static void *
score_worker(void *arg)
{
	const Scorer *s = arg;

	for (uint32_t k = s->k0; k < s->k1; k++)
	{
		const Cand *ck = &s->cand[k];

		if (ck->coarse)
			continue;
		dpa_est_counts(ck, s->synth, s->bits, s->sizes, s->total, s->y, s->ycnt, s->lane);
		s->score[k] = score_one(s, k, s->y);
		if (ck->sib)
		{
			dpa_coarse_sum(s->co, ck, s->sizes, s->y, s->yf);
			s->score[ck->sib] = score_one(s, ck->sib, s->yf);
		}
	}
	return NULL;
}


/*
 * The state of one dp_adaptive_run, shared by its stages (dp_adaptive.h's steps, in order).
 * Each stage returns 0 or the error code of dp_internal.h; adaptive_run_free releases it all.
 */
typedef struct Run
{
	const dp_codes *data;
	const uint32_t *sizes;		/* the original ones */
	const dp_privsyn_params *p;
	dp_prng    *rng;
	dp_privsyn_result *out;
	uint32_t	d;
	dp_codes	merged,			/* the rows over merged codes, until the last exact count */
				synth;			/* the current estimate */
	bool		merged_ok;
	Cand	   *cand;
	uint32_t	ncand,
				maxcand;
	uint32_t   *counts;			/* the candidates' exact counts */
	uint64_t	maxcells,
				totcells;
	double	   *y,
			   *zbuf;
	uint32_t   *lanebuf,
			   *ycnt;
	Scorer	   *scorers;
	uint32_t	nthreads;
	uint32_t   *lanes[DP_MAX_THREADS];
	Bits		bits;
	const Bits *bitsp;			/* &bits once the estimate's bit sets exist */
	int64_t    *score,
			   *sub;
	uint32_t   *subidx,
			   *picked,
				batch;
	uint32_t   *newpairs,
				nnew;
	dp_marg    *margs;
	uint32_t	nmargs;
	dp_schedule sched;			/* the run's releases (dp_schedule.h) */
	dp_rounds	rounds;			/* the pool R, a round's rho_t and eps_t, what is used */
	double		topup;			/* what the one-way top-up took of R (dp_oneway_topup) */
	double		total;			/* the estimate's released total */
	uint64_t	tree_bound;		/* step 3b, set once T is */
	uint64_t	kmax;			/* distinct k-way marginals the rounds may measure (step 3b) */
	Triples		tr;
	Coarse		co;				/* the ordered columns' runs (step 2) */
	double	   *yfine;			/* maxcells, after y's (NULL without coarse candidates): scratch of est_counts */
	dp_gum_params round_gum;
	double		t_select;		/* when the candidates' stage began */
	dp_adaptive_stats st;
} Run;

#define PROGRESS(phase, frac) \
	do { if (dp_report(r->p->progress, r->p->progress_arg, (phase), (frac), 1, -1) != 0) return dp_cancelled(); } while (0)

/* ---- 1. one-way marginals and the rare-value merge: the schedule's DP_RELEASE_ONEWAY ---- */
static int
adaptive_oneway(Run *r)
{
	const dp_privsyn_params *p = r->p;
	double		t0 = dp_now();
	int			rc;

	PROGRESS(DP_PHASE_ONEWAY, 0);
	r->merged_ok = true;		/* dp_codes_free is harmless on what the stage did not initialise */
	rc = dp_privsyn_oneway_stage(r->data, r->sizes, p->ordered, dp_schedule_rho(&r->sched, DP_RELEASE_ONEWAY),
								 &r->sched, &r->topup, r->out, r->margs, &r->merged, p->consume, p->extra,
								 p->extra ? NULL : p->prior);
	if (rc != 0)
		return rc;
	r->nmargs = r->d;
	r->st.rho_oneway = dp_schedule_rho(&r->sched, DP_RELEASE_ONEWAY) + r->topup;
	r->st.rho_topup = r->topup;
	r->out->seconds[DP_PHASE_ONEWAY] = dp_now() - t0;
	return 0;
}

/*
 * ---- 2. the runs of the ordered columns (post-processing of the released one-way counts, the
 * rare-value threshold and public sizes): a column whose merged ordered codes are more than
 * dp_binning_wide_bins's pair count on its released mass (at least DP_ADAPTIVE_COARSE_BASE) gets
 * runs of consecutive codes of about equal released mass, and the shares of its codes in them ----
 */
static int
adaptive_coarse(Run *r)
{
	const dp_privsyn_params *p = r->p;
	const uint32_t *msizes = r->out->merged_sizes;
	double		rare_below = dp_rare_threshold(dp_schedule_rho(&r->sched, DP_RELEASE_ONEWAY) + r->topup, r->d),
				n1 = 0;
	bool		offer;

	/*
	 * Only where the rounds bound the model's junction tree (at most 131,072 released rows, a
	 * function of the released one-way totals): on bigger tables the models the coarse pairs lead
	 * to cost the final GUM more time, and what they gain there is not measured (bench/RESULTS.md)
	 */
	for (uint32_t j = 0; j < r->d; j++)
		n1 += dp_marg_total(&r->margs[j]);
	offer = r->d <= DP_ADAPTIVE_TREE_COLS && dp_adaptive_tree_bound(n1 / r->d) != 0;
	r->co.d = r->d;
	r->co.run = dp_zalloc(sizeof(uint16_t *) * r->d);
	r->co.share = dp_zalloc(sizeof(double *) * r->d);
	r->co.size = dp_zalloc(sizeof(uint32_t) * r->d);
	if (!r->co.run || !r->co.share || !r->co.size)
		return dp_nomem("could not allocate the ordered columns' runs");
	for (uint32_t j = 0; j < r->d; j++)
	{
		const double *mass = r->margs[j].cells;
		double		total = 0;
		uint32_t	m,
					groups,
					n;

		r->co.size[j] = msizes[j];
		if (!offer || !p->ordered || p->ordered[j] == 0 || !(rare_below > 0))
			continue;
		m = (uint32_t) r->out->code_map[j][(p->ordered[j] <= r->sizes[j] ? p->ordered[j] : r->sizes[j]) - 1] + 1;
		for (uint32_t c = 0; c < m; c++)
			total += mass[c] > 0 ? mass[c] : 0;
		groups = dp_binning_wide_bins(total, DP_PLAN_AUTO_BIN_MARGIN * rare_below, DP_ADAPTIVE_COARSE_BASE);
		if (groups < DP_ADAPTIVE_COARSE_BASE)
			groups = DP_ADAPTIVE_COARSE_BASE;
		if (m <= groups)
			continue;
		r->co.run[j] = dp_zalloc(sizeof(uint16_t) * msizes[j]);
		r->co.share[j] = dp_zalloc(sizeof(double) * msizes[j]);
		if (!r->co.run[j] || !r->co.share[j])
			return dp_nomem("could not allocate the ordered columns' runs");
		n = dpa_coarse_runs(mass, msizes[j], m, groups, r->co.run[j]);
		if (n >= msizes[j])
		{
			dp_free(r->co.run[j]);
			dp_free(r->co.share[j]);
			r->co.run[j] = NULL;
			r->co.share[j] = NULL;
			continue;
		}
		r->co.size[j] = n;
		if (dpa_coarse_shares(mass, msizes[j], r->co.run[j], n, r->co.share[j]) != 0)
			return dp_nomem("could not allocate the ordered columns' runs");
		r->st.coarse_cols++;
	}
	return 0;
}

/* ---- 2. candidates (public: the merged sizes) ---- */
static int
adaptive_candidates(Run *r)
{
	const uint32_t *msizes = r->out->merged_sizes;
	Cand	   *cand = r->cand;
	uint32_t	d = r->d,
				ncand = 0,
				keep = 0;

	r->t_select = dp_now();
	PROGRESS(DP_PHASE_SELECT, 0);
	for (uint32_t a = 0; a < d; a++)
	{
		Cand	   *cd = &cand[ncand];

		cd->nattrs = 1;
		cd->attrs[0] = a;
		cd->cells = msizes[a];
		ncand++;
	}
	for (uint32_t a = 0; a < d; a++)
		for (uint32_t b = a + 1; b < d; b++)
		{
			uint64_t	cells = (uint64_t) msizes[a] * msizes[b];

			if (cells > DP_ADAPTIVE_MAX_CELLS)
				continue;
			cand[ncand].nattrs = 2;
			cand[ncand].attrs[0] = a;
			cand[ncand].attrs[1] = b;
			cand[ncand].cells = cells;
			ncand++;
		}
	qsort(cand, ncand, sizeof(Cand), dpa_cmp_cells);
	/* smallest first until the total is reached; columns always fit (their cells < 2^16 each) */
	for (uint32_t k = 0; k < ncand; k++)
	{
		if (cand[k].nattrs >= 2 && r->totcells + cand[k].cells > DP_ADAPTIVE_MAX_TOTAL)
			continue;
		cand[k].offset = r->totcells;
		r->totcells += cand[k].cells;
		if (cand[k].cells > r->maxcells)
			r->maxcells = cand[k].cells;
		cand[keep++] = cand[k];
	}
	/*
	 * Every kept pair holding a column with runs, again at the runs' resolution (its columns with
	 * runs coarse, the others as they are), after all the others: a coarse pair is counted and
	 * estimated as its fine twin summed over the runs.
	 */
	for (uint32_t k = 0, n = keep; k < n; k++)
	{
		const Cand *f = &cand[k];
		Cand	   *c = &cand[keep];

		if (f->nattrs != 2 || (!r->co.run[f->attrs[0]] && !r->co.run[f->attrs[1]]))
			continue;
		*c = *f;
		c->cells = (uint64_t) r->co.size[f->attrs[0]] * r->co.size[f->attrs[1]];
		if (r->totcells + c->cells > DP_ADAPTIVE_MAX_TOTAL)
			continue;
		c->coarse = true;
		c->twin = k;
		c->offset = r->totcells;
		r->totcells += c->cells;
		cand[k].sib = keep;
		keep++;
		r->st.coarse_cands++;
	}
	r->ncand = keep;
	r->st.candidates = keep;
	if (r->maxcells < DP_ADAPTIVE_TRIPLE_CELLS)
		r->maxcells = DP_ADAPTIVE_TRIPLE_CELLS;	/* a triple's estimate and its counts before a round */
	return 0;
}

/* The exact counts of the coarse candidates among cand[k0 .. ncand), from their twins' (counted). */
static void
count_coarse(Run *r, uint32_t k0)
{
	for (uint32_t k = k0; k < r->ncand; k++)
		if (r->cand[k].coarse)
			dpa_coarse_sum_u32(&r->co, &r->cand[r->cand[k].twin], r->out->merged_sizes,
							   r->counts + r->cand[r->cand[k].twin].offset, r->counts + r->cand[k].offset);
}

/* ---- 2. the candidates' exact counts, and the scoring threads' buffers ---- */
static int
adaptive_count(Run *r)
{
	const dp_privsyn_params *p = r->p;
	uint64_t	maxcells = r->maxcells;

	r->counts = dp_zalloc(sizeof(uint32_t) * r->totcells);
	/*
	 * With coarse candidates an estimate buffer holds three: the estimate's counts, a coarse
	 * candidate's (yf) and its twin's measurement summed over the runs (zc)
	 */
	r->y = dp_zalloc(sizeof(double) * maxcells * (r->st.coarse_cands > 0 ? 3 : 1));
	r->lanebuf = dp_zalloc(sizeof(uint32_t) * LANES * LANE_CELLS);
	r->ycnt = dp_zalloc(sizeof(uint32_t) * maxcells);
	r->yfine = r->st.coarse_cands > 0 && r->y ? r->y + maxcells : NULL;
	r->score = dp_zalloc(sizeof(int64_t) * r->maxcand);
	r->nthreads = dp_threads();
	r->scorers = dp_zalloc(sizeof(Scorer) * r->nthreads);
	if (!r->counts || !r->y || !r->lanebuf || !r->ycnt || !r->score || !r->scorers)
		return dp_nomem("could not allocate the candidates' exact counts and scoring buffers");
	for (uint32_t t = 0; t < r->nthreads; t++)
	{
		Scorer	   *s = &r->scorers[t];

		s->cand = r->cand;
		s->counts = r->counts;
		s->sizes = r->out->merged_sizes;
		s->score = r->score;
		/* thread 0 uses the buffers the rest of the rounds use */
		s->y = t == 0 ? r->y : dp_zalloc(sizeof(double) * maxcells * (r->st.coarse_cands > 0 ? 3 : 1));
		s->ycnt = t == 0 ? r->ycnt : dp_zalloc(sizeof(uint32_t) * maxcells);
		s->lane = t == 0 ? r->lanebuf : dp_zalloc(sizeof(uint32_t) * LANES * LANE_CELLS);
		s->yf = r->st.coarse_cands > 0 && s->y ? s->y + maxcells : NULL;
		s->zc = r->st.coarse_cands > 0 && s->y ? s->y + 2 * maxcells : NULL;
		s->co = &r->co;
		if (!s->y || !s->ycnt || !s->lane)
			return dp_nomem("could not allocate a scoring thread's buffers");
		r->lanes[t] = s->lane;
	}
	/*
	 * The exact counts, COUNT_CHUNK candidates at a time over nthreads threads (each candidate's
	 * slice written by one thread: the same counts whatever the number of threads); progress
	 * and interrupts between chunks, on this thread only.
	 */
	for (uint32_t k = 0; k < r->ncand; k++)
		r->cand[k].meas = r->cand[k].nattrs == 1 ? (int32_t) r->cand[k].attrs[0] : -1;
	for (uint32_t r0 = 0; r0 < r->ncand; r0 += COUNT_CHUNK)
	{
		dpa_count_cands(r->cand, r0, r0 + COUNT_CHUNK < r->ncand ? r0 + COUNT_CHUNK : r->ncand, r->counts, &r->merged,
						r->out->merged_sizes, r->lanes, r->nthreads);
		PROGRESS(DP_PHASE_SELECT, 0);
	}
	if (p->extra)
		dpa_add_extra(p->extra, r->cand, r->ncand, r->counts, r->d, r->sizes, r->out);
	count_coarse(r, 0);
	return 0;
}

/* ---- 3. the rounds' schedule (T, then rho_t and eps_t from the pool) and the focus pairs ---- */
static int
adaptive_focus(Run *r)
{
	/* T from public facts: the released one-way marginals' total and the candidates' sizes */
	double		n1 = 0,
				T,
				cost;

	for (uint32_t j = 0; j < r->d; j++)
		n1 += dp_marg_total(&r->margs[j]);
	T = dp_adaptive_selections(r->sched.rho_rounds - r->topup, r->d, n1 / r->d, dpa_median_pair_cells(r->cand, r->ncand));
	r->st.selections = T;
	r->tree_bound = dp_adaptive_tree_bound(n1 / r->d);
	dp_rounds_begin_after(&r->rounds, &r->sched, r->topup, T, &r->out->spend);
	cost = measure_focus(r->cand, r->ncand, r->counts, r->out->merged_sizes, r->p->focus, &r->rounds, r->margs,
						 &r->nmargs, &r->st.focus_pairs);
	if (cost < 0)
		return dp_nomem("could not allocate the focus pairs' measured marginals");
	r->st.rho_measure += cost;
	return 0;
}

/*
 * The coarse twins of the triples cand[k0 .. ncand) that hold a column with runs (step 2c, as the
 * pairs' in step 2), appended with their slices of counts (grown as dpa_add_triples grows them);
 * count_coarse sums their counts from their twins' once those are counted.  Public: the sizes.
 */
static int
add_coarse_triples(Run *r, uint32_t k0)
{
	if (!r->yfine)
		return 0;				/* no coarse pair: no scratch for coarse candidates (adaptive_count) */
	for (uint32_t k = k0, n = r->ncand; k < n; k++)
	{
		const Cand *f = &r->cand[k];
		Cand	   *c = &r->cand[r->ncand];
		uint64_t	cells = 1;
		bool		any = false;

		if (f->nattrs != 3 || f->coarse)
			continue;
		for (uint32_t a = 0; a < 3; a++)
		{
			any |= r->co.run[f->attrs[a]] != NULL;
			cells *= r->co.size[f->attrs[a]];
		}
		if (!any || r->ncand >= r->maxcand || r->totcells + cells > DP_ADAPTIVE_MAX_TOTAL)
			continue;
		if (r->totcells + cells > r->tr.cap)
		{
			uint64_t	cap = r->tr.cap + r->tr.cap / 2;
			uint32_t   *grown;

			if (cap < r->totcells + cells)
				cap = r->totcells + cells;
			if (cap > DP_ADAPTIVE_MAX_TOTAL)
				cap = DP_ADAPTIVE_MAX_TOTAL;
			grown = dp_realloc(r->counts, sizeof(uint32_t) * cap);
			if (!grown)
				return -1;
			r->counts = grown;
			r->tr.cap = cap;
			for (uint32_t t = 0; t < r->nthreads; t++)
				r->scorers[t].counts = r->counts;
		}
		*c = *f;
		c->cells = cells;
		c->coarse = true;
		c->twin = k;
		c->offset = r->totcells;
		r->totcells += cells;
		r->cand[k].sib = r->ncand;
		r->ncand++;
		r->st.coarse_cands++;
	}
	return 0;
}

/*
 * ---- 3. the first estimate, the triple candidates of the pairs measured so far (step 2c), the
 * estimate's bit sets and the rounds' selection buffers ----
 */
static int
adaptive_rounds_setup(Run *r)
{
	const dp_privsyn_params *p = r->p;
	uint32_t	d = r->d;
	int			rc;

	r->round_gum = p->gum;
	r->round_gum.progress = NULL;	/* short runs: the rounds report and check between them */
	rc = dpa_estimate(r->margs, r->nmargs, d, r->out->merged_sizes, &r->round_gum, r->rng, &r->synth, &r->total);
	if (rc != 0)
		return rc;
	r->st.estimates++;
	r->kmax = p->max_kway > 0 ? p->max_kway : dp_adaptive_max_kway(d, r->total);
	r->st.max_kway = r->kmax > UINT32_MAX ? UINT32_MAX : (uint32_t) r->kmax;
	r->st.est_rows = r->synth.nrows;
	/*
	 * Triples (step 2c) only when the estimates hold every row (fewer than DP_ADAPTIVE_SYNTH_ROWS:
	 * a function of the released total); then the focus pairs' triples.
	 */
	if (r->synth.nrows >= DP_ADAPTIVE_SYNTH_ROWS || p->extra)
	{
		r->tr.max = 0;
		/* no more exact counts to take: the private data the rounds need is in counts */
		dp_codes_free(&r->merged);
		r->merged_ok = false;
	}
	else
	{
		r->tr.cap = r->totcells;
		r->tr.pair_measured = dp_zalloc((size_t) d * d);
		if (!r->tr.pair_measured)
			return dp_nomem("could not allocate the adaptive method's triple candidates");
	}
	for (uint32_t k = 0; k < r->ncand && r->tr.max > 0; k++)
		if (r->cand[k].nattrs == 2 && !r->cand[k].coarse && r->cand[k].meas >= 0 &&
			dpa_add_triples(&r->tr, d, r->cand[k].attrs[0], r->cand[k].attrs[1], r->cand, &r->ncand, &r->counts,
							&r->totcells, r->out->merged_sizes) != 0)
			return dp_nomem("could not allocate a triple's exact counts");
	if (r->tr.n > 0)
	{
		uint32_t	k0 = r->ncand - r->tr.n;

		if (add_coarse_triples(r, k0) != 0)
			return dp_nomem("could not allocate a triple's exact counts");
		dpa_count_cands(r->cand, k0, r->ncand, r->counts, &r->merged, r->out->merged_sizes, r->lanes, r->nthreads);
		count_coarse(r, k0);
	}
	/* the estimates' bit sets: every later estimate has the first one's rows (a warm start) */
	if (dpa_have_popcnt())
	{
		if (dpa_bits_alloc(&r->bits, d, r->out->merged_sizes, r->synth.nrows) != 0)
			return dp_nomem("could not allocate the estimate's bit sets");
	}
	r->batch = dp_adaptive_batch(d, r->total);
	if (r->batch > r->ncand)
		r->batch = r->ncand;
	r->picked = dp_zalloc(sizeof(uint32_t) * r->batch);
	r->zbuf = dp_zalloc(sizeof(double) * r->batch * r->maxcells);
	r->sub = dp_zalloc(sizeof(int64_t) * r->maxcand);
	r->subidx = dp_zalloc(sizeof(uint32_t) * r->maxcand);
	r->newpairs = dp_zalloc(sizeof(uint32_t) * r->batch);
	if (!r->picked || !r->zbuf || !r->sub || !r->subidx || !r->newpairs)
		return dp_nomem("could not allocate the rounds' selection buffers");
	return 0;
}

/* ---- 3b. a round's scores against the current estimate, over nthreads threads ---- */
static int
adaptive_score(Run *r, double sigma)
{
	uint32_t	T;

	PROGRESS(DP_PHASE_SELECT, fmin(r->rounds.used / r->rounds.pool, 1));
	r->bitsp = r->bits.w && r->synth.nrows == r->bits.rows ? &r->bits : NULL;
	if (r->bitsp)
		dpa_bits_fill(&r->bits, &r->synth, r->out->merged_sizes);
	T = (uint64_t) r->ncand * r->synth.nrows >= SCORE_THREAD_WORK ? r->nthreads : 1;
	for (uint32_t t = 0; t < T; t++)
	{
		Scorer	   *s = &r->scorers[t];

		s->k0 = (uint32_t) ((uint64_t) r->ncand * t / T);
		s->k1 = (uint32_t) ((uint64_t) r->ncand * (t + 1) / T);
		s->synth = &r->synth;
		s->bits = r->bitsp;
		s->total = r->total;
		s->sigma = sigma;
		s->counts = r->counts;
		s->margs = r->margs;
	}
	dp_run_parallel(score_worker, r->scorers, sizeof(Scorer), T);
	return 0;
}

/*
 * ---- 3b. one selection: the exponential mechanism over sub's nsub candidates that keep the
 * model's junction tree within tree_bound (dp_adaptive_tree_bound); when none does (or the table
 * has more than DP_ADAPTIVE_TREE_COLS columns, or the model's tree is already larger), over all;
 * on tables too large for a bound (tree_bound 0), over all.  *sel: the index into sub ----
 */
static int
adaptive_select(Run *r, uint32_t nsub, uint32_t *sel)
{
	TreeFit		tf = {r->margs, r->nmargs, r->d, r->out->merged_sizes, r->cand, r->tree_bound, NULL, NULL, 0, NULL};
	dp_jtree	cur;
	bool		have;

	if (r->tree_bound == 0)
	{
		*sel = dp_exp_mech(r->sub, nsub, r->rounds.eps_t, SCORE_SENS);
		return 0;
	}
	have = r->d <= DP_ADAPTIVE_TREE_COLS &&
		dp_jtree_build(&cur, r->margs, r->nmargs, r->d, r->out->merged_sizes, r->tree_bound) == 0;
	tf.cur = have ? &cur : NULL;
	tf.scratch = dp_alloc(sizeof(dp_marg) * (r->nmargs + 1));
	tf.fit = r->st.coarse_cands > 0 ? dp_zalloc(r->ncand) : NULL;
	if (!tf.scratch || (r->st.coarse_cands > 0 && !tf.fit))
	{
		dp_free(tf.scratch);
		dp_free(tf.fit);
		if (have)
			dp_jtree_free(&cur);
		return dp_nomem("could not allocate the junction tree's check");
	}
	*sel = have ? dp_exp_mech_fitting(r->sub, r->subidx, nsub, r->rounds.eps_t, SCORE_SENS, tree_fits, &tf) : nsub;
	r->st.tree_builds += tf.builds;
	dp_free(tf.scratch);
	dp_free(tf.fit);
	if (have)
		dp_jtree_free(&cur);
	if (*sel >= nsub)
	{
		r->st.tree_unbounded++;
		*sel = dp_exp_mech(r->sub, nsub, r->rounds.eps_t, SCORE_SENS);
	}
	return 0;
}

/*
 * ---- 3b and c. select and measure the batch, one exponential mechanism each, without repeats;
 * then the new pairs' triples (step 2c) ----
 */
static int
adaptive_select_measure(Run *r, dp_dgauss *g)
{
	int			rc;

	r->nnew = 0;
	for (uint32_t b = 0; b < r->batch; b++)
	{
		uint32_t	nsub = 0,
					sel;
		Cand	   *cd;
		const uint32_t *x;
		bool		full = r->nmargs - r->d >= r->kmax;	/* the cap on distinct k-way marginals */

		for (uint32_t k = 0; k < r->ncand; k++)
		{
			/* a candidate and its coarse twin are one marginal: measured, or picked, together */
			uint32_t	fk = r->cand[k].coarse ? r->cand[k].twin : k;
			bool		taken = full && r->cand[fk].meas < 0;	/* no new marginal once full */

			for (uint32_t e = 0; e < b; e++)
				taken |= (r->cand[r->picked[e]].coarse ? r->cand[r->picked[e]].twin : r->picked[e]) == fk;
			if (!taken)
			{
				r->sub[nsub] = r->score[k];
				r->subidx[nsub++] = k;
			}
		}
		dp_rounds_spend(&r->rounds);
		r->st.rho_measure += r->rounds.rho_t;
		r->st.rho_select += r->rounds.eps_t * r->rounds.eps_t / 8;
		rc = adaptive_select(r, nsub, &sel);
		if (rc != 0)
			return rc;
		if (sel >= nsub)
			return dp_invalid("a round's exponential mechanism had no candidate to select");
		sel = r->subidx[sel];
		r->picked[b] = sel;
		cd = &r->cand[sel];
		x = r->counts + cd->offset;
		est_counts(r->cand, cd, &r->co, &r->synth, r->bitsp, r->out->merged_sizes, r->total,
				   r->zbuf + (size_t) b * r->maxcells, r->ycnt, r->lanebuf, r->yfine);

		/* c. measure (a coarse pair: its fine twin's measurement) */
		{
			uint32_t	f = cd->coarse ? cd->twin : sel;

			if (cd->nattrs == 2 && r->cand[f].meas < 0)
				r->newpairs[r->nnew++] = f;
			r->st.remeasured += r->cand[f].meas >= 0;
			r->st.coarse_measured += cd->coarse;
		}
		if (measure(cd, r->cand, &r->co, x, r->out->merged_sizes, g, r->rounds.rho_t, r->margs, &r->nmargs) != 0)
			return dp_nomem("could not allocate a measured marginal");
		/* a coarse pair is measured when its fine twin is */
		for (uint32_t k = 0; k < r->ncand; k++)
			if (r->cand[k].coarse)
				r->cand[k].meas = r->cand[r->cand[k].twin].meas;
	}
	r->st.rounds++;
	if (r->tr.n < r->tr.max)
	{
		uint32_t	k0 = r->ncand;

		for (uint32_t e = 0; e < r->nnew; e++)
			if (dpa_add_triples(&r->tr, r->d, r->cand[r->newpairs[e]].attrs[0], r->cand[r->newpairs[e]].attrs[1], r->cand,
								&r->ncand, &r->counts, &r->totcells, r->out->merged_sizes) != 0)
				return dp_nomem("could not allocate a triple's exact counts");
		if (add_coarse_triples(r, k0) != 0)
			return dp_nomem("could not allocate a triple's exact counts");
		dpa_count_cands(r->cand, k0, r->ncand, r->counts, &r->merged, r->out->merged_sizes, r->lanes, r->nthreads);
		count_coarse(r, k0);
	}
	return 0;
}

/*
 * ---- 3a and d. the next estimate, and the anneal: *still, whether the batch's estimated counts
 * moved by no more than the estimate's resolution and sigma expect ----
 */
static int
adaptive_anneal(Run *r, double sigma, bool *still)
{
	double		moved = 0,
				expect = 0,
				zb_total = r->total;
	int			rc;

	rc = dpa_estimate(r->margs, r->nmargs, r->d, r->out->merged_sizes, &r->round_gum, r->rng, &r->synth, &r->total);
	if (rc != 0)
		return rc;
	r->st.estimates++;
	for (uint32_t b = 0; b < r->batch; b++)
	{
		const Cand *cd = &r->cand[r->picked[b]];
		const double *zb = r->zbuf + (size_t) b * r->maxcells;

		est_counts(r->cand, cd, &r->co, &r->synth, NULL, r->out->merged_sizes, r->total, r->y, r->ycnt, r->lanebuf,
				   r->yfine);
		for (uint64_t q = 0; q < cd->cells; q++)
			moved += fabs(r->y[q] - zb[q]);
		/* zb: the counts before the round, scaled by that round's total */
		expect += dp_adaptive_anneal_bar(zb, cd->cells, sigma, zb_total, r->synth.nrows);
	}
	*still = moved <= expect;
	return 0;
}

/* ---- 3. the rounds, until the rounds' rho is spent (the last round takes what is left) ---- */
static int
adaptive_rounds(Run *r)
{
	int			rc;

	for (;;)
	{
		bool		still = false;
		double		sigma;
		dp_dgauss	g;

		dp_check_interrupts();	/* up to 16 d rounds, each an estimate by GUM */

		/* the schedule's rule: the last round takes what is left, rounded down, over the batch */
		if (!dp_rounds_next(&r->rounds, r->batch))
			break;
		if (dp_dgauss_init(&g, dp_gaussian_sigma2(r->rounds.rho_t, 1.0)) != 0)
			return dp_invalid("a round's measurement noise is out of the sampler's range");
		sigma = sqrt(dp_dgauss_sigma2(&g));

		if ((rc = adaptive_score(r, sigma)) != 0 ||
			(rc = adaptive_select_measure(r, &g)) != 0)
			return rc;
		/*
		 * The last round's estimate feeds no score and no anneal: made only when the final GUM
		 * may start from it (step 5, dpa_final_from_estimate), when the estimates hold every row.
		 * A function of the schedule and of the estimates' size (of the released total) only.
		 */
		if (!(r->rounds.last && !dpa_estimate_uncapped(r->synth.nrows)) &&
			(rc = adaptive_anneal(r, sigma, &still)) != 0)
			return rc;
		PROGRESS(DP_PHASE_SELECT, fmin(r->rounds.used / r->rounds.pool, 1));
		if (r->rounds.last)
			break;
		if (still)
		{
			dp_rounds_anneal(&r->rounds);
			r->st.anneals++;
		}
	}
	r->out->seconds[DP_PHASE_SELECT] = dp_now() - r->t_select;
	/* the rounds are over: no more exact counts to take */
	if (r->merged_ok)
		dp_codes_free(&r->merged);
	r->merged_ok = false;
	return 0;
}

/* ---- 4. the final model: the measurements made consistent, handed over to out ---- */
static int
adaptive_final_model(Run *r)
{
	dp_privsyn_result *out = r->out;
	double		t0 = dp_now();

	PROGRESS(DP_PHASE_CONSIST, 0);
	out->total = dp_consist(r->margs, r->nmargs, 100);
	if (out->total < 0)
		return -2;				/* dp_consist said why */
	r->st.triples = r->tr.n;
	for (uint32_t k = r->d; k < r->nmargs; k++)
		r->st.triples_measured += r->margs[k].nattrs == 3;
	out->margs = r->margs;
	out->nmargs = r->nmargs;
	out->n_kway = r->nmargs - r->d;
	r->margs = NULL;			/* out owns them */
	out->seconds[DP_PHASE_CONSIST] = dp_now() - t0;
	return 0;
}

/* ---- 5. the rows, drawn from the final model ---- */
static int
adaptive_rows(Run *r)
{
	const dp_privsyn_params *p = r->p;
	dp_privsyn_result *out = r->out;
	double		t0 = dp_now();
	uint64_t	nrows;
	dp_gum_params final_gum;
	dp_adaptive_draw how;
	int			rc;

	PROGRESS(DP_PHASE_GUM, 0);
	nrows = p->rows ? p->rows : dp_privsyn_default_rows(out);
	if (p->max_rows && nrows > p->max_rows)
		nrows = p->max_rows;
	/*
	 * Cold, at most DP_ADAPTIVE_FINAL_ITERS iterations: by then GUM's steps have decayed and its
	 * rows already match the consistent marginals (dp_adaptive.h, step 5).  Warm (step 5) when the
	 * last estimate has about the rows asked for: from its rows, DP_ADAPTIVE_FINAL_WARM_ITERS.
	 */
	final_gum = p->gum;
	final_gum.iterations = dp_adaptive_final_iters(final_gum.iterations);
	final_gum.start = NULL;
	final_gum.maxent_cells = DP_ADAPTIVE_MAXENT_CELLS;
	final_gum.jtree_cells = DP_ADAPTIVE_JTREE_CELLS;
	final_gum.one_way_exact = true;
	{
		uint64_t	cells;
		int			path = dp_privsyn_maxent_path(out, r->d, &final_gum, &cells);

		r->st.final_maxent = path != 0;
		r->st.final_tree_cells = path == 2 ? cells : 0;
	}
	/* under half a row dp_privsyn_sample draws uniform rows: no GUM to start */
	if (!r->st.final_maxent && out->total >= 0.5 && dpa_final_from_estimate(r->synth.nrows, nrows))
	{
		final_gum.start = &r->synth;
		if (final_gum.iterations > DP_ADAPTIVE_FINAL_WARM_ITERS)
			final_gum.iterations = DP_ADAPTIVE_FINAL_WARM_ITERS;
		r->st.final_warm = true;
	}
	rc = dp_adaptive_sample(out, r->d, r->sizes, nrows, &final_gum, r->rng, &out->synth, &how);
	r->st.final_sub_margs = how.sub_margs;
	r->st.final_sub_cells = how.sub_cells;
	if (rc != 0)
		return rc;
	out->seconds[DP_PHASE_GUM] = dp_now() - t0;
	PROGRESS(DP_PHASE_GUM, 1);
	return 0;
}

/* Everything a run allocated that out does not own. */
static void
adaptive_run_free(Run *r)
{
	if (r->merged_ok)
		dp_codes_free(&r->merged);
	dp_codes_free(&r->synth);
	if (r->margs)
	{
		/* a failure before the model was handed over: out->margs is unset; the one-way slots
		 * may be filled even when nmargs is not yet d, the rest are zeroed */
		for (uint32_t k = 0; k < (r->nmargs > r->d ? r->nmargs : r->d); k++)
			dp_marg_free(&r->margs[k]);
		dp_free(r->margs);
	}
	dp_free(r->cand);
	dp_free(r->tr.pair_measured);
	dp_free(r->newpairs);
	dp_free(r->bits.off);
	dp_free(r->bits.w);
	dp_free(r->counts);
	dp_free(r->y);
	dp_free(r->lanebuf);
	dp_free(r->ycnt);
	for (uint32_t j = 0; r->co.run && j < r->co.d; j++)
		dp_free(r->co.run[j]);
	for (uint32_t j = 0; r->co.share && j < r->co.d; j++)
		dp_free(r->co.share[j]);
	dp_free(r->co.run);
	dp_free(r->co.share);
	dp_free(r->co.size);
	if (r->scorers)
	{
		for (uint32_t t = 1; t < r->nthreads; t++)
		{
			dp_free(r->scorers[t].y);
			dp_free(r->scorers[t].ycnt);
			dp_free(r->scorers[t].lane);
		}
		dp_free(r->scorers);
	}
	dp_free(r->score);
	dp_free(r->zbuf);
	dp_free(r->sub);
	dp_free(r->subidx);
	dp_free(r->picked);
}

int
dp_adaptive_run(const dp_codes *data, const uint32_t *sizes, const dp_privsyn_params *p,
				dp_prng *rng, dp_privsyn_result *out, dp_adaptive_stats *stats)
{
	Run			r = {0};
	uint32_t	d = data->ncols;
	int			rc;

	memset(out, 0, sizeof(*out));
	dp_clear_error();
	if (d == 0 || d > 4096)
		return dp_invalid("the adaptive method synthesizes 1 to 4096 columns");
	if (!(p->rho > 0) || !isfinite(p->rho))
		return dp_invalid("rho is not a positive number");
	if (data->nrows >= ((uint64_t) 1 << 31))
		return dp_invalid("the adaptive method reads fewer than 2^31 rows");
	if (p->extra && !dpa_extra_consistent(p->extra, d, sizes))
		return dp_invalid("the counts from elsewhere are not those of one set of rows: every column's and every pair's must add up to their rows");
	if (dp_schedule_method(DP_CALL_ADAPTIVE, p->rho, d, p->focus != NULL, &r.sched) != 0)
		return dp_invalid("rho is not a positive number");
	r.data = data;
	r.sizes = sizes;
	r.p = p;
	r.rng = rng;
	r.out = out;
	r.d = d;
	r.nthreads = 1;
	r.maxcells = 1;
	r.tree_bound = DP_ADAPTIVE_TREE_CELLS;
	r.maxcand = d + (d * (d - 1)) / 2;
	r.tr.max = DP_ADAPTIVE_TRIPLES_PER_COL * d;
	r.maxcand += r.tr.max;
	if (d <= DP_ADAPTIVE_TREE_COLS)
		r.maxcand += (d * (d - 1)) / 2 + r.tr.max;	/* the coarse pairs and triples (step 2) */
	/* the measured marginals: the d one-way ones, then one per measured pair or triple at most */
	r.margs = dp_zalloc(sizeof(dp_marg) * r.maxcand);
	r.cand = dp_zalloc(sizeof(Cand) * r.maxcand);
	if (!r.margs || !r.cand)
		rc = dp_nomem("could not allocate the adaptive method's candidate marginals");
	else if ((rc = adaptive_oneway(&r)) == 0 &&
			 (rc = adaptive_coarse(&r)) == 0 &&
			 (rc = adaptive_candidates(&r)) == 0 &&
			 (rc = adaptive_count(&r)) == 0 &&
			 (rc = adaptive_focus(&r)) == 0 &&
			 (rc = adaptive_rounds_setup(&r)) == 0 &&
			 (rc = adaptive_rounds(&r)) == 0 &&
			 (rc = adaptive_final_model(&r)) == 0)
		rc = adaptive_rows(&r);
	adaptive_run_free(&r);
	if (rc != 0)
		dp_privsyn_result_free(out);
	if (stats)
		*stats = r.st;
	return rc;
}
