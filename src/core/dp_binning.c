/*
 * dp_binning.c - the bins of an integer column declared with bounds only, from a noisy
 * histogram with one cell per value; see dp_binning.h for the rule and its privacy.
 */
#include "dp_binning.h"

#include <math.h>
#include <stddef.h>

bool
dp_binning_fine_range(int64_t lower, int64_t upper)
{
	/* the difference in uint64 is exact for lower <= upper: no overflow */
	return lower <= upper && (uint64_t) upper - (uint64_t) lower < DP_BINNING_MAX_VALUES;
}

/* The noisy mass a bin of w values must reach (dp_binning.h). */
static double
bin_threshold(double sigma, double min_mass, uint32_t w)
{
	return fmax(1.0, fmax(min_mass, DP_BINNING_Z * sigma * sqrt((double) w)));
}

static bool
valid_input(const int64_t *noisy, uint32_t nvalues, int64_t lower, double sigma)
{
	return noisy != NULL && nvalues >= 1 && nvalues <= DP_BINNING_MAX_VALUES &&
		lower <= INT64_MAX - (int64_t) nvalues && isfinite(sigma) && sigma >= 0;
}

int
dp_binning_int(const int64_t *noisy, uint32_t nvalues, int64_t lower, double sigma,
			   double min_mass, int64_t *edges, uint32_t *nedges)
{
	uint32_t	start[DP_BINNING_MAX_VALUES];	/* each bin's first value (offset from lower) */
	double		mass[DP_BINNING_MAX_VALUES];	/* each bin's noisy mass */
	uint32_t	nb = 0,
				v = 0,
				pending = 0;	/* a run joined to the next value's bin starts here */
	double		pending_mass = 0;
	bool		has_pending = false;
	double		t1 = bin_threshold(sigma, min_mass, 1);

	if (!valid_input(noisy, nvalues, lower, sigma) || !isfinite(min_mass) || min_mass < 0 ||
		edges == NULL || nedges == NULL)
		return -1;
	while (v < nvalues)
	{
		uint32_t	r = v,
					first = nb,
					bstart = v;
		double		m = 0;

		if ((double) noisy[v] >= t1)
		{
			/* a resolved value: a bin of its own (with a lighter run before it, if one joined) */
			start[nb] = has_pending ? pending : v;
			mass[nb++] = (double) noisy[v] + (has_pending ? pending_mass : 0);
			has_pending = false;
			v++;
			continue;
		}
		/* a run [v, r) of unresolved values, cut greedily into bins that reach the threshold */
		while (r < nvalues && (double) noisy[r] < t1)
			r++;
		for (uint32_t u = v; u < r; u++)
		{
			m += (double) noisy[u];
			if (m >= bin_threshold(sigma, min_mass, u - bstart + 1))
			{
				start[nb] = bstart;
				mass[nb++] = m;
				bstart = u + 1;
				m = 0;
			}
		}
		if (bstart < r)
		{
			if (nb > first)
				mass[nb - 1] += m;	/* the remainder joins the run's last bin */
			else if (r < nvalues && (nb == 0 || (double) noisy[r] < mass[nb - 1]))
			{
				/* the whole run joins the resolved value after it, the lighter neighbour */
				has_pending = true;
				pending = bstart;
				pending_mass = m;
			}
			else if (nb > 0)
				mass[nb - 1] += m;	/* ... or the bin before it */
			else
			{
				start[nb] = bstart;	/* the whole range: one bin */
				mass[nb++] = m;
			}
		}
		v = r;
	}
	for (uint32_t b = 0; b < nb; b++)
		edges[b] = lower + (int64_t) start[b];
	edges[nb] = lower + (int64_t) nvalues;
	*nedges = nb + 1;
	return 0;
}

int
dp_binning_shape(const int64_t *noisy, uint32_t nvalues, int64_t lower, double sigma,
				 const int64_t *edges, uint32_t nedges, double *pieces)
{
	int			n = 0;

	if (!valid_input(noisy, nvalues, lower, sigma) || edges == NULL || pieces == NULL ||
		nedges < 2 || edges[0] != lower || edges[nedges - 1] != lower + (int64_t) nvalues)
		return -1;
	for (uint32_t b = 0; b + 1 < nedges; b++)
	{
		int64_t		lo = edges[b] - lower,
					hi = edges[b + 1] - lower;	/* offsets lo .. hi - 1 */
		double		w = (double) (hi - lo),
					mass = 0,
					q = 0,
					shrink;

		if (hi <= lo)
			return -1;
		if (hi - lo == 1)
			continue;
		for (int64_t i = lo; i < hi; i++)
			mass += (double) noisy[i];
		if (!(mass > 0))
			continue;			/* nothing released here: uniform over the bin */
		for (int64_t i = lo; i < hi; i++)
			q += ((double) noisy[i] - mass / w) * ((double) noisy[i] - mass / w);
		shrink = q > 0 ? fmax(0.0, 1 - w * sigma * sigma / q) : 0;
		for (int64_t i = lo; i < hi; i++)
		{
			double		u = mass / w,
						weight = u + shrink * ((double) noisy[i] - u);

			if (!(weight > 0) || !isfinite(weight))
				continue;
			pieces[3 * n] = (double) (lower + i);
			pieces[3 * n + 1] = (double) (lower + i);
			pieces[3 * n + 2] = weight;
			n++;
		}
	}
	return n;
}
