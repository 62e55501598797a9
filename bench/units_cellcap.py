#!/usr/bin/env python3
"""bench/units_cellcap.py - what a per-cell bound c would buy dp_synthesize per unit (issue 39).

Not a release: an offline look at the real train tables, to decide whether to build per-cell bounds
into synthesis.  For each dataset, k and c: every unit keeps k random rows (seeded), then each
one-way and two-way marginal of the attribute columns (the unit and identifiers excluded; numeric
columns in 32 equal-width bins over their declared bounds, as ANCHORS.md's AIM and MST binned them)
is counted twice: bounded at k only, and with every unit capped at c rows per cell of that marginal.
Printed per (k, c):
  noise  sqrt(floor(k/c) c^2 + (k mod c)^2) / k: the factor on each Gaussian measurement's noise sd
         if the measurements used the cell bound (the selection's scores keep L1 sensitivity k);
  drop1, drop2  the mean share of the bounded rows the cap removes from a one-way, two-way marginal
         (the bias the cap adds, as the L1 distance between the two count vectors over the rows);
  tvd1, tvd2  the mean total variation distance between the two normalised marginals.
Usage: bench/units_cellcap.py [SHARED_DATASETS_DIR]
"""
import csv
import itertools
import json
import math
import os
import random
import sys
from collections import Counter, defaultdict

SETS = {"covid_testing": ("subject_id", ["fake_first_name", "fake_last_name"]), "males": ("nr", [])}


def load(root, name):
    dom = json.load(open(os.path.join(root, name, "domain.json")))
    unit, ids = SETS[name]
    cols = [c for c in dom if c != "_comment" and c != unit and c not in ids]
    rows = list(csv.DictReader(open(os.path.join(root, name, f"{name}_train.csv"))))

    def code(c, v):
        d = dom[c]
        if d["type"] == "categorical" or v in ("", None):
            return v
        lo, hi = float(d["lower"]), float(d["upper"])
        return min(31, max(0, int((float(v) - lo) / (hi - lo) * 32)))
    units = defaultdict(list)
    for r in rows:
        units[r[unit]].append(tuple(code(c, r[c]) for c in cols))
    return cols, units


def counts(units, idx, cap):
    total = Counter()
    for rs in units:
        per = Counter(tuple(r[i] for i in idx) for r in rs)
        for cell, n in per.items():
            total[cell] += min(n, cap)
    return total


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../shared/datasets")
    print("| dataset | k | c | noise sd factor | drop1 | drop2 | tvd1 | tvd2 |")
    print("|---|---|---|---|---|---|---|---|")
    for name in SETS:
        cols, units = load(root, name)
        rng = random.Random(39)
        for k in (2, 4, 8):
            bounded = [rng.sample(rs, min(k, len(rs))) for rs in units.values()]
            n = sum(len(b) for b in bounded)
            for c in sorted({1, 2, k // 2} - {k}):
                res = {}
                for w in (1, 2):
                    drops, tvds = [], []
                    for idx in itertools.combinations(range(len(cols)), w):
                        full, capped = counts(bounded, idx, k), counts(bounded, idx, c)
                        nc = sum(capped.values())
                        drops.append((n - nc) / n)
                        tvds.append(0.5 * sum(abs(full[x] / n - capped.get(x, 0) / nc) for x in full))
                    res[w] = (sum(drops) / len(drops), sum(tvds) / len(tvds))
                s2 = (k // c) * c * c + (k % c) ** 2
                print(f"| {name} | {k} | {c} | {math.sqrt(s2) / k:.3f} | {res[1][0]:.3f} | {res[2][0]:.3f} | "
                      f"{res[1][1]:.3f} | {res[2][1]:.3f} |")


main()
