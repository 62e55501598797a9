/*
 * dp_discovery.h - learning a column's domain from private data, under differential privacy.
 *
 * PRIVACY.md ("Domains"): the distinct values present in a column, its min/max and its quantiles
 * are never public.  They are learned only through the charged mechanisms below; the PostgreSQL
 * glue scans the table, passes exact counts in, and stores what comes out as the column's public
 * domain so that it is never paid for twice.
 *
 *   1. DP partition selection (which category values exist): Gaussian thresholding of the counts
 *      of the values present.  dp_partition_threshold, dp_partition_select; the point-mass finder
 *      dp_pointmass_select is the same mechanism plus a post-processing cut.
 *   2. A PUBLIC log-scale grid over a numeric type's range (dp_loggrid_*).  The glue releases a
 *      noisy histogram on it with dp_noise_counts; bounds and quantile edges are then computed
 *      from the noisy histogram alone (post-processing, no privacy cost).
 *
 * Neighbouring relation everywhere: add/remove one row (PRIVACY.md, "Who is protected").
 *
 * Accounting (write-up for the glue; PRIVACY.md "Accounting": deltas are composed honestly)
 * --------------------------------------------------------------------------------------------
 * A partition selection with noise sigma^2 = 1/(2 rho) and threshold T = dp_partition_threshold
 * (g, delta_add) is charged rho (like any Gaussian count release) AND an additive delta_add.
 * Let a table's charged mechanisms be zCDP mechanisms with rho_1, rho_2, ... (including the rho
 * of every selection) and selections with delta_add_1, delta_add_2, ... (run in any order, with
 * parameters chosen adaptively).  Then everything released is (eps, delta)-DP for every eps >= 0
 * with
 *       delta = dp_zcdp_delta(sum_i rho_i, eps) + exp(eps) * sum_j delta_add_j.
 * Proof.  Fix neighbours x and x' = x + one row r.  Let M~(x') run every mechanism on x' except
 * that a selection on a column where r's value v is absent from x (so v has count 1 in x') acts as
 * if r were not there (it never releases v).  (a) M~(x') vs M(x): every stage is either identical
 * (those selections) or a Gaussian count release with L2 sensitivity <= 1 (all other stages,
 * including selections where v is present in x with count c >= 1, c vs c + 1), so the two are
 * (sum rho_i)-zCDP close in both directions (adaptive composition, Bun & Steinke 2016,
 * Lemma 1.7), hence (eps, dp_zcdp_delta(sum rho_i, eps))-indistinguishable (CKS20 Cor. 13).
 * (b) Couple M(x') and M~(x') on the same noise: they differ only if some selection releases a
 * count-1 value, which for stage j has probability <= delta_add_j whatever happened before
 * (dp_partition_threshold), so the total variation distance is <= sum_j delta_add_j =: p.
 * Chaining: P[M(x') in S] <= P[M~(x') in S] + p <= e^eps P[M(x) in S] + delta_conv + p, and
 * P[M(x) in S] <= e^eps P[M~(x') in S] + delta_conv <= e^eps P[M(x') in S] + delta_conv + e^eps p.
 * (The factor e^eps is the price of this simple, general argument.  In the language of Bun &
 * Steinke 2016, who define approximate zCDP, a selection is delta_add-approximately rho-zCDP.)
 * Choose delta_add small enough that exp(eps_table) * sum delta_add fits the table's delta.
 *
 * Pure C (no PostgreSQL headers).  Randomness only through dp_sampler (libsodium).
 */
#ifndef DP_DISCOVERY_H
#define DP_DISCOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp_sampler.h"
#include "dp_schedule.h"			/* DP_BOUNDS_COARSE_SHARE */

/* ============================================================================================
 * 1. DP partition selection by Gaussian thresholding
 * ============================================================================================
 *
 * Mechanism.  Input: the exact counts c_1..c_k >= 1 of the k distinct values PRESENT in a column
 * (each row adds 1 to exactly one value; NULLs are not passed in; values with count 0 are NEVER
 * passed in).  Output: for each i, noisy_i = c_i + X_i with X_i ~ N_Z(0, sigma^2) independent
 * (dp_dgauss, exact), and the value is released with its noisy count iff noisy_i >= T.
 *
 * Privacy claim: with sigma^2 = 1/(2 rho) and T = dp_partition_threshold(g, delta_add), the
 * released set together with the noisy counts of the released values is delta_add-approximately
 * rho-zCDP for add/remove-one neighbours (accounting: see the top of this file).
 *   - A row whose value v is present in both neighbours changes one count by 1: the vector of
 *     noisy counts over the present values is the discrete Gaussian mechanism with L2 sensitivity
 *     1, rho-zCDP (CKS20 Theorem 4); thresholding and dropping unreleased counts are
 *     post-processing.
 *   - A row whose value v is present in only one neighbour has count exactly 1 there; every other
 *     value's count and noise are identical, so the outputs coincide unless v itself is released,
 *     which happens with probability P(1 + X >= T) <= delta_add (threshold choice below).
 * This is the Gaussian variant of the thresholding analysis of Korolova, Kenthapadi, Mishra &
 * Ntoulas (WWW 2009) and of Google's differential-privacy library, "Delta for thresholding"
 * (common_docs/Delta_For_Thresholding.pdf); Gopi, Gulhane, Kulkarni, Shen, Shokouhi & Yekhanin
 * (ICML 2020) study partition selection ("differentially private set union") in general.  Unlike
 * those (epsilon, delta)-DP statements, we account the Gaussian part in zCDP and keep delta_add
 * separate, as above.
 *
 * Obligations of the caller (the glue):
 *   - pass every present value, and only present values (c_i >= 1), each row counted once;
 *   - report released values in a canonical order (e.g. sorted by value), never in an order that
 *     depends on the data such as first occurrence or hash-table order;
 *   - do not release anything about unreleased values (not even how many there were).
 */

/*
 * Upper bound on the tail of the discrete Gaussian, P(X >= m), X ~ N_Z(0, num/den), for an
 * integer m >= 0, rigorous (see dp_partition_select.c: integral comparison + Poisson summation, with a
 * floating-point margin).  Returns a value in [0, 1], or NaN if g is NULL or invalid or m < 0.
 * Exposed for the tests and for reporting.
 */
extern long double dp_dgauss_tail_upper(const dp_dgauss *g, int64_t m);

/*
 * The smallest integer T such that the rigorous upper bound on P(1 + X >= T), X ~ N_Z(0, sigma^2)
 * of g, is <= delta_add.  delta_add must be finite with 1e-300 <= delta_add < 0.5 (P(X >= 0) > 1/2
 * always, so T >= 2).  Returns T >= 2, or -1 on invalid input (NULL or invalid g, bad delta_add).
 * Depends only on public parameters.
 */
extern int64_t dp_partition_threshold(const dp_dgauss *g, double delta_add);

/*
 * The rigorous upper bound on P(1 + X >= threshold) that justifies delta_add, rounded up to a
 * double (for the ledger).  NaN on invalid input.
 */
extern double dp_partition_delta(const dp_dgauss *g, int64_t threshold);

/*
 * The mechanism.  For i < n: noisy[i] = counts[i] + X_i (dp_noise_counts: saturating at the int64
 * range; one discrete Gaussian draw per value, whatever its count) and selected[i] = (noisy[i] >=
 * threshold).  Returns the number selected, or -1 if g is NULL or invalid, threshold < 2, or a
 * count is negative (nothing drawn, outputs untouched).  noisy[i] of an UNselected value must not be released.
 */
extern int64_t dp_partition_select(const int64_t *counts, size_t n, const dp_dgauss *g,
								   int64_t threshold, int64_t *noisy, uint8_t *selected);

/*
 * Point-mass finder for numeric columns (a spike at 0, a sentinel such as 99999).  counts are the
 * exact counts of the distinct numeric values present (same obligations as above).  Runs
 * dp_partition_select and then keeps only values with
 *     noisy[i] >= cut = max(threshold, ceil(frac * max(noisy_total, 0))),
 * where noisy_total is a SEPARATELY released (separately charged) noisy row count and frac in
 * [0, 1] a public constant (e.g. 0.05).  Privacy: exactly that of dp_partition_select; the extra
 * cut is post-processing of its output and of the already released noisy_total (no extra cost).
 * Returns the number selected, or -1 on invalid public parameters (nothing drawn).
 */
extern int64_t dp_pointmass_select(const int64_t *counts, size_t n, const dp_dgauss *g,
								   int64_t threshold, int64_t noisy_total, double frac,
								   int64_t *noisy, uint8_t *selected);

/* ============================================================================================
 * 2. A public log-scale grid, and bounds / quantile edges from a noisy histogram on it
 * ============================================================================================
 *
 * The grid is PUBLIC: its cells depend only on the column's type (integral or real) and on the
 * public constant subdiv, never on the data.  Cells, in increasing order of value:
 *     the negative cells (mirror images of the positive ones), the zero cell, the positive cells;
 * positive cells: for k = kmin..kmax, the octave [2^k, 2^(k+1)) split into subdiv equal sub-cells
 * (subdiv a power of two in [1, 256], so that every boundary is an exact double).
 *   - Integral grids (int2/4/8; dates as days, timestamps as microseconds, all int64): kmin = 0,
 *     kmax = 62.  An octave with 2^k < subdiv has 2^k one-integer cells instead.  The zero cell is
 *     {0}; a negative cell holds the negated integers of its mirror image.  The last cells also
 *     hold 2^63 - 1 and -2^63.
 *   - Real grids (float4/8, numeric as double): kmin = -30, kmax = 1023 (all finite doubles).
 *     Every cell is a half-open interval [lo, hi) of values: zero cell [-2^-30, 2^-30), positive
 *     cells [a, b), negative cells [-b, -a).  The end cells also hold +/-Infinity.  NaN must not
 *     be passed in (it is mapped to the zero cell).
 * One row adds 1 to exactly one cell, so the histogram has L2 sensitivity 1; the glue releases it
 * with dp_noise_counts (every cell gets noise, empty or not): rho-zCDP for sigma^2 = 1/(2 rho).
 *
 * Everything computed from the NOISY histogram (bounds, quantile edges, whether bounds were found)
 * is post-processing of that release: no privacy cost, and acting on it (even failing) reveals
 * nothing more than the noisy histogram itself.  The functions below never see exact counts.
 */
typedef struct dp_loggrid
{
	bool		integral;
	int			kmin,
				kmax,
				subdiv;
} dp_loggrid;

#define DP_LOGGRID_SUBDIV_MAX 256

/* Return 0, or -1 if subdiv is not a power of two in [1, DP_LOGGRID_SUBDIV_MAX]. */
extern int	dp_loggrid_init_int(dp_loggrid *g, int subdiv);
extern int	dp_loggrid_init_real(dp_loggrid *g, int subdiv);

/* Number of cells (odd; the zero cell is the middle one).  0 for an invalid grid. */
extern uint32_t dp_loggrid_ncells(const dp_loggrid *g);

/* Cell of a value (never fails; values beyond the grid go to the end cells). */
extern uint32_t dp_loggrid_cell_int(const dp_loggrid *g, int64_t v);
extern uint32_t dp_loggrid_cell_real(const dp_loggrid *g, double x);

/*
 * Range of a cell.  Real grids: [*lo, *hi) exactly (the end cells have -Inf / +Inf as outer
 * bound).  Integral grids: the integers *lo .. *hi - 1, as doubles (exact up to 2^53 in
 * magnitude, rounded beyond).  dp_loggrid_cell_range_int gives integral cells exactly, inclusive.
 */
extern void dp_loggrid_cell_range(const dp_loggrid *g, uint32_t cell, double *lo, double *hi);
extern void dp_loggrid_cell_range_int(const dp_loggrid *g, uint32_t cell, int64_t *lo,
									  int64_t *hi_inclusive);

/*
 * Bounds from a noisy histogram (post-processing).  noisy has dp_loggrid_ncells(g) cells; sigma
 * is the standard deviation of the noise that was added (0 for exact counts, in tests).
 * Robustness to noise: a cell, or a dyadic block of 2^j adjacent cells, is "significant" if its
 * noisy sum is >= max(1, z * sigma * sqrt(2^j)), z = sqrt(2 ln(2 ncells / 0.001)) (so pure noise
 * makes some block significant with probability about 0.001 or less).  The span runs from the first
 * to the last cell of the MINIMAL significant blocks (neither half significant), so a heavy cell
 * does not drag the empty cells of a big block around it along, while diffuse mass that no single
 * cell shows is still found.  Cells outside the span are ignored; inside it negative counts count
 * as 0.  (So sparse tails below the noise level are cut off: the bounds err inwards.)
 * The bounds are then the tail and 1 - tail quantiles of that mass, interpolated linearly inside
 * grid cells (the real zero cell counts as the single value 0).  Integral grids give integers
 * (lower rounded down, upper the integer holding the quantile).  lower <= upper (equal when the
 * mass is at one point).
 * Returns 0; 1 if no block is significant (outputs untouched: fall back to declared bounds); -1 on
 * invalid arguments (tail outside [0, 0.5), sigma < 0 or not finite, invalid grid).
 * The double version rounds integral results beyond 2^53 toward zero (so they stay in range).
 */
extern int	dp_loggrid_bounds(const dp_loggrid *g, const int64_t *noisy, double sigma,
							  double tail, double *lower, double *upper);
extern int	dp_loggrid_bounds_int(const dp_loggrid *g, const int64_t *noisy, double sigma,
								  double tail, int64_t *lower, int64_t *upper);

/*
 * Denoising before quantile edges (post-processing): sets to 0 every cell that lies in no MINIMAL
 * significant block, the blocks of dp_loggrid_bounds but with threshold max(1, sqrt(z^2 +
 * 2 ln length) * sigma * sqrt(length)) (a false long block would keep much phantom mass, so
 * longer blocks need more), so that the positive parts of the noise in the many empty cells
 * of a sparse column (capital_gain between 1 and 100000, say) do not add up to phantom mass that
 * the quantiles would spread bins over.  Kept cells keep their noisy values.  scratch: room for
 * dp_loggrid_ncells(g) bytes.  Returns the number of cells kept, or -1 on invalid arguments.
 */
extern int64_t dp_loggrid_denoise(const dp_loggrid *g, int64_t *noisy, double sigma, double z,
								  uint8_t *scratch);

/*
 * Quantile edges (post-processing).  Up to nbins + 1 strictly increasing edges into edges[]
 * (room for nbins + 1), *nedges set: edges[0] = lower, the last = upper, and between them the
 * i/nbins quantiles (i = 1..nbins-1) of the noisy mass inside [lower, upper] (negative counts as
 * 0, each cell's mass spread uniformly over its part inside [lower, upper]), duplicates removed, so
 * there may be fewer bins.  If there is no mass inside, every cell inside counts as mass 1 (a
 * log-spaced fallback).  Integral grids: integer edges, rounded to the nearest integer (bins
 * [e_i, e_{i+1}) with the last bin closed at upper; a spike at v tends to get the edge v + 1,
 * i.e. a bin of its own).  lower == upper gives the single edge lower.
 * Returns 0, or -1 on invalid arguments (nbins < 1, lower > upper, not finite, integral bounds not
 * integers, invalid grid).  The _int version requires an integral grid.
 */
extern int	dp_loggrid_quantile_edges(const dp_loggrid *g, const int64_t *noisy, double lower,
									  double upper, uint32_t nbins, double *edges,
									  uint32_t *nedges);
extern int	dp_loggrid_quantile_edges_int(const dp_loggrid *g, const int64_t *noisy,
										  int64_t lower, int64_t upper, uint32_t nbins,
										  int64_t *edges, uint32_t *nedges);

/* ============================================================================================
 * 3. Two-stage bounds: the log grid finds the magnitude, a linear grid inside it the bounds
 * ============================================================================================
 *
 * The log grid's cells are wide far from zero (subdiv 8: [1920, 2048) is one cell), so bounds
 * read from it alone are coarse (a year column 1997-2002 came out as [1920, 2047]).  A column's
 * rho_col is therefore spent in two releases of the same kind, one after the other:
 *   stage 1  rho_1 = DP_BOUNDS_COARSE_SHARE * rho_col: the noisy log-grid histogram (section 2);
 *            its noisy 0.5% and 99.5% points (dp_loggrid_bounds with tail DP_BOUNDS_SPAN_TAIL),
 *            widened by half their distance on each side (dp_span_widen), are a PUBLIC range
 *            once released;
 *   stage 2  rho_2 = the rest (rounded down): a noisy histogram on a linear grid over that range
 *            (dp_lingrid_*), every value clamped into it, so one row adds 1 to exactly one cell
 *            (L2 sensitivity 1, rho_2-zCDP); bounds are read from it as in section 2.
 * The grid of stage 2 is a function of stage 1's output only (adaptive composition, Bun &
 * Steinke 2016, Lemma 1.7): the pair is (rho_1 + rho_2)-zCDP with rho_1 + rho_2 <= rho_col
 * (dp_bounds_split).  Everything after the noise is post-processing.  The exact counts of both
 * stages come from the same exact data (the glue counts each value once, in one scan).
 */

/*
 * Stage 1's span is read at these noisy quantiles (0.5% and 99.5%), not at the ends of the
 * significant blocks: a spurious block far away (noise) then drags the span only when it holds
 * more than 0.5% of the mass, i.e. on small tables; the widening recovers the tails it cuts.
 */
#define DP_BOUNDS_SPAN_TAIL 0.005

/*
 * rho_1 = rho * DP_BOUNDS_COARSE_SHARE and rho_2 = rho - rho_1 rounded down, so that
 * rho_1 + rho_2 <= rho in floating point too.  Returns 0, or -1 if rho is not finite and > 0.
 */
extern int	dp_bounds_split(double rho, double *rho_coarse, double *rho_fine);

/*
 * Widening of stage 1's span [lo, hi] (lo <= hi) by half its width (at least 1 for integers) on
 * each side, saturating at the int64 range (integers) or at +/-DBL_MAX (reals): the tails that
 * the coarse noise hid lie just outside it.  Returns 0, or -1 on invalid input.
 */
extern int	dp_span_widen_int(int64_t *lo, int64_t *hi);
extern int	dp_span_widen_real(double *lo, double *hi);

/* Largest number of cells of the linear grid. */
#define DP_LINGRID_CELLS_MAX 1024

/*
 * A linear grid over a public range.  Integral: cells of iwidth integers (a power of two, the
 * smallest with at most DP_LINGRID_CELLS_MAX cells), the first starting at ilo; real: ncells =
 * DP_LINGRID_CELLS_MAX equal cells [lo + c w, lo + (c+1) w).  Values outside the range go to the
 * end cells (clamping: still one cell per row).
 */
typedef struct dp_lingrid
{
	bool		integral;
	uint32_t	ncells;
	int64_t		ilo;
	uint64_t	iwidth;
	double		lo,
				width;
} dp_lingrid;

/* Return 0, or -1 on invalid range (lo > hi, not finite, or hi - lo not finite). */
extern int	dp_lingrid_init_int(dp_lingrid *g, int64_t lo, int64_t hi);
extern int	dp_lingrid_init_real(dp_lingrid *g, double lo, double hi);
extern uint32_t dp_lingrid_cell_int(const dp_lingrid *g, int64_t v);
extern uint32_t dp_lingrid_cell_real(const dp_lingrid *g, double x);

/*
 * Bounds from a noisy histogram on the linear grid (post-processing), as dp_loggrid_bounds: the
 * span of the minimal significant dyadic blocks (z = sqrt(2 ln(2 ncells / 0.001)), threshold
 * max(1, z sigma sqrt(len))), then the tail and 1 - tail quantiles of the mass inside it,
 * interpolated linearly inside cells.  Integral grids give integers (a one-integer cell gives
 * its integer exactly).  Returns 0; 1 if no block is significant (outputs untouched); -1 on
 * invalid arguments.
 */
extern int	dp_lingrid_bounds_int(const dp_lingrid *g, const int64_t *noisy, double sigma,
								  double tail, int64_t *lower, int64_t *upper);
extern int	dp_lingrid_bounds_real(const dp_lingrid *g, const int64_t *noisy, double sigma,
								   double tail, double *lower, double *upper);

/*
 * Reconciling the two stages (post-processing of both releases, no privacy cost).  Stage 2 has
 * up to 1024 cells where stage 1 had a few over the same range, so its noise per unit of mass is
 * far larger: on a spread-out column with a thin share of rho (a test score, rho_col / 47) no
 * block of its thin tails is significant, and its bounds keep only the dense middle.  Stage 1's
 * cells are wide enough to show those tails.  So stage 2 may place a bound anywhere inside the
 * log-grid cell where stage 1's bound (dp_loggrid_bounds*, same tail) fell, or further out, but
 * not inward across that cell: stage 1 saw mass there.  A bound that would move inward is
 * stage 1's.  A compact column (years 1997-2002, all in the cell [1920, 2047]) keeps stage 2's
 * exact bounds; a spread-out one loses at most the mass of stage 1's bound cells (stage 2 may
 * still cut into those).  The rule involves no tuned constant, only the public grid.
 * coarse_lo <= coarse_hi are stage 1's bounds, *lower <= *upper stage 2's (replaced as above).
 * Returns the number of bounds replaced (0, 1 or 2), or -1 on invalid input.
 */
extern int	dp_bounds_reconcile_int(const dp_loggrid *g, int64_t coarse_lo, int64_t coarse_hi,
									int64_t *lower, int64_t *upper);
extern int	dp_bounds_reconcile(const dp_loggrid *g, double coarse_lo, double coarse_hi,
								double *lower, double *upper);

/* ============================================================================================
 * 4. From released bounds and edges to a domain the catalog stores and loads (total)
 * ============================================================================================
 *
 * What discovery releases is stored as the column's domain after the charge, so the step from
 * the released (noisy) numbers to the stored row must never fail: any bounds the mechanisms can
 * give (NaN, +/-Infinity, lower > upper, far outside the column type's values, a range too narrow
 * for its bins in double precision) end in a row that dpsynth.domains' CHECK accepts and that
 * loads as a valid domain (dp_int_equal_edges / dp_real_equal_edges, dp_domain_init_*_edges).
 * Post-processing of the release and of public facts (the column's type) only.
 *
 * Integral columns keep their bounds within +/-DP_DISCOVERED_INT_LIMIT, where the catalog's
 * float8 holds every integer and the edge one past upper exactly (declared bounds obey +/-2^53 as
 * well); values beyond fall into the end bins, as values outside any domain do.  Real columns
 * keep theirs within +/-DP_DISCOVERED_REAL_LIMIT, so that upper - lower is finite.
 */
#define DP_DISCOVERED_INT_LIMIT 9007199254740991.0	/* 2^53 - 1 */
#define DP_DISCOVERED_REAL_LIMIT 0x1p1022	/* 2^1022: upper - lower stays finite */
#define DP_DISCOVERED_MAX_BINS 65535	/* the catalog's CHECK; a real column's NULL cell is the 65536th code */

/*
 * The stored bounds and number of equal-width bins of a discovered column.  found: bounds were
 * released, lo and hi (any doubles); else the public fallback [0, 1].  type_lo < type_hi: the
 * values the column's type can hold (public; integral: integers).  max_bins in
 * [1, DP_DISCOVERED_MAX_BINS].
 * Out: finite *lower < *upper within the type's values and the limit above (integral: integers),
 * the released range clamped into them and widened to two values (integral: lo, lo + 1; real:
 * the next double) where it collapsed, and *bins in [1, max_bins] (integral: at most
 * upper - lower + 1; real: the largest of max_bins, max_bins / 2, ..., 1 whose equal-width edges
 * strictly increase in double precision).  Returns 0, or -1 on invalid public arguments (outputs
 * untouched).
 */
extern int	dp_discovered_bounds(bool integral, bool found, double lo, double hi, double type_lo,
								 double type_hi, uint32_t max_bins, double *lower, double *upper,
								 uint32_t *bins);

/*
 * Learned edges as the catalog stores them (float8) and loads them (dp_domain_init_*_edges):
 * if the n edges are not all finite and strictly increasing (integral: integers within
 * +/-(DP_DISCOVERED_INT_LIMIT + 1)), or are fewer than 2 or more than DP_DISCOVERED_MAX_BINS + 1,
 * they are replaced by the public fallback of one bin, [lower, upper + 1] (integral) or
 * [lower, upper] (real), with lower < upper as dp_discovered_bounds gives them (edges has room
 * for 2).  Returns the number of edges (n or 2; 0 if edges is NULL).
 */
extern uint32_t dp_discovered_edges(bool integral, double *edges, uint32_t n, double lower,
									double upper);

/* double -> int64 saturating at the int64 range (NaN: 0), for bounds computed in double. */
extern int64_t dp_double_to_int64_sat(double x);

#endif							/* DP_DISCOVERY_H */
