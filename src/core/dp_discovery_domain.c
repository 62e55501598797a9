/*
 * dp_discovery_domain.c - from released bounds and quantile edges to the domain a column stores:
 * saturating conversions, widening to whole bins, equal-width edges that must increase.  Pure
 * post-processing of released values and public facts of the type (dp_discovery.h).
 */
#include "dp_discovery.h"

#include <math.h>
#include <stdlib.h>

/* ============================================================================================
 * 4. From released bounds and edges to a stored domain
 * ============================================================================================ */

int64_t
dp_double_to_int64_sat(double x)
{
	if (isnan(x))
		return 0;
	if (x >= 9223372036854775808.0)
		return INT64_MAX;
	if (x < -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t) x;
}

/* Whether dp_real_equal_edges gives strictly increasing edges for nbins (without storing them). */
static bool
real_equal_edges_increase(double lower, double upper, uint32_t nbins)
{
	double		prev = lower;

	for (uint32_t i = 1; i <= nbins; i++)
	{
		double		e = i == nbins ? upper : lower + (upper - lower) * ((double) i / nbins);

		if (!(e > prev))
			return false;
		prev = e;
	}
	return true;
}

int
dp_discovered_bounds(bool integral, bool found, double lo, double hi, double type_lo,
					 double type_hi, uint32_t max_bins, double *lower, double *upper,
					 uint32_t *bins)
{
	double		limit = integral ? DP_DISCOVERED_INT_LIMIT : DP_DISCOVERED_REAL_LIMIT;
	double		tl,
				th;
	uint32_t	b = max_bins;

	if (lower == NULL || upper == NULL || bins == NULL || isnan(type_lo) || isnan(type_hi) ||
		max_bins < 1 || max_bins > DP_DISCOVERED_MAX_BINS)
		return -1;
	tl = fmax(integral ? ceil(type_lo) : type_lo, -limit);
	th = fmin(integral ? floor(type_hi) : type_hi, limit);
	if (!(tl < th))
		return -1;
	if (!found || isnan(lo) || isnan(hi))
	{
		lo = 0;					/* the public fallback */
		hi = 1;
	}
	if (lo > hi)
	{
		double		t = lo;

		lo = hi;
		hi = t;
	}
	if (integral)
	{
		lo = floor(lo);			/* outwards to integers (+/-Infinity stay, clamped below) */
		hi = ceil(hi);
	}
	lo = fmin(fmax(lo, tl), th);
	hi = fmin(fmax(hi, tl), th);
	if (!(lo < hi))
	{
		/* collapsed to one value (a constant column, or clamped to an end): two values */
		if (hi < th)
			hi = integral ? lo + 1 : nextafter(lo, INFINITY);
		else
			lo = integral ? hi - 1 : nextafter(hi, -INFINITY);
	}
	if (integral)
	{
		if (hi - lo + 1 < (double) b)
			b = (uint32_t) (hi - lo + 1);
	}
	else
		while (b > 1 && !real_equal_edges_increase(lo, hi, b))
			b /= 2;
	*lower = lo;
	*upper = hi;
	*bins = b;
	return 0;
}

uint32_t
dp_discovered_edges(bool integral, double *edges, uint32_t n, double lower, double upper)
{
	bool		ok = edges != NULL && n >= 2 && n <= DP_DISCOVERED_MAX_BINS + 1;

	for (uint32_t i = 0; ok && i < n; i++)
	{
		if (!isfinite(edges[i]) || (i > 0 && !(edges[i] > edges[i - 1])))
			ok = false;
		else if (integral && (edges[i] != floor(edges[i]) || fabs(edges[i]) > DP_DISCOVERED_INT_LIMIT + 1))
			ok = false;
	}
	if (ok || edges == NULL)
		return ok ? n : 0;
	edges[0] = lower;
	edges[1] = integral ? upper + 1 : upper;
	return 2;
}
