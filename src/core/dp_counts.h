/*
 * dp_counts.h - releasing a vector of counts with exact discrete Gaussian noise.
 *
 * Privacy claim (dp_counts_release): for counts whose L2 sensitivity under add/remove-one is
 * Delta (a histogram of one row per record has Delta = 1: one row changes one cell by 1), adding
 * independent discrete Gaussian noise of variance parameter sigma^2 to every cell, empty cells
 * included, is Delta^2 / (2 sigma^2)-zCDP (Canonne, Kamath & Steinke 2020, Theorem 4, which
 * matches the continuous Gaussian's guarantee, Bun & Steinke 2016, Prop. 1.6).  The noise comes
 * from dp_sampler (exact, integer arithmetic, libsodium randomness).
 *
 * Pure C: no PostgreSQL headers.
 */
#ifndef DP_COUNTS_H
#define DP_COUNTS_H

#include <stddef.h>
#include <stdint.h>

#include "dp_sampler.h"

/* Adds one independent discrete Gaussian draw to each of the n cells. */
void		dp_counts_release(int64_t *counts, size_t n, const dp_dgauss *noise);

#endif
