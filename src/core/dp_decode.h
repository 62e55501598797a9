/*
 * dp_decode.h - turning a cell (bin) of a public domain back into a typed value.
 *
 * Decoding is post-processing of released statistics: the bins come from public domains
 * (dp_domain.h) and the randomness from the seedable post-processing generator (dp_prng.h).  It
 * reads no private data and spends no budget.
 *
 * Every function returns a value inside the bin it was given, and respects the column's type:
 * integers stay integers, a numeric column's scale is honoured, and the column's bounds are never
 * left.  Pure C: no PostgreSQL headers.
 */
#ifndef DP_DECODE_H
#define DP_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include "dp_prng.h"

/*
 * Uniform on the integers of [lo, hi] (both included); any int64 range works, including
 * [INT64_MIN, INT64_MAX] and the point mass [v, v].  For integers, dates (int days) and timestamps
 * (int64 microseconds).  lo > hi is a caller error; lo is then returned.
 */
int64_t		dp_decode_int(dp_prng *p, int64_t lo, int64_t hi);

/*
 * A value of the real bin [lo, hi) (or [lo, hi] if hi_closed), intersected with the column's
 * bounds [col_lower, col_upper] (NaN or infinite bounds: no constraint; bounds that miss the bin
 * entirely are ignored as a caller error).  lo and hi must be finite with lo <= hi; any finite
 * range works, also [-1e300, 1e300] whose width overflows a double.
 *
 * scale < 0: an unconstrained double (float4/float8, unconstrained numeric), uniform on the
 *   interval; lo <= v < hi (<= hi if closed) holds exactly in double comparison.  A point-mass bin
 *   (lo == hi) returns lo.
 * scale >= 0: numeric(p, scale).  Uniform over the multiples of 10^-scale in the interval; the
 *   returned double is such that printing it with `scale` decimals ("%.*f") and parsing that back
 *   gives the same double, which lies in the interval.  Where doubles are coarser than 10^-scale
 *   (|v| * 10^scale beyond 2^51, or scale > 22) the value is a uniform double of the interval
 *   rounded that way, so only approximately uniform over the multiples.
 *   If the interval holds no such multiple (a bin narrower than 10^-scale), the result is the
 *   multiple of 10^-scale nearest to the bin's midpoint among those inside [col_lower, col_upper];
 *   if the column's bounds hold no multiple either, simply the multiple nearest to the midpoint
 *   (no value of the column type could then satisfy the bounds).
 */
double		dp_decode_real(dp_prng *p, double lo, double hi, bool hi_closed, int scale,
						   double col_lower, double col_upper);

#endif							/* DP_DECODE_H */
