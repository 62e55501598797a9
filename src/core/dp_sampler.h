/*
 * dp_sampler.h - exact samplers for discrete privacy noise.
 *
 * Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential
 * Privacy", NeurIPS 2020 (arXiv:2004.00010), Algorithms 1-3.  Every random
 * decision is made with integer/rational arithmetic on uniform integers from
 * dp_random (libsodium), so the output distributions are exactly the stated
 * ones, not floating-point approximations of them (which leak, Mironov 2012).
 *
 * The only departure from the ideal distributions is that results are
 * int64_t: both samplers return the ideal distribution conditioned on
 * |x| <= INT64_MAX.  The probability mass this removes is stated per
 * function below; it is below exp(-2^64) for the discrete Gaussian over the
 * whole supported range.
 *
 * Precondition violations (zero scale or denominator, a corrupt dp_dgauss)
 * are programming errors; the samplers then abort() rather than return noise
 * with an unknown distribution.
 *
 * Not thread-safe (see dp_random.h).  Plain C; link with -lsodium -lm.
 */
#ifndef DP_SAMPLER_H
#define DP_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Supported sigma^2 of dp_dgauss_init: [2^-30, 2^60], about [9.3e-10, 1.15e18].
 * The bounds keep den <= 2^61, den * t < 2^64 and 2 * num * den * t^2 < 2^122,
 * so that the acceptance test is exact in 128/256-bit integers, and keep the
 * int64 truncation negligible.
 */
#define DP_DGAUSS_SIGMA2_MIN (1.0 / 1073741824.0)	/* 2^-30 */
#define DP_DGAUSS_SIGMA2_MAX 1152921504606846976.0	/* 2^60 */

/*
 * Discrete Gaussian N_Z(0, sigma^2): P(x) proportional to exp(-x^2 / (2 sigma^2))
 * for integer x, with sigma^2 = num / den an exact rational.
 */
typedef struct dp_dgauss
{
	uint64_t	num,
				den;			/* sigma^2 = num/den >= the requested sigma^2
								 * (rounded UP: more noise, never less) */
	uint64_t	t;				/* floor(sigma) + 1, scale of the discrete
								 * Laplace proposal */
} dp_dgauss;

/*
 * Chooses the exact rational sigma^2 = num/den >= sigma2 with relative excess
 * below 2^-31, and the proposal scale t.  Returns 0, or -1 (leaving *g
 * untouched) if sigma2 is NaN, infinite, or outside
 * [DP_DGAUSS_SIGMA2_MIN, DP_DGAUSS_SIGMA2_MAX].
 */
extern int	dp_dgauss_init(dp_dgauss *g, double sigma2);

/*
 * One draw from N_Z(0, num/den) (CKS20 Algorithm 3), conditioned on
 * |x| <= INT64_MAX; for sigma^2 <= 2^60 the removed mass is < exp(-2^64).
 * g must come from dp_dgauss_init (or satisfy num, den, t >= 1,
 * den * t < 2^64 and 2 * num * den * t^2 < 2^128; otherwise abort()).
 */
extern int64_t dp_dgauss_sample(const dp_dgauss *g);

/* num/den as a double, for reporting only (never for sampling). */
extern double dp_dgauss_sigma2(const dp_dgauss *g);

/*
 * Discrete Laplace with scale b = t/s (CKS20 Algorithm 2):
 * P(x) = (1 - q) / (1 + q) * q^|x|, q = exp(-s/t), for integer x, conditioned
 * on |x| <= INT64_MAX.  The removed mass is below 2 exp(-2^63 s/t), e.g.
 * below exp(-2^40) for b <= 2^22.  s, t >= 1 (else abort()).
 */
extern int64_t dp_dlaplace_sample(uint64_t s, uint64_t t);

/* Bernoulli(exp(-num/den)), exact (CKS20 Algorithm 1).  den >= 1. */
extern int	dp_bernoulli_exp(uint64_t num, uint64_t den);

/*
 * The exponential mechanism's draw (for dp_exp_mech): r in [0, k) with probability proportional
 * to exp(-num * (max - score[r]) / 2^40), by rejection from the uniform proposal.  max >= every
 * score[r]; k >= 1 (else abort()).
 */
extern uint32_t dp_exp_mech_draw(const int64_t *score, uint32_t k, int64_t max, uint64_t num);

/*
 * The exponential mechanism, exact: returns r in [0, k) with probability proportional to
 * exp(eps * (score[r] - max score) / (2 * sens)), scores on an integer grid (units), sens the
 * scores' sensitivity in the same units (>= 1).  eps is rounded down to a multiple of 2^-40 *
 * 2 * sens, so the mechanism is eps-DP (and eps^2/8-zCDP) with the eps given.  Randomness:
 * libsodium (dp_bernoulli_exp, dp_random_uniform), rejection from the uniform proposal.
 * Returns k on invalid input (k == 0, eps not positive and finite, sens == 0).
 */
uint32_t	dp_exp_mech(const int64_t *score, uint32_t k, double eps, uint64_t sens);

/*
 * The exponential mechanism over the candidates that fit: r in [0, k) with fits(arg, idx[r]),
 * with probability proportional to exp(eps * score[r] / (2 sens)) among those, or k when none
 * fits.  It draws by dp_exp_mech, and while the drawn one does not fit, sets it aside (score
 * and idx are reordered) and draws again from the rest: successive draws without replacement
 * order the candidates as a Plackett-Luce ranking, in which the first of any subset is
 * distributed as the exponential mechanism over that subset.  So the release is exactly the
 * exponential mechanism over the fitting set, with the same eps, provided fits is a function of
 * public facts and earlier releases only (what it is asked, and how often, depends on the
 * scores, but no answer does).
 */
uint32_t	dp_exp_mech_fitting(int64_t *score, uint32_t *idx, uint32_t k, double eps, uint64_t sens,
								bool (*fits) (void *arg, uint32_t idx), void *arg);

/* Bernoulli(num/den), exact.  1 <= den, num <= den. */
extern int	dp_bernoulli_rational(uint64_t num, uint64_t den);

/*
 * Known-answer test of the exact integer arithmetic behind the acceptance
 * test of dp_dgauss_sample.  Returns 0 if it passes, -1 otherwise; cheap
 * (microseconds), suitable for running once at load time to fail closed.
 */
extern int	dp_sampler_selftest(void);

#endif							/* DP_SAMPLER_H */
