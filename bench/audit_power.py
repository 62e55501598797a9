#!/usr/bin/env python3
"""The error rates of the empirical privacy audits (test/script/privacy_audit.py), computed exactly.

For N releases from each of the two neighbouring tables, the audit counts k0 and k1 releases at or
above the threshold; k0 and k1 are binomial with the true tail probabilities of the build's noise.
Summing over both laws gives the probability that the audit refutes the claim.  Printed for a
correct build (false alarm) and for the broken build its script compiles (miss: the claim kept).

Usage: bench/audit_power.py row N        10_privacy_audit: counts m, m + 1; broken: noise halved
       bench/audit_power.py unit N       21_unit_audit: k = 5 rows per unit, a 30-row unit;
                                         broken: the unit ignored (counts m, m + 30, one row's noise)
RHO defaults to the rho dpsynth charges for epsilon 8 at delta 1e-6 (what both scripts release).
"""
import math
import os
import sys

sys.argv, argv = sys.argv[:1] + ['/dev/null', '/dev/null', '0', '1', '0', '8'], sys.argv
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'test', 'script', 'privacy_audit.py')
exec(open(here).read().replace('\nmain()\n', '\n'))	# its functions, not its main

RHO = float(os.environ.get('RHO', '1.052358004554'))


def log_binom(n, k, q):
    if q <= 0:
        return 0.0 if k == 0 else -math.inf
    if q >= 1:
        return 0.0 if k == n else -math.inf
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
            + k * math.log(q) + (n - k) * math.log1p(-q))


def rates(n, shift, s2_true, shift_true):
    """P(refuted), P(kept) for releases m + Z (D) and m + shift_true + Z (D'), Z of variance s2_true"""
    claimed = dgauss_pmf(shift * shift / (2 * RHO))
    p = dgauss_pmf(s2_true)
    a, b = tail(p, shift), tail(p, shift - shift_true)
    pk0 = [math.exp(log_binom(n, k, a)) for k in range(n + 1)]
    pk1 = [math.exp(log_binom(n, k, b)) for k in range(n + 1)]
    blo = [cp_lower(k, n) for k in range(n + 1)]
    refuted = kept = 0.0
    for k0 in range(n + 1):
        if pk0[k0] == 0:
            continue
        bmax = beta_max(claimed, cp_upper(k0, n), shift)
        refuted += pk0[k0] * sum(pk1[k1] for k1 in range(n + 1) if blo[k1] > bmax)
        kept += pk0[k0] * sum(pk1[k1] for k1 in range(n + 1) if blo[k1] <= bmax)
    return refuted, kept


kind, n = argv[1], int(argv[2])
if kind == 'row':
    fa, _ = rates(n, 1, 1 / (2 * RHO), 1)
    _, miss = rates(n, 1, 1 / (2 * RHO) / 4, 1)
else:
    fa, _ = rates(n, 5, 25 / (2 * RHO), 5)
    _, miss = rates(n, 5, 1 / (2 * RHO), 30)
print(f"{kind} audit, N = {n}: false alarm {fa:.3g}, miss {miss:.3g}")
