/*
 * dp_schedule.h - the privacy schedule of one call: every release the call will make, with its
 * rho and its mechanism, computed before anything is measured, and the one accessor through which
 * a method draws what the schedule gives it.  Every share of rho in the extension is a constant
 * of this header: dp_plan_make splits the charge between discovery (DP_PLAN_DISCOVERY_SHARE) and
 * the release, dp_schedule_make starts from that split, and a discovered column's two stages
 * split its rho by DP_BOUNDS_COARSE_SHARE or DP_BINNING_COARSE_SHARE (dp_bounds_split,
 * dp_binning_split).
 *
 * What a call spends, in order (the schedule's releases, dp_release_kind):
 *   DISCOVERY       dp_plan.h: units_each rho units for each of the ndiscover columns whose
 *                   domain is learned (dp_discovery.h: partition selection or a noisy histogram)
 *   ROWS_PER_UNIT   a table with a privacy unit: units_shape = max(units_release /
 *                   DP_SCHEDULE_UNIT_SHAPE_PARTS, 1) units for the rows-per-unit histogram (k
 *                   cells, discrete Gaussian, sensitivity 1: one unit is in one cell); where k
 *                   is learned and no cell of that release stands above DP_UNIT_LEARN_TOPUP_Z
 *                   sd, a second release of DP_SCHEDULE_UNIT_SHAPE_TOPUP units_shape units
 *                   taken from the method's (unit_rows_topup: decided from the first release
 *                   alone)
 *   the method      the remaining units_method units, as rho_method = dp_units_rho(units_method)
 *                   / unit_sens2 (a unit changes at most k rows: group privacy, src/units.c):
 *     MARGINAL        dp_marginal: one marginal, discrete Gaussian, all of rho_method
 *     ONEWAY          the d one-way marginals, share * rho_method in all (share / d each,
 *                     discrete Gaussian, sensitivity 1): DP_PRIVSYN_ONEWAY_SHARE or
 *                     DP_ADAPTIVE_ONEWAY_SHARE; the adaptive method may then release them a
 *                     second time with a top-up drawn from R before the rounds, decided from the
 *                     first release's total (dp_oneway_topup): at most
 *                     DP_ADAPTIVE_ONEWAY_SHARE_MAX of rho_method in all
 *     INDIF           PrivSyn: the m = d(d-1)/2 InDif scores, DP_PRIVSYN_INDIF_SHARE
 *                     (dp_select.h: discrete Gaussian on every score)
 *     PUBLISH         PrivSyn: the selected marginals, DP_PRIVSYN_PUBLISH_SHARE split
 *                     rho_j ~ c_j^(2/3) over at most m of them (dp_publication_split); with
 *                     one column neither INDIF nor PUBLISH: their shares are rho_unspent
 *     FOCUS           adaptive, with focus columns: every candidate pair with a flagged column
 *                     measured once (discrete Gaussian), each at the rounds' starting rho_t, or
 *                     R / (2 F) each for F pairs when that would cost more: at most R / 2,
 *                     where R = rho_method - ONEWAY is the rounds' pool (dp_rounds_focus)
 *     SELECT,         adaptive: the rounds, what the focus pairs left of R: each selection
 *     MEASURE         spends eps_t^2 / 8 (exponential mechanism) and rho_t (discrete Gaussian),
 *                     DP_SCHEDULE_MEASURE_SHARE of a selection's cost measuring; the rule
 *                     (dp_rounds_next, dp_rounds_anneal): rho_t = 0.9 R / T and eps_t =
 *                     sqrt(8 * 0.1 R / T) to start (T from released values, within
 *                     [DP_ADAPTIVE_SELECTIONS_MIN d, DP_ADAPTIVE_SELECTIONS_MAX d]); after a
 *                     round whose estimate moved no more than its noise, DP_SCHEDULE_ANNEAL_RHO
 *                     rho_t and DP_SCHEDULE_ANNEAL_EPS eps_t (the cost ratio kept); when what
 *                     is left is below twice a round's cost, the last round spends it all but
 *                     DP_SCHEDULE_LAST_MARGIN of it, over its batch.  So SELECT + MEASURE =
 *                     R - FOCUS, less at most DP_SCHEDULE_LAST_MARGIN of it, and never more
 *                     (rho_min allows twice the margin: the last eps_t is rounded down too).
 * The units entries add up exactly to the charge: ndiscover * units_each + units_shape +
 * units_method = units_charged (dp_plan.units_charged).  The method's entries add up to
 * rho_method in exact arithmetic (shares summing to 1, rho_unspent included); in doubles within a few ulps, far below
 * the margin of dp_units_rho (units * 1e-12 (1 - 1e-12)), so never over the charge.
 *
 * The methods take their budget from here: dp_privsyn_run and dp_adaptive_run call
 * dp_schedule_method on the rho they are given and take each release's rho with
 * dp_schedule_rho; the adaptive rounds draw from their pool through dp_rounds.  Every release
 * is recorded in a dp_spend (the run's result keeps it; src/model.c stores it beside the plan),
 * which the tests compare with the plan one for one.
 *
 * Pure C (no PostgreSQL headers).
 */
#ifndef DP_SCHEDULE_H
#define DP_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

#include "dp_plan.h"

/* ---- the shares of the charge's units (dp_plan_make) and of a discovered column's rho ---- */
#define DP_PLAN_DISCOVERY_SHARE 0.1		/* a release's units spent discovering domains, split
										 * equally among those columns */
#define DP_BOUNDS_COARSE_SHARE	0.25	/* a column's bounds rho: the coarse (log-grid) stage
										 * (dp_bounds_split, dp_discovery.h) */
#define DP_BINNING_COARSE_SHARE 0.25	/* a refined column's rho: stage 1, the log-grid histogram
										 * that decides the refinement (dp_binning_split) */

/* ---- the shares of the method's rho, or of a round's cost ---- */
#define DP_PRIVSYN_ONEWAY_SHARE 0.1		/* PrivSyn's one-way marginals */
#define DP_PRIVSYN_INDIF_SHARE	0.1		/* ... its InDif scores */
#define DP_PRIVSYN_PUBLISH_SHARE 0.8	/* ... its selected marginals */
#define DP_ADAPTIVE_ONEWAY_SHARE 0.25	/* the adaptive method's one-way marginals; R is the rest */
#define DP_ADAPTIVE_ONEWAY_SHARE_MAX 0.5	/* ... and at most this with the low-signal top-up drawn
											 * from R (dp_oneway_topup) */
#define DP_ADAPTIVE_TOPUP_FROM 0.35	/* the one-ways' noise-to-total ratio above which they get a
									 * top-up ... */
#define DP_ADAPTIVE_TOPUP_SLOPE 1.0	/* ... and its share per unit of the ratio above that
									 * (dp_oneway_topup) */
#define DP_SCHEDULE_MEASURE_SHARE 0.9	/* AIM: of a round's cost, measuring; the rest selects */
#define DP_SCHEDULE_ANNEAL_RHO	4.0		/* an anneal multiplies rho_t by this ... */
#define DP_SCHEDULE_ANNEAL_EPS	2.0		/* ... and eps_t by this (eps_t^2 / 8: by 4 too) */
#define DP_SCHEDULE_LAST_MARGIN 1e-9	/* the last round leaves this much of the remainder */
#define DP_SCHEDULE_UNIT_SHAPE_PARTS 50 /* the rows-per-unit histogram: 1 / this of units_release */
/* where k is learned and no cell of the rows-per-unit histogram's release stands above
 * DP_UNIT_LEARN_TOPUP_Z sd (dp_unit_hist_any_above), the histogram is released a second time with
 * this many times its units, taken from the method's (the precision-weighted mean of the two has
 * half the sd) */
#define DP_SCHEDULE_UNIT_SHAPE_TOPUP 3

typedef enum dp_release_kind
{
	DP_RELEASE_DISCOVERY,
	DP_RELEASE_ROWS_PER_UNIT,
	DP_RELEASE_MARGINAL,
	DP_RELEASE_ONEWAY,
	DP_RELEASE_INDIF,
	DP_RELEASE_PUBLISH,
	DP_RELEASE_FOCUS,
	DP_RELEASE_SELECT,
	DP_RELEASE_MEASURE,
	DP_RELEASE_NKINDS
} dp_release_kind;

typedef enum dp_mechanism
{
	DP_MECH_DISCOVERY,			/* dp_discovery.h: partition selection, noisy histograms */
	DP_MECH_GAUSSIAN,			/* discrete Gaussian on every cell (dp_sampler.h) */
	DP_MECH_EXPONENTIAL			/* dp_exp_mech (dp_adaptive.h), eps^2 / 8-zCDP */
} dp_mechanism;

typedef struct dp_release
{
	dp_release_kind kind;
	dp_mechanism mech;
	/* DISCOVERY (all its columns) and ROWS_PER_UNIT: the ledger's units it is charged; 0 for
	 * the method's releases, which share units_method */
	int64_t		units;
	/* how many: DISCOVERY columns, ROWS_PER_UNIT cells, ONEWAY histograms, INDIF scores; at most
	 * this many for PUBLISH and FOCUS (pairs); 0 for SELECT and MEASURE (T decided in the run) */
	uint32_t	count;
	/*
	 * Its rho in all (DISCOVERY: ndiscover times dp_units_rho(units_each), each column's).  FOCUS, SELECT and MEASURE
	 * depend on released values: rho is what they spend without focus pairs (FOCUS 0, SELECT
	 * and MEASURE their shares of R), and [rho_min, rho_max] bounds what they spend in any run.
	 * Fixed releases: rho_min = rho = rho_max.
	 */
	double		rho;
	double		rho_min;
	double		rho_max;
} dp_release;

#define DP_SCHEDULE_MAX_RELEASES 8

typedef struct dp_schedule
{
	dp_plan_call call;
	uint32_t	d;				/* columns the method releases */
	int64_t		units_charged;	/* the ledger's charge: the units entries' sum */
	int64_t		units_method;	/* the method's units (units_release less units_shape, less
								 * units_topup where it is taken) */
	int64_t		units_topup;	/* the rows-per-unit histogram's second release: taken (unit_rows_topup),
								 * or the units it would take, DP_SCHEDULE_UNIT_SHAPE_TOPUP units_shape;
								 * 0 where the method would be left no unit or there is no unit */
	int64_t		unit_sens2;		/* 1, or the group sensitivity^2 of a table with a unit */
	double		rho_method;		/* dp_units_rho(units_method) / unit_sens2 */
	double		rho_rounds;		/* the adaptive method's pool R: rho_method - ONEWAY */
	double		rho_unspent;	/* given to the method, spent on nothing: PrivSyn on one column
								 * has no pair to score or publish */
	int			nrel;
	dp_release	rel[DP_SCHEDULE_MAX_RELEASES];
} dp_schedule;

typedef struct dp_schedule_input
{
	dp_plan_call call;			/* as given to dp_plan_make */
	const dp_plan *plan;		/* dp_plan_make's, not refused */
	uint32_t	d;				/* the columns synthesized (the marginal's, for dp_marginal) */
	bool		focus;			/* dp_synthesize(focus => ...) named a column (adaptive only) */
	uint32_t	unit_rows;		/* a table with a privacy unit: at most this many rows per unit
								 * (the rows-per-unit histogram's cells); 0 without */
	int64_t		unit_sens2;		/* ... and the method's squared sensitivity then (>= 1) */
	bool		unit_rows_first;	/* the rows-per-unit histogram is released before discovery
									 * (k learned from it, discovery bounded at that k) */
	bool		unit_rows_topup;	/* k learned: the histogram was released a second time with
									 * units_topup units from the method's (decided from the first
									 * release alone: none of its cells above DP_UNIT_LEARN_TOPUP_Z sd) */
} dp_schedule_input;

/*
 * The whole schedule of a call, from its plan and public facts: 0, or -1 when the input is
 * invalid (no plan, a refused plan, d == 0 for a synthesis, unit_sens2 < 1) or a table with a
 * unit leaves the method no unit (units_release - units_shape < 1).  DP_CALL_DISCOVER lists its
 * discoveries only.
 */
int			dp_schedule_make(const dp_schedule_input *in, dp_schedule *s);

/*
 * The units of the rows-per-unit histogram's second release (where k is learned and no cell of
 * the first stands above DP_UNIT_LEARN_TOPUP_Z sd): DP_SCHEDULE_UNIT_SHAPE_TOPUP units_shape,
 * taken from units_rest, the units the release's method (dp_synthesize's) or marginal
 * (dp_marginal's) has after the first; 0 where that would leave it no unit (or units_shape < 1).
 * dp_schedule_make and dp_marginal (src/marginal.c) both offer it through this rule.
 */
int64_t		dp_schedule_unit_topup(int64_t units_rest, int64_t units_shape);

/*
 * The method's part alone, from the rho it is given (what dp_privsyn_run and dp_adaptive_run
 * call): s->units_* are 0; 0, or -1 if rho is not positive and finite, d == 0, or call is not
 * a synthesis method.
 */
int			dp_schedule_method(dp_plan_call call, double rho, uint32_t d, bool focus, dp_schedule *s);

/* The release of that kind in s, or NULL. */
const dp_release *dp_schedule_find(const dp_schedule *s, dp_release_kind kind);

/* A fixed release's rho in all (0 if s has none of that kind). */
double		dp_schedule_rho(const dp_schedule *s, dp_release_kind kind);

/* Names for reports and the model's JSON: "one-way", "gaussian", ... */
const char *dp_release_name(dp_release_kind kind);
const char *dp_mechanism_name(dp_mechanism mech);

/* ---- what a run spent: every release recorded where it is made ---- */

typedef struct dp_spend
{
	double		rho[DP_RELEASE_NKINDS];	/* in all */
	uint32_t	n[DP_RELEASE_NKINDS];	/* how many draws (marginals, scores, selections) */
} dp_spend;

void		dp_spend_record(dp_spend *sp, dp_release_kind kind, double rho, uint32_t n);

/*
 * Whether a run's spend matches the method's schedule one for one: a release spent exactly
 * where the schedule has one, each fixed one at its rho within rel_tol (relative: the floating
 * sum of its parts), each adaptive one within [rho_min (1 - rel_tol), rho_max (1 + rel_tol)],
 * FOCUS + SELECT + MEASURE at most R, and the whole at most rho_method (1 + rel_tol).  On a
 * mismatch, *why names the first release that differs.
 */
bool		dp_spend_matches(const dp_schedule *s, const dp_spend *sp, double rel_tol, const char **why);

/* ---- the adaptive rounds' pool: the one accessor of FOCUS, SELECT and MEASURE ---- */

typedef struct dp_rounds
{
	double		pool;			/* R */
	double		used;			/* spent from it so far */
	double		rho_t;			/* the current round's measurement, per selection */
	double		eps_t;			/* ... and its selection's epsilon */
	bool		last;			/* this round takes the remainder */
	dp_spend   *spend;			/* where the draws are recorded (may be NULL) */
} dp_rounds;

/* Starts the pool R of s (the adaptive method's) for T selections: rho_t and eps_t. */
void		dp_rounds_begin(dp_rounds *rs, const dp_schedule *s, double T, dp_spend *spend);

/* The same after the one-way top-up took `taken` of R (dp_oneway_topup): the pool is R - taken. */
void		dp_rounds_begin_after(dp_rounds *rs, const dp_schedule *s, double taken, double T, dp_spend *spend);

/*
 * The adaptive method's one-way top-up: the rho (in all, over the d columns) with which the one-way
 * marginals are released a second time, drawn from the rounds' pool R before the rounds begin.
 * From released and public facts only: noisy_total, the first release's total (the mean of its d
 * columns' sums), the d columns' code counts sizes[] (public: declared or released domains) and
 * the schedule s.  The ratio q = sqrt(2 / pi) sigma mean(sizes) / max(noisy_total, 1), sigma the
 * first release's noise per cell, is the expected L1 norm of a column's noise over the table's
 * rows; the one-way share becomes min(DP_ADAPTIVE_ONEWAY_SHARE_MAX, DP_ADAPTIVE_ONEWAY_SHARE +
 * DP_ADAPTIVE_TOPUP_SLOPE (q - DP_ADAPTIVE_TOPUP_FROM)), so a table whose one-way counts are
 * mostly noise (few rows for the budget) spends more of its budget on them and less on pairs the
 * rounds could not resolve; a table with q at most DP_ADAPTIVE_TOPUP_FROM gets nothing.  0 for
 * every method but the adaptive one, and when the result would be below 1e-3 of the first
 * release (not worth a second draw).  Never more than the schedule's ONEWAY rho_max less its rho.
 */
double		dp_oneway_topup(const dp_schedule *s, const uint32_t *sizes, double noisy_total);

/*
 * The focus pairs: the rho each of npairs pairs is measured with (rho_t, or just below R /
 * (2 npairs) when npairs rho_t would exceed R / 2), drawn from the pool and recorded; 0 when
 * npairs is 0.
 */
double		dp_rounds_focus(dp_rounds *rs, uint32_t npairs);

/*
 * Before a round of `batch` selections: whether there is one.  When what is left is below two
 * rounds' cost, this one is the last (rs->last) and its rho_t and eps_t split the remainder,
 * less DP_SCHEDULE_LAST_MARGIN of it, over the batch; false when nothing is left.
 */
bool		dp_rounds_next(dp_rounds *rs, uint32_t batch);

/* One selection and its measurement, at the round's eps_t and rho_t: drawn and recorded. */
void		dp_rounds_spend(dp_rounds *rs);

/* The anneal (the estimate moved no more than its noise): the next rounds cost 4 times more. */
void		dp_rounds_anneal(dp_rounds *rs);

#endif							/* DP_SCHEDULE_H */
