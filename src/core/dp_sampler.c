/*
 * dp_sampler.c - exact discrete Laplace and discrete Gaussian samplers.
 *
 * Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential
 * Privacy", NeurIPS 2020 (CKS20), Algorithms 1, 2 and 3.  The privacy proofs
 * of the mechanisms that use this noise assume the exact distributions, so
 * every random decision below compares a uniform integer from dp_random with
 * an exact integer; floating point appears only in dp_dgauss_init, to pick
 * the rational sigma^2 (rounded up), and in dp_dgauss_sigma2, for reporting.
 */
#include "dp_sampler.h"

#include <math.h>
#include <stdlib.h>

#include "dp_random.h"

typedef unsigned __int128 u128;

#define U128_MAX (~(u128) 0)

/*
 * Bernoulli(exp(-r/m)) for 0 <= r <= m, m >= 1: CKS20 Algorithm 1 for
 * gamma = r/m in [0, 1].  With K = 1, 2, ... draw A ~ Bernoulli(gamma/K)
 * until A = 0; then P(K >= k) = gamma^(k-1) / (k-1)!, and
 * P(K odd) = sum_j (-gamma)^j / j! = exp(-gamma).
 *
 * Bernoulli(r / (m K)) is one uniform draw on [0, m K) compared with r; if
 * m K would not fit 128 bits it is the AND of independent Bernoulli(r/m) and
 * Bernoulli(1/K), which has the same probability.  K cannot wrap: reaching
 * K = 2^64 takes 2^64 loop iterations (centuries) and has probability
 * below 1/(2^64 - 1)!.
 */
static int
bern_exp_frac(u128 r, u128 m)
{
	uint64_t	k = 1;

	/* gamma = 0: A ~ Bernoulli(0) stops at K = 1 without randomness. */
	if (r == 0)
		return 1;
	for (;;)
	{
		int			a;

		if (m <= U128_MAX / k)
			a = dp_random_uniform128_unguarded(m * k) < r;
		else
			a = dp_random_uniform128_unguarded(m) < r &&
				dp_random_uniform_unguarded(k) == 0;
		if (!a)
			break;
		k++;
	}
	return (int) (k & 1);
}

/*
 * Bernoulli(exp(-1)): Algorithm 1 with gamma = 1.  The K = 1 trial is
 * Bernoulli(1) = 1 (the general code draws uniform(1) = 0, which consumes no
 * randomness), so start at K = 2 and draw Bernoulli(1/K) = [uniform(K) == 0].
 */
static int
bern_exp1(void)
{
	uint64_t	k = 2;

	while (dp_random_uniform_unguarded(k) == 0)
		k++;
	return (int) (k & 1);
}

/*
 * Bernoulli(exp(-gamma)) for gamma = (qhi * 2^128 + qlo) + r/m, 0 <= r < m:
 * CKS20 Algorithm 1's decomposition for gamma > 1, exp(-gamma) =
 * exp(-1)^floor(gamma) * exp(-frac(gamma)), as floor(gamma) independent
 * Bernoulli(exp(-1)) trials that must all succeed, then Bernoulli(exp(-frac)).
 * A failed trial ends the loop, so a huge floor(gamma) costs ~1.6 trials on
 * average; the 256-bit counter keeps even astronomical gamma exact.
 */
static int
bern_exp_rational256(u128 qhi, u128 qlo, u128 r, u128 m)
{
	while (qhi != 0 || qlo != 0)
	{
		if (!bern_exp1())
			return 0;
		if (qlo == 0)
			qhi--;
		qlo--;
	}
	return bern_exp_frac(r, m);
}

/* Full 256-bit product a * b = hi * 2^128 + lo. */
static void
mul_128x128(u128 a, u128 b, u128 *hi, u128 *lo)
{
	uint64_t	a0 = (uint64_t) a,
				a1 = (uint64_t) (a >> 64);
	uint64_t	b0 = (uint64_t) b,
				b1 = (uint64_t) (b >> 64);
	u128		p00 = (u128) a0 * b0;
	u128		p01 = (u128) a0 * b1;
	u128		p10 = (u128) a1 * b0;
	u128		p11 = (u128) a1 * b1;
	u128		mid;

	/* < 3 * 2^64: cannot overflow */
	mid = (p00 >> 64) + (uint64_t) p01 + (uint64_t) p10;
	*lo = (mid << 64) | (uint64_t) p00;
	*hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
}

/*
 * (hi * 2^128 + lo) = (qhi * 2^128 + qlo) * m + r, 0 <= r < m, m >= 1.
 * Schoolbook binary long division for the low half; used only on the rare
 * path where the acceptance exponent's numerator exceeds 128 bits.
 */
static void
divmod_256by128(u128 hi, u128 lo, u128 m, u128 *qhi, u128 *qlo, u128 *r)
{
	u128		rem = hi % m;
	u128		q = 0;
	int			i;

	*qhi = hi / m;
	for (i = 127; i >= 0; i--)
	{
		/*
		 * rem < m; the true value 2 rem + bit < 2m may exceed 2^128 (carry),
		 * in which case it certainly exceeds m and the wrapped subtraction
		 * gives the right result.
		 */
		int			carry = (int) (rem >> 127);

		rem = (rem << 1) | ((lo >> i) & 1);
		q <<= 1;
		if (carry || rem >= m)
		{
			rem -= m;
			q |= 1;
		}
	}
	*qlo = q;
	*r = rem;
}

/*
 * Discrete Laplace, P(y) proportional to exp(-|y| s/t), conditioned on
 * |y| <= INT64_MAX: CKS20 Algorithm 2.
 *   U ~ uniform{0..t-1}, kept with probability exp(-U/t): U is distributed
 *     as X mod t for X ~ Geometric(1 - exp(-1/t)), i.e. P(U) ~ exp(-U/t);
 *   V ~ number of Bernoulli(exp(-1)) successes before the first failure:
 *     V is floor(X / t), P(V = v) ~ exp(-v), independent of U;
 *   X = U + t V has P(X = x) ~ exp(-x/t); Y = floor(X/s) has
 *     P(Y = y) ~ exp(-y s/t);
 *   a uniform sign, rejecting "-0" so that 0 is not counted twice.
 * Rejecting |Y| > INT64_MAX as well conditions the result on that event;
 * the removed mass is P(|Y| > INT64_MAX) <= 2 exp(-2^63 s/t).  X is kept in
 * 128 bits, so nothing else overflows (V < 2^64, as for K above).
 */
static int64_t
dlaplace_unguarded(uint64_t s, uint64_t t)
{
	for (;;)
	{
		uint64_t	u = dp_random_uniform_unguarded(t);
		uint64_t	v = 0;
		u128		x;
		u128		y;
		int			negative;

		if (!bern_exp_frac(u, t))
			continue;
		while (bern_exp1())
			v++;
		x = (u128) u + (u128) t * v;
		y = x / s;
		if (y > (u128) INT64_MAX)
			continue;
		negative = (int) dp_random_uniform_unguarded(2);
		if (negative && y == 0)
			continue;
		return negative ? -(int64_t) y : (int64_t) y;
	}
}

int64_t
dp_dlaplace_sample(uint64_t s, uint64_t t)
{
	if (s == 0 || t == 0)
		abort();
	dp_random_fork_guard();
	return dlaplace_unguarded(s, t);
}

/* Bernoulli(exp(-num/den)), den >= 1, without the fork check (see dp_random.h) */
static int
bern_exp_unguarded(uint64_t num, uint64_t den)
{
	return bern_exp_rational256(0, num / den, num % den, den);
}

int
dp_bernoulli_exp(uint64_t num, uint64_t den)
{
	if (den == 0)
		abort();
	dp_random_fork_guard();
	return bern_exp_unguarded(num, den);
}

/*
 * The exponential mechanism's draws (dp_exp_mech in dp_adaptive.c sets num; dp_adaptive.h gives
 * its privacy, eps rounded down to num's grid): a uniform
 * proposal r in [0, k), accepted with probability exp(-num * gap[r] / 2^40), gap[r] = max -
 * score[r] >= 0, as a product of exact Bernoulli(exp(-num * piece / 2^40)) factors whose
 * numerators fit 64 bits (exp(-a - b) = exp(-a) exp(-b), independent factors).  Exact: a round
 * proposes r with probability 1/k and accepts it with exp(-num * gap[r] / 2^40), so the drawn r,
 * the first accepted, has probability proportional to exp(-num * gap[r] / 2^40), and the best
 * candidate (gap 0) is always accepted, so a round succeeds with probability >= 1/k.  One fork
 * check for the whole draw: a rejection loop over thousands of candidates made one getpid() per
 * factor, most of the mechanism's time on wide tables.
 */
uint32_t
dp_exp_mech_draw(const int64_t *score, uint32_t k, int64_t max, uint64_t num)
{
	if (k == 0)
		abort();
	dp_random_fork_guard();
	for (;;)
	{
		uint32_t	r = (uint32_t) dp_random_uniform_unguarded(k);
		uint64_t	diff = (uint64_t) max - (uint64_t) score[r];	/* max >= score: no wrap */
		int			accept = 1;

		while (accept && num > 0 && diff > 0)
		{
			uint64_t	piece = diff;

			if (piece > UINT64_MAX / num)
				piece = UINT64_MAX / num;
			accept = bern_exp_unguarded(num * piece, (uint64_t) 1 << 40);
			diff -= piece;
		}
		if (accept)
			return r;
	}
}

/* Bernoulli(num/den) = [uniform{0..den-1} < num], exact. */
int
dp_bernoulli_rational(uint64_t num, uint64_t den)
{
	if (den == 0 || num > den)
		abort();
	dp_random_fork_guard();
	return dp_random_uniform_unguarded(den) < num;
}

/* floor(sqrt(num/den)) by exact integer comparison a^2 den <= num. */
static uint64_t
floor_sqrt_ratio(uint64_t num, uint64_t den)
{
	uint64_t	a = (uint64_t) sqrt((double) num / (double) den);

	/* The double estimate is off by at most one or two; fix it exactly. */
	while (a > 0 && (u128) a * a * den > num)
		a--;
	while ((u128) (a + 1) * (a + 1) * den <= num)
		a++;
	return a;
}

/*
 * sigma^2 = num/den with den = 2^k chosen so that num = ceil(sigma2 * 2^k)
 * lies in [2^31, 2^32] when sigma2 < 2^31 (den = 1 and num = ceil(sigma2)
 * above).  Scaling by 2^k and ceil() are exact in double arithmetic, so
 * num/den >= sigma2 exactly and (num/den - sigma2) / sigma2 < 1/num <= 2^-31.
 * Rounding up errs towards more noise, never less.  Common factors of two are
 * then removed (same value, smaller integers, faster arithmetic).
 */
int
dp_dgauss_init(dp_dgauss *g, double sigma2)
{
	int			e;
	int			k;
	uint64_t	num;
	uint64_t	den;
	uint64_t	t;

	if (g == NULL || !isfinite(sigma2) ||
		!(sigma2 >= DP_DGAUSS_SIGMA2_MIN) || !(sigma2 <= DP_DGAUSS_SIGMA2_MAX))
		return -1;
	(void) frexp(sigma2, &e);	/* sigma2 in [2^(e-1), 2^e) */
	k = 32 - e;
	if (k < 0)
		k = 0;
	num = (uint64_t) ceil(ldexp(sigma2, k));
	den = (uint64_t) 1 << k;
	while ((num & 1) == 0 && (den & 1) == 0)
	{
		num >>= 1;
		den >>= 1;
	}
	t = floor_sqrt_ratio(num, den) + 1;
	g->num = num;
	g->den = den;
	g->t = t;
	return 0;
}

double
dp_dgauss_sigma2(const dp_dgauss *g)
{
	return (double) g->num / (double) g->den;
}

/*
 * den * t and m = 2 num den t^2 as 128-bit integers; -1 unless num, den, t >= 1,
 * den * t < 2^64 and m < 2^128, which is what dgauss_exponent needs to be exact.
 */
static int
dgauss_params(const dp_dgauss *g, u128 *dt, u128 *m)
{
	if (g->num == 0 || g->den == 0 || g->t == 0)
		return -1;
	*dt = (u128) g->den * g->t;
	if ((*dt >> 64) != 0 ||
		__builtin_mul_overflow(*dt * g->t, (u128) g->num, m) ||
		__builtin_mul_overflow(*m, (u128) 2, m))
		return -1;
	return 0;
}

/*
 * gamma = (|y| den t - num)^2 / (2 num den t^2) = qhi 2^128 + qlo + r/m, exactly.
 * |y| den t < 2^63 * 2^64 fits 128 bits; its square is formed in 256 bits when
 * it does not fit 128, so no proposal is ever mis-judged.
 */
static void
dgauss_exponent(uint64_t num, u128 dt, u128 m, uint64_t ay,
				u128 *qhi, u128 *qlo, u128 *r)
{
	u128		a = (u128) ay * dt;
	u128		x = a >= num ? a - num : num - a;

	if ((x >> 64) == 0)
	{
		u128		x2 = x * x;

		*qhi = 0;
		*qlo = x2 / m;
		*r = x2 % m;
	}
	else
	{
		u128		hi,
					lo;

		mul_128x128(x, x, &hi, &lo);
		divmod_256by128(hi, lo, m, qhi, qlo, r);
	}
}

/*
 * Discrete Gaussian N_Z(0, sigma^2), sigma^2 = num/den: CKS20 Algorithm 3.
 * Propose Y ~ DLap(t) and accept with probability exp(-gamma),
 *   gamma = (|Y| - sigma^2/t)^2 / (2 sigma^2)
 *         = (|Y| den t - num)^2 / (2 num den t^2).
 * Then P(accept Y = y) ~ exp(-|y|/t - gamma(y)) ~ exp(-y^2 / (2 sigma^2))
 * (the |y|/t terms cancel); this holds for any t >= 1, t = floor(sigma) + 1
 * only makes it fast (acceptance rate 0.46 to 0.76 per proposal).
 *
 * gamma is exact (dgauss_exponent).  The proposal is DLap conditioned on
 * |Y| <= INT64_MAX, so the output is N_Z(0, sigma^2) conditioned on
 * |x| <= INT64_MAX: the removed mass is at most
 * 2 exp(-(2^63)^2 / (2 sigma^2)) / (1 - exp(-2^63 / sigma^2)) < exp(-2^64)
 * for sigma^2 <= 2^60.
 */
int64_t
dp_dgauss_sample(const dp_dgauss *g)
{
	u128		dt;
	u128		m;

	if (dgauss_params(g, &dt, &m) != 0)
		abort();
	dp_random_fork_guard();
	for (;;)
	{
		int64_t		y = dlaplace_unguarded(1, g->t);
		uint64_t	ay = y < 0 ? -(uint64_t) y : (uint64_t) y;
		u128		qhi,
					qlo,
					r;

		dgauss_exponent(g->num, dt, m, ay, &qhi, &qlo, &r);
		if (bern_exp_rational256(qhi, qlo, r, m))
			return y;
	}
}

#define U128(hi, lo) (((u128) (hi) << 64) | (u128) (lo))

/*
 * Known-answer test of the exact exponent arithmetic (128-bit fast path and
 * 256-bit path, including floor(gamma) >= 2^128).  Expected values computed
 * with Python's arbitrary-precision integers.  A statistical test cannot see
 * an error of 1/m in gamma; this can.
 */
int
dp_sampler_selftest(void)
{
	static const struct
	{
		uint64_t	num,
					den,
					t,
					ay;
		u128		qhi,
					qlo,
					r;
	}			kat[] = {
		{4611686018427387904ULL, 4611686018427387904ULL, 2ULL, 5ULL, U128(0x0ULL, 0x0ULL), U128(0x0ULL, 0xaULL), U128(0x1000000000000000ULL, 0x0ULL)},
		{4611686018427387904ULL, 4611686018427387904ULL, 2ULL, 2ULL, U128(0x0ULL, 0x0ULL), U128(0x0ULL, 0x1ULL), U128(0x1000000000000000ULL, 0x0ULL)},
		{1ULL, 1ULL, 2ULL, 3ULL, U128(0x0ULL, 0x0ULL), U128(0x0ULL, 0x3ULL), U128(0x0ULL, 0x1ULL)},
		{2500ULL, 1ULL, 51ULL, 123456789ULL, U128(0x0ULL, 0x0ULL), U128(0x0ULL, 0x2c5bda216a5ULL), U128(0x0ULL, 0x2e01d1ULL)},
		{3518437209ULL, 35184372088832ULL, 1ULL, 9223372036854775807ULL, U128(0x0ULL, 0x4e1ULL), U128(0xffffff4dc6ffec90ULL, 0xe92082c54482f0e3ULL), U128(0x2dd2ULL, 0xa8a7f711b55f1cf1ULL)},
		{1152921504606846976ULL, 1ULL, 1073741825ULL, 9223372036854775807ULL, U128(0x0ULL, 0x0ULL), U128(0x1ULL, 0xfffffffe00000000ULL), U128(0xffffffc7ffffffULL, 0x3000000080000001ULL)},
		{2863311531ULL, 8589934592ULL, 1ULL, 0ULL, U128(0x0ULL, 0x0ULL), U128(0x0ULL, 0x0ULL), U128(0x0ULL, 0x71c71c7238e38e39ULL)},
		{1000000000000ULL, 1ULL, 1000001ULL, 987654321012ULL, U128(0x0ULL, 0x0ULL), U128(0x0ULL, 0x718ef23086ULL), U128(0x1b3ULL, 0xe9ddef2202bb490ULL)},
	};
	size_t		i;

	for (i = 0; i < sizeof(kat) / sizeof(kat[0]); i++)
	{
		dp_dgauss	g;
		u128		dt,
					m,
					qhi,
					qlo,
					r,
					x2 = (u128) 0xfedcba9876543210ULL * 0xfedcba9876543210ULL;

		g.num = kat[i].num;
		g.den = kat[i].den;
		g.t = kat[i].t;
		if (dgauss_params(&g, &dt, &m) != 0)
			return -1;
		dgauss_exponent(g.num, dt, m, kat[i].ay, &qhi, &qlo, &r);
		if (qhi != kat[i].qhi || qlo != kat[i].qlo || r != kat[i].r)
			return -1;
		/* the 256-bit division must agree with the native one where both apply */
		divmod_256by128(0, x2, m, &qhi, &qlo, &r);
		if (qhi != 0 || qlo != x2 / m || r != x2 % m)
			return -1;
	}
	return 0;
}

/* ---- the exponential mechanism, on dp_exp_mech_draw ---- */

uint32_t
dp_exp_mech(const int64_t *score, uint32_t k, double eps, uint64_t sens)
{
	int64_t		max;
	double		c;
	uint64_t	num;

	if (k == 0 || !(eps > 0) || !isfinite(eps) || sens == 0)
		return k;
	max = score[0];
	for (uint32_t r = 1; r < k; r++)
		if (score[r] > max)
			max = score[r];
	/* exp(-c * (max - score)), c = eps / (2 sens) per unit, as num / 2^40 rounded down */
	c = ldexp(eps / (2.0 * (double) sens), 40);
	c = nextafter(c, 0);
	num = c >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t) floor(c);	/* 2^64: never rounds up */
	return dp_exp_mech_draw(score, k, max, num);
}

uint32_t
dp_exp_mech_fitting(int64_t *score, uint32_t *idx, uint32_t k, double eps, uint64_t sens,
					bool (*fits) (void *arg, uint32_t idx), void *arg)
{
	uint32_t	left = k,
				r = dp_exp_mech(score, k, eps, sens);

	/* draws without replacement (Plackett-Luce) until one fits: the first of the fitting ones */
	while (r < left && !fits(arg, idx[r]))
	{
		int64_t		s = score[r];
		uint32_t	i = idx[r];

		left--;
		score[r] = score[left];
		idx[r] = idx[left];
		score[left] = s;
		idx[left] = i;
		r = left > 0 ? dp_exp_mech(score, left, eps, sens) : 0;
	}
	return r < left ? r : k;
}
