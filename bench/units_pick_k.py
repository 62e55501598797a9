#!/usr/bin/env python3
"""bench/units_pick_k.py - which k a learned rows-per-unit bound picks on the shared tables (issue 39).

Not a release: an offline look at the real train tables.  For each dataset and epsilon, the
histogram h_j of the units by row count bounded at 32 (as dpsynth's scan counts it), released
N times with the noise dp_synthesize gives it (sd sqrt(1 / (2 rho_shape)), rho_shape = 1/50 of the
release's rho, the release being 0.9 of the call's rho when bins are learned, as on both tables;
rho from (epsilon, 1e-6) by test/unit/accounting_reference.py; Gaussian noise rounded to integers,
close to the discrete Gaussian at these sds), and k picked from each by the two rules of
dp_unit_pick_k and one in between: "sum" counts every noisy cell as released (the rule before
0.6.0); "hard" counts cells within 3 sd as 0 and the others whole; "shrink" counts every cell less
3 sd, at least 0 (DP_UNIT_LEARN_Z, 0.6.0); "weigh" is the rule dp_synthesize uses since
(dp_unit_pick_k_weighed): the k up to shrink's of least D(k) / N + W k / (N - D(k)) over the same
shrunk cells (D(k) the rows a bound k drops, N the rows up to 32), W the release's expected
one-way noise at sensitivity 1, a public number the ledger records per call
(details->privacy_unit->learned_noise_l1): given as WEIGHTS="dataset:epsilon:W ...", the rule is
printed for the pairs it names, twice: as before 0.11.0 (cap the 0.95-quantile, the noise term
W k / (N - D(k))) and as since (cap the 0.99-quantile, the noise term half of that: the total
variation of the noise, as D(k) / N is the total variation of the drop); WEIGH_RULES="Q:F ..."
replaces those two by others (Q the cap's quantile, F the noise term's factor).  VARIANCE="M ..."
adds, for the same pairs, the variance rule (the count-weighted estimator's, a814a53, not kept for
today's truncation): the k up to the 0.99-quantile cap of least sqrt(2 / pi) sqrt(M (V(k) - N)) /
(2 N) + W k / (2 N_k), V(k) = sum c_j j^2 / min(j, k), N_k = sum c_j min(j, k), M a column's mean
cells.  Prints the share of draws that picked each k (the four most frequent).
Usage: [WEIGHTS=...] [WEIGH_RULES=...] [VARIANCE=...] bench/units_pick_k.py [SHARED_DATASETS_DIR] [N]
"""
import collections
import csv
import math
import os
import random
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "test", "unit"))
from accounting_reference import ref_rho  # noqa: E402

SETS = {"covid_testing": "subject_id", "males": "nr"}
K, Q, Z = 32, 0.95, 3.0


def pick(h, floor, shrink, q=Q):
    c = [(x - floor if shrink else x) if x > floor else 0 for x in h]
    total = sum(c[1:])
    if not total > 0:
        return 1
    acc = 0
    for k in range(1, K):
        acc += c[k]
        if acc >= q * total:
            return k
    return K


def pick_least(h, floor, q, err):
    """The k in 1..the q-quantile cap (pick) of least err(k, c, rows), c the cells less floor and
    rows their rows; err None for a k it cannot score; 1 where no row is counted."""
    kcap = pick(h, floor, True, q)
    c = [x - floor if x > floor else 0 for x in h]
    rows = sum(j * c[j] for j in range(1, K + 1))
    if not rows > 0:
        return 1
    best, best_err = kcap, float("inf")
    for k in range(1, kcap + 1):
        e = err(k, c, rows)
        if e is not None and e < best_err:
            best, best_err = k, e
    return best


def pick_weighed(h, floor, w, q=Q, f=1.0):
    def err(k, c, rows):
        dropped = sum((j - k) * c[j] for j in range(k + 1, K + 1))
        return dropped / rows + f * w * k / (rows - dropped) if rows - dropped > 0 else None
    return pick_least(h, floor, q, err)


def pick_variance(h, floor, w, m, q=0.99):
    def err(k, c, rows):
        var = sum(c[j] * j * (j / min(j, k) - 1) for j in range(1, K + 1))
        kept = sum(c[j] * min(j, k) for j in range(1, K + 1))
        return (2 / math.pi) ** 0.5 * (m * var) ** 0.5 / (2 * rows) + w * k / (2 * kept) if kept > 0 else None
    return pick_least(h, floor, q, err)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(TOP, "..", "shared", "datasets")
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    weights = {tuple(x.split(":")[:2]): float(x.split(":")[2]) for x in os.environ.get("WEIGHTS", "").split()}
    variance = [float(x) for x in os.environ.get("VARIANCE", "").split()]
    weigh_rules = [tuple(float(v) for v in x.split(":")) for x in os.environ.get("WEIGH_RULES", "0.95:1 0.99:0.5").split()]
    rng = random.Random(39)
    print("| dataset | epsilon | noise sd | rule | k picked (share of %d draws) |" % n)
    print("|---|---|---|---|---|")
    for d, unit in SETS.items():
        rows = collections.Counter(r[unit] for r in csv.DictReader(open(os.path.join(root, d, f"{d}_train.csv"))))
        h = [0] * (K + 1)
        for c in rows.values():
            h[min(c, K)] += 1
        for eps in ("0.3", "1", "3"):
            rho_shape = float(ref_rho(eps, "1e-6")) * 0.9 / 50
            sd = (1 / (2 * rho_shape)) ** 0.5
            rules = [("sum", float("-inf"), False), ("hard", Z * sd, False), ("shrink", Z * sd, True)]
            for q, f in weigh_rules if (d, eps) in weights else ():
                rules.append(("weigh (W %.0f, cap %g, noise x %g)" % (weights[(d, eps)], q, f), Z * sd,
                              (weights[(d, eps)], q, f)))
            for m in variance if (d, eps) in weights else ():
                rules.append(("variance (W %.0f, cells %g)" % (weights[(d, eps)], m), Z * sd, (weights[(d, eps)], m)))
            for rule, floor, shrink in rules:
                ks = collections.Counter()
                for _ in range(n):
                    noisy = [0] + [h[j] + round(rng.gauss(0, sd)) for j in range(1, K + 1)]
                    if rule.startswith("variance"):
                        ks[pick_variance(noisy, floor, *shrink)] += 1
                    elif rule.startswith("weigh"):
                        ks[pick_weighed(noisy, floor, *shrink)] += 1
                    else:
                        ks[pick(noisy, floor, shrink)] += 1
                top = ", ".join(f"{k}: {c / n:.2f}" for k, c in ks.most_common(4))
                print(f"| {d} | {eps} | {sd:.0f} | {rule} | {top} |")


if __name__ == "__main__":
    main()
