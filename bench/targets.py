#!/usr/bin/python3
"""bench/targets.py - how much of each column's predictability the synthetic copies keep.

For every table, every column that evaluate.py reads as categorical and that has 2 to 16 values
in TABLE_test.csv is taken as a target in turn: train-on-synthetic test-on-real AUC (evaluate.py's
ml_efficacy: HistGradientBoosting, macro one-vs-rest AUC for more than two labels) for every
synthetic copy, against the same model trained on TABLE_train.csv.  "kept" is
(TSTR - .5) / (TRTR - .5): 1 keeps all of the real signal, 0 none (a coin).  The quality bars
name one target per table; dp_synthesize is never told it, so every other column is as good a
test of "keeps the dependencies a downstream model uses" (issue 10), and a table the team does
not hold will have its own.

Usage: targets.py SHARED DIR TABLE...   (DIR holds synth-TABLE-RUN.csv); prints one JSON line
per (table, target) and a markdown table at the end.
"""
import glob
import importlib.util
import json
import sys

shared, d = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("ev", f"{shared}/tools/evaluate.py")
ev = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ev)
rows = []
for t in sys.argv[3:]:
    real = ev.load(f"{shared}/datasets/{t}/{t}_train.csv")
    test = ev.load(f"{shared}/datasets/{t}/{t}_test.csv")
    synths = [ev.load(f) for f in sorted(glob.glob(f"{d}/synth-{t}-*.csv"))]
    if not synths:
        sys.exit(f"no synthetic copy of {t} in {d}")
    for c in test.columns:
        if ev.numeric(test[c]) or not 2 <= test[c].nunique() <= 16:
            continue
        trtr = ev.ml_efficacy(real, test, c)[1]
        ts = [ev.ml_efficacy(s, test, c)[1] for s in synths]
        m = sum(ts) / len(ts)
        r = {"table": t, "target": c, "labels": int(test[c].nunique()), "trtr": trtr, "tstr": m,
             "tstr_min": min(ts), "kept": (m - .5) / (trtr - .5) if trtr > .5 else None, "runs": ts}
        rows.append(r)
        print(json.dumps(r), flush=True)
print()
print("| table | target | labels | TRTR AUC | TSTR AUC (mean) | lowest run | kept |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    kept = f"{r['kept']:.2f}" if r["kept"] is not None else ""
    print(f"| {r['table']} | {r['target']} | {r['labels']} | {r['trtr']:.3f} | {r['tstr']:.3f} | {r['tstr_min']:.3f} | {kept} |")
