#!/usr/bin/python3
"""bench/aim_baseline.py - run AIM (private-pgm) on a CSV as a comparison baseline.

A measuring instrument, not part of dpsynth and never shipped: it imports private-pgm's numpy
version (src/mbi and mechanisms/aim.py, mechanism.py, cdp2adp.py, the last version before the JAX
rewrite), which is NOT in this repository. Reconstruct it outside every git repository (default
/work/tmp/pgm: PGM/src/mbi/*.py, PGM/mechanisms/*.py, PGM/shim/ for the two imports AIM does not
use for computing: hdmm.matrix.Identity as scipy's sparse identity, autodp as a stub); which
upstream commit each file came from is recorded in bench/RESULTS.md beside the figures.

The recipe of ../shared/datasets/ANCHORS.md: AIM unmodified, all 2-way marginals of the columns
as its workload (weight 1), max_iters per estimate (100 there), zCDP rho = cdp_rho(epsilon, delta),
its other defaults (max_model_size 80). Columns are coded from a dpsynth-style domain.json:
categorical columns by their declared values, plus one code for a missing cell when any cell is
missing ('', '?', 'NA': evaluate.py's missing values, written back as ''); integer columns either
in at most --bins equal-width bins over [lower, upper] (decoded to a value drawn uniformly in the
bin), or with --per-value one code per integer of [lower, upper] (decoded exactly); numeric (real)
columns always in --bins equal-width bins over [lower, upper] (decoded to a real drawn uniformly in
the bin). Values outside the bounds are clamped. Synthetic rows: AIM's own count (its estimate of
the total), or --rows N. --rho R replaces AIM's zCDP budget cdp_rho(epsilon, delta) by R (group
privacy for k rows per person: R = cdp_rho(epsilon, delta) / k^2; bench/aim_units.py).

Usage: OPENBLAS_NUM_THREADS=1 PYTHONHASHSEED=0 bench/aim_baseline.py TRAIN.csv DOMAIN.json OUT.csv
         --epsilon 1 [--delta 1e-6] [--max-iters 100] [--bins 32 | --per-value] [--seed S]
         [--columns a,b,c] [--rho R] [--rows N] [--pgm /work/tmp/pgm]
"""
import argparse, itertools, json, os, sys, time
import numpy as np
import pandas as pd

MISSING = {"", "?", "NA", "NaN", "nan", "None", "\\N"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train")
    ap.add_argument("domain")
    ap.add_argument("out")
    ap.add_argument("--epsilon", type=float, required=True)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--max-iters", type=int, default=100)
    ap.add_argument("--bins", type=int, default=32)
    ap.add_argument("--per-value", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--columns", default=None)
    ap.add_argument("--rho", type=float, default=None)
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--pgm", default="/work/tmp/pgm")
    a = ap.parse_args()

    for sub in ("src", "mechanisms", "shim", ""):
        sys.path.insert(0, os.path.join(a.pgm, sub))
    from mbi import Dataset, Domain
    from aim import AIM

    t0 = time.time()
    raw = pd.read_csv(a.train, dtype=str, keep_default_na=False, skipinitialspace=True)
    raw.columns = [c.strip() for c in raw.columns]
    dom = {k: v for k, v in json.load(open(a.domain)).items() if not k.startswith("_")}
    cols = a.columns.split(",") if a.columns else [c for c in raw.columns if c in dom]

    codes, sizes, decode = {}, {}, {}
    for c in cols:
        s = raw[c].str.strip()
        miss = s.isin(MISSING)
        d = dom[c]
        if d["type"] == "categorical":
            vals = list(d["values"])
            idx = {v: i for i, v in enumerate(vals)}
            bad = set(s[~miss]) - set(idx)
            if bad:
                sys.exit("%s: values outside the declared domain: %s" % (c, sorted(bad)[:5]))
            code = s.map(idx)
            labels = vals
        elif d["type"] == "numeric":
            lo, hi = float(d["lower"]), float(d["upper"])
            v = pd.to_numeric(s.where(~miss), errors="coerce").clip(lo, hi)
            nb = a.bins
            width = (hi - lo) / nb
            code = np.floor((v - lo) / width).clip(0, nb - 1)
            labels = [("real", lo + i * width, lo + (i + 1) * width) for i in range(nb)]
        else:
            lo, hi = int(d["lower"]), int(d["upper"])
            v = pd.to_numeric(s.where(~miss), errors="coerce").clip(lo, hi)
            if a.per_value:
                nb, width = hi - lo + 1, 1.0
            else:
                nb = min(a.bins, hi - lo + 1)
                width = (hi - lo + 1) / nb
            code = np.floor((v - lo) / width).clip(0, nb - 1)
            labels = [(lo + i * width, lo + (i + 1) * width) for i in range(nb)]
        n = len(labels)
        if miss.any():
            code = code.where(~miss, n)
            labels = list(labels) + [None]
        codes[c] = code.astype(int).to_numpy()
        sizes[c] = len(labels)
        decode[c] = labels

    df = pd.DataFrame(codes, columns=cols)
    data = Dataset(df, Domain(cols, [sizes[c] for c in cols]))
    workload = [(cl, 1.0) for cl in itertools.combinations(cols, 2)]
    np.random.seed(a.seed)
    mech = AIM(a.epsilon, a.delta, max_iters=a.max_iters)
    if a.rho is not None:
        mech.rho = a.rho
    model, synth = mech.run(data, workload, num_synth_rows=a.rows)

    rng = np.random.default_rng(a.seed + 1)
    out = {}
    for c in cols:
        labels, x = decode[c], synth.df[c].to_numpy()
        if dom[c]["type"] == "categorical":
            col = np.array([("" if l is None else l) for l in labels], dtype=object)[x]
        else:
            col = np.empty(len(x), dtype=object)
            for i, l in enumerate(labels):
                sel = x == i
                if l is None:
                    col[sel] = ""
                elif l[0] == "real":
                    col[sel] = rng.uniform(l[1], l[2], sel.sum())
                else:
                    lo, hi = int(np.ceil(l[0])), int(np.ceil(l[1])) - 1
                    col[sel] = rng.integers(lo, max(lo, hi) + 1, sel.sum())
        out[c] = col
    pd.DataFrame(out, columns=cols).to_csv(a.out, index=False)
    print("aim_baseline: %d rows, %d columns, domain %s, rho %.6f, %.1f s"
          % (len(synth.df), len(cols), [sizes[c] for c in cols], mech.rho, time.time() - t0),
          file=sys.stderr)


if __name__ == "__main__":
    main()
