#!/usr/bin/python3
"""bench/target_pairs.py - how well synthetic copies keep each column's relation to a target, and
which measured marginals held the target: for runs kept by bench/range_runs.sh (OUTDIR/TABLE-EPS-
RUN.csv with its model OUTDIR/TABLE-EPS-RUN.json = dp_model_json of the call that wrote it).

For each OUTDIR (one build or declaration each), over its runs:
  - TSTR AUC: ../shared/tools/evaluate.py's own classifier and features (ml_efficacy), trained on
    the synthetic rows, tested on TABLE_test.csv;
  - per column c: the share of runs whose model measured a k-way marginal (k >= 2) holding both c
    and the target ("sets/run": the mean count of such marginals a run); the conditional gap
    sum_b P_real(b) |P_syn(y | b) - P_real(y | b)| summed over the target's values y, with b
    evaluate.py's bins of c (20 quantile bins of a numeric column, a category each otherwise);
    and the mutual information I(c; target) on the same bins, of the synthetic rows (the real
    rows' beside it);
  - with --split COLUMN: the mean AUC of the runs whose model measured a marginal holding COLUMN
    and the target, and of those that did not.
Usage: target_pairs.py --table adult --target income --eps 1 [--split age] [--shared DIR] OUTDIR...
"""
import argparse, glob, json, os, sys

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--table", required=True)
ap.add_argument("--target", required=True)
ap.add_argument("--eps", required=True)
ap.add_argument("--split")
ap.add_argument("--shared", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared"))
ap.add_argument("dirs", nargs="+")
a = ap.parse_args()
sys.path.insert(0, os.path.join(a.shared, "tools"))
import evaluate as ev  # noqa: E402

base = os.path.join(a.shared, "datasets", a.table)
real = ev.load(os.path.join(base, a.table + "_train.csv"))
test = ev.load(os.path.join(base, a.table + "_test.csv"))
cols = [c for c in real.columns if c != a.target]


def relation(codes, sizes, c):
    """P(b), P(y | b) and I(c; y) of one frame's codes."""
    t = np.zeros((sizes[c], sizes[a.target]))
    np.add.at(t, (codes[c], codes[a.target]), 1)
    p = t / t.sum()
    pb = p.sum(1, keepdims=True)
    py = p.sum(0, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = np.where(pb > 0, p / pb, np.nan)
        mi = float(np.where(p > 0, p * np.log(p / (pb * py)), 0).sum())
    return pb[:, 0], cond, mi, py[0]


def one_dir(d):
    runs = sorted(glob.glob(os.path.join(d, "%s-%s-*.csv" % (a.table, a.eps))),
                  key=lambda f: int(f.rsplit("-", 1)[1][:-4]))
    res = {"auc": [], "sets": {c: [] for c in cols}, "gap": {c: [] for c in cols},
           "mi": {c: [] for c in cols}, "split": []}
    for f in runs:
        synth = ev.load(f)
        res["auc"].append(ev.ml_efficacy(synth, test, a.target)[1])
        m = json.load(open(f[:-4] + ".json"))
        names = [c["name"] for c in m["columns"]]
        held = [[names[i] for i in mm["attrs"]] for mm in m["marginals"] if len(mm["attrs"]) > 1]
        held = [s for s in held if a.target in s]
        for c in cols:
            res["sets"][c].append(sum(1 for s in held if c in s))
        if a.split:
            res["split"].append(any(a.split in s for s in held))
        cr, cs, sizes = ev.discretize(real, synth)
        for c in cols:
            pr, condr, _, _ = relation(cr, sizes, c)
            _, conds, mi, pys = relation(cs, sizes, c)
            # a bin the synthetic rows never reach is judged at their overall share of y
            conds = np.where(np.isnan(conds), pys[None, :], conds)
            ok = pr > 0
            res["gap"][c].append(float((pr[ok, None] * np.abs(conds[ok] - condr[ok])).sum()))
            res["mi"][c].append(mi)
    return res


allres = {d: one_dir(d) for d in a.dirs}
cr, _, sizes = ev.discretize(real, real)
realmi = {c: relation(cr, sizes, c)[2] for c in cols}
for d, r in allres.items():
    v = np.array(r["auc"])
    line = "%s: %d runs, TSTR AUC mean %.4f (sd %.4f, %.4f-%.4f)" % (d, len(v), v.mean(), v.std(ddof=1) if len(v) > 1 else 0, v.min(), v.max())
    if a.split:
        s = np.array(r["split"])
        line += "; %s with %s measured in %d runs: AUC %s; not in %d: AUC %s" % (
            a.split, a.target, s.sum(), "%.4f" % v[s].mean() if s.any() else "-",
            (~s).sum(), "%.4f" % v[~s].mean() if (~s).any() else "-")
    print(line)
print()
print("| column | real MI | " + " | ".join("%s: runs with a set / gap / MI" % os.path.basename(d.rstrip("/")) for d in allres) + " |")
print("|---|---|" + "---|" * len(allres))
for c in cols:
    print("| %s | %.4f | " % (c, realmi[c]) + " | ".join(
        "%.2f / %.4f / %.4f" % (np.mean([x > 0 for x in r["sets"][c]]), np.mean(r["gap"][c]), np.mean(r["mi"][c]))
        for r in allres.values()) + " |")
