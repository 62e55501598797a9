/*
 * dp_accounting.h - privacy accounting arithmetic for dpsynth (pure C11 + libm, no PostgreSQL).
 *
 * Accounting arithmetic
 * ---------------------
 * All mechanisms are accounted in rho-zero-concentrated DP (rho-zCDP; Bun & Steinke, "Concentrated
 * Differential Privacy: Simplifications, Extensions, and Lower Bounds", TCC 2016, arXiv:1605.02065):
 * M is rho-zCDP if D_alpha(M(x) || M(x')) <= rho * alpha for all alpha > 1 and all neighbours x, x'
 * (D_alpha = Renyi divergence of order alpha).
 *
 *  - Composition: zCDP composes additively.  Running a rho_1-zCDP and then (adaptively) a
 *    rho_2-zCDP mechanism on the same data is (rho_1 + rho_2)-zCDP (Bun & Steinke 2016, Lemma 1.7);
 *    post-processing never increases rho.  So a table's charges are summed in rho.
 *  - Gaussian mechanism: adding N(0, sigma^2) independently to each coordinate of a query with
 *    L2 sensitivity Delta is Delta^2 / (2 sigma^2)-zCDP (Bun & Steinke 2016, Prop. 1.6).
 *    Hence sigma^2 = Delta^2 / (2 rho) for a charge of rho: dp_gaussian_sigma2(), rounded UP.
 *  - Discrete Gaussian: adding N_Z(0, sigma^2) independently to each coordinate of an INTEGER-valued
 *    query with L2 sensitivity Delta gives the same guarantee, Delta^2 / (2 sigma^2)-zCDP
 *    (Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020,
 *    Theorem 4; for vectors, Renyi divergences of independent coordinates add up).
 *  - Conversion to (epsilon, delta)-DP (CKS 2020, Corollary 13): a rho-zCDP mechanism is
 *    (eps, delta)-DP for every eps >= 0 with
 *        delta = inf_{alpha > 1} exp((alpha-1)(alpha*rho - eps)) / (alpha-1) * (1 - 1/alpha)^alpha.
 *    EVERY alpha > 1 gives a valid delta (the infimum is merely the best one), so an inexact
 *    search for alpha can only make delta larger, never invalid.  This is tighter than the classic
 *    eps = rho + 2 sqrt(rho ln(1/delta)) (Bun & Steinke 2016, Prop. 1.3), which remains valid.
 *    A table budget (eps, delta) becomes a rho allowance dp_zcdp_rho(eps, delta) once; a call's
 *    "epsilon => e" is charged dp_zcdp_rho(e, delta_table).  At delta = 1e-6:
 *    rho(1) = 0.0243559..., rho(3) = 0.1850698..., so 7 * rho(1) <= rho(3) < 8 * rho(1).
 *  - Budget arithmetic never lets a call use more than it is charged: the release path counts
 *    rho in whole units of 1e-12, a call's charge rounded down to a unit and its noise calibrated
 *    a hair below that charge (dp_rho_units, dp_units_rho in dp_plan.h; docs/PRIVACY.md,
 *    "Accounting").  dp_round_up / dp_round_down below round a quantity against the spender
 *    where a caller needs a rounded bound.
 *
 * Rounding direction of every function below is a privacy property and is documented with it.
 *
 * Invalid input: every function returns NaN for invalid input (NaN, infinities, out-of-range
 * values).  NaN propagates silently through arithmetic and compares false, so CALLERS MUST
 * VALIDATE their arguments first (and check results with isfinite()) and refuse to spend or
 * release anything on a NaN.
 */
#ifndef DPSYNTH_DP_ACCOUNTING_H
#define DPSYNTH_DP_ACCOUNTING_H

/*
 * Conversion between rho-zCDP and (epsilon, delta)-DP, Canonne, Kamath & Steinke 2020 ("The
 * Discrete Gaussian for DP"), Corollary 13: a rho-zCDP mechanism is (eps, delta)-DP for
 * delta = inf_{alpha>1} exp((alpha-1)(alpha*rho - eps)) / (alpha-1) * (1 - 1/alpha)^alpha.
 */

/*
 * The delta above, clamped to [0, 1].  rho >= 0 and eps >= 0, both finite; NaN otherwise.
 * Rounded UP: the result is >= the expression evaluated exactly at the alpha used, which is >= the
 * infimum; floating-point error is covered by an explicit margin (see dp_accounting.c).  rho == 0
 * gives 0.  For rho > 0 the result is > 0 (at least the smallest subnormal double).
 */
extern double dp_zcdp_delta(double rho, double eps);

/*
 * The LARGEST rho such that dp_zcdp_delta(rho, eps) <= delta, rounded DOWN: the result r is never
 * above the true value and dp_zcdp_delta(r, eps) <= delta holds (checked on the returned value).
 * eps > 0 finite, 0 < delta < 1; NaN otherwise.  Relative accuracy about 1e-12 (below the truth).
 */
extern double dp_zcdp_rho(double eps, double delta);

/*
 * The SMALLEST eps such that dp_zcdp_delta(rho, eps) <= delta, rounded UP: the result e is never
 * below the true value and dp_zcdp_delta(rho, e) <= delta holds (checked on the returned value).
 * rho >= 0 finite, 0 < delta < 1; NaN otherwise.  Returns 0 for rho == 0 (and whenever eps = 0
 * already satisfies the bound).  Relative accuracy about 1e-12 (above the truth).
 */
extern double dp_zcdp_epsilon(double rho, double delta);

/*
 * sigma^2 = sensitivity^2 / (2 rho) for the (discrete) Gaussian mechanism, rounded UP to the
 * smallest double >= the exact real value (never less noise than required).
 * rho > 0 finite, sensitivity > 0 finite; NaN otherwise (a zero-sensitivity statistic needs no
 * noise and must not be routed here), and NaN if the exact value exceeds DBL_MAX.  A value below
 * DBL_MIN is returned as DBL_MIN.
 */
extern double dp_gaussian_sigma2(double rho, double sensitivity);

/*
 * Budget rounding.  quantum > 0 finite, x finite, |x| / quantum < 2^52; NaN otherwise.
 * The "multiples" are the doubles fl(k * quantum), k an integer (exact multiples when quantum is a
 * power of two or k * quantum is representable).  The direction is exact, not approximate:
 *   dp_round_up(x, q)   returns the smallest fl(k*q) with fl(k*q) >= x  (for charges),
 *   dp_round_down(x, q) returns the largest  fl(k*q) with fl(k*q) <= x  (for what remains).
 * A zero result is +0.0.
 */
extern double dp_round_up(double x, double quantum);
extern double dp_round_down(double x, double quantum);

#endif /* DPSYNTH_DP_ACCOUNTING_H */
