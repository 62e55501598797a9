/*
 * dp_binning.h - resolution that the data can afford: the bins of an integer column declared
 * with bounds only (binning 'auto'), from a noisy histogram with one cell per value of the
 * public range.
 *
 * Privacy.  The histogram counts each row (its value clamped into the declared, public bounds)
 * in exactly one cell: L2 sensitivity 1, released by the glue with dp_noise_counts (every cell
 * gets noise, empty or not), rho-zCDP for sigma^2 = 1/(2 rho).  It replaces the log-grid
 * histogram that quantile bins are read from (dp_discovery.h, section 2), at the same rho: which
 * of the two grids a column gets is decided by its public bounds alone (dp_binning_fine_range).
 * Everything below reads only that noisy histogram, its sigma and public constants (the minimum
 * bin mass is a function of the call's rho and number of columns): post-processing, no privacy
 * cost.  Acting on it reveals nothing beyond the noisy histogram itself.
 *
 * The rule.  A bin of w values is "affordable" when its noisy mass is at least
 *     t(w) = max(1, min_mass, DP_BINNING_Z * sigma * sqrt(w)):
 * significantly above the noise of its own release, and thick enough to survive the synthesis
 * method's rare-value step (min_mass, DP_PLAN_AUTO_BIN_MARGIN times its threshold).  Every value
 * whose noisy count reaches t(1) gets a bin of its own (a spike at 40, at an end of the range);
 * each run of the other values between them is cut greedily, left to right, into bins that reach
 * t(w), the remainder joined to the run's last bin; a run that reaches t(w) nowhere joins its
 * lighter neighbouring bin (by noisy mass; the left one on a tie).  So more rows or more rho give
 * finer bins, down to one bin per value where every value's count is resolved, never more bins
 * than values.  The rule has no tuned constant beyond the significance level z.
 */
#ifndef DP_BINNING_H
#define DP_BINNING_H

#include <stdbool.h>
#include <stdint.h>

/* Largest public integer range (upper - lower + 1) that gets one histogram cell per value. */
#define DP_BINNING_MAX_VALUES 128

/* Significance of a bin's noisy mass, in standard deviations of its noise. */
#define DP_BINNING_Z 3.0

/* Whether the public integer bounds [lower, upper] get the per-value histogram. */
extern bool dp_binning_fine_range(int64_t lower, int64_t upper);

/*
 * The bins (post-processing).  noisy[0 .. nvalues - 1] are the noisy counts of the values
 * lower .. lower + nvalues - 1 (nvalues <= DP_BINNING_MAX_VALUES), sigma >= 0 their noise's
 * standard deviation, min_mass >= 0 the public minimum mass of a bin.  Writes the first value of
 * each bin and then lower + nvalues (past the last value) into edges[] (room for nvalues + 1),
 * and *nedges (>= 2).  Deterministic given its arguments.  Returns 0, or -1 on invalid arguments.
 */
extern int	dp_binning_int(const int64_t *noisy, uint32_t nvalues, int64_t lower, double sigma,
						   double min_mass, int64_t *edges, uint32_t *nedges);

/*
 * The shape of the values inside the bins (post-processing of the same histogram), as pieces
 * (v, v, weight) for dp_shape_init (dp_decode.h): inside a bin of several values, the noisy
 * counts shrunk toward the bin's uniform spread by the James-Stein factor max(0, 1 - V / Q)
 * (Q the squared deviation of the counts from uniform, V = w sigma^2 what noise alone gives it);
 * negative weights dropped.  A bin of one value needs no piece.  pieces: room for 3 * nvalues
 * doubles.  Returns the number of pieces (in order, not overlapping), or -1 on invalid arguments.
 */
extern int	dp_binning_shape(const int64_t *noisy, uint32_t nvalues, int64_t lower, double sigma,
							 const int64_t *edges, uint32_t nedges, double *pieces);

#endif							/* DP_BINNING_H */
