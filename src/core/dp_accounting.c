/*
 * dp_accounting.c - rho-zCDP <-> (epsilon, delta)-DP conversion, Gaussian noise scale and budget
 * rounding for dpsynth.  Pure C11 + libm; see dp_accounting.h for the arithmetic and references.
 *
 * Privacy-relevant rounding, in one place:
 *
 *  1. dp_zcdp_delta(rho, eps) returns an UPPER bound on the CKS 2020 Corollary 13 expression.
 *     Any alpha > 1 gives a valid delta, so the search for alpha needs no accuracy guarantee;
 *     only the evaluation of the expression at the chosen alpha must not round down.  It is
 *     evaluated in log space, L(alpha) = (alpha-1)(alpha*rho - eps) + alpha*log(1-1/alpha)
 *     - log(alpha-1), and an explicit bound on the floating-point error of L is ADDED before
 *     exponentiating (see cks_log_upper()).  The result is at least the smallest subnormal
 *     double when rho > 0, and clamped to 1 (delta = 1 is always valid).  Anything non-finite
 *     along the way yields 1, the trivially valid (and useless) delta: failure is conservative.
 *
 *  2. dp_zcdp_rho() and dp_zcdp_epsilon() search with bisection on dp_zcdp_delta's upper bound
 *     and return an endpoint at which that upper bound was EVALUATED and found <= delta.  Hence
 *     the true CKS delta at the returned point is <= delta, whatever the monotonicity or rounding
 *     of the computed function: the guarantee does not rest on the search being accurate, only
 *     on item 1.  As defence in depth (e.g. against a libm slightly worse than assumed below)
 *     the endpoint is moved a further relative 2^-40 (~9.1e-13) in the safe direction and
 *     re-verified (falling back to the verified endpoint if, absurdly, that fails).
 *
 *  3. dp_gaussian_sigma2() returns exactly the smallest double >= Delta^2 / (2 rho) (an exact
 *     comparison with FMA-based error-free products), and dp_round_up()/dp_round_down()
 *     compare their candidates with x exactly, so their directions hold with no error at all.
 */
#include "dp_accounting.h"

#include <float.h>
#include <math.h>

/* Smallest alpha - 1 tried.  An optimum below it would mean an optimal delta of 1 - O(1e-10). */
#define ALPHA_T_MIN 0x1p-40
/* Largest alpha - 1 tried (keeps every intermediate finite for all finite rho, eps). */
#define ALPHA_T_MAX 1e120
/* Relative extra step in the safe direction for dp_zcdp_rho / dp_zcdp_epsilon. */
#define SAFETY_STEP 0x1p-40
/* Iteration caps: the loops terminate on their own long before these (see comments). */
#define ALPHA_ITER_MAX 600
#define BISECT_ITER_MAX 4200
#define BRACKET_ITER_MAX 80

/*
 * Upper bound on L(alpha) = log of the CKS expression at this (double) alpha > 1, or +Inf if
 * something is not finite (meaning: no useful bound, use delta = 1).
 *
 * Error analysis (u = 2^-53 = DBL_EPSILON/2; each basic operation has relative error <= u; we
 * assume log, log1p and exp have error <= 2 ulp, i.e. relative <= 4u (glibc: < 1 ulp); terms of
 * order u^2 are absorbed by the slack at the end):
 *   am1 = alpha - 1: exact for alpha <= 2 (Sterbenz), else relative error <= u.
 *   la = log(am1): absolute error <= u (from am1) + 4u|la|.
 *   lg = log(1 - 1/alpha):
 *     alpha < 2:  la - log(alpha); absolute error <= u + 4u|la| + 4u log(alpha) + u|lg|;
 *     alpha >= 2: log1p(-1/alpha); 1/alpha has relative error <= u and the relative condition
 *                 number of q -> log1p(-q), q/((1-q)|log(1-q)|), is <= 1/ln 2 < 1.45 for
 *                 q <= 1/2, so the absolute error is <= (4 + 1.45)u|lg| < 6u|lg|.
 *   t2 = alpha * lg: absolute error <= alpha * err(lg) + u|t2|, which is
 *     <= 2u + 8u|la| + 8u log(alpha) + 3u|t2| (alpha < 2), or <= 7u|t2| (alpha >= 2).
 *   t1 = am1 * (alpha*rho - eps): absolute error <= 4u * am1 * (alpha*rho + eps).
 *   L = (t1 + t2) - la: two additions, each adding <= u * (|t1| + |t2| + |la|).
 *   exp(L) later adds a relative error <= 4u, i.e. an absolute <= 4u in log space.
 * With A = am1*(alpha*rho + eps) + |t2| + |la| + log(alpha) + 4 (so that A >= 4), the total is
 * <= (4 + 8 + 4 + 2 + 1)u * A = 19u * A.  We add margin = 32 * DBL_EPSILON * A = 64u * A, more
 * than three times that; the margin's own rounding (a few u relative) is far inside the slack.
 * For typical arguments A < 100, so the margin is < 1e-12 relative in delta (and ~1e-13 in the
 * resulting rho): negligible for utility.
 */
static double
cks_log_upper(double rho, double eps, double alpha)
{
	double am1 = alpha - 1.0;
	double la = log(am1);
	double lg = (alpha < 2.0) ? la - log(alpha) : log1p(-1.0 / alpha);
	double t1 = am1 * (alpha * rho - eps);
	double t2 = alpha * lg;
	double L = (t1 + t2) - la;
	double A = am1 * (alpha * rho + eps) + fabs(t2) + fabs(la) + log(alpha) + 4.0;
	double U = L + 32.0 * DBL_EPSILON * A;

	if (!isfinite(L) || !isfinite(A) || !isfinite(U))
		return INFINITY;
	return U;
}

/*
 * d/dalpha L(alpha) = (2 alpha - 1) rho - eps + log(1 - 1/alpha).  Its derivative is
 * 2 rho + 1/(alpha (alpha - 1)) > 0, so L is strictly convex on (1, inf) and this is increasing,
 * from -inf at alpha -> 1+ to +inf.  Only its sign is used, and only to steer the search.
 */
static double
cks_dlog(double rho, double eps, double alpha)
{
	double lg = (alpha < 2.0) ? log(alpha - 1.0) - log(alpha) : log1p(-1.0 / alpha);

	return (2.0 * alpha - 1.0) * rho - eps + lg;
}

/*
 * Upper bound on the CKS delta, for finite rho > 0 and finite eps >= 0.  Never NaN; in [0, 1].
 *
 * The optimal alpha is the root of cks_dlog.  It lies below (eps + 1)/(2 rho) + 2, where the
 * derivative is >= (2 alpha - 1) rho - eps - 1/(alpha - 1) >= 1 + 3 rho - 1 > 0 (log(1 - 1/a) >=
 * -1/(a - 1)).  We bisect over t = alpha - 1 in [2^-40, that bound] (capped at 1e120), with
 * geometric midpoints while the bracket spans more than a factor 4 and arithmetic midpoints
 * after, stopping when the two alphas are adjacent doubles: at most ~10 + 60 steps.  The bound
 * is then evaluated at both final endpoints and the smaller is kept; both are valid.
 */
static double
zcdp_delta_upper(double rho, double eps)
{
	double t_hi = (eps + 1.0) / (2.0 * rho) + 1.0;
	double a_lo, a_hi, best, d;
	int i;

	if (!(t_hi <= ALPHA_T_MAX))
		t_hi = ALPHA_T_MAX;
	if (t_hi < 2.0 * ALPHA_T_MIN)
		t_hi = 2.0 * ALPHA_T_MIN;
	a_lo = 1.0 + ALPHA_T_MIN;
	a_hi = 1.0 + t_hi;
	for (i = 0; i < ALPHA_ITER_MAX; i++)
	{
		double t_lo = a_lo - 1.0;
		double t_up = a_hi - 1.0;
		double t_mid = (t_up > 4.0 * t_lo) ? sqrt(t_lo) * sqrt(t_up) : t_lo + 0.5 * (t_up - t_lo);
		double a_mid = 1.0 + t_mid;

		if (!(a_mid > a_lo && a_mid < a_hi))
			break;
		if (cks_dlog(rho, eps, a_mid) < 0.0)
			a_lo = a_mid;
		else
			a_hi = a_mid;
	}
	best = fmin(cks_log_upper(rho, eps, a_lo), cks_log_upper(rho, eps, a_hi));
	if (!(best < 0.0))
		return 1.0;
	d = exp(best);
	/* In the subnormal range exp's error is absolute (<= 1 subnormal ulp): add one. */
	if (d < DBL_MIN)
		d += DBL_TRUE_MIN;
	return fmin(d, 1.0);
}

double
dp_zcdp_delta(double rho, double eps)
{
	if (!isfinite(rho) || !isfinite(eps) || rho < 0.0 || eps < 0.0)
		return NAN;
	if (rho == 0.0)
		return 0.0;
	return zcdp_delta_upper(rho, eps);
}

double
dp_zcdp_rho(double eps, double delta)
{
	double lo = 0.0, hi, ln1d, r;
	int i;

	if (!isfinite(eps) || !(eps > 0.0) || !(delta > 0.0 && delta < 1.0))
		return NAN;

	/*
	 * Invariant: lo == 0 (delta 0 <= delta) or zcdp_delta_upper(lo, eps) <= delta was evaluated.
	 * Start from the classic bound's rho = (sqrt(ln(1/delta) + eps) - sqrt(ln(1/delta)))^2,
	 * which the CKS bound beats, if the computed bound confirms it; this only saves iterations.
	 */
	ln1d = -log(delta);
	r = sqrt(ln1d + eps) - sqrt(ln1d);
	r = r * r;
	if (r > 0.0 && isfinite(r) && zcdp_delta_upper(r, eps) <= delta)
		lo = r;

	/* An upper end where the bound exceeds delta (delta -> 1 as rho -> inf, and delta < 1). */
	hi = eps + 1.0;
	for (i = 0; !(zcdp_delta_upper(hi, eps) > delta); i++)
	{
		hi *= 2.0;
		if (i >= BRACKET_ITER_MAX || !isfinite(hi))
			return NAN;
	}
	if (!(lo < hi))
		lo = 0.0;

	/* Bisection; ends when lo and hi are adjacent doubles (<= ~1100 steps from lo = 0). */
	for (i = 0; i < BISECT_ITER_MAX; i++)
	{
		double mid = lo + 0.5 * (hi - lo);

		if (!(mid > lo && mid < hi))
			break;
		if (zcdp_delta_upper(mid, eps) <= delta)
			lo = mid;
		else
			hi = mid;
	}

	/* Defence in depth: step down by a relative 2^-40 and re-verify. */
	r = lo * (1.0 - SAFETY_STEP);
	if (r > 0.0 && r < lo && zcdp_delta_upper(r, eps) <= delta)
		return r;
	return lo;
}

double
dp_zcdp_epsilon(double rho, double delta)
{
	double lo = 0.0, hi, e;
	int i;

	if (!isfinite(rho) || !(rho >= 0.0) || !(delta > 0.0 && delta < 1.0))
		return NAN;
	if (rho == 0.0)
		return 0.0;
	if (zcdp_delta_upper(rho, 0.0) <= delta)
		return 0.0;

	/*
	 * Invariant: zcdp_delta_upper(rho, lo) > delta and zcdp_delta_upper(rho, hi) <= delta (both
	 * evaluated).  The classic eps = rho + 2 sqrt(rho ln(1/delta)) is mathematically enough: at
	 * alpha = (eps + rho)/(2 rho) the CKS expression is the classic exp(-(eps-rho)^2/(4 rho)) = delta
	 * times (1-1/alpha)^alpha/(alpha-1) = t^t/(1+t)^(1+t) <= 1 (t = alpha-1).  It is still
	 * verified, not assumed (doubling while it fails).
	 */
	hi = rho + 2.0 * sqrt(rho * -log(delta));
	for (i = 0; !(isfinite(hi) && zcdp_delta_upper(rho, hi) <= delta); i++)
	{
		if (i >= BRACKET_ITER_MAX || !isfinite(hi))
			return NAN;
		hi = 2.0 * hi + 1.0;
	}

	for (i = 0; i < BISECT_ITER_MAX; i++)
	{
		double mid = lo + 0.5 * (hi - lo);

		if (!(mid > lo && mid < hi))
			break;
		if (zcdp_delta_upper(rho, mid) <= delta)
			hi = mid;
		else
			lo = mid;
	}

	/* Defence in depth: step up by a relative 2^-40 and re-verify. */
	e = hi * (1.0 + SAFETY_STEP);
	if (isfinite(e) && e > hi && zcdp_delta_upper(rho, e) <= delta)
		return e;
	return hi;
}

/*
 * Is m * d >= p + pe exactly?  (p, pe) and (c, ce) = m*d split by FMA are both "normalized"
 * double-double values: the high part is the round-to-nearest of the exact sum.  For such pairs
 * c > p implies c + ce >= (pred(c) + c)/2 >= (p + succ(p))/2 >= p + pe, so comparing the high
 * parts first and then the low parts is exact.  The callers keep every quantity in [2^-4, 2],
 * where FMA remainders (>= 2^-110 in magnitude or 0) never underflow.
 */
static int
prod_ge(double m, double d, double p, double pe)
{
	double c = m * d;
	double ce = fma(m, d, -c);

	return c > p || (c == p && ce >= pe);
}

double
dp_gaussian_sigma2(double rho, double sensitivity)
{
	double ms, mr, p, pe, d, m, r;
	int es, er, i;

	if (!isfinite(rho) || !isfinite(sensitivity) || !(rho > 0.0) || !(sensitivity > 0.0))
		return NAN;

	/* sensitivity = ms 2^es, rho = mr 2^er, ms, mr in [1/2, 1); s^2/(2 rho) = ms^2/(2 mr) 2^(2es-er) */
	ms = frexp(sensitivity, &es);
	mr = frexp(rho, &er);
	p = ms * ms;				/* in [1/4, 1) */
	pe = fma(ms, ms, -p);		/* ms^2 = p + pe exactly */
	d = 2.0 * mr;				/* exact, in [1, 2) */

	/* m := the smallest double with m * d >= ms^2, starting from the rounded quotient. */
	m = p / d;					/* in (1/8, 1), within 2 ulps of the exact quotient */
	for (i = 0; !prod_ge(m, d, p, pe); i++)
	{
		if (i >= 8)
			return NAN;			/* cannot happen */
		m = nextafter(m, INFINITY);
	}
	for (i = 0; i < 8; i++)
	{
		double down = nextafter(m, 0.0);

		if (!prod_ge(down, d, p, pe))
			break;
		m = down;
	}

	/* Scaling by a power of two is exact in the normal range. */
	r = ldexp(m, 2 * es - er);
	if (!isfinite(r))
		return NAN;
	if (r < DBL_MIN)			/* exact value < DBL_MIN (rounding is monotone) */
		r = DBL_MIN;
#ifdef DPSYNTH_TEST_HALVE_NOISE
	/*
	 * A deliberately broken build for test/script/10_privacy_audit.sh ONLY: every noise scale
	 * halved (variance / 4), so that the empirical audit can show it catches a privacy bug.
	 * Never defined by the Makefile.
	 */
	r /= 4;
#endif
	return r;
}

static int
round_args_ok(double x, double quantum)
{
	return isfinite(x) && isfinite(quantum) && quantum > 0.0;
}

/*
 * k is an integer-valued double with |k| <= 2^52 + 2, so k +/- 1 is exact; fl(k * quantum) is
 * non-decreasing in k (rounding is monotone), so the two adjustment loops find the extreme k.
 * x / quantum is within an ulp or so of the exact ratio, so each loop runs at most a few times.
 */
double
dp_round_up(double x, double quantum)
{
	double k, r;
	int i;

	if (!round_args_ok(x, quantum))
		return NAN;
	k = ceil(x / quantum);
	if (!(fabs(k) <= 0x1p52))
		return NAN;
	for (i = 0; k * quantum < x; i++)
	{
		if (i >= 8)
			return NAN;
		k += 1.0;
	}
	for (i = 0; i < 8 && (k - 1.0) * quantum >= x; i++)
		k -= 1.0;
	r = k * quantum;
	if (!isfinite(r) || !(r >= x))
		return NAN;
	return r + 0.0;				/* -0.0 -> +0.0 */
}

double
dp_round_down(double x, double quantum)
{
	double k, r;
	int i;

	if (!round_args_ok(x, quantum))
		return NAN;
	k = floor(x / quantum);
	if (!(fabs(k) <= 0x1p52))
		return NAN;
	for (i = 0; k * quantum > x; i++)
	{
		if (i >= 8)
			return NAN;
		k -= 1.0;
	}
	for (i = 0; i < 8 && (k + 1.0) * quantum <= x; i++)
		k += 1.0;
	r = k * quantum;
	if (!isfinite(r) || !(r <= x))
		return NAN;
	return r + 0.0;
}
