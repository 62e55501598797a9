/*
 * dp_uncertainty.h - error bars on a released model's marginals, from the model alone.
 *
 * Post-processing: everything here is a function of the released model (its consistent marginals
 * over merged codes, the rho each was measured with, the rare-value merge) and of public facts.
 * It reads no private data and costs no budget (docs/PRIVACY.md).
 *
 * The noise model (what the release did, dp_privsyn.c, dp_adaptive.c):
 *   - every cell of a measured k-way marginal got independent discrete Gaussian noise
 *     N_Z(0, 1 / (2 rho)) (sensitivity 1; dp_gaussian_sigma2, with sigma^2 rounded up by less
 *     than 2^-31 relative by dp_dgauss_init), and N_Z(0, s^2) has variance below s^2 (CKS 2020);
 *     a marginal measured several times (the adaptive method) holds the rho-weighted average of
 *     its measurements, whose noise has variance 1 / (2 (rho_1 + ... + rho_k)) = 1 / (2 rho), rho
 *     the sum the model stores;
 *   - a one-way marginal's cell over a merged code sums the released one-way counts of its m
 *     member codes, each N_Z(0, 1 / (2 rho_1)); if the column was measured again in rounds, the
 *     average has variance (m rho_1 + (rho - rho_1)) / (2 rho^2) <= m / (2 rho).  So
 *     m / (2 rho) bounds it without knowing rho_1 (and is exact when m = 1);
 *   - projecting a marginal onto fewer columns sums disjoint cells, so variances add;
 *   - except a spread marginal (dp_marg.spread: the adaptive method's coarse measurement, over
 *     runs of an ordered column's codes, spread over the codes by released one-way shares): its
 *     cells inside a run are one noisy total times shares, biased by how far the shares are from
 *     the run's true split.  It gives no intervals (dp_unc_cover, dp_unc_cell_variance).
 *
 * Intervals (two-sided, at confidence c):
 *   count  [max(0, x - h), x + h] with h = z_c * sqrt(v) + 1/2, v the variance bound, z_c the
 *          standard normal quantile of (1 + c) / 2.  The 1/2 is a continuity correction: the noise
 *          of a single measurement is integer.  For one discrete Gaussian draw its exact coverage
 *          is >= c for every sigma (test_uncertainty.c checks it exactly on a grid of sigma and c);
 *          for sums and averages of draws it rests on the normal approximation (checked there by
 *          simulation).  Clamping at 0 loses no coverage: a true count is >= 0.
 *   share  x / t for the cell x and the marginal's total t: with y = t - x the other cells (noise
 *          independent of x's), x / (x + y) grows with x and falls with y, so the box of the two
 *          count intervals at confidence sqrt(c) each gives
 *          [x_lo / (x_lo + y_hi), x_hi / (x_hi + y_lo)], which covers with probability >= c.
 *
 * What the intervals do not cover (stated wherever they are shown): they describe the noise of
 * the measurement as it was before post-processing, centred on the model's consistent value.
 * Consistency (dp_consist) averages overlapping measurements, which lowers the variance; Norm-Sub
 * clips negative cells and shifts the others, a bias the intervals ignore (test_uncertainty.c
 * measures the coverage after dp_consist too).  A synthetic table drawn from the model adds
 * GUM's fitting error and the sampling of its rows on top: the intervals are about the model's
 * marginals, an estimate of the source table's, not about a sample.
 *
 * Pure C: no PostgreSQL headers.  No allocation except where stated.
 */
#ifndef DP_UNCERTAINTY_H
#define DP_UNCERTAINTY_H

#include <stdbool.h>
#include <stdint.h>

#include "dp_marg.h"

/* What the variance bounds are multiplied by: dp_dgauss_init rounds sigma^2 up by < 2^-31. */
#define DP_UNC_SIGMA2_SLACK (1.0 + 1.0 / 1073741824.0)

/* One cell of a marginal with its error bars. */
typedef struct dp_unc_cell
{
	double		estimate;		/* the model's (consistent) count */
	double		variance;		/* bound on the noise variance of its measurement */
	double		lower,
				upper;			/* count interval */
	double		share;			/* estimate / the marginal's total (NaN if the total is 0) */
	double		share_lower,
				share_upper;	/* share interval */
} dp_unc_cell;

/* z such that P(|N(0,1)| <= z) = confidence; NaN unless 0 < confidence < 1. */
double		dp_unc_z(double confidence);

/* The half-width z * sqrt(variance) + 1/2 (see above); NaN for invalid arguments. */
double		dp_unc_halfwidth(double variance, double confidence);

/*
 * The variance bound of every cell of m (var[0..m->ncells)): 1 / (2 rho) times the slack, and for
 * a one-way marginal (nattrs 1) times members[code], the number of original codes behind each
 * merged code (NULL: 1 each).  Returns 0, or -1 if m->rho is not positive and finite or m is
 * spread (below).
 */
int			dp_unc_cell_variance(const dp_marg *m, const uint32_t *members, double *var);

/*
 * Which of margs[0..nmargs) the intervals over attrs (nattrs column indices, any order) should
 * come from: among the marginals whose attributes include attrs, whose rho is positive and which
 * are not spread nor hold every attribute of a spread one (a spread one's cells inside a run share
 * one noise draw and carry the released shares' bias, which no variance bound here describes, and
 * consistency carries that bias into the marginals holding its attributes: no interval from
 * them), the one
 * whose projection is least noisy (the smallest sum of its cells' variance bounds; members[j] as
 * for dp_unc_cell_variance, per column j, may be NULL).  Returns its index, or -1 if none covers
 * attrs (the model did not measure them together: no interval can be given).
 */
int32_t		dp_unc_cover(const dp_marg *margs, uint32_t nmargs, uint32_t nattrs, const uint32_t *attrs,
						 const uint32_t *const *members);

/*
 * The cells of src projected onto out's attributes (out initialised by the caller over a subset
 * of src's, dp_marg_init with src's sizes; its cells are overwritten with the estimates), each with
 * its intervals at confidence, into cells[0..out->ncells).  var holds src's cell variance bounds
 * (dp_unc_cell_variance).  scratch: out->ncells doubles.  Returns 0, or -1 on invalid input
 * (confidence not in (0, 1), out not a subset of src).
 */
int			dp_unc_intervals(const dp_marg *src, const double *var, dp_marg *out, double confidence,
							 double *scratch, dp_unc_cell *cells);

#endif
