#!/usr/bin/env python3
import importlib.util, sys, os, itertools, glob
import numpy as np
import os
SHARED = os.environ.get("SHARED", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared"))
spec = importlib.util.spec_from_file_location("evaluate", os.path.join(SHARED, "tools", "evaluate.py"))
ev = importlib.util.module_from_spec(spec); spec.loader.exec_module(ev)
train = ev.load(sys.argv[1]); excl = sys.argv[2]
train = train.drop(columns=[excl]) if excl in train.columns else train
for pat in sys.argv[3:]:
    t1, t2 = [], []
    percol = {}
    for f in sorted(glob.glob(pat)):
        if f.endswith('.real.csv'): continue
        s = ev.load(f)[train.columns]
        cr, cs, sizes = ev.discretize(train, s)
        cols = list(sizes)
        v = [ev.tvd(cr, cs, [c], sizes) for c in cols]
        for c, x in zip(cols, v): percol.setdefault(c, []).append(x)
        t1.append(np.mean(v)); t2.append(np.mean([ev.tvd(cr, cs, list(p), sizes) for p in itertools.combinations(cols, 2)]))
    print("%-40s n=%d tvd1 %.3f (%.3f-%.3f) tvd2 %.3f (%.3f-%.3f) | %s" % (pat, len(t1), np.mean(t1), min(t1), max(t1), np.mean(t2), min(t2), max(t2), " ".join("%s:%.2f" % (c[:5], np.mean(x)) for c, x in percol.items())))
