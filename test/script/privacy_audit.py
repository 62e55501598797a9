#!/usr/bin/env python3
"""Empirical privacy audit of dp_marginal (used by 10_privacy_audit.sh).

Input: N noisy counts of one cell released from table D (true count m) and N from its neighbour
D' (one more row in that cell, count m + 1), each release charged rho (from the ledger).

The test: "X >= m + 1" decides D'.  alpha = P_D(X >= m + 1) (false positives), beta =
P_D'(X >= m + 1) (true positives).  One-sided 99.9% Clopper-Pearson bounds give alpha_hi and
beta_lo (so all statements below hold with probability >= 0.998).

1. An epsilon lower bound: any (eps, delta)-DP mechanism has beta <= e^eps alpha + delta, so
   eps >= ln((beta_lo - delta) / alpha_hi).  It must stay below the epsilon of each call.  (At
   delta = 1e-6 such a bound has no power against a broken build at any feasible N: (eps, delta)
   claims are about tails of probability delta.)
2. The teeth: the charge pays for the discrete Gaussian with sigma^2 = 1 / (2 rho) (sensitivity
   1).  For "Z vs Z + 1" its likelihood ratio is monotone, so by Neyman-Pearson the best power at
   level a of ANY test is beta_max(a), the piecewise-linear curve through the points
   (P(Z >= t), P(Z >= t - 1)), t integer (randomised threshold tests), computed exactly here from
   the claimed sigma.  If beta_lo > beta_max(alpha_hi), the releases distinguish D from D' better
   than the claimed noise allows: the mechanism is broken.  False alarm probability <= 0.002 for a
   correct build (computed exactly at epsilon 8: 4.3e-5 at N = 200, 5e-5 at N = 500); a build
   with every noise scale halved is accepted with probability 1.6e-31 at N = 200 and 1e-107 at
   N = 500, epsilon 8 (exact computation).
Prints one line of figures and exits 0 if the claim holds, 1 if it is refuted.
Usage: privacy_audit.py FILE_D FILE_D' M RHO DELTA EPS [SHIFT]

At unit level (21_unit_audit.sh), D' has one more unit whose rows all fall in the cell, and a
release bounds it to SHIFT = k rows: the counts are m and m + SHIFT, the claimed noise the discrete
Gaussian with sigma^2 = SHIFT^2 / (2 rho) (L2 sensitivity k), the test "X >= m + SHIFT", and the
curve through (P(Z >= t), P(Z >= t - SHIFT)) (the likelihood ratio of Z vs Z + SHIFT is monotone
too).  SHIFT defaults to 1, the row-level audit above.
"""
import math
import sys


def dgauss_pmf(s2):
    lim = int(12 * math.sqrt(s2)) + 3
    w = {x: math.exp(-x * x / (2 * s2)) for x in range(-lim, lim + 1)}
    z = sum(w.values())
    return {x: v / z for x, v in w.items()}


def tail(p, t):
    return sum(v for x, v in p.items() if x >= t)


def binom_cdf(k, n, p):
    if p <= 0:
        return 1.0
    if p >= 1:
        return 1.0 if k >= n else 0.0
    return min(1.0, sum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                                 + i * math.log(p) + (n - i) * math.log1p(-p)) for i in range(k + 1)))


def cp_upper(k, n, conf=0.999):
    if k >= n:
        return 1.0
    lo, hi = k / n, 1.0
    for _ in range(80):
        mid = (lo + hi) / 2
        if binom_cdf(k, n, mid) > 1 - conf:
            lo = mid
        else:
            hi = mid
    return hi


def cp_lower(k, n, conf=0.999):
    return 1.0 - cp_upper(n - k, n, conf)


def beta_max(p, a, shift=1):
    pts = sorted((tail(p, t), tail(p, t - shift)) for t in range(min(p) - 1, max(p) + shift + 1))
    pts = [(0.0, 0.0)] + pts + [(1.0, 1.0)]
    for (a0, b0), (a1, b1) in zip(pts, pts[1:]):
        if a0 <= a <= a1:
            return b0 if a1 == a0 else b0 + (b1 - b0) * (a - a0) / (a1 - a0)
    return 1.0


def main():
    x0 = [int(v) for v in open(sys.argv[1]).read().split()]
    x1 = [int(v) for v in open(sys.argv[2]).read().split()]
    m, rho, delta, eps = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
    shift = int(sys.argv[7]) if len(sys.argv) > 7 else 1
    n0, n1 = len(x0), len(x1)
    k0 = sum(v >= m + shift for v in x0)
    k1 = sum(v >= m + shift for v in x1)
    a_hi, b_lo = cp_upper(k0, n0), cp_lower(k1, n1)
    bmax = beta_max(dgauss_pmf(shift * shift / (2.0 * rho)), a_hi, shift)
    eps_lb = math.log((b_lo - delta) / a_hi) if b_lo > delta else 0.0
    ok = b_lo <= bmax
    print(f"releases {n0} + {n1}; alpha {k0 / n0:.4f} (<= {a_hi:.4f}), beta {k1 / n1:.4f} (>= {b_lo:.4f}); "
          f"claimed noise allows beta <= {bmax:.4f}; epsilon lower bound {max(eps_lb, 0):.3f} (claimed {eps:g} "
          f"per call): {'claim holds' if ok else 'CLAIM REFUTED'}")
    sys.exit(0 if ok and eps_lb <= eps else 1)


main()
