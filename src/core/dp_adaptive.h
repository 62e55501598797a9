/*
 * dp_adaptive.h - adaptive measurement in rounds: AIM's selection (McKenna, Mullins, Sheldon,
 * Miklau, "AIM: An Adaptive and Iterative Mechanism for Differentially Private Synthetic Data",
 * VLDB 2022) with GUM, or the maximum-entropy distribution, as the estimator in place of a
 * graphical model.  docs/METHODS.md describes the method for users.
 *
 * Same input and output as dp_privsyn_run (dp_privsyn.h): the released model is the one-way
 * marginals plus the measured ones, consistent and non-negative, over merged codes, and the
 * synthetic rows are drawn from it by dp_privsyn_sample.  A stored model is sampled again exactly
 * as a PrivSyn model is.
 *
 * What it does, with rho the budget given here:
 *   1. One-way marginals and the rare-value merge, as PrivSyn (dp_privsyn_oneway_stage), with
 *      DP_ADAPTIVE_ONEWAY_SHARE of rho: every estimate and the merge stand on them, so they get
 *      more than PrivSyn's 0.1 (MST spends a third there).
 *   2. Candidates: every column (weight 1/2) and every pair (weight 1) whose marginal over merged
 *      codes has at most DP_ADAPTIVE_MAX_CELLS cells, the largest dropped first until all hold at
 *      most DP_ADAPTIVE_MAX_TOTAL cells together (public: the sizes).  Their exact counts are
 *      taken in one pass each over the encoded table, plus, when the caller gives them (p->extra:
 *      rows of partitions on other servers, counted there), those rows' counts, each original
 *      cell added to its merged cell and clamped at DP_ADAPTIVE_COUNT_CAP (a public cap: with
 *      them the rows are not bounded by the table, and a refusal after the charge would depend on
 *      their number); the one-way marginals of step 1 add them too.  Counts that do not add up to
 *      one set of rows (every column's and pair's summing to extra->nrows) fail the run.
 *   2b. Focus (p->focus): every candidate pair with a flagged column is measured once, in
 *      candidate order, without selection, each with the rounds' starting rho_t = 0.9 R / T, or
 *      R / (2 F) each if the F pairs would cost more than R / 2 that way.  Their cost comes out
 *      of R; the rounds may select these pairs again.
 *   2c. Triples, only when the rounds' estimates hold every row (the first estimate has fewer
 *      than DP_ADAPTIVE_SYNTH_ROWS rows, a function of the released total) and there is no
 *      p->extra: when a pair {a, b} is measured for the first time, every triple {a, b, c} with
 *      {a, c} or {b, c} measured before becomes a candidate (weight 1), its exact counts taken
 *      then, while there are fewer than DP_ADAPTIVE_TRIPLES_PER_COL d triples and the triple has
 *      at most DP_ADAPTIVE_TRIPLE_CELLS cells.  Pairs miss what only a third column shows (a
 *      target depending on two columns jointly; c = a XOR b).  On bigger tables an estimate that
 *      does not hold every row (DP_ADAPTIVE_SYNTH_ROWS rows, or DP_ADAPTIVE_SYNTH_ROWS_BIG over
 *      131,072: either way at least DP_ADAPTIVE_SYNTH_ROWS) leaves most of a triple's cells
 *      empty, and its sampling error would be selected for instead of real error: no triples
 *      there.
 *   2d. Coarse twins, on tables of at most DP_ADAPTIVE_TREE_COLS columns where the rounds bound
 *      the junction tree (dp_adaptive_tree_bound of the released one-way totals' mean not 0): an
 *      ordered column (p->ordered) whose merged ordered codes are more than max(
 *      DP_ADAPTIVE_COARSE_BASE, dp_binning_wide_bins's pair count on its released one-way mass)
 *      gets runs of consecutive codes of about equal released mass (dpa_coarse_runs), and every
 *      pair and triple candidate holding such a column gets a twin with the column at its runs
 *      (weight 1; its counts the fine twin's summed over the runs, a count of a function of the
 *      row: the sensitivity of its score and its measurement is unchanged).  The score chooses
 *      between twins; a coarse pick's noisy counts are spread over the fine cells by the codes'
 *      shares of their run's released one-way mass (post-processing) and are the fine marginal's
 *      measurement.  The model keeps every merged code.  Not in the focus pairs.
 *   3. Rounds, AIM's schedule over the remaining R = (1 - DP_ADAPTIVE_ONEWAY_SHARE) rho, with T
 *      selections (dp_adaptive_selections): every selection spends eps_t^2 / 8 and its
 *      measurement rho_t, starting from rho_t = 0.9 R / T and eps_t = sqrt(8 * 0.1 R / T).  T is
 *      the one at which a median candidate pair measured at rho_t has an expected noise of
 *      DP_ADAPTIVE_NOISE_TVD as a TVD, within [DP_ADAPTIVE_SELECTIONS_MIN d,
 *      DP_ADAPTIVE_SELECTIONS_MAX d] (AIM: 16 d always).  Why: GUM fits each marginal in turn, so
 *      a noisy measurement pulls as hard as a precise one; each measurement must carry signal:
 *      few precise ones when the signal is weak, AIM's many when it is strong.  T is a function
 *      of released values and public sizes.  A round selects and measures a batch of
 *      B = ceil(d / DP_ADAPTIVE_BATCH_COLS) candidates against one estimate (AIM: B = 1; a batch
 *      keeps wide tables' rounds affordable, and a larger one starved tables of few columns), or
 *      B = ceil(d / DP_ADAPTIVE_BATCH_COLS_HUGE) from a released total (the first estimate's) of
 *      DP_ADAPTIVE_HUGE_ROWS rows (dp_adaptive_batch): there every round's estimate is a GUM pass
 *      per marginal over DP_ADAPTIVE_SYNTH_ROWS_BIG rows, the rounds are most of the selection's
 *      time, and twice the batch halves them (with the cap of step b, at the 2- and 3-way
 *      fidelity of the smaller model: bench/RESULTS.md).  B is a function of the released total
 *      and d (post-processing, no cost):
 *        a. estimate: the measured marginals made consistent (dp_consist, at most
 *           DP_ADAPTIVE_EST_CONSIST_ITERS passes) and GUM draws dp_adaptive_est_rows(first
 *           consistent total) rows from them: min(DP_ADAPTIVE_SYNTH_ROWS, total), or
 *           DP_ADAPTIVE_SYNTH_ROWS_BIG over 131,072 rows (where the rounds bound no tree and the
 *           final rows come from GUM: finer estimates let the selection see misfits that 8,192
 *           rows standing for more than 16 real ones each would hide); every estimate after the
 *           first warm from the previous one's rows with dp_adaptive_warm_iters iterations:
 *           DP_ADAPTIVE_WARM_ITERS when they are capped at DP_ADAPTIVE_SYNTH_ROWS,
 *           DP_ADAPTIVE_WARM_ITERS_FULL when the estimates hold every row (a small table: the
 *           noise is large against its counts, and a closer fit buys nothing),
 *           DP_ADAPTIVE_WARM_ITERS_BIG when they hold DP_ADAPTIVE_SYNTH_ROWS_BIG rows (every
 *           iteration is a pass over the rows per marginal: fewer of them keep the larger
 *           estimates' rounds affordable), with lazy counting on a table of
 *           DP_ADAPTIVE_HUGE_ROWS rows or more (dp_adaptive_huge_counting: the same rows, less
 *           work).  A round's selection barely reads the estimate's last iterations, so few
 *           are run: 4 for the capped estimates, 2 for those of DP_ADAPTIVE_SYNTH_ROWS_BIG rows
 *           (bench/RESULTS.md measures each against more);
 *        b. select: every candidate r is scored
 *             q_r = w_r * ( || x_r - y_r ||_1 - sum over its cells of sqrt(2/pi) * sqrt(sigma_t^2 + v) )
 *           with x_r its exact counts, y_r the estimate's counts scaled to the consistent total,
 *           and v = (s - 1) y (1 - y / total) (0 when s <= 1) the sampling variance of a cell's
 *           scaled count y in an estimate of m rows standing for s = total / m rows each (AIM's
 *           floor is sqrt(2/pi) sigma_t per cell; its estimate is exact, ours is a draw whose
 *           own sampling error would otherwise be selected for, again and again, on big tables).
 *           A candidate measured before, with rho_r, can gain only the fall in its noise, to
 *           sigma' with 1 / sigma'^2 = 1 / sigma_t^2 + 2 rho_r:
 *             q_r = w_r * ( || x_r - y_r ||_1 - || z_r - y_r ||_1 - sqrt(2/pi) * sigma' * cells_r )
 *           (dp_adaptive_remeasure_floor): the estimate's misfit to the earlier measurement z_r is
 *           not counted as a gain (another measurement would not make the estimate follow it
 *           either).  The subtracted terms are released values and public facts: the
 *           sensitivity is unchanged.  Once dp_adaptive_max_kway(d, total) distinct k-way
 *           marginals are measured, only candidates measured before are offered (the final GUM's
 *           work, rows x marginals, stays within DP_ADAPTIVE_GUM_WORK, or within
 *           DP_ADAPTIVE_GUM_WORK_HUGE from DP_ADAPTIVE_HUGE_ROWS rows, where every marginal also
 *           costs every later round's estimate a pass: 60 instead of 134 at 15 columns and 1M
 *           rows; total is released, so which candidates are offered is public), as AIM bounds
 *           its model's size.  Then B
 *           candidates are drawn one after the other, each by the exponential mechanism with
 *           eps_t over those not yet drawn in this round (dp_exp_mech: sensitivity 1 with the
 *           rounding accounted, eps_t^2 / 8-zCDP, Cesar & Rogers 2021), among those that keep
 *           the junction tree of the model's marginals (dp_jtree.h) within
 *           dp_adaptive_tree_bound(released total) cells, on tables of at most
 *           DP_ADAPTIVE_TREE_COLS columns; when none fits, over all of them.  The fitting set is
 *           a function of the released selections and public sizes; dp_exp_mech_fitting draws
 *           exactly the exponential mechanism over it.  Why: the final rows are then drawn from
 *           the maximum-entropy distribution on that tree (step 5) rather than by GUM.  The bound
 *           grows with the rows (a constant alone starved larger tables of pairs), and there is
 *           none where the final tree could not be drawn on anyway;
 *        c. measure: each one's exact counts plus discrete Gaussian noise on every cell with rho_t
 *           (sensitivity 1); a candidate measured before is averaged with its earlier
 *           measurement, weights in proportion to their rho (the average of two Gaussian
 *           measurements with rho a and rho b is one with rho a + b);
 *        d. anneal: if the new estimate moved the batch's marginals by no more than
 *           sum over their cells of sqrt(2/pi) * sqrt(sigma_t^2 + 2 v) in all (L1), v as in b,
 *           the next rounds use 4 rho_t and 2 eps_t.  AIM's bar is sqrt(2/pi) sigma_t per cell;
 *           two consecutive estimates here also differ by their sampling alone (variance 2 v:
 *           two draws), churn that would otherwise exceed the bar at every round on big tables.
 *           With an estimate that holds every row, v = 0 and both rules are AIM's;
 *        e. when what is left of R is below twice a round's cost, the last round spends exactly
 *           what is left (0.9 of it measuring, 0.1 selecting, split over its B selections).  Its
 *           estimate (a) feeds no score and no anneal: it is made only when the estimates hold
 *           every row (fewer than DP_ADAPTIVE_SYNTH_ROWS), where the final GUM may start from it
 *           (step 5).
 *   4. The final model: the measured marginals made consistent (dp_consist, 100 iterations).
 *   5. The synthetic rows (dp_privsyn_sample, post-processing of the model): from the
 *      maximum-entropy distribution of the final marginals when the joint domain over merged
 *      codes has at most DP_ADAPTIVE_MAXENT_CELLS cells (dp_maxent.h; dp_gum_params.maxent_cells),
 *      or on their junction tree when it has at most DP_ADAPTIVE_JTREE_CELLS cells (dp_jtree.h;
 *      dp_gum_params.jtree_cells): the distribution AIM's and MST's estimator fits, holding
 *      nothing beyond the measurements, where GUM leaves whatever its row moves made in
 *      combinations no marginal measures; the bounds keep the fit's passes over the table
 *      affordable.  Over 131,072 released rows the rounds bound no tree (step 3b), so the final
 *      tree is too large to draw from; there, on tables of at most DP_ADAPTIVE_TREE_COLS columns
 *      and below GUM's coarse levels (fewer than DP_SAMPLE_LEVEL_FACTOR * DP_SAMPLE_MIN_COARSE
 *      rows), dp_adaptive_sample fits the maximum-entropy distribution of a sub-model (the
 *      one-way marginals, then the k-way ones in the order they were measured while its junction
 *      tree stays within DP_ADAPTIVE_JTREE_CELLS: dp_jtree_build_greedy), draws the rows from it
 *      exactly (from DP_ADAPTIVE_HUGE_ROWS rows, a fit of at most DP_ADAPTIVE_SUBMODEL_SWEEPS_HUGE
 *      sweeps, dp_adaptive_submodel_sweeps, and the rows drawn in chunks on the call's threads,
 *      dp_adaptive_draw_chunk: the rows depend on the chunks, which depend on the rows asked for,
 *      not on the threads) and runs GUM on all the marginals from those rows (from
 *      DP_ADAPTIVE_HUGE_ROWS rows with lazy counting, dp_adaptive_huge_counting, and on each of
 *      the draw's chunks on its own, dp_gum_run_chunked: the chunks run on the call's threads
 *      with no join between GUM's passes, and the rows depend on the chunks, not on the
 *      threads; there a marginal's error is taken right after its visit, with no recount of
 *      every marginal at each iteration's end, dp_gum_params.visit_errors), at most
 *      dp_adaptive_submodel_iters iterations (DP_ADAPTIVE_SUBMODEL_WARM_ITERS, fewer on a model of
 *      more than 56 k-way marginals, and fewer again, down to DP_ADAPTIVE_FINAL_WORK_MIN_ITERS,
 *      from DP_ADAPTIVE_HUGE_ROWS rows where rows x k-way marginals x iterations would pass
 *      DP_ADAPTIVE_FINAL_WORK): the rows start with the sub-model's structure
 *      and GUM moves them only towards the marginals it left out (every iteration is a pass over
 *      the rows per marginal, at about the same cost; fewer iterations cost 2- and 3-way
 *      fidelity on the same model: bench/final_warm.c).  Otherwise GUM: warm from the last round's estimate, with
 *      DP_ADAPTIVE_FINAL_WARM_ITERS iterations, when that estimate holds every row and about
 *      the rows asked for (0.95 n <= m <= 1.25 n); else cold, from the independent fill, with
 *      at most DP_ADAPTIVE_FINAL_ITERS.  Which one: a function of public sizes, the released
 *      merge and selections, and the rows asked for.
 *
 * Privacy: DP_ADAPTIVE_ONEWAY_SHARE rho (step 1) + the rounds' costs, which add up to exactly R by
 * the schedule (the last round takes the remainder; every cost computed from the remainder is
 * rounded down, never up).  The rounds' estimates are post-processing of the released
 * marginals, their number of rows (dp_adaptive_est_rows) a function of the released total and
 * public constants: their size costs nothing.  The shares, the anneal and the last round's rule
 * are the schedule's (dp_schedule.h): the run takes its one-way rho from dp_schedule_method and
 * draws every focus pair, selection and measurement from the pool R through dp_rounds, which
 * records them in the result's spend (out->spend).  Selection, measurement and the rounds'
 * estimates read the private table (and p->extra, counts of more of its rows) only through the
 * exact counts x_r (a triple's taken when it becomes a candidate; which triples is
 * post-processing of the selections), each time through a mechanism: the exponential mechanism
 * (scores) and the Gaussian (measurements); everything else is a function of released values and
 * public facts.  Adaptive composition of
 * zCDP mechanisms adds their rho (docs/PRIVACY.md).
 */
#ifndef DP_ADAPTIVE_H
#define DP_ADAPTIVE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "dp_privsyn.h"

#define DP_ADAPTIVE_NOISE_TVD	0.05		/* a median pair's measurement noise, as a TVD (step 3) */
#define DP_ADAPTIVE_SELECTIONS_MIN 2		/* T, at least 2 d selections (step 3) */
#define DP_ADAPTIVE_SELECTIONS_MAX 16		/* ... and at most 16 d, AIM's */
#define DP_ADAPTIVE_MAX_CELLS	(1u << 20)	/* largest candidate marginal */
#define DP_ADAPTIVE_MAX_TOTAL	(1u << 24)	/* cells of all candidates together (4 bytes each) */
#define DP_ADAPTIVE_COUNT_CAP	((uint32_t) INT32_MAX)	/* an exact count with p->extra, at most */
#define DP_ADAPTIVE_SYNTH_ROWS	8192		/* rows of the rounds' estimates, at most (step 3a) */
#define DP_ADAPTIVE_SYNTH_ROWS_BIG 16384	/* ... on tables over which the rounds bound no tree */
#define DP_ADAPTIVE_TRIPLES_PER_COL 8		/* triple candidates (step 2c): at most 8 d */
#define DP_ADAPTIVE_TRIPLE_CELLS 4096		/* ... of at most this many cells each */
#define DP_ADAPTIVE_BATCH_COLS	8			/* a round selects ceil(d / 8) marginals */
#ifndef DP_ADAPTIVE_BATCH_COLS_HUGE
#define DP_ADAPTIVE_BATCH_COLS_HUGE 4		/* ... or ceil(d / 4) from DP_ADAPTIVE_HUGE_ROWS rows */
#endif
#ifndef DP_ADAPTIVE_HUGE_ROWS
#define DP_ADAPTIVE_HUGE_ROWS	524288.0	/* released total from which the rounds are cut (step 3) */
#endif
#define DP_ADAPTIVE_WARM_ITERS	4			/* GUM iterations of a capped estimate from the last one */
#define DP_ADAPTIVE_WARM_ITERS_FULL 3		/* ... when the estimates hold every row (step 3a) */
#define DP_ADAPTIVE_WARM_ITERS_BIG 2		/* ... when they hold DP_ADAPTIVE_SYNTH_ROWS_BIG rows */
#define DP_ADAPTIVE_FINAL_ITERS	30			/* at most, for the synthetic table (step 5), cold */
#define DP_ADAPTIVE_EST_CONSIST_ITERS 10	/* dp_consist passes of a round's estimate (step 3a) */
#define DP_ADAPTIVE_FINAL_WARM_ITERS 10		/* ... from the last estimate (step 5) */
#define DP_ADAPTIVE_SUBMODEL_WARM_ITERS 10	/* ... from a sub-model's rows (step 5), at most */
#define DP_ADAPTIVE_SUBMODEL_WARM_VISITS 560	/* ... as long as k-way marginals x iterations stay within this */
#define DP_ADAPTIVE_SUBMODEL_MIN_ITERS 5	/* ... but never fewer than this */
#ifndef DP_ADAPTIVE_GUM_WORK
#define DP_ADAPTIVE_GUM_WORK	((double) (1u << 27))	/* rows x distinct k-way marginals (step 3b) */
#endif
#ifndef DP_ADAPTIVE_GUM_WORK_HUGE
#define DP_ADAPTIVE_GUM_WORK_HUGE ((double) (1u << 25))	/* ... from DP_ADAPTIVE_HUGE_ROWS rows */
#endif
#ifndef DP_ADAPTIVE_FINAL_WORK
#define DP_ADAPTIVE_FINAL_WORK	((double) (1u << 28))	/* ... x the sub-model's warm iterations (step 5) */
#endif
#ifndef DP_ADAPTIVE_FINAL_WORK_MIN_ITERS
#define DP_ADAPTIVE_FINAL_WORK_MIN_ITERS 3	/* ... but never fewer than this */
#endif
#ifndef DP_ADAPTIVE_SUBMODEL_SWEEPS_HUGE
#define DP_ADAPTIVE_SUBMODEL_SWEEPS_HUGE 3	/* the sub-model's fit, at most, from DP_ADAPTIVE_HUGE_ROWS rows (step 5) */
#endif
#ifndef DP_ADAPTIVE_DRAW_CHUNK
#define DP_ADAPTIVE_DRAW_CHUNK	((uint64_t) 1 << 19)	/* rows of a chunk of the sub-model's draw, at most (step 5) */
#endif
#define DP_ADAPTIVE_MIN_KWAY_PER_COL 4		/* ... but at least 4 d of them */
#define DP_ADAPTIVE_MIN_KWAY_MAX 128		/* ... or 128 if fewer (DP_SAMPLE_WIDE_MARGS) */
#define DP_ADAPTIVE_MAXENT_CELLS ((uint64_t) 1 << 20)	/* joint domains drawn by maximum entropy (step 5) */
#define DP_ADAPTIVE_JTREE_CELLS ((uint64_t) 1 << 22)	/* ... and junction trees (step 5) */
#define DP_ADAPTIVE_TREE_CELLS	((uint64_t) 1 << 20)	/* the rounds keep the model's tree within this (step 3b) */
#define DP_ADAPTIVE_TREE_COLS	64		/* ... on tables of at most this many columns (a check is O(d^3)) */
/*
 * The fewest runs an ordered column's merged codes are joined into for its coarse pairs (step 2):
 * the bins a column declared with bounds only gets by default.  Above it, dp_binning_wide_bins's
 * pair count on the column's released mass.
 */
#define DP_ADAPTIVE_COARSE_BASE	16
#define DP_ADAPTIVE_TREE_CELLS_PER_ROW 32	/* ... or this many cells per row, if more (step 3b) */

/* The bound on the model's junction tree in the rounds (step 3b) for a table of about `rows`
 * rows (the released one-way total): max(DP_ADAPTIVE_TREE_CELLS, DP_ADAPTIVE_TREE_CELLS_PER_ROW
 * rows), or 0 (no bound) when that exceeds DP_ADAPTIVE_JTREE_CELLS, the largest tree the final
 * rows are drawn on. */
static inline uint64_t
dp_adaptive_tree_bound(double rows)
{
	double		b = DP_ADAPTIVE_TREE_CELLS_PER_ROW * rows;

	return !(b > (double) DP_ADAPTIVE_TREE_CELLS) ? DP_ADAPTIVE_TREE_CELLS :
		b <= (double) DP_ADAPTIVE_JTREE_CELLS ? (uint64_t) b : 0;
}

/*
 * The rows of the rounds' estimates (step 3a) for a released consistent total: min(total,
 * DP_ADAPTIVE_SYNTH_ROWS) rounded, at least 1 (also when total is not a number); over the total
 * at which the rounds bound no tree (dp_adaptive_tree_bound 0: over 131,072 rows, where the final
 * rows come from GUM), DP_ADAPTIVE_SYNTH_ROWS_BIG.  Why: each of an estimate's rows stands for
 * total / rows real ones, and a misfit below that resolution is hidden by the estimate's own
 * sampling error (step 3b's floor), so on big tables the selection stops seeing what GUM's final
 * draw, which holds every row, then gets wrong; more rows cost every round's GUM in proportion,
 * hence only where the tables are big and a cap.  A function of the released total and public
 * constants only (post-processing: no privacy cost).
 */
uint64_t	dp_adaptive_est_rows(double total);

/*
 * The GUM iterations of a round's warm estimate of m rows (step 3a): DP_ADAPTIVE_WARM_ITERS_FULL
 * when the estimates hold every row (m < DP_ADAPTIVE_SYNTH_ROWS), DP_ADAPTIVE_WARM_ITERS when they
 * are capped at DP_ADAPTIVE_SYNTH_ROWS, DP_ADAPTIVE_WARM_ITERS_BIG at DP_ADAPTIVE_SYNTH_ROWS_BIG.
 * A function of the estimates' size (of the released total) only.
 */
uint32_t	dp_adaptive_warm_iters(uint64_t m);

/* The GUM iterations of a synthetic table drawn from an adaptive model by a cold start (by the
 * run, step 5, or by dp_sample): the caller's, at most DP_ADAPTIVE_FINAL_ITERS. */
static inline uint32_t
dp_adaptive_final_iters(uint32_t iterations)
{
	return iterations > DP_ADAPTIVE_FINAL_ITERS ? DP_ADAPTIVE_FINAL_ITERS : iterations;
}

/*
 * The GUM iterations after a sub-model's rows (step 5) for a model of kway k-way marginals: every
 * iteration visits each of them once, a pass over the rows and its moves each, so the draw's cost
 * grows with the model; the iterations are cut so that kway x iterations stays within
 * DP_ADAPTIVE_SUBMODEL_WARM_VISITS, between DP_ADAPTIVE_SUBMODEL_MIN_ITERS and
 * DP_ADAPTIVE_SUBMODEL_WARM_ITERS: the draw's cost stays about that of a model of
 * DP_ADAPTIVE_SUBMODEL_WARM_VISITS / DP_ADAPTIVE_SUBMODEL_WARM_ITERS marginals up to
 * DP_ADAPTIVE_SUBMODEL_WARM_VISITS / DP_ADAPTIVE_SUBMODEL_MIN_ITERS of them, and grows with the
 * marginals past that (at DP_ADAPTIVE_SUBMODEL_MIN_ITERS iterations).  Then, from
 * DP_ADAPTIVE_HUGE_ROWS rows asked for, where nrows x kway x iterations would pass
 * DP_ADAPTIVE_FINAL_WORK, the iterations are cut to what fits, but not below
 * DP_ADAPTIVE_FINAL_WORK_MIN_ITERS: the rows drawn from the sub-model already hold most of the
 * model, the first iterations buy most of what GUM adds to them, and each further one costs a pass
 * over every row per marginal, so on big tables the draw's cost stays about bounded rather than
 * growing with rows x marginals (fewer rows are drawn exactly as before, whatever the model).  A
 * function of the model's size and the rows asked for (public) only; bench/final_warm.c measures
 * what the iterations buy on a given model.
 */
static inline uint32_t
dp_adaptive_submodel_iters(uint32_t kway, uint64_t nrows)
{
	uint32_t	w = kway > 0 ? DP_ADAPTIVE_SUBMODEL_WARM_VISITS / kway : DP_ADAPTIVE_SUBMODEL_WARM_ITERS;
	double		work = (double) nrows * (kway > 0 ? kway : 1);

	w = w > DP_ADAPTIVE_SUBMODEL_WARM_ITERS ? DP_ADAPTIVE_SUBMODEL_WARM_ITERS :
		w < DP_ADAPTIVE_SUBMODEL_MIN_ITERS ? DP_ADAPTIVE_SUBMODEL_MIN_ITERS : w;
	if ((double) nrows >= DP_ADAPTIVE_HUGE_ROWS && work * w > DP_ADAPTIVE_FINAL_WORK)
	{
		double		fit = floor(DP_ADAPTIVE_FINAL_WORK / work);

		w = fit < DP_ADAPTIVE_FINAL_WORK_MIN_ITERS ? DP_ADAPTIVE_FINAL_WORK_MIN_ITERS : (uint32_t) fit;
	}
	return w;
}

/*
 * The chunk of the sub-model's draw (step 5; dp_jtree_draw_chunked) for n rows asked for: from
 * DP_ADAPTIVE_HUGE_ROWS rows, the rows cut into an even number of chunks of at most
 * DP_ADAPTIVE_DRAW_CHUNK rows each, as few as can be, all of one size but the last (ceil of n over
 * their number): 2 chunks up to twice DP_ADAPTIVE_DRAW_CHUNK rows, so that two threads draw about
 * the same rows, and each chunk's own walks over the cliques' cells (a cost that does not shrink
 * with its rows) come as few times as they can; drawn on the call's threads (the rows depend on
 * the chunk, not on the threads).  Below, 0: one draw of all the rows, as before (fewer rows are
 * drawn exactly as before).  A function of the rows asked for only.
 */
static inline uint64_t
dp_adaptive_draw_chunk(uint64_t nrows)
{
	uint64_t	pairs;

	if ((double) nrows < DP_ADAPTIVE_HUGE_ROWS)
		return 0;
	pairs = (nrows + 2 * DP_ADAPTIVE_DRAW_CHUNK - 1) / (2 * DP_ADAPTIVE_DRAW_CHUNK);
	return (nrows + 2 * pairs - 1) / (2 * pairs);
}

/*
 * The rows of a chunk of the final GUM's independent runs (dp_gum_run_chunked), from the rows
 * asked for: each of the sub-model's draw chunks (dp_adaptive_draw_chunk) cut in
 * DP_ADAPTIVE_GUM_SPLIT, so that the first chunks' rows can be written while a helper thread
 * still runs GUM on later ones (dp_gum_params.chunk_sink), and the last chunk's run, which
 * nothing overlaps, is short.  0 below DP_ADAPTIVE_HUGE_ROWS (no chunks).  A function of the rows
 * asked for only.
 */
#define DP_ADAPTIVE_GUM_SPLIT	2

static inline uint64_t
dp_adaptive_gum_chunk(uint64_t nrows)
{
	uint64_t	d = dp_adaptive_draw_chunk(nrows);

	return (d + DP_ADAPTIVE_GUM_SPLIT - 1) / DP_ADAPTIVE_GUM_SPLIT;
}

/*
 * The sweeps of the sub-model's fit (step 5; dp_jtree_fit) for n rows asked for, given the fit's
 * own bound (dp_jtree_sweeps): from DP_ADAPTIVE_HUGE_ROWS rows, at most
 * DP_ADAPTIVE_SUBMODEL_SWEEPS_HUGE.  The fit's cost does not shrink with the rows, and there the
 * rows it draws go on to GUM's iterations over every marginal, which correct what further sweeps
 * would have (the 2- and 3-way fidelity after the iterations is the same with 3 sweeps as with
 * the fit's own stopping rule, bench/final_warm.c), so its later sweeps only cost time; below,
 * the fit's own bound, as before.  A function of the rows asked for and public sizes only.
 */
static inline uint32_t
dp_adaptive_submodel_sweeps(uint32_t sweeps, uint64_t nrows)
{
	return (double) nrows >= DP_ADAPTIVE_HUGE_ROWS && sweeps > DP_ADAPTIVE_SUBMODEL_SWEEPS_HUGE ?
		DP_ADAPTIVE_SUBMODEL_SWEEPS_HUGE : sweeps;
}

/*
 * GUM's counting mode (dp_gum_params.counting) on a table of `rows` rows (the rows asked for, for
 * the final rows after a sub-model, step 5; the released total, for the rounds' estimates, step
 * 3a) given the caller's mode: from DP_ADAPTIVE_HUGE_ROWS rows, LAZY in place of AUTO; otherwise
 * the caller's.  The rows do not depend on the mode (both keep exact counts).  Why: there the
 * model's marginals (60 or so k-way ones) sit in one wide component and a duplicate's move
 * touches every one's counts; AUTO's estimate of lazy counting (two recounts of every marginal an
 * iteration, taken only past 1.5 times that) keeps it incremental, while lazy counting measured
 * cheaper there, on the call's own thread and in all (bench/RESULTS.md).  Smaller tables keep the
 * caller's mode.  A function of the rows (public, or released) only.
 */
static inline int
dp_adaptive_huge_counting(int counting, double rows)
{
	return rows >= DP_ADAPTIVE_HUGE_ROWS && counting == DP_GUM_COUNT_AUTO ? DP_GUM_COUNT_LAZY : counting;
}

/* The exponential mechanism (dp_exp_mech, dp_exp_mech_fitting): dp_sampler.h. */

/*
 * The rounds' number of selections T (step 3) for R, d columns, a total of 'total' rows (the
 * released one-way marginals') and a median candidate pair of 'cells' cells: the T whose starting
 * rho_t = 0.9 R / T gives that pair a measurement whose expected noise, as a TVD (sqrt(2/pi) sigma
 * cells / (2 total)), is DP_ADAPTIVE_NOISE_TVD, within [DP_ADAPTIVE_SELECTIONS_MIN d,
 * DP_ADAPTIVE_SELECTIONS_MAX d]; the least of them when total, cells or R is not positive or
 * not finite.
 */
double		dp_adaptive_selections(double R, uint32_t d, double total, uint64_t cells);

/* The rare-value threshold of an adaptive run with budget rho over d columns (see
 * dp_privsyn_rare_threshold; the glue sizes 'auto' bins with it). */
double		dp_adaptive_rare_threshold(double rho, uint32_t d);

/*
 * The estimate's resolution in the rounds (steps b and d), over a marginal of 'cells' cells with
 * scaled estimated counts y (summing to total, from an estimate of m rows; m == 0: exact) and
 * measurement noise sigma: sum over cells of sqrt(2/pi) * sqrt(sigma^2 + draws * v), v = (s - 1)
 * y (1 - y / total) with s = total / m (v = 0 when s <= 1), one draw for the score's floor and two
 * for the anneal bar.  Both equal sqrt(2/pi) * sigma * cells when m == 0 or s <= 1.
 */
double		dp_adaptive_score_floor(const double *y, uint64_t cells, double sigma, double total, uint64_t m);
double		dp_adaptive_anneal_bar(const double *z, uint64_t cells, double sigma, double total, uint64_t m);

/*
 * What the score of a candidate measured before subtracts (step b): sum over its cells of |z - y|,
 * the estimate y's misfit to its measurement so far z (rho_z), plus sqrt(2/pi) sigma' cells, with
 * 1 / sigma'^2 = 1 / sigma^2 + 2 rho_z, the noise of that measurement once one of noise sigma is
 * averaged in.  rho_z <= 0: sigma' = sigma.
 */
double		dp_adaptive_remeasure_floor(const double *z, double rho_z, const double *y, uint64_t cells,
										double sigma);

/*
 * How many distinct k-way marginals the rounds may measure (step 3b) for d columns and a released
 * total of 'total' rows: DP_ADAPTIVE_GUM_WORK / total, at least min(DP_ADAPTIVE_MIN_KWAY_PER_COL d,
 * DP_ADAPTIVE_MIN_KWAY_MAX).  p->max_kway > 0 replaces it.
 */
uint64_t	dp_adaptive_max_kway(uint32_t d, double total);

/*
 * The rounds' batch (step 3): ceil(d / DP_ADAPTIVE_BATCH_COLS) selections per round, or
 * ceil(d / DP_ADAPTIVE_BATCH_COLS_HUGE) when the released total is at least
 * DP_ADAPTIVE_HUGE_ROWS.
 */
uint32_t	dp_adaptive_batch(uint32_t d, double total);

/* Counters a run leaves for reports and tests. */
typedef struct dp_adaptive_stats
{
	uint32_t	rounds;
	uint32_t	estimates;		/* the rounds' estimates made (step 3a; the first included) */
	double		selections;		/* T, the schedule's number of selections (step 3) */
	uint32_t	candidates;
	uint32_t	anneals;
	double		rho_oneway;		/* spent on step 1 (the top-up included) */
	double		rho_topup;		/* ... of which the one-way top-up drawn from R (dp_oneway_topup) */
	double		rho_select;		/* on the exponential mechanisms */
	double		rho_measure;	/* on the rounds' measurements (the focus pairs' included) */
	uint32_t	focus_pairs;	/* pairs measured for p->focus before the rounds */
	uint32_t	triples;		/* triples that became candidates in the rounds */
	uint32_t	triples_measured;	/* ... and were measured */
	uint32_t	remeasured;		/* selections of a candidate measured before (one-way included) */
	uint32_t	coarse_cols;	/* ordered columns offered in pairs at their runs too (step 2) */
	uint32_t	coarse_cands;	/* ... the coarse pairs among the candidates */
	uint32_t	coarse_measured;	/* selections of a coarse pair */
	uint32_t	max_kway;		/* distinct k-way marginals allowed (dp_adaptive_max_kway) */
	uint64_t	est_rows;		/* rows of the rounds' estimates (dp_adaptive_est_rows) */
	bool		final_warm;		/* the synthetic rows started from the last estimate (step 5) */
	bool		final_maxent;	/* ... from the maximum-entropy distribution (step 5; GUM instead
								 * in the rare case that the marginals' supports leave none) */
	uint64_t	final_tree_cells;	/* ... held on a junction tree of this many cells (0: over
									 * the whole joint table, or not maximum entropy) */
	uint32_t	final_sub_margs;	/* ... or by GUM from rows of a sub-model of this many
									 * marginals (dp_adaptive_sample; 0: none) */
	uint64_t	final_sub_cells;	/* ... on a junction tree of this many cells */
	uint32_t	tree_builds;	/* junction trees built to check a drawn candidate (step 3b);
								 * depends on the scores: for tests only, never reported
								 * (docs/PRIVACY.md, "Side channels") */
	uint32_t	tree_unbounded;	/* selections where no candidate kept the tree within bound
								 * (0 on tables with no bound: dp_adaptive_tree_bound 0) */
} dp_adaptive_stats;

/*
 * Runs the method (same contract as dp_privsyn_run; p->gamma is not used).  stats may be NULL.
 */
int			dp_adaptive_run(const dp_codes *data, const uint32_t *sizes, const dp_privsyn_params *p,
							dp_prng *rng, dp_privsyn_result *out, dp_adaptive_stats *stats);

/* How dp_adaptive_sample drew (0 and 0: as dp_privsyn_sample alone). */
typedef struct dp_adaptive_draw
{
	uint32_t	sub_margs;		/* marginals of the sub-model whose rows GUM started from */
	uint64_t	sub_cells;		/* ... and the cells of its junction tree */
} dp_adaptive_draw;

/*
 * The synthetic rows of an adaptive model (step 5): dp_privsyn_sample with gum (the caller's
 * maxent_cells, jtree_cells, iterations and start), except on a model that
 * dp_adaptive_draws_submodel picks, whose GUM starts from the rows of the maximum-entropy
 * distribution of a sub-model (step 5) and runs at most dp_adaptive_submodel_iters iterations.
 * Same returns as dp_privsyn_sample; how (never NULL) says which.  A function of the model,
 * nrows, gum and rng only (post-processing), used by dp_adaptive_run and by dp_sample.
 */
int			dp_adaptive_sample(const dp_privsyn_result *model, uint32_t d, const uint32_t *sizes,
							   uint64_t nrows, const dp_gum_params *gum, dp_prng *rng, dp_codes *synth,
							   dp_adaptive_draw *how);

/*
 * Whether dp_adaptive_sample starts GUM from a sub-model: no caller's start, a released total
 * over which the rounds bound no tree (dp_adaptive_tree_bound 0: over 131,072 rows), k-way
 * marginals, at most DP_ADAPTIVE_TREE_COLS columns, fewer than DP_SAMPLE_LEVEL_FACTOR *
 * DP_SAMPLE_MIN_COARSE rows (above, GUM's coarse levels draw) and a model that the
 * maximum-entropy distribution cannot draw whole (dp_privsyn_draws_maxent).  Released values
 * and public facts only.
 */
bool		dp_adaptive_draws_submodel(const dp_privsyn_result *model, uint32_t d, uint64_t nrows,
									   const dp_gum_params *gum);

/*
 * For tests: counts every column and pair of table t that the rounds' scoring would count from
 * bit sets (dp_adaptive.c, "bit sets") both ways, from the bit sets and by the histogram, and
 * returns the number of cells that differ; when none differs, -2 - the number of marginals
 * compared (so -2: none qualified, or the CPU has no popcount instruction).  -1: out of memory.
 */
int64_t		dp_adaptive_bits_check(const dp_codes *t, const uint32_t *sizes);

#ifdef DPSYNTH_TEST_RNG
/* The unit tests' seam (dp_random.h's): true makes the bit sets' counts take the path of a processor
 * without VPOPCNTQ (64-bit popcounts, the 128-cell limit), so that both paths are tested on one. */
extern void dp_adaptive_test_no_vpopcnt(bool on);
#endif

#endif
