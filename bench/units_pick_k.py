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
3 sd, at least 0 (DP_UNIT_LEARN_Z, 0.6.0).  Prints the share of draws that picked each k
(the four most frequent).
Usage: bench/units_pick_k.py [SHARED_DATASETS_DIR] [N]
"""
import collections
import csv
import os
import random
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "test", "unit"))
from accounting_reference import ref_rho  # noqa: E402

SETS = {"covid_testing": "subject_id", "males": "nr"}
K, Q, Z = 32, 0.95, 3.0


def pick(h, floor, shrink):
    c = [(x - floor if shrink else x) if x > floor else 0 for x in h]
    total = sum(c[1:])
    if not total > 0:
        return 1
    acc = 0
    for k in range(1, K):
        acc += c[k]
        if acc >= Q * total:
            return k
    return K


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(TOP, "..", "shared", "datasets")
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
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
            for rule, floor, shrink in (("sum", float("-inf"), False), ("hard", Z * sd, False),
                                        ("shrink", Z * sd, True)):
                ks = collections.Counter()
                for _ in range(n):
                    noisy = [0] + [h[j] + round(rng.gauss(0, sd)) for j in range(1, K + 1)]
                    ks[pick(noisy, floor, shrink)] += 1
                top = ", ".join(f"{k}: {c / n:.2f}" for k, c in ks.most_common(4))
                print(f"| {d} | {eps} | {sd:.0f} | {rule} | {top} |")


if __name__ == "__main__":
    main()
