#!/usr/bin/env python3
"""bench/bin_shape_cost.py REAL.csv COLUMN SHARED RUN... : what the values drawn inside a numeric
column's learned bins cost its one-way TVD, run by run.  Each RUN is SYNTH.csv:EDGES, EDGES a file
whose first word is the column's learned edges as the catalog stores them ({e0,e1,...}: each
bin's first value, the last past the upper bound; `SELECT edges FROM dpsynth.domains ...` right
after the synthesis).  Per run: the column's TVD as evaluate.py computes it (its discretize and
tvd, from SHARED/tools/evaluate.py); the same with every synthetic value redrawn from the real
values of its own bin (the bins' masses as synthesized, the ideal shape inside them: what the
bins' masses alone cost); the TVD of the bins' masses on the learned bins; and the share of
synthetic values below the real 1st and above the real 99th percentile.  Diagnosis only: reads
the real rows."""
import importlib.util
import os
import sys

import numpy as np

real_csv, col, shared, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
spec = importlib.util.spec_from_file_location("evaluate", os.path.join(shared, "tools", "evaluate.py"))
ev = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ev)
real = ev.load(real_csv)
rv = real[col].astype(float).to_numpy()
lo_q, hi_q = np.quantile(rv, [0.01, 0.99])
rng = np.random.default_rng(0)


def col_tvd(values):
    s = real.iloc[np.zeros(len(values), int)].reset_index(drop=True)
    s[col] = values
    cr, cs, sizes = ev.discretize(real[[col]], s[[col]])
    return ev.tvd(cr, cs, [col], sizes)


rows = []
print("run actual ideal_shape bin_mass below_p1 above_p99 bins")
for r in runs:
    synth_csv, edges_file = r.split(":")
    e = np.array([float(x) for x in open(edges_file).read().split()[0].strip("{}").split(",")])
    sv = ev.load(synth_csv)[col].astype(float).to_numpy()
    bs = np.searchsorted(e, sv, side="right") - 1
    br = np.searchsorted(e, rv, side="right") - 1
    ideal = sv.copy()
    for b in np.unique(bs):
        pool = rv[br == b]
        if len(pool):
            ideal[bs == b] = rng.choice(pool, int((bs == b).sum()))
    nb = len(e) - 1
    mass = 0.5 * np.abs(np.bincount(np.clip(bs, 0, nb - 1), minlength=nb) / len(sv) -
                        np.bincount(np.clip(br, 0, nb - 1), minlength=nb) / len(rv)).sum()
    row = (col_tvd(sv), col_tvd(ideal), mass, (sv < lo_q).mean(), (sv > hi_q).mean(), nb)
    rows.append(row)
    print(os.path.basename(synth_csv), " ".join("%.4f" % x for x in row[:5]), nb)
a = np.array(rows)
print("mean", " ".join("%.4f" % x for x in a.mean(axis=0)[:5]), "%d-%d" % (a[:, 5].min(), a[:, 5].max()))
