#!/usr/bin/python3
"""bench/grid_compare.py - cell-by-cell verdict of one fidelity grid against another (issue 37).

Each side is one or more sources of per-run figures, pooled:
  - a directory of bench/quality_all.sh (bench/out/quality_all.PID: q-TABLE-EPSILON.jsonl, one
    evaluate.py JSON line per run), or
  - a JSON-lines file of bench/aim_spread.py (one line per run with "dataset" and "epsilon"; failed
    runs, with "failed", are left out).
For every (table, epsilon) both sides have, and every metric (tvd1, tvd2, tvd3, range: lower is
better; tstr_auc: higher is better), it prints both sides' mean (min-max, runs), B - A, Welch's t
test's two-sided p, and a verdict of B against A:
  better / worse: the means differ in that direction with p < --alpha (default 0.05);
  level: otherwise (the difference is within the runs' spread).
A side with a single run gets no test: its value inside the other side's range is level, outside
it better or worse, marked "(ranges, 1 run)".
It also says whether the two sides' ranges overlap, and lists the cells where B is worse, marking
those that stay worse under a Bonferroni bar over the whole grid (p < alpha / cells).

Usage: bench/grid_compare.py --a SRC[,SRC...] --b SRC[,SRC...] [--a-name 8ffdb2a] [--b-name main]
       [--alpha 0.05] [--tables adult,diamonds] [--epsilons 0.3,3]
"""
import argparse, glob, json, math, os, re, sys

from scipy import stats

METRICS = [("tvd1", 1, "%.4f"), ("tvd2", 1, "%.4f"), ("tvd3", 1, "%.4f"), ("range", 1, "%.5f"),
           ("tstr_auc", -1, "%.3f")]
ORDER = ["adult", "diamonds", "arrests", "smokeban", "star"]


def eps_key(e):
    return "%g" % float(e)


def load(spec):
    cells = {}
    for src in spec.split(","):
        if os.path.isdir(src):
            for p in glob.glob(os.path.join(src, "q-*-*.jsonl")):
                m = re.match(r"q-(.+)-([0-9.]+)\.jsonl$", os.path.basename(p))
                with open(p) as f:
                    rs = [json.loads(l) for l in f if l.strip()]
                cells.setdefault((m.group(1), eps_key(m.group(2))), []).extend(rs)
        else:
            with open(src) as f:
                for l in f:
                    if not l.strip():
                        continue
                    r = json.loads(l)
                    if "failed" in r:
                        continue
                    cells.setdefault((r["dataset"], eps_key(r["epsilon"])), []).append(r)
    return cells


def welch_p(x, y):
    if len(x) < 2 or len(y) < 2:
        return float("nan")
    if max(x) == min(x) and max(y) == min(y):
        return 1.0 if x[0] == y[0] else 0.0
    return float(stats.ttest_ind(x, y, equal_var=False).pvalue)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--a-name", default="A")
    ap.add_argument("--b-name", default="B")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--tables", default=None)
    ap.add_argument("--epsilons", default=None)
    o = ap.parse_args()
    A, B = load(o.a), load(o.b)
    keys = [k for k in A if k in B]
    if o.tables:
        keys = [k for k in keys if k[0] in o.tables.split(",")]
    if o.epsilons:
        keys = [k for k in keys if k[1] in [eps_key(e) for e in o.epsilons.split(",")]]
    keys.sort(key=lambda k: (ORDER.index(k[0]) if k[0] in ORDER else 99, k[0], float(k[1])))
    if not keys:
        sys.exit("grid_compare: no (table, epsilon) cell on both sides")

    print("| table | eps | metric | %s mean (min-max) n | %s mean (min-max) n | %s - %s | Welch p | ranges overlap | %s vs %s |"
          % (o.a_name, o.b_name, o.b_name, o.a_name, o.b_name, o.a_name))
    print("|---|---|---|---|---|---|---|---|---|")
    counts, worse = {"better": 0, "level": 0, "worse": 0}, []
    for t, e in keys:
        for m, sign, fmt in METRICS:
            x = [r[m] for r in A[(t, e)] if r.get(m) is not None]
            y = [r[m] for r in B[(t, e)] if r.get(m) is not None]
            if not x or not y:
                continue
            mx, my = sum(x) / len(x), sum(y) / len(y)
            p = welch_p(x, y)
            overlap = "yes" if max(min(x), min(y)) <= min(max(x), max(y)) else "no"
            if len(x) < 2 or len(y) < 2:
                # no test on one run: the ranges decide (a side's single run outside the other's range)
                v = "level" if overlap == "yes" else ("better" if sign * (my - mx) < 0 else "worse")
                tag = " (ranges, 1 run)"
            else:
                v = ("better" if sign * (my - mx) < 0 else "worse") if p < o.alpha else "level"
                tag = ""
            counts[v] += 1
            if v == "worse":
                worse.append((p, "%s eps %s %s (%s %s, %s %s, p %.3f)" % (t, e, m, o.a_name, fmt % mx, o.b_name, fmt % my, p)))
            cell = lambda v_, xs: "%s (%s-%s) %d" % (fmt % v_, fmt % min(xs), fmt % max(xs), len(xs))
            diff = (("%+" + fmt[1:]) % (my - mx))
            print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                t, e, m, cell(mx, x), cell(my, y), diff, "%.3f" % p if p == p else "", overlap,
                ("**worse**" if v == "worse" else v) + tag))
    print()
    print("%s against %s, %d cells: %d better, %d level, %d worse (Welch t, two-sided p < %g)."
          % (o.b_name, o.a_name, sum(counts.values()), counts["better"], counts["level"], counts["worse"], o.alpha))
    n = sum(counts.values())
    for p, w in worse:
        print("- worse: " + w + (" (also below the grid's Bonferroni bar %.2g)" % (o.alpha / n) if p < o.alpha / n else ""))
    print("At p < %g, about %.1f of %d cells come out better or worse by chance alone when nothing differs;"
          " under the Bonferroni bar alpha/cells (%.2g), chance alone marks a cell in at most %g of grids."
          % (o.alpha, o.alpha * n, n, o.alpha / n, o.alpha))


if __name__ == "__main__":
    main()
