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

#include "dp_domain.h"
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

/*
 * The shape of the values inside numeric bins: a piecewise-constant density over the values,
 * npieces pieces of 3 doubles (lo, hi, weight), increasing and disjoint, weight finite and >= 0.
 * Integer domains: a piece is the integers lo..hi (both included, integral doubles, lo <= hi);
 * real domains: the interval [lo, hi) (lo < hi).  It is post-processing of a released histogram
 * (discover.c keeps the noisy histogram that placed the quantile edges, shrunk inside each bin).
 *
 * dp_shape_init clips the pieces to every bin of d (a piece's weight in proportion to the part
 * of it kept: integers counted, reals by length) and keeps each bin's cumulative weights.  It
 * returns 0, or -1 when the pieces are invalid (then nothing is allocated) or memory runs out.
 * dp_shape_pick picks one of bin's parts by weight and returns it in [*lo, *hi] (integers: both
 * included; reals: [*lo, *hi), inside the bin), where the caller draws uniformly (dp_decode_int,
 * dp_decode_real).  The picks of one bin are stratified: the k-th pick in bin b reads the point
 * frac(u_b + k / phi) of the bin's cumulative weight (phi the golden ratio, u_b one dp_prng_unit
 * drawn at the bin's first pick), a low-discrepancy sequence, so that after k picks every part
 * holds its share of them up to O(log k) picks, where independent picks would stray by about
 * sqrt(k).  The bin totals come from the model; the values inside a bin then follow its shape
 * without a draw's sampling error on top of the shape's noise.  A bin that no piece of positive weight
 * overlaps has no shape: dp_shape_pick returns false and draws nothing, and the caller draws
 * over the whole bin, as without a shape.
 */
typedef struct dp_shape
{
	uint32_t	nbins;
	uint32_t   *start;			/* nbins + 1: bin b's parts are start[b] .. start[b + 1] - 1 */
	double	   *lo;
	double	   *hi;
	double	   *cum;			/* cumulative weight of the bin's parts, up to and including this one */
	double	   *phase;			/* nbins: the point of the bin's next pick in [0, 1), < 0 before its first */
} dp_shape;

int			dp_shape_init(dp_shape *s, const dp_domain *d, const double *pieces, uint32_t npieces);
/*
 * Puts pieces (lo <= hi for integers, lo < hi for reals, weights >= 0) in the order
 * dp_shape_init requires: sorted by lo, and a piece that starts inside the one before (or, for
 * integers, at its last value) merged into it (the later end kept, the weights added).  Integer
 * piece ends beyond 2^53 are rounded doubles that can meet so.  Returns the pieces kept.
 */
uint32_t	dp_shape_tidy(double *pieces, uint32_t npieces, bool integral);
void		dp_shape_free(dp_shape *s);
bool		dp_shape_pick(dp_shape *s, dp_prng *p, uint32_t bin, double *lo, double *hi);

#endif							/* DP_DECODE_H */
