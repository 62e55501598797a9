/*
 * dp_adaptive.h - adaptive measurement in rounds: AIM's selection (McKenna, Mullins, Sheldon,
 * Miklau, "AIM: An Adaptive and Iterative Mechanism for Differentially Private Synthetic Data",
 * VLDB 2022) with GUM as the estimator in place of a graphical model.
 *
 * Same input and output as dp_privsyn_run (dp_privsyn.h): the released model is the one-way
 * marginals plus the measured ones, consistent and non-negative, over merged codes, and the
 * synthetic rows are drawn from it by dp_privsyn_sample.  A stored model is sampled again exactly
 * as a PrivSyn model is.
 *
 * What it does, with rho the budget given here:
 *   1. One-way marginals and the rare-value merge, as PrivSyn (dp_privsyn_oneway_stage), with
 *      DP_ADAPTIVE_ONEWAY_SHARE = 0.25 of rho instead of PrivSyn's 0.1: every estimate and the
 *      rare-value merge stand on them (MST spends a third there; AIM about 0.06 and measures them
 *      again in its rounds).  Measured against 0.1 at epsilon 1 (bench/RESULTS.md, 5 runs with
 *      domain.json): star .039 / .131 / .265 / .0040 / AUC .947 against .050 / .144 / .280 /
 *      .0044 / .941, arrests' range .0023 against .0025, Adult, diamonds and smokeban within a
 *      run's spread; 0.4 was no better than 0.25 in 2-run trials.
 *   2. Candidates: every column (weight 1/2) and every pair of columns (weight 1) whose marginal
 *      over merged codes has at most DP_ADAPTIVE_MAX_CELLS cells, the largest dropped first until
 *      all of them hold at most DP_ADAPTIVE_MAX_TOTAL cells together (public: the sizes).  Their
 *      exact counts are taken in one pass per candidate over the encoded table, plus, when the
 *      caller gives them (p->extra: the rows of partitions on other servers, counted there), the
 *      counts of rows the table does not hold, each original cell added to the merged cell its
 *      codes map to (clamped at DP_ADAPTIVE_COUNT_CAP, a public cap: with them the rows are not
 *      bounded by the table, and a refusal after the charge would depend on their number); the
 *      one-way marginals of step 1 add them too.  So every exact count the mechanisms see is
 *      that of all the rows (test_adaptive.c, test_extra: at a rho where the noise draws 0, the
 *      released marginals are the counts of all the rows); the random draws differ, and with
 *      counts from elsewhere no triples are taken (2c).  Counts that do not add up to one set
 *      of rows (every column's and pair's summing to extra->nrows) fail the run.
 *   2b. Focus (only when p->focus flags columns): every candidate pair with a flagged column is
 *      measured once, in candidate order, without selection (which pairs is public: the flags
 *      and the sizes), each with the rounds' starting rho_t = 0.9 R / T, or with R / (2 F) each
 *      if the F pairs would cost more than R / 2 that way.  Their cost comes out of R; the rounds
 *      then spend what is left, and may select these pairs again.
 *   2c. Triples, added in the rounds, only when the rounds' estimates hold every row (the first
 *      estimate has fewer than DP_ADAPTIVE_SYNTH_ROWS rows: a function of the released total)
 *      and the table holds every row (no p->extra: a triple's counts are taken then, from the
 *      table):
 *      when a pair {a, b} is measured for the first time, every triple {a, b, c} with {a, c} or
 *      {b, c} measured before becomes a candidate (weight 1, like a pair), its exact counts taken
 *      then, one pass over the merged table per triple, while there are fewer than
 *      DP_ADAPTIVE_TRIPLES_PER_COL * d triples and the triple has at most DP_ADAPTIVE_TRIPLE_CELLS
 *      cells (the focus pairs count as measured).  Which triples: a function of the released
 *      selections and the public sizes.  Pairs miss what only a third column shows: a target
 *      that depends on two columns jointly, or c = a XOR b, where every pair is independent
 *      (test_adaptive.c).  Measured at epsilon 1 against the same code without triples
 *      (bench/RESULTS.md, "Triple candidates", 6 runs against 3), tvd2 / tvd3 / range / AUC:
 *      star .126 / .248 / .0037 / .947 against .126 / .253 / .0039 / .949, arrests .033 / .069
 *      / .0022 / .664 against .035 / .071 / .0024 / .640, smokeban .019 / .041 / .0011 / .623
 *      against .020 / .042 / .0013 / .631.  With capped estimates the scores mislead: a triple
 *      of up to 4,096 cells over 8,192 estimate rows has many cells the estimate leaves empty,
 *      whose sampling error the floor (step b, v = 0 at y = 0) does not discount, so triples
 *      were selected for that error.  Adult repeated 31 times (1M rows) measured 10-13 triples
 *      of 30 marginals and lost (dp_evaluate, 3 runs: tvd2 .029-.031 against .021-.022, tvd3
 *      .061-.064 against .048-.050); Adult itself (s = 4) lost a little (tvd2 .037 against
 *      .035); diamonds (s = 4.4) gained AUC (.863 against .854) at the same distances.  Requiring
 *      all three pairs measured was no better on any table; 32 d triples no better than 8 d.
 *   3. Rounds, AIM's schedule over the remaining 0.75 rho = R, with T selections chosen from
 *      public facts (dp_adaptive_selections; AIM: 16 d always): every selection spends eps_t^2 / 8
 *      and its measurement rho_t, starting from rho_t = 0.9 R / T and eps_t = sqrt(8 * 0.1 R / T)
 *      (so one costs R / T).  T is the one at which a median candidate pair (its cells: public)
 *      measured at rho_t has an expected noise of DP_ADAPTIVE_NOISE_TVD = 0.05 as a TVD
 *      (sqrt(2/pi) sigma cells / (2 n), n the released one-way marginals' mean total), within
 *      [2 d, 16 d].  It is a function of released values and public sizes, so it costs nothing,
 *      and the schedule still adds up to exactly R.  Why: AIM's estimator (a graphical model
 *      fitted to every measurement, weighted by its noise) draws on many small measurements
 *      together; GUM fits each marginal in turn and a noisy one pulls as hard as a precise one,
 *      so each measurement must carry signal: few precise ones when the signal is weak, AIM's
 *      many when it is strong.  Measured with fixed T (bench/RESULTS.md, 2026-11-27; the noise
 *      TVD of a median pair at 4 d in brackets): 2 d was as good or better than 4 d on all five
 *      tables at epsilon 0.3 (.056-.16; Adult's AUC .884 against .873-.877); at epsilon 1, 4 d
 *      beat 2 d on diamonds (.052; tvd2 / tvd3 .156 / .293 against .164 / .310) and arrests
 *      (.037; .031 / .066 against .035 / .071) and beat 16 d on Adult (.044), diamonds and star;
 *      4 d and 16 d were within a run's spread on smokeban at 1 and Adult at 3 (.018-.019; Adult
 *      .030 / .070 / .900 against .031 / .072 / .899), and 16 d was better
 *      on the wide table of bench/wide.sh (600,000 x 100, .006: tvd2 .050-.055 against .056-.058).
 *      The rule picks 2 d, 2 d, 2 d, 3 d and 2 d on Adult, diamonds, arrests, smokeban and star at
 *      epsilon 0.3; about 5 d, 3.7 d, about 5 d, 16 d and 2 d at epsilon 1 (the median pair moves with
 *      the rare-value merge from call to call); 16 d on the wide table and on
 *      Adult at 3.  The floor: T = d lost on star (47 columns, 1,081 pairs: tvd2 .189 against
 *      .117 and AUC .816 against .956 at epsilon 1, 2 runs), whose 2 d was equal to 4 d (.118 /
 *      .237 / .954, 5 runs).  With the rule (5 runs, tvd2 / tvd3 / range / AUC), at epsilon 1
 *      every table equals 4 d's figures; at epsilon 0.3, against 4 d's 10 runs: Adult (10 runs)
 *      .058 / .116 / .0023 / .880 against .054 / .108 / .0021 / .873-.877, diamonds .174 / .319 / .851 against
 *      .181 / .324 / .843, smokeban .037 / .066 / .619 against .040 / .070 / .590, star .174 /
 *      .299 / .940 against .175 / .308 / .925, arrests .074 / .120 against .075 / .123.
 *      A round selects and measures a batch of B = ceil(d / DP_ADAPTIVE_BATCH_COLS) candidates
 *      against one estimate (AIM: B = 1; on star,
 *      47 columns, B = 6 took the rounds from 23 s to 2 s at the same fidelity.  ceil(d / 4)
 *      was tried too: star's rounds took 1.0-1.1 s and Adult's 0.4-0.5 s, but arrests, with 8
 *      columns, got a batch of 2 and its AUC fell from .649 to .623 over 5 runs; bench/RESULTS.md):
 *        a. estimate: the measured marginals made consistent (dp_consist, at most
 *           DP_ADAPTIVE_EST_CONSIST_ITERS passes) and GUM draws
 *           min(DP_ADAPTIVE_SYNTH_ROWS, first consistent total) rows from them (post-processing):
 *           the first estimate with GUM's full iterations, every later one warm, from the
 *           previous estimate's rows (dp_gum_params.start), with DP_ADAPTIVE_WARM_ITERS
 *           iterations.  Measured on Adult at epsilon 1 (test_adaptive.c): 5 warm iterations
 *           over 8,192 rows give the same mean 2-way TVD (.033-.035) as 20 over 16,384 in a sixth
 *           of the time.  When the estimates hold every row (fewer than DP_ADAPTIVE_SYNTH_ROWS),
 *           DP_ADAPTIVE_WARM_ITERS_FULL: the table is small, so the noise of a measurement is
 *           large against its counts, and a closer fit buys nothing.  Measured at 3 against 5
 *           (epsilon 1, 10 runs each, bench/RESULTS.md 2026-11-26): star, smokeban and arrests
 *           equal or better on every metric (star tvd2 / tvd3 .126 / .252 against .127 / .255,
 *           smokeban AUC .628 against .620), and star's rounds take 0.48-0.60 s instead of
 *           0.59-0.88 s; on Adult and diamonds, whose estimates are capped, 3 lost over 5 runs
 *           (diamonds AUC .854 against .861, Adult .886 against .889), so they keep 5;
 *        b. select: every candidate r is scored
 *             q_r = w_r * ( || x_r - y_r ||_1 - sum over its cells of sqrt(2/pi) * sqrt(sigma_t^2 + v) )
 *           with x_r its exact counts, y_r the estimate's counts scaled to the consistent
 *           total, and v = (s - 1) y (1 - y / total) (0 when s <= 1) the sampling variance of a
 *           cell's scaled count y in an estimate of m rows standing for s = total / m rows each:
 *           m rows drawn without replacement from an ideal table of total rows (dp_adaptive.c,
 *           resolution_l1).  AIM's floor is sqrt(2/pi) sigma_t per cell, the L1 error a
 *           measurement leaves; its estimate is exact, ours is a draw, and after the measurement
 *           the estimate still errs by its own sampling too.  Without v, at n >> m that
 *           sampling error (linear in s, and largest for the marginals with the most cells)
 *           swamped the real errors in the scores and the same big marginals were selected again
 *           and again: on Adult repeated 30 times (1M rows), 120 rounds measured 31-32 distinct
 *           pairs, mean 2-way TVD .0154-.0161 (2 runs) against .0098-.0116 and 41-50 pairs with
 *           v (4 runs, before the finite-population correction, which changes v by 1% there;
 *           bench/RESULTS.md, 2026-11-26).
 *           A candidate measured before (a one-way marginal, a focus pair, or a k-way one
 *           selected in an earlier round) has a measurement z_r already, with rho_r; a new one is averaged in
 *           (step c), so what it can gain is the fall in that measurement's noise, to sigma' with
 *           1 / sigma'^2 = 1 / sigma_t^2 + 2 rho_r.  Its score is
 *             q_r = w_r * ( || x_r - y_r ||_1 - || z_r - y_r ||_1 - sqrt(2/pi) * sigma' * cells_r )
 *           (dp_adaptive_remeasure_floor): where the estimate follows z_r, || x_r - y_r || is
 *           about z_r's noise and q_r about sqrt(2/pi) (sigma_r - sigma') cells_r, the gain in
 *           AIM's terms; where it does not (the misfit || z_r - y_r ||: other measurements that
 *           disagree with it, through their noise, beyond what GUM can reconcile), another
 *           measurement of r will not make the estimate follow it either, and that misfit is
 *           not counted as a gain (by the triangle inequality, q_r <= w_r ( || x_r - z_r || -
 *           sqrt(2/pi) sigma' cells_r )).  The subtracted terms are released values (z_r, y_r)
 *           and public facts, so the sensitivity is unchanged.  With AIM's score alone (the
 *           floor above), a pair that is a function of itself, Adult's education and
 *           education_num (256 cells, 16 of them non-zero), whose measured neighbours pull the
 *           estimate off its diagonal by their noise, was selected again and again: a third of
 *           the rounds' rho in one run at epsilon 3, and 40% at 1M rows (bench/RESULTS.md,
 *           "Scores of marginals measured before").
 *           With that waste gone, every selection can measure a new marginal, and the final GUM
 *           fits them all: on the wide table (600,000 rows, 100 columns, T = 1,600) the rounds
 *           measured 1,599 distinct marginals instead of 242-253, and the call took 247 s.  So
 *           once dp_adaptive_max_kway(d, total) distinct k-way marginals are measured (the
 *           final GUM's work, rows x marginals, at most DP_ADAPTIVE_GUM_WORK, but at least
 *           min(4 d, 128) of them; total is the first estimate's released
 *           total, so which candidates are offered is public), only candidates measured before
 *           are offered (focus pairs count, and can fill it before the first round).  AIM bounds
 *           its model's size the same way.  The wide table (2^27 / rows = 223): with 223, 20-30
 *           s, tvd2 .051-.054 (before: .050-.055 in 39-48 s); with 4 d = 400 it took 44 s at
 *           tvd2 .062, GUM fitting 500 marginals less well, and with 256 26 s at tvd2 .056,
 *           hence at most 128 from the floor (the size above which the final GUM runs on a
 *           coarse level, DP_SAMPLE_WIDE_MARGS).  Adult at 10M rows (2^27 / rows = 13): with
 *           2 d = 30, tvd2 / tvd3 .0255 / .0556 against .0201 / .0470 before (53 marginals);
 *           with 4 d = 60, .0192 / .0455 in 22-23 s, hence 4 d.  Then B candidates are drawn one after the other,
 *           each by the exponential mechanism with eps_t over the candidates not yet drawn in
 *           this round (dp_exp_mech:
 *           sensitivity 1 with the rounding accounted, eps_t^2 / 8-zCDP, Cesar & Rogers 2021),
 *           among those that keep the junction tree of the model's marginals (dp_jtree.h) within
 *           dp_adaptive_tree_bound(released total) cells: max(2^20, 32 per row), and no bound when
 *           that exceeds DP_ADAPTIVE_JTREE_CELLS (over 131,072 rows).  On tables of
 *           at most DP_ADAPTIVE_TREE_COLS columns; when no candidate fits, over all of them
 *           (stats.tree_unbounded).  The set that fits is a function of the released
 *           selections and public sizes; dp_exp_mech_fitting draws exactly the exponential
 *           mechanism over it, with the same eps (draws without replacement until one fits),
 *           checking a drawn candidate by building the tree with it unless it is measured
 *           already or lies inside a clique of the current tree.  AIM bounds its model's
 *           junction tree the same way (by size in MB, growing with the budget spent).  Why: the
 *           final rows are then drawn from the maximum-entropy distribution on that tree (step
 *           5) rather than by GUM, which pays most where the noise is large against the counts
 *           (bench/RESULTS.md, "The rounds keep the junction tree small": Adult at epsilon 1,
 *           .037 / .076 / .0014 / .904 against .037 / .081 / .0014 / .895 unbounded with GUM;
 *           diamonds' AUC .887 against .866; Adult at epsilon 0.3 and 3: AUC .888 and .908
 *           against .882 and .901 before).  Per row, not a constant alone: with 2^20 at Adult x8
 *           (260,000 rows) the model held 33 pairs and its mean 2-way TVD was .0195 against
 *           .0126-.0165 unbounded; with 32 cells a row (8.3M), 48 pairs and .0156, and
 *           .0150-.0190 over 19 runs of test_adaptive, its rows always drawn by GUM (the tree
 *           beyond 2^22).  With no bound there (since 2026-11-28), .0112-.0157 over 10 runs:
 *           where the final tree could not be drawn from anyway, the bound only cost pairs;
 *        c. measure: each one's exact counts plus discrete Gaussian noise on every cell with rho_t
 *           (sensitivity 1); a candidate measured before is averaged with its earlier
 *           measurement, weights in proportion to their rho (the average of two Gaussian
 *           measurements with rho a and rho b is one with rho a + b);
 *        d. anneal: if the new estimate moved the batch's marginals by no more than
 *           sum over their cells of sqrt(2/pi) * sqrt(sigma_t^2 + 2 v) in all (L1), v as in b.
 *           from the counts before the round, the next rounds use 4 rho_t and 2 eps_t.  AIM's
 *           bar is sqrt(2/pi) sigma_t per cell: the model moved no more than the noise would move
 *           it on average.  Two consecutive estimates here also differ by their sampling alone,
 *           with no new information (variance 2 v: two draws); that churn is independent of the
 *           noise, so the expected movement at AIM's bar is the quadrature sum.  Without it the
 *           churn, linear in n / m, exceeded sigma_t's bar at every round beyond a few times m
 *           rows: 0 anneals and 119 rounds at 200,000 rows, against 2 anneals and 28-34 rounds
 *           on Adult (32,561).  With an exact estimate, or one that holds every row (tables of
 *           at most DP_ADAPTIVE_SYNTH_ROWS rows), v = 0 and both are AIM's rules;
 *        e. when what is left of R is below twice a round's cost, the last round spends exactly
 *           what is left (0.9 of it measuring, 0.1 selecting, split over its B selections).
 *   4. The final model: the measured marginals made consistent (dp_consist, 100 iterations).
 *   5. The synthetic rows (dp_privsyn_sample, post-processing of the model).  When the joint
 *      domain over merged codes has at most DP_ADAPTIVE_MAXENT_CELLS cells (the product of the
 *      merged sizes: public), they are drawn from the maximum-entropy distribution of the final
 *      model's marginals (dp_maxent.h: iterative proportional fitting over the whole joint
 *      table, then floor or ceil of n P rows per cell; dp_gum_params.maxent_cells), the
 *      distribution AIM's and MST's estimator fits, and GUM does not run.  GUM leaves in the
 *      combinations no marginal measures whatever its row moves made; the maximum-entropy
 *      distribution holds nothing beyond the measurements.  Measured at epsilon 1 against GUM
 *      on the two development tables with such domains (bench/RESULTS.md, "Maximum entropy on
 *      small domains", tvd2 / tvd3 / range / AUC, 10 runs each, same hour): arrests
 *      .031 / .063 / .0021 / .661 against .036 / .072 / .0023 / .649, smokeban .018 / .038 /
 *      .0011 / .637 against .018 / .039 / .0011 / .629.  A fit costs two passes over
 *      the joint table per marginal and sweep (2^20 cells and 10 pairs: about 0.05 s a sweep),
 *      hence the bound on cells and dp_maxent_sweeps' bound on the work.  When the joint domain
 *      is larger but the junction tree of the marginals (their graph triangulated, dp_jtree.h)
 *      holds at most DP_ADAPTIVE_JTREE_CELLS cells (a function of the selections and the
 *      public sizes), the same distribution is fitted and drawn on the tree instead
 *      (dp_gum_params.jtree_cells): star's 47 columns, trees of 50,000 to 1.1M cells, took it;
 *      Adult's trees (5.8M to 21M cells at epsilon 1) and diamonds' (90M to 570M) did not
 *      until the rounds kept them within dp_adaptive_tree_bound (step 3b), since when they do.
 *      Over 131,072 released rows the rounds bound no tree (step 3b) and the model's tree is far
 *      beyond DP_ADAPTIVE_JTREE_CELLS (Adult x6 at epsilon 1 and 3: 3 x 10^8 to 10^13 cells), so
 *      GUM draws; there, on tables of at most DP_ADAPTIVE_TREE_COLS columns and below GUM's
 *      coarse levels (fewer than DP_SAMPLE_LEVEL_FACTOR * DP_SAMPLE_MIN_COARSE rows),
 *      dp_adaptive_sample first fits the maximum-entropy distribution of a sub-model, the
 *      one-way marginals and then the k-way ones in the order they were measured while its
 *      junction tree stays within DP_ADAPTIVE_JTREE_CELLS (dp_jtree_build_greedy), draws the n
 *      rows from it (exact, O(n d)) and runs GUM on all the marginals from those rows, at most
 *      DP_ADAPTIVE_FINAL_WARM_ITERS iterations, instead of 30 from the independent fill: the rows
 *      start with the sub-model's structure, including the combinations no marginal measures,
 *      and GUM only moves them to the marginals the sub-model left out.  Post-processing of the
 *      released marginals, the same budget.  A cold GUM of 30 iterations was 2 to 3 times the
 *      CPU time, and its 3-way distances higher on the same models (bench/RESULTS.md, "The
 *      final rows on big tables").
 *      Measured on star at epsilon 1 (bench/RESULTS.md, "Maximum entropy on a junction tree",
 *      5 runs): .106 / .215 / .0032 / .964 against GUM's .115 / .231 / .0034 / .959 (5 runs,
 *      2026-11-27), 0.7 s a call.  Otherwise: when the last
 *      round's estimate holds every row (m < DP_ADAPTIVE_SYNTH_ROWS, not capped) and has about
 *      the rows asked for (0.95 n <= m <= 1.25 n; at the default row count, tables of fewer
 *      than about DP_ADAPTIVE_SYNTH_ROWS rows), GUM starts from its rows
 *      (dp_gum_params.start: n of them drawn uniformly, or n - m copied twice) and runs
 *      DP_ADAPTIVE_FINAL_WARM_ITERS iterations; otherwise it starts cold, from the independent
 *      fill, with at most DP_ADAPTIVE_FINAL_ITERS.  Both caps were halved or more on 2026-11-26
 *      (final 60 -> 30, an estimate's consistency 100 -> 10 passes; most estimates used all 100
 *      without reaching dp_consist's tolerance): 4 runs each at epsilon 1, every metric of the 5
 *      tables within a run's spread (bench/RESULTS.md), Adult x31 at 1M rows the same to the
 *      third digit, and the wide table's final GUM and rounds the faster for it.
 *      The last estimate was grown round by round,
 *      every measured marginal fitted as it came.  Measured against the cold start at epsilon 1
 *      (10 runs against 5, bench/RESULTS.md 2026-11-26): star tvd2 / tvd3 .127 / .255 against
 *      .129 / .262, smokeban .019 / .040 against .020 / .043, arrests .034 / .069 against .034 /
 *      .072; AUC within a run's spread; the final GUM in a quarter of its time or less.  Each
 *      difference is inside a run's spread, but 5, 10 and 20 warm iterations all moved the
 *      distances the same way.  On Adult and diamonds (estimate 8,192 rows, final 32-36k) a
 *      start from copies was no better (30 iterations) or worse (10), so bigger tables keep the
 *      cold start.
 *
 * Privacy: 0.25 rho (step 1) + the rounds' costs, which add up to exactly R = 0.75 rho by the
 * schedule (the last round takes the remainder; every cost is rounded down, never up, where it is
 * computed from the remainder).  Selection, measurement and the rounds' estimates read the private
 * table (and p->extra, counts of more of its rows) only through the exact counts x_r (a triple's taken when it becomes a candidate; which
 * triples is post-processing of the selections), each time through a mechanism: the exponential
 * mechanism (scores) and the Gaussian (measurements); everything else is a function of released
 * values and public facts.  Adaptive composition of zCDP mechanisms adds their rho.
 */
#ifndef DP_ADAPTIVE_H
#define DP_ADAPTIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "dp_privsyn.h"

#define DP_ADAPTIVE_ONEWAY_SHARE 0.25		/* of rho, for the one-way marginals (step 1) */
#define DP_ADAPTIVE_NOISE_TVD	0.05		/* a median pair's measurement noise, as a TVD (step 3) */
#define DP_ADAPTIVE_SELECTIONS_MIN 2		/* T, at least 2 d selections (step 3) */
#define DP_ADAPTIVE_SELECTIONS_MAX 16		/* ... and at most 16 d, AIM's */
#define DP_ADAPTIVE_MAX_CELLS	(1u << 20)	/* largest candidate marginal */
#define DP_ADAPTIVE_MAX_TOTAL	(1u << 24)	/* cells of all candidates together (4 bytes each) */
#define DP_ADAPTIVE_COUNT_CAP	((uint32_t) INT32_MAX)	/* an exact count with p->extra, at most */
#define DP_ADAPTIVE_SYNTH_ROWS	8192		/* rows of the rounds' estimates */
#define DP_ADAPTIVE_TRIPLES_PER_COL 8		/* triple candidates (step 2c): at most 8 d */
#define DP_ADAPTIVE_TRIPLE_CELLS 4096		/* ... of at most this many cells each */
#define DP_ADAPTIVE_BATCH_COLS	8			/* a round selects ceil(d / 8) marginals */
#define DP_ADAPTIVE_WARM_ITERS	5			/* GUM iterations of an estimate from the last one */
#define DP_ADAPTIVE_WARM_ITERS_FULL 3		/* ... when the estimates hold every row (step 3a) */
#define DP_ADAPTIVE_FINAL_ITERS	30			/* at most, for the synthetic table (step 5), cold */
#define DP_ADAPTIVE_EST_CONSIST_ITERS 10	/* dp_consist passes of a round's estimate (step 3a) */
#define DP_ADAPTIVE_FINAL_WARM_ITERS 10		/* ... from the last estimate (step 5) */
#define DP_ADAPTIVE_GUM_WORK	((double) (1u << 27))	/* rows x distinct k-way marginals (step 3b) */
#define DP_ADAPTIVE_MIN_KWAY_PER_COL 4		/* ... but at least 4 d of them */
#define DP_ADAPTIVE_MIN_KWAY_MAX 128		/* ... or 128 if fewer (DP_SAMPLE_WIDE_MARGS) */
#define DP_ADAPTIVE_MAXENT_CELLS ((uint64_t) 1 << 20)	/* joint domains drawn by maximum entropy (step 5) */
#define DP_ADAPTIVE_JTREE_CELLS ((uint64_t) 1 << 22)	/* ... and junction trees (step 5) */
#define DP_ADAPTIVE_TREE_CELLS	((uint64_t) 1 << 20)	/* the rounds keep the model's tree within this (step 3b) */
#define DP_ADAPTIVE_TREE_COLS	64		/* ... on tables of at most this many columns (a check is O(d^3)) */
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

/* The GUM iterations of a synthetic table drawn from an adaptive model by a cold start (by the
 * run, step 5, or by dp_sample): the caller's, at most DP_ADAPTIVE_FINAL_ITERS. */
static inline uint32_t
dp_adaptive_final_iters(uint32_t iterations)
{
	return iterations > DP_ADAPTIVE_FINAL_ITERS ? DP_ADAPTIVE_FINAL_ITERS : iterations;
}

/*
 * The exponential mechanism, exact: returns r in [0, k) with probability proportional to
 * exp(eps * (score[r] - max score) / (2 * sens)), scores on an integer grid (units), sens the
 * scores' sensitivity in the same units (>= 1).  eps is rounded down to a multiple of 2^-40 *
 * 2 * sens, so the mechanism is eps-DP (and eps^2/8-zCDP) with the eps given.  Randomness:
 * libsodium (dp_bernoulli_exp, dp_random_uniform), rejection from the uniform proposal.
 * Returns k on invalid input (k == 0, eps not positive and finite, sens == 0).
 */
uint32_t	dp_exp_mech(const int64_t *score, uint32_t k, double eps, uint64_t sens);

/*
 * The exponential mechanism over the candidates that fit: r in [0, k) with fits(arg, idx[r]),
 * with probability proportional to exp(eps * score[r] / (2 sens)) among those, or k when none
 * fits.  It draws by dp_exp_mech, and while the drawn one does not fit, sets it aside (score
 * and idx are reordered) and draws again from the rest: successive draws without replacement
 * order the candidates as a Plackett-Luce ranking, in which the first of any subset is
 * distributed as the exponential mechanism over that subset.  So the release is exactly the
 * exponential mechanism over the fitting set, with the same eps, provided fits is a function of
 * public facts and earlier releases only (what it is asked, and how often, depends on the
 * scores, but no answer does).
 */
uint32_t	dp_exp_mech_fitting(int64_t *score, uint32_t *idx, uint32_t k, double eps, uint64_t sens,
								bool (*fits) (void *arg, uint32_t idx), void *arg);

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

/* Counters a run leaves for reports and tests. */
typedef struct dp_adaptive_stats
{
	uint32_t	rounds;
	double		selections;		/* T, the schedule's number of selections (step 3) */
	uint32_t	candidates;
	uint32_t	anneals;
	double		rho_oneway;		/* spent on step 1 */
	double		rho_select;		/* on the exponential mechanisms */
	double		rho_measure;	/* on the rounds' measurements (the focus pairs' included) */
	uint32_t	focus_pairs;	/* pairs measured for p->focus before the rounds */
	uint32_t	triples;		/* triples that became candidates in the rounds */
	uint32_t	triples_measured;	/* ... and were measured */
	uint32_t	remeasured;		/* selections of a candidate measured before (one-way included) */
	uint32_t	max_kway;		/* distinct k-way marginals allowed (dp_adaptive_max_kway) */
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
 * distribution of a sub-model (step 5) and runs at most DP_ADAPTIVE_FINAL_WARM_ITERS iterations.
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

#endif
