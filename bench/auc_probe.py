#!/usr/bin/python3
"""bench/auc_probe.py - where a synthetic table's TSTR AUC goes: probes on dp_synthesize's output
(issue 37: diamonds' AUC behind 8ffdb2a's).  Every probe reads synthetic CSVs, each with its model
beside it (SYNTH.csv and SYNTH.json = `SELECT dp_model_json(model_id)` of the call that wrote it),
and judges them with ../shared/tools/evaluate.py's own functions (its bins, its classifier).

Usage: auc_probe.py MODE --table T --target COL [--shared DIR] [--k K ...] SYNTH.csv ...   (one JSON line a file)
  metrics  TSTR AUC, tvd1, tvd2, range (1,000 queries, seed 0: not evaluate.py's draw, the same
           for every file) and the TVD of (target, c) for every other column c on evaluate.py's bins
  binned   the AUC with every numeric feature (synthetic and test) replaced by its evaluate.py bin:
           what the classifier gets from the synthetic rows at evaluate.py's resolution only
  binonly  no noise: the REAL training rows with each real-bin column's values redrawn uniformly
           inside the model's bins (one column at a time, then all), trained on, tested on the
           test split: what the bins alone cost the classifier
  heap     the model's released one-way counts (one_way_noisy) read for heaps: a bin of a real-
           bin column whose count per unit width is at least K times both neighbours' (and
           positive) holds a heap; if the coarsest round step {5, 2, 1} x 10^k with a multiple
           in the bin has exactly one there, the bin's synthetic values are moved onto it.  The
           metrics above before and after, for each --k (post-processing of released counts and
           public edges only: a simulation of a draw rule, not a change of dpsynth)
           (--rule cliff: one neighbour at most 1/K of it and the other at most equal)
  left     as heap, but every bin of --column moved onto its left edge (no rule: a probe)
"""
import argparse, itertools, json, math, os, sys

import numpy as np
import pandas as pd

ap = argparse.ArgumentParser()
ap.add_argument("mode", choices=["metrics", "binned", "binonly", "heap", "left"])
ap.add_argument("files", nargs="+")
ap.add_argument("--table", required=True)
ap.add_argument("--target", required=True)
ap.add_argument("--shared", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared"))
ap.add_argument("--k", default="3", help="comma-separated K values")
ap.add_argument("--column", default="table")
ap.add_argument("--rule", choices=["both", "cliff"], default="both",
                help="heap: both neighbours at most 1/K of the bin's density, or (cliff) one of them "
                     "and the other at most the bin's")
a = ap.parse_args()
sys.path.insert(0, os.path.join(a.shared, "tools"))
import evaluate as ev  # noqa: E402

D = os.path.join(a.shared, "datasets", a.table)
real = ev.load(os.path.join(D, f"{a.table}_train.csv"))
test = ev.load(os.path.join(D, f"{a.table}_test.csv"))
cols = list(real.columns)
target = a.target


def metrics(s, r, tag=""):
    cr, cs, sizes = ev.discretize(real, s)
    r["auc" + tag] = ev.ml_efficacy(s, test, target)[1]
    r["tvd1" + tag] = float(np.mean([ev.tvd(cr, cs, [c], sizes) for c in cols]))
    r["tvd2" + tag] = float(np.mean([ev.tvd(cr, cs, list(p), sizes) for p in itertools.combinations(cols, 2)]))
    r["range" + tag] = ev.range_queries(cr, cs, sizes, np.random.default_rng(0))
    if not tag:
        for c in cols:
            if c != target:
                r["tvd_" + target + "_" + c] = ev.tvd(cr, cs, [target, c], sizes)


def binned(df):
    """numeric columns as their evaluate.py bin (an integer, in order)"""
    out = df.copy()
    for c in cols:
        if c != target and ev.numeric(real[c]):
            rv = pd.to_numeric(real[c], errors="coerce")
            edges = np.unique(np.nanquantile(rv, np.linspace(0, 1, 21)[1:-1]))
            out[c] = np.searchsorted(edges, pd.to_numeric(df[c], errors="coerce").fillna(0), side="right")
    return out


def roundest(lo, hi):
    """the multiple of the coarsest step {5, 2, 1} x 10^k in [lo, hi), if that step has exactly one"""
    if not hi > lo:
        return None
    k = math.floor(math.log10(max(abs(lo), abs(hi), 1e-300))) + 1
    for kk in range(k, k - 15, -1):
        for m in (5, 2, 1):
            s = m * 10.0 ** kk
            first, last = math.ceil(lo / s - 1e-9), math.ceil(hi / s - 1e-9) - 1
            if last >= first:
                return round(first * s, 10) if first == last else None
    return None


def heap_points(edges, noisy, k):
    n = len(edges) - 1
    dens = [max(noisy[i], 0) / (edges[i + 1] - edges[i]) for i in range(n)]
    out = {}
    for j in range(n):
        dl, dr = dens[j - 1] if j > 0 else 0, dens[j + 1] if j + 1 < n else 0
        if a.rule == "both":
            heap = dens[j] >= k * max(dl, dr)
        else:
            heap = dens[j] >= k * min(dl, dr) and dens[j] >= max(dl, dr)
        if noisy[j] > 0 and heap:
            p = roundest(edges[j], edges[j + 1])
            if p is not None:
                out[j] = p
    return out


def moved(s, col, edges, points):
    e = np.asarray(edges, float)
    v = pd.to_numeric(s[col])
    b = np.clip(np.searchsorted(e, v, side="right") - 1, 0, len(e) - 2)
    nv = v.copy()
    for j, p in points.items():
        nv[b == j] = p
    return nv.round(10).astype(str)


for f in a.files:
    s0 = ev.load(f)
    r = {"file": os.path.basename(f)}
    model = None
    if a.mode in ("binonly", "heap", "left"):
        model = json.load(open(os.path.splitext(f)[0] + ".json"))
        realbins = [c for c in model["columns"] if c["domain"]["kind"] == "real_bins" and c["name"] in cols]
    if a.mode == "metrics":
        metrics(s0, r)
    elif a.mode == "binned":
        r["auc"] = ev.ml_efficacy(s0, test, target)[1]
        r["auc_binned"] = ev.ml_efficacy(binned(s0), binned(test), target)[1]
    elif a.mode == "binonly":
        rng = np.random.default_rng(1)
        groups = [[c["name"]] for c in realbins] + [[c["name"] for c in realbins]]
        for g in groups:
            df = real.copy()
            for c in realbins:
                if c["name"] in g:
                    e = np.asarray(c["domain"]["edges"], float)
                    v = pd.to_numeric(df[c["name"]]).to_numpy()
                    b = np.clip(np.searchsorted(e, v, side="right") - 1, 0, len(e) - 2)
                    df[c["name"]] = (e[b] + rng.random(len(v)) * (e[b + 1] - e[b])).astype(str)
            r["binonly_" + ("all" if len(g) > 1 else g[0])] = ev.ml_efficacy(df, test, target)[1]
    elif a.mode == "heap":
        metrics(s0, r)
        for k in [float(x) for x in a.k.split(",")]:
            s = s0.copy()
            pts = {}
            for c in realbins:
                p = heap_points(c["domain"]["edges"], c["one_way_noisy"], k)
                pts[c["name"]] = sorted(p.values())
                if p:
                    s[c["name"]] = moved(s, c["name"], c["domain"]["edges"], p)
            metrics(s, r, f"_k{k:g}")
            r[f"points_k{k:g}"] = pts
    else:
        metrics(s0, r)
        c = next(c for c in realbins if c["name"] == a.column)
        e = c["domain"]["edges"]
        s = s0.copy()
        s[a.column] = moved(s, a.column, e, {j: e[j] for j in range(len(e) - 1)})
        metrics(s, r, "_left")
    print(json.dumps(r), flush=True)
