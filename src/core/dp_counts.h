/*
 * dp_counts.h - the one place where discrete Gaussian noise meets a count.
 *
 * Every count dpsynth releases, and every other integer statistic released with additive
 * discrete Gaussian noise (the InDif scores of dp_select.c), gets its noise from dp_noise_counts
 * (or from dp_noise_counts_f64, which converts and calls it): a marginal (src/marginal.c), the
 * histograms of discovery (src/discover.c) and its partition selection (dp_partition_select), the
 * one-way and selected marginals of PrivSyn (dp_privsyn.c) and the measurements of the adaptive
 * method (dp_adaptive.c).  No other file calls dp_dgauss_sample: test/script/16_one_noise_function.sh
 * checks it.  The exponential mechanism's draw (dp_exp_mech_draw) is another mechanism, not
 * additive noise, and stays in dp_sampler.c.
 *
 * Privacy claim: for counts whose L2 sensitivity under add/remove-one is Delta (a histogram of one
 * row per record has Delta = 1: one row changes one cell by 1), adding independent discrete
 * Gaussian noise of variance parameter sigma^2 to every cell, empty cells included, is
 * Delta^2 / (2 sigma^2)-zCDP (Canonne, Kamath & Steinke 2020, Theorem 4, which matches the
 * continuous Gaussian's guarantee, Bun & Steinke 2016, Prop. 1.6).  The noise comes from
 * dp_sampler (exact, integer arithmetic, libsodium randomness): one draw per cell, in cell order.
 *
 * Arithmetic: c + X is computed exactly and clamped to [INT64_MIN, INT64_MAX] (for a count
 * c >= 0 only the upper end can be reached).  The clamp is a deterministic function of the exact
 * sum, i.e. post-processing: it costs no privacy and does not change the claim above.
 *
 * Hostile counts: a count below zero cannot come from counting rows; it means a broken or hostile
 * shard (or a bug).  It is refused, before any noise is drawn: fail closed, releasing nothing,
 * rather than release noise around a value nobody counted (no set of rows makes a count negative,
 * so the refusal tells nothing about the rows).  A huge count (up to INT64_MAX) is
 * accepted and saturates: it is a valid int64 that a shard may send, and false counts from a
 * shard can only distort its own contribution (dp_partial.h).
 *
 * Return codes (the core's convention, dp_internal.h): 0, or -2 for an invalid input, recorded in
 * words with dp_fail(DP_ERR_INVALID) (dp_env.h).  On -2 nothing was drawn and out is untouched.
 *
 * Pure C: no PostgreSQL headers.
 */
#ifndef DP_COUNTS_H
#define DP_COUNTS_H

#include <stddef.h>
#include <stdint.h>

#include "dp_sampler.h"

/*
 * out[i] = clamp(in[i] + X_i) for i in [0, n), X_i independent draws of N_Z(0, sigma^2 of g), drawn
 * in order i = 0, 1, ..., n - 1.  in == out (in place) or the two do not overlap.  Refused (-2):
 * g NULL or not a valid dp_dgauss (dp_dgauss_init's range; whatever n), in or out NULL with
 * n > 0, or any in[i] < 0.  n = 0 with a valid g draws nothing and returns 0 (in and out may
 * then be NULL).
 */
extern int	dp_noise_counts(const dp_dgauss *g, const int64_t *in, int64_t *out, size_t n);

/*
 * The same for counts held as doubles (the marginals of dp_marg.h): each in[i] must be an integer
 * >= 0 (NaN, infinities, fractions and negatives are refused); in[i] >= 2^63 is read as INT64_MAX
 * (a clamp of the count: 1-Lipschitz, so it does not raise the sensitivity).  The noise is
 * dp_noise_counts' (same draws, same order), out[i] = (double) clamp(in[i] + X_i): when
 * |in[i] + X_i| < 2^53 this is exactly in[i] + (double) X_i, what the callers computed before.
 */
extern int	dp_noise_counts_f64(const dp_dgauss *g, const double *in, double *out, size_t n);

#endif
