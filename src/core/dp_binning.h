/*
 * dp_binning.h - resolution that the data can afford: the bins of an integer column declared
 * with bounds only (binning 'auto') over a small public range, refined down to one bin per value
 * where a first noisy release says that the rows can pay for it.
 *
 * The release (two stages, one column's rho_col; the glue is release_refined in src/discover.c).
 *   stage 1  rho_1 = DP_BINNING_COARSE_SHARE * rho_col (dp_binning_split): the noisy histogram on
 *            the public log-scale grid (dp_discovery.h, section 2), each row, clamped into the
 *            declared bounds, in exactly one cell: L2 sensitivity 1, rho_1-zCDP.
 *   stage 2  rho_2 = the rest, rounded down: a noisy histogram on a partition of the grid that is
 *            a function of stage 1's output only: a cell of w values of the range whose
 *            stage-1 noisy count reaches DP_BINNING_Z sigma_2 sqrt(w) (dp_binning_refine: its
 *            mass would stand out of the noise of w per-value counts) is split into one cell per
 *            value; every other cell stays whole.  Each row is again in exactly one cell: L2
 *            sensitivity 1, rho_2-zCDP.
 * Both go through dp_noise_counts (every cell gets noise, empty or not).  Adaptive composition
 * (Bun & Steinke 2016, Lemma 1.7): the pair is (rho_1 + rho_2)-zCDP, rho_1 + rho_2 <= rho_col.
 * Everything below reads only the two noisy histograms, their sigmas and public constants (the
 * minimum bin mass is a function of the call's rho and number of columns): post-processing.
 *
 * The estimate (dp_binning_combine).  A cell that stays whole was counted twice: the inverse-
 * variance mean of its two noisy counts has the variance of one count released with rho_1 +
 * rho_2, so a column whose cells are not refined gets the same histogram, in distribution (up to
 * rounding), as the single log-grid release it replaces, and the same quantile bins.  A refined
 * cell's total is the inverse-variance mean of its stage-1 count and the sum of its per-value
 * counts, each per-value count then moved by an equal share of the difference (least squares).
 *
 * The bins (dp_binning_int, dp_binning_merge).  The quantile bins and spikes of the combined
 * log-grid histogram come first, as for any 'auto' column.  Inside a run of adjacent refined
 * cells (a refined cell of one value is its own count, as in stage 1), every value
 * whose estimate reaches t(1) gets a bin of its own and the runs between them are cut into bins
 * that reach t(w) = max(1, min_mass, DP_BINNING_Z sigma_2 sqrt(w)) (dp_binning_int); where that
 * gives the run two bins or more, they replace the quantile edges inside the run, and a piece
 * of a quantile bin cut off by the run's boundary that holds less than max(1, min_mass) joins
 * its neighbour away from the cell.  More rows or more rho: more refined cells and finer bins,
 * down to one bin per value; a small table at a small rho keeps the quantile bins.
 *
 * Wider ranges (dp_binning_wide_bins).  A column declared with bounds only (default bins) whose
 * values are not refined (a real type, or an integer range over DP_BINNING_MAX_VALUES values)
 * gets, in a synthesis, as many quantile bins as its released mass affords: with r = mass /
 * min_mass (mass a lower bound of the row count from the noisy histogram's cells in the bounds,
 * at most the denoised histogram's total (dp_binning_wide_mass), min_mass the public minimum bin
 * mass,
 * DP_PLAN_AUTO_BIN_MARGIN times the synthesis's rare-value threshold: a bin of that mass stands
 * out of the one-way marginal's noise), floor(r) bins below the declared 16 as before, and above
 * them floor(sqrt(r)) where that is more, at most DP_BINNING_WIDE_MAX_BINS: b bins with b^2 <= r,
 * so that a pair of two such columns, where their relationship is measured, still holds the
 * minimum mass in an average cell (one-way affordability alone, r bins, gave small tables 64 bins
 * whose pairs the synthesis could not measure).  More rows or more rho: more bins, and a spike
 * needs a smaller share of the mass (1 / bins).  Post-processing of the same single release;
 * without a minimum mass (a call that synthesizes nothing) the declared bins stay.
 *
 * Round edges (dp_binning_round_edges).  The quantile edges of such a column are read off a
 * histogram whose cells hold many values each, so they fall anywhere inside a cell; values
 * recorded to a unit or a tenth heap at round numbers, and a bin across a heap spreads it over
 * its width.  Each inner edge is moved to the nearest multiple of the coarsest round step
 * ({1, 2, 5} x 10^k) that lies within a quarter (integers) or a half (reals) of its narrower
 * neighbouring bin: a heap at a round value then starts a bin.  A real column's edges also keep
 * no finer decimal than 1.5 times their narrower bin (nor than a numeric column's scale): the
 * edges inside one grid cell are an interpolation that says nothing of where the values lie, and
 * values recorded to a tenth, where bins are narrower than a tenth, were drawn uniformly across
 * edges at hundredths (half a heap at 61.7 landed below 61.7); at a tenth, every value recorded
 * to a tenth keeps its side of every edge, and bins narrower than the step merge.
 * Post-processing of the released edges by a public rule.
 */
#ifndef DP_BINNING_H
#define DP_BINNING_H

#include <stdbool.h>
#include <stdint.h>

#include "dp_schedule.h"			/* DP_BINNING_COARSE_SHARE */

/* Largest public integer range (upper - lower + 1) that can be refined down to its values. */
#define DP_BINNING_MAX_VALUES 128

/* Significance of a mass, in standard deviations of its noise. */
#define DP_BINNING_Z 3.0

/* Most quantile bins of a column with a wide range (dp_binning_wide_bins). */
#define DP_BINNING_WIDE_MAX_BINS 64

/* Whether the public integer bounds [lower, upper] can be refined (at most 128 values). */
extern bool dp_binning_fine_range(int64_t lower, int64_t upper);

/*
 * rho_1 = rho * DP_BINNING_COARSE_SHARE (exact: a power of two) and rho_2 = the next double below
 * rho - rho_1, so that rho_1 + rho_2 <= rho holds exactly.  Returns 0, or -1 unless rho is finite
 * and > 0.
 */
extern int	dp_binning_split(double rho, double *rho_coarse, double *rho_fine);

/*
 * Whether a cell of w values (its part inside the declared bounds) with stage-1 noisy count
 * noisy is split into per-value counts in stage 2 (sigma_fine: stage 2's noise).
 */
extern bool dp_binning_refine(int64_t noisy, uint32_t w, double sigma_fine);

/*
 * The estimate of one cell from its two releases: c1 (variance var1) and the n2 stage-2 counts
 * c2[] of its parts (variance var2 each; n2 = 1 for a cell kept whole).  *total: the inverse-
 * variance mean of c1 and sum(c2); est[i] = c2[i] + (*total - sum(c2)) / n2 (est may be NULL
 * when n2 = 1).  Returns 0, or -1 on invalid arguments (n2 = 0, a variance not finite and > 0).
 */
extern int	dp_binning_combine(double c1, double var1, const double *c2, uint32_t n2, double var2,
							   double *total, double *est);

/*
 * The bins inside one refined cell (post-processing).  noisy[0 .. nvalues - 1] are the estimates
 * of the values lower .. lower + nvalues - 1 (nvalues <= DP_BINNING_MAX_VALUES), sigma >= 0 their
 * noise's standard deviation, min_mass >= 0 the public minimum mass of a bin.  Every value whose
 * estimate reaches t(1) gets a bin of its own; each run of the other values between them is cut
 * greedily, left to right, into bins that reach t(w), the remainder joined to the run's last bin;
 * a run that reaches t(w) nowhere joins its lighter neighbouring bin (the left one on a tie), or
 * is the whole range.  Writes the first value of each bin and then lower + nvalues into edges[]
 * (room for nvalues + 1) and *nedges (>= 2).  Deterministic.  Returns 0, or -1 on invalid input.
 */
extern int	dp_binning_int(const int64_t *noisy, uint32_t nvalues, int64_t lower, double sigma,
						   double min_mass, int64_t *edges, uint32_t *nedges);

/*
 * The edges of a column whose cells were refined (post-processing).  Values lower .. lower +
 * nvalues - 1; an edge is the first value of a bin, the last one lower + nvalues.  coarse: the
 * ncoarse quantile edges (strictly increasing, first lower, last lower + nvalues).  nblocks
 * runs of refined cells, block k over the values block_lo[k] .. block_hi[k] (in order, not overlapping,
 * inside the range), with its own edges (dp_binning_int: first block_lo[k], last block_hi[k] + 1)
 * concatenated in block_edges, block_nedges[k] of them (>= 3: two bins or more).  mass[v]: the
 * estimated mass of value lower + v.  The coarse edges strictly inside a block are replaced by its
 * own; then, while a bin not inside a block holds less than max(1, min_mass), its edge that no
 * block set is removed (the left one first; the ends stay).  Writes at most nvalues + 1 edges and
 * *nedges.  Returns 0, or -1 on invalid input.
 */
extern int	dp_binning_merge(const int64_t *coarse, uint32_t ncoarse, int64_t lower, uint32_t nvalues,
							 uint32_t nblocks, const int64_t *block_lo, const int64_t *block_hi,
							 const int64_t *block_edges, const uint32_t *block_nedges,
							 const double *mass, double min_mass, int64_t *edges, uint32_t *nedges);

/*
 * The quantile bins a column with a wide range affords (above): base (the declared number) unless
 * min_mass > 0, mass is finite and base >= 1; else floor(mass / min_mass) if that is below base
 * (at least 1), or max(base, floor(sqrt(mass / min_mass))), at most DP_BINNING_WIDE_MAX_BINS.
 * Deterministic, post-processing of the released mass.
 */
extern uint32_t dp_binning_wide_bins(double mass, double min_mass, uint32_t base);

/*
 * The mass that the bins of a wide range follow (dp_binning_wide_bins), post-processing of the
 * released histogram: raw[0 .. n - 1] the noisy counts, before any denoising, of the cells that
 * meet the declared bounds (each row, clamped into them, is in exactly one: their sum is the row
 * count plus noise of standard deviation sigma sqrt(n)), cap the denoised histogram's mass.  The
 * sum less DP_BINNING_Z such standard deviations, at most cap, at least 0.  The positive parts of
 * the kept cells of a small table at a small rho are mostly noise that the denoising selected for
 * being high (phantom mass); this bound is exceeded by the row count with probability about 0.001
 * only, so a small table gets no more bins than its rows afford.  Returns -1 on invalid input
 * (raw NULL, sigma negative or not finite).
 */
extern double dp_binning_wide_mass(const int64_t *raw, uint32_t n, double sigma, double cap);

/* dp_binning_round_edges' min_exp for a type without a decimal scale */
#define DP_BINNING_ANY_EXP INT32_MIN

/*
 * Moves each inner edge of edges[0 .. n - 1] (strictly increasing, finite) to the multiple of the
 * coarsest step s = {1, 2, 5} x 10^k nearest to it within a quarter (integral) or a half (real) of
 * the narrower of its two bins (as they are after the edges before it moved).  Integral (min_exp
 * taken as 0): s >= 1, and an edge that no step reaches stays.  Real: s >= 10^k0, k0 the largest
 * with 10^k0 <= 1.5 times the narrower bin as learned, and at least min_exp (a numeric(p, s)
 * column: -s, its values' step; else DP_BINNING_ANY_EXP); an edge that no such step reaches within
 * the half goes to the nearest multiple of 10^k0, and an edge that lands on or below the one
 * before it (or on the last) is dropped, its two bins merged.  The ends stay; the edges stay
 * strictly increasing.  Deterministic.  Returns the number of edges after (n for integral), or
 * -1 on invalid input (edges unchanged).
 */
extern int	dp_binning_round_edges(double *edges, uint32_t n, bool integral, int min_exp);

/* A grid cell's part in one learned bin: [lo, hi), its noisy count's share and that share's noise. */
typedef struct dp_shape_cell
{
	double		lo,
				hi,
				width,			/* hi - lo */
				count,
				var;
} dp_shape_cell;

/*
 * The weights of the shape inside one bin (src/discover.c's shape_pieces), post-processing of the
 * released counts: the k cells' counts shrunk toward the bin's uniform spread of their mass by the
 * James-Stein factor s = max(0, 1 - V / Q), Q the squared deviation of the counts from that
 * spread, V the sum of the cells' noise variances.  w[i] may be 0 or negative (no mass there).
 * Returns 0, or -1 when the cells hold no positive mass or width (w unset: uniform over the bin).
 */
extern int	dp_binning_shape_weights(const dp_shape_cell *c, uint32_t k, double *w);

/*
 * Heaps at round values inside the cells a refined integer column keeps whole (src/discover.c's
 * shape_pieces).  Integers that people record heap at multiples of ten (hours worked at 40, 50,
 * 60, 80, 90, ages at 30, 40).  A refined column has per-value counts where its rows afford them,
 * and there its heaps are placed value by value; a cell kept whole (too few rows for per-value
 * counts, typically in a tail: hours 88-95) is spread uniformly over its values, which moves a
 * heap's rows (90) to its neighbours.
 *
 * dp_binning_heap_multiplier reads the released per-value estimates value[0 .. n - 1] (value
 * lower + i; known[i]: released per value, each with noise sigma) and returns how many times its
 * neighbours' mass a multiple of DP_BINNING_HEAP_STEP holds, or 1 (no heaping shown):
 *  - the test: at each value x with x - 1, x, x + 1 known, the excess d = value[x] - (value[x - 1]
 *    + value[x + 1]) / 2 (noise sigma sqrt(3/2)) "shows" above DP_BINNING_HEAP_Z such scales.
 *    Heaped when at least DP_BINNING_HEAP_MIN multiples of the step show, at least half of those
 *    tested, and at a rate at least DP_BINNING_HEAP_RATE times that of the values that are no
 *    multiple of 5.  A smooth column shows only where it is concave (near its mode, round or not)
 *    and by chance (about 2% of the values at z 2): a single spike, or a peak, is not heaping.
 *  - the multiplier: the median over the known multiples x of value[x] over the mean of the known
 *    values among x - 2 .. x + 2 that are no multiple of 5 (two at least, their mean above sigma so
 *    that the ratio is not the noise's), clamped to [1, DP_BINNING_HEAP_MAX_MULT]; 1 where fewer than
 *    DP_BINNING_HEAP_MIN such ratios exist.
 * A heaped column's cell kept whole then spreads its weight over its values in proportion to 1,
 * or the multiplier at a multiple of the step.  Post-processing of the released estimates; 1 on
 * invalid input.
 */
#define DP_BINNING_HEAP_STEP 10
#define DP_BINNING_HEAP_Z 2.0
#define DP_BINNING_HEAP_MIN 3
#define DP_BINNING_HEAP_RATE 2.0
#define DP_BINNING_HEAP_MAX_MULT 50.0
extern double dp_binning_heap_multiplier(const double *value, const bool *known, uint32_t n,
										 int64_t lower, double sigma);

/*
 * Heaps inside learned bins (decoding; post-processing of a column's released one-way counts and
 * its released edges).  Values recorded to a unit or a tenth heap at round numbers, and the round
 * edges above make such a heap start a bin; drawn uniformly across the bin, the heap's rows are
 * spread over its width, and a classifier trained on them meets the real rows, all at the round
 * value, at the edge of what it learned.  A bin whose released count per unit width is positive and
 * at least DP_BINNING_HEAP_RATIO times both neighbours' (a lone heap between bins that hold next to
 * nothing: a ratio that a smooth column's quantile bins, of about equal mass, do not reach) draws
 * its values at the roundest value inside it instead (dp_binning_roundest), where it has one;
 * every other bin is drawn as before.  The ratio is high so that a busy bin holding many values
 * (a column recorded to a hundredth, several values in the bin) keeps its spread; bench/RESULTS.md
 * has the ratios tried.
 */
#define DP_BINNING_HEAP_RATIO 8.0

/* how many powers of ten dp_binning_roundest looks down from the ends' magnitude */
#define DP_BINNING_ROUNDEST_DIGITS 17

/*
 * The roundest value in [lo, hi): the multiple of the coarsest step s = {5, 2, 1} x 10^k (k from the
 * first power of ten above |lo| and |hi| down) that has a multiple in [lo, hi), if that step has
 * exactly one there.  Returns true and sets *x, or false (two multiples of that step inside, no step
 * reached, invalid or empty interval).  Deterministic.
 */
extern bool dp_binning_roundest(double lo, double hi, double *x);

/*
 * A cell [lo, hi) of whole values kept whole in a column heaped at multiples of
 * DP_BINNING_HEAP_STEP (dp_binning_heap_multiplier's mult > 1): its shape weight spread over its
 * values, each a piece (x, x, w) of pieces[3 i ..], a multiple weighing mult times another value;
 * the weights add up to weight.  Returns the pieces written (hi - lo).
 */
extern uint32_t dp_binning_heap_spread(double lo, double hi, double weight, double mult, double *pieces);

/*
 * The heap points of nbins bins (edges[0 .. nbins], increasing; counts[0 .. nbins - 1] the released
 * one-way counts): point[j] the roundest value in bin j where bin j holds a lone heap (above), NaN
 * elsewhere.  Returns the number of points set.
 */
extern uint32_t dp_binning_heap_points(const double *edges, uint32_t nbins, const double *counts,
									   double *point);

/*
 * The bins that share their lone heaps' step: where dp_binning_heap_points set two points or more,
 * all multiples of one round step s = {5, 2, 1} x 10^k (the coarsest such: 57, 58 and 59 give 1),
 * a bin without a point, no wider than s, starting at a multiple of s ([55, 56), [56, 56.5)) and
 * with a released count per unit width at least DP_BINNING_HEAP_RATIO times the background (the
 * median of that density over the bins without a point that do not start on the step; none such:
 * nothing added) gets its start as its point: its rows are recorded at that step as the lone
 * heaps' are, and the bin holds one multiple of it, at its start.  The lone heaps show how the
 * column's values are recorded; a bin next to another heap ([55, 56) beside [56, 56.5)) does not
 * stand out of its neighbours, so the lone-heap test alone leaves it spread over its width, while a
 * bin of the column's spread (hours 20-29 where 40 and 50 are lone heaps) stays near the background
 * and spread.  Returns the number of points added; point[] as dp_binning_heap_points left it
 * otherwise (0 on invalid input or memory exhausted).
 */
extern uint32_t dp_binning_heap_mates(const double *edges, uint32_t nbins, const double *counts,
									  double *point);

#endif							/* DP_BINNING_H */
