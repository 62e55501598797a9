/*
 * dp_consist.h - consistency and non-negativity of published noisy marginals (PRIVSYN.md step 8).
 *
 * Pure post-processing of marginals that were already released: no privacy cost, no randomness.
 * The marginals' rho fields (the zCDP budget each was published with, sensitivity 1, so cell
 * variance 1 / (2 rho)) set the weights of the estimates; when every rho is 0 (or none is
 * positive) the marginals are weighted as if they had equal rho.
 *
 * The method, for marginals M_1..M_k over attribute sets (attrs of dp_marg):
 *   - the attribute sets to reconcile are every intersection of two or more of the M_i's sets (the
 *     closure of their pairwise intersections), the empty set included (it stands for the total),
 *     processed by increasing size;
 *   - for such a set A, marginal i containing it has projection s_i on A, each cell of A being the
 *     sum of g_i = cells(M_i) / cells(A) of its cells; the estimate is t = sum_i w_i s_i with w_i
 *     proportional to rho_i / g_i (inverse variance), and every cell of M_i behind cell a of A
 *     receives (t(a) - s_i(a)) / g_i, which makes the projection exactly t (PrivSyn paper; the
 *     authors' research code added (t - s_i) * w_i instead, which does not reach agreement).
 *     Processing by increasing size keeps every set already reconciled reconciled, so one pass makes
 *     the marginals exactly consistent (up to rounding);
 *   - Norm-Sub makes each marginal non-negative with the common total (dp_normsub);
 *   - the two alternate until a pass leaves no negative cell, or the inconsistency left by Norm-Sub
 *     falls below DP_CONSIST_TOL times the total, or the iteration cap is hit.
 *
 * Memory: the installed handlers' (dp_env.h), all released before each call returns; a failure
 * is recorded with dp_fail.
 */
#ifndef DP_CONSIST_H
#define DP_CONSIST_H

#include <stdint.h>

#include "dp_marg.h"

/* Iteration cap of dp_consist when max_iters <= 0. */
#define DP_CONSIST_MAX_ITERS 100

/*
 * dp_consist also stops once the output of a Norm-Sub is consistent to DP_CONSIST_TOL * max(total, 1):
 * the largest |t - s_i| over all cells of all reconciled sets, as the next pass meets them (each set
 * just before its own update).  The alternation converges linearly, so the tolerance is reached
 * within the iteration cap on typical sets of marginals.
 */
#define DP_CONSIST_TOL 1e-12

/*
 * The largest magnitude of a cell dp_consist accepts: counts and their noise are far below it
 * (2^63 rows), and every sum of such cells stays finite, so no step can overflow to NaN.
 */
#define DP_CONSIST_MAX_CELL 1e100

/*
 * Makes margs[0..nmargs) mutually consistent and non-negative, in place (see above).  The common
 * total is the inverse-variance weighted average of the marginals' totals (weight rho_j / c_j, c_j
 * the cell count), clamped at 0; every marginal ends with that total.  max_iters <= 0 means
 * DP_CONSIST_MAX_ITERS.  On return every cell is >= 0; the marginals agree on every shared
 * attribute set exactly (to rounding) when a pass left no negative cell, to within about
 * DP_CONSIST_TOL * total when the tolerance stopped it, and as far as the last iteration got when
 * the cap did.
 *
 * Returns the common total, or -1 (marginals untouched) when nmargs is 0, a marginal is malformed
 * (no cells, ncells not the product of its sizes, attributes not increasing, rho not finite, a
 * cell not finite or beyond DP_CONSIST_MAX_CELL), two marginals give one attribute different
 * sizes, or allocation fails.
 */
double		dp_consist(dp_marg *margs, uint32_t nmargs, int max_iters);

/*
 * Norm-Sub (Wang et al., "Locally differentially private protocols for frequency estimation";
 * PrivSyn): negative cells become 0 and the positive ones are shifted by one common delta so that
 * the marginal sums to total.  When the positive parts sum above total, delta > 0 and is the
 * water-filling level: x = max(x - delta, 0) with sum = total (cells that fall to 0 on the way stay
 * 0).  When they sum below total, delta < 0 and only the (strictly) positive cells are raised;
 * when no cell is positive the total is spread uniformly over all cells.  total <= 0 (or NaN)
 * zeroes the marginal.  No allocation; O(ncells) per round, at most ncells rounds (a handful in
 * practice).
 */
void		dp_normsub(dp_marg *m, double total);

/*
 * One consistency pass alone (the total, then every shared attribute set by increasing size; no
 * Norm-Sub).  Afterwards the marginals agree on every shared set and on the total (the weighted
 * one), but may have negative cells.  Returns 0, or -1 (marginals untouched) as dp_consist.
 */
int			dp_consist_pass(dp_marg *margs, uint32_t nmargs);

#endif							/* DP_CONSIST_H */
