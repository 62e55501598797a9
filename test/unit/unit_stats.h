/*
 * unit_stats.h - chi-square critical values for the statistical unit tests (shared by the
 * sampler, PRNG and decoding tests): the regularized upper incomplete gamma function and its inversion.
 */
#ifndef DPSYNTH_UNIT_STATS_H
#define DPSYNTH_UNIT_STATS_H

#include <float.h>
#include <math.h>

/* Regularized upper incomplete gamma Q(a, x) (series / Lentz continued fraction, long double). */
static long double
gamma_q(long double a, long double x)
{
	long double lpre;

	if (x <= 0)
		return 1.0L;
	lpre = -x + a * logl(x) - lgammal(a);
	if (x < a + 1)
	{
		long double ap = a,
					del = 1.0L / a,
					sum = del;

		for (int i = 0; i < 10000000; i++)
		{
			ap += 1;
			del *= x / ap;
			sum += del;
			if (fabsl(del) < fabsl(sum) * LDBL_EPSILON)
				break;
		}
		return 1.0L - sum * expl(lpre);
	}
	else
	{
		const long double tiny = 1e-4000L;
		long double b = x + 1 - a,
					c = 1 / tiny,
					d = 1 / b,
					h = d;

		for (int i = 1; i < 10000000; i++)
		{
			long double an = -i * (i - a),
						del;

			b += 2;
			d = an * d + b;
			if (fabsl(d) < tiny)
				d = tiny;
			c = b + an / c;
			if (fabsl(c) < tiny)
				c = tiny;
			d = 1 / d;
			del = d * c;
			h *= del;
			if (fabsl(del - 1) < LDBL_EPSILON)
				break;
		}
		return expl(lpre) * h;
	}
}

/* P(chi2_df > x) */
static long double
chisq_sf(long double x, long df)
{
	return gamma_q(df / 2.0L, x / 2.0L);
}

/* x with P(chi2_df > x) = alpha, by bisection on the monotone survival function. */
static double
chisq_crit(long df, double alpha)
{
	long double lo = 0,
				hi = df + 50.0L * sqrtl(2.0L * df) + 200;

	for (int i = 0; i < 200; i++)
	{
		long double mid = (lo + hi) / 2;

		if (chisq_sf(mid, df) > alpha)
			lo = mid;
		else
			hi = mid;
	}
	return (double) ((lo + hi) / 2);
}

#endif
