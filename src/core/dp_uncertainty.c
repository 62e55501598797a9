/*
 * dp_uncertainty.c - error bars from a released model (see dp_uncertainty.h for the noise model,
 * the intervals and what they do not cover).
 */
#include "dp_uncertainty.h"

#include <math.h>
#include <string.h>

/* P(|N(0,1)| <= z) */
static double
normal_coverage(double z)
{
	return erf(z / sqrt(2.0));
}

double
dp_unc_z(double confidence)
{
	double		lo = 0,
				hi = 40;

	if (!(confidence > 0 && confidence < 1))
		return NAN;
	/*
	 * bisection: coverage is increasing in z; at most 200 halvings reach the double's resolution,
	 * where mid rounds to lo or hi: a halving that moves neither bound is a fixed point, and every
	 * further one would repeat it, so the loop stops there with what 200 would give
	 */
	for (int i = 0; i < 200; i++)
	{
		double		mid = (lo + hi) / 2;
		double		was_lo = lo,
					was_hi = hi;

		if (normal_coverage(mid) < confidence)
			lo = mid;
		else
			hi = mid;
		if (lo == was_lo && hi == was_hi)
			break;
	}
	return hi;
}

/* The half-width for z = dp_unc_z(confidence) (NaN for an invalid confidence). */
static double
halfwidth_z(double variance, double z)
{
	if (isnan(z) || !(variance >= 0) || !isfinite(variance))
		return NAN;
	return z * sqrt(variance) + 0.5;
}

double
dp_unc_halfwidth(double variance, double confidence)
{
	return halfwidth_z(variance, dp_unc_z(confidence));
}

int
dp_unc_cell_variance(const dp_marg *m, const uint32_t *members, double *var)
{
	double		v;

	if (!(m->rho > 0) || !isfinite(m->rho) || m->spread)
		return -1;
	v = DP_UNC_SIGMA2_SLACK / (2 * m->rho);
	for (uint64_t c = 0; c < m->ncells; c++)
		var[c] = (m->nattrs == 1 && members) ? v * members[c] : v;
	return 0;
}

/* Sum of the variance bounds of m's cells, without allocating. */
static double
total_variance(const dp_marg *m, const uint32_t *members)
{
	double		v = DP_UNC_SIGMA2_SLACK / (2 * m->rho);
	double		sum = 0;

	if (m->nattrs != 1 || !members)
		return v * (double) m->ncells;
	for (uint64_t c = 0; c < m->ncells; c++)
		sum += v * members[c];
	return sum;
}

/*
 * Whether m is spread, or holds every attribute of a spread marginal: consistency (dp_consist)
 * pulls m's cells over those attributes toward the spread one's, and with them its bias.
 */
static bool
shaped_by_spread(const dp_marg *margs, uint32_t nmargs, const dp_marg *m)
{
	if (m->spread)
		return true;
	for (uint32_t k = 0; k < nmargs; k++)
		if (margs[k].spread && dp_marg_contains(m, margs[k].nattrs, margs[k].attrs))
			return true;
	return false;
}

int32_t
dp_unc_cover(const dp_marg *margs, uint32_t nmargs, uint32_t nattrs, const uint32_t *attrs,
			 const uint32_t *const *members)
{
	int32_t		best = -1;
	double		best_var = INFINITY;

	for (uint32_t k = 0; k < nmargs; k++)
	{
		const dp_marg *m = &margs[k];
		double		v;

		if (!(m->rho > 0) || !isfinite(m->rho) || !dp_marg_contains(m, nattrs, attrs) ||
			shaped_by_spread(margs, nmargs, m))
			continue;
		v = total_variance(m, members ? members[m->attrs[0]] : NULL);
		if (v < best_var)
		{
			best = (int32_t) k;
			best_var = v;
		}
	}
	return best;
}

/* The count interval of x with variance bound v at z = dp_unc_z(confidence), clamped at 0. */
static void
count_interval(double x, double v, double z, double *lo, double *hi)
{
	double		h = halfwidth_z(v, z);

	*lo = fmax(0, x - h);
	*hi = fmax(0, x + h);
}

int
dp_unc_intervals(const dp_marg *src, const double *var, dp_marg *out, double confidence,
				 double *scratch, dp_unc_cell *cells)
{
	dp_marg		src_var = *src;
	dp_marg		out_var = *out;
	double		total = 0,
				total_var = 0,
				z = dp_unc_z(confidence),
				z_root = dp_unc_z(sqrt(confidence));

	if (!(confidence > 0 && confidence < 1))
		return -1;
	/* the estimates and their variance bounds, projected the same way (variances add) */
	if (dp_marg_project(src, out) != 0)
		return -1;
	src_var.cells = (double *) var;
	out_var.cells = scratch;
	if (dp_marg_project(&src_var, &out_var) != 0)
		return -1;
	for (uint64_t c = 0; c < out->ncells; c++)
	{
		total += out->cells[c];
		total_var += scratch[c];
	}

	for (uint64_t c = 0; c < out->ncells; c++)
	{
		dp_unc_cell *u = &cells[c];
		double		x = out->cells[c],
					y = total - x,
					x_lo,
					x_hi,
					y_lo,
					y_hi;

		u->estimate = x;
		u->variance = scratch[c];
		count_interval(x, u->variance, z, &u->lower, &u->upper);
		u->share = total > 0 ? x / total : NAN;

		/*
		 * The share x / (x + y): the rest y = total - x has the other cells' noise, independent of
		 * x's, so the box of two intervals at sqrt(confidence) holds both with probability
		 * confidence, and the ratio is monotone on it.
		 */
		count_interval(x, u->variance, z_root, &x_lo, &x_hi);
		count_interval(fmax(y, 0), fmax(total_var - u->variance, 0), z_root, &y_lo, &y_hi);
		u->share_lower = x_lo + y_hi > 0 ? x_lo / (x_lo + y_hi) : 0;
		u->share_upper = x_hi + y_lo > 0 ? x_hi / (x_hi + y_lo) : 1;
	}
	return 0;
}
