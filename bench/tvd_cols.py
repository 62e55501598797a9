#!/usr/bin/env python3
"""bench/tvd_cols.py REAL.csv SYNTH.csv [SHARED]: each column's one-way TVD as evaluate.py
computes it (its discretize and tvd, imported from SHARED/tools/evaluate.py), one line
"column tvd" per column in the real table's order."""
import importlib.util
import os
import sys

shared = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(__file__), "..", "..", "shared")
spec = importlib.util.spec_from_file_location("evaluate", os.path.join(shared, "tools", "evaluate.py"))
ev = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ev)
real, synth = ev.load(sys.argv[1]), ev.load(sys.argv[2])
cr, cs, sizes = ev.discretize(real, synth)
for c in sizes:
    print(c, "%.4f" % ev.tvd(cr, cs, [c], sizes))
