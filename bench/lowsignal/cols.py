#!/usr/bin/env python3
"""cols.py TRAIN TAG...: per column one-way TVD (evaluate.py's) of TAG.csv and TAG.real.csv against TRAIN, mean over tags; plus tvd1/tvd2 overall"""
import importlib.util, sys, os, itertools
import numpy as np
import os
SHARED = os.environ.get("SHARED", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared"))
spec = importlib.util.spec_from_file_location("evaluate", os.path.join(SHARED, "tools", "evaluate.py"))
ev = importlib.util.module_from_spec(spec); spec.loader.exec_module(ev)
train = ev.load(sys.argv[1])
excl = os.environ.get("EXCL", "nr").split(",")
train = train.drop(columns=[c for c in excl if c in train.columns])
res = {}
for tag in sys.argv[2:]:
    for kind in ("csv", "real.csv"):
        if not os.path.exists(f"{tag}.{kind}"):
            continue
        s = ev.load(f"{tag}.{kind}").drop(columns=[c for c in excl if c in train.columns or c in ("nr",)], errors="ignore")
        s = s[train.columns]
        cr, cs, sizes = ev.discretize(train, s)
        cols = list(sizes)
        for c in cols:
            res.setdefault((kind, c), []).append(ev.tvd(cr, cs, [c], sizes))
        res.setdefault((kind, "TVD1"), []).append(np.mean([ev.tvd(cr, cs, [c], sizes) for c in cols]))
        res.setdefault((kind, "TVD2"), []).append(np.mean([ev.tvd(cr, cs, list(p), sizes) for p in itertools.combinations(cols, 2)]))
names = [c for (k, c) in res if k == "csv"]
print("%-12s %8s %8s %s" % ("column", "synth", "cutreal", "synth runs"))
for c in names:
    a = res[("csv", c)]; b = res.get(("real.csv", c), [float('nan')])
    print("%-12s %8.3f %8.3f %s" % (c, np.mean(a), np.mean(b), " ".join("%.3f" % v for v in a)))
