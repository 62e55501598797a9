#!/usr/bin/python3
"""Splits evaluate.py's range metric by the columns a query touches, for kept synthetic copies.

Usage: range_split.py SHARED TABLE EPS DIR_A DIR_B [--names A,B] [--top N]
DIR_x holds TABLE-EPS-RUN.csv files (bench/range_runs.sh).  The 1,000 queries are evaluate.py's own
(its discretize, its generator seeded 12345, consumed as evaluate.py consumes it), so a copy's mean
here is its `range` figure.  Printed: per build the mean range error; then per column set touched
(the 3 columns of a query), each build's mean error over runs and queries and its share of the
total; then the queries whose mean error moved most between the builds, with the real fraction and
each build's mean signed error (synthetic - real) and mean absolute error.
"""
import argparse, glob, importlib.util, itertools, os, re
import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("shared"); ap.add_argument("table"); ap.add_argument("eps")
ap.add_argument("dirs", nargs="+")
ap.add_argument("--names", default=None)
ap.add_argument("--top", type=int, default=15)
ap.add_argument("--by", default="set", help="set: the 3 columns; col: with/without each column")
a = ap.parse_args()
spec = importlib.util.spec_from_file_location("evaluate", os.path.join(a.shared, "tools", "evaluate.py"))
ev = importlib.util.module_from_spec(spec); spec.loader.exec_module(ev)
names = a.names.split(",") if a.names else [os.path.basename(d.rstrip("/")) for d in a.dirs]
real = ev.load(os.path.join(a.shared, "datasets", a.table, f"{a.table}_train.csv"))


def queries(cr, sizes):
    """evaluate.py's queries: (columns, lo, hi) triples, the generator consumed as evaluate.py does."""
    rng = np.random.default_rng(12345)
    cols = list(sizes)
    triples = list(itertools.combinations(cols, 3))
    if len(triples) > 300:
        rng.choice(len(triples), 300, replace=False)
    out = []
    for _ in range(1000):
        pick = rng.choice(len(cols), size=min(3, len(cols)), replace=False)
        q = []
        for j in pick:
            c = cols[j]
            lo = rng.integers(0, sizes[c]); hi = rng.integers(lo, sizes[c])
            q.append((c, int(lo), int(hi)))
        out.append(q)
    return out


def fractions(codes, qs):
    n = len(next(iter(codes.values())))
    f = np.empty(len(qs))
    for i, q in enumerate(qs):
        m = np.ones(n, bool)
        for c, lo, hi in q:
            m &= (codes[c] >= lo) & (codes[c] <= hi)
        f[i] = m.mean()
    return f


runs = {}	# name -> array runs x queries of synthetic fractions
qs = fr = None
for name, d in zip(names, a.dirs):
    files = sorted(glob.glob(os.path.join(d, f"{a.table}-{a.eps}-*.csv")),
                   key=lambda p: int(re.findall(r"-(\d+)\.csv$", p)[0]))
    rows = []
    for p in files:
        cr, cs, sizes = ev.discretize(real, ev.load(p))
        if qs is None:
            qs = queries(cr, sizes); fr = fractions(cr, qs)
        rows.append(fractions(cs, qs))
    runs[name] = np.array(rows)
print(f"{a.table} at epsilon {a.eps}: {', '.join(f'{n} {len(runs[n])} runs' for n in names)}")
err = {n: np.abs(runs[n] - fr) for n in names}
for n in names:
    per_run = err[n].mean(axis=1)
    print(f"  {n}: range {per_run.mean():.5f} (sd of runs {per_run.std(ddof=1):.5f}, se {per_run.std(ddof=1) / np.sqrt(len(per_run)):.5f})")


def key(q):
    return tuple(sorted(c for c, lo, hi in q))


groups = {}
if a.by == "set":
    for i, q in enumerate(qs):
        groups.setdefault(" ".join(key(q)), []).append(i)
else:
    for c in sorted({c for q in qs for c, _, _ in q}):
        groups[f"with {c}"] = [i for i, q in enumerate(qs) if c in key(q)]
        groups[f"without {c}"] = [i for i, q in enumerate(qs) if c not in key(q)]
print("\n| queries on | n | " + " | ".join(f"{n} mean err x1e3 | {n} sum/1000 x1e3" for n in names) +
      f" | {names[-1]} - {names[0]} (sum/1000 x1e3) | se of that |")
print("|---|---|" + "---|---|" * len(names) + "---|---|")
rows = []
for g, idx in groups.items():
    idx = np.array(idx)
    cells = []
    for n in names:
        cells += [err[n][:, idx].mean() * 1e3, err[n][:, idx].sum(axis=1).mean()]
    # the difference of the group's contribution to the metric, and its standard error over runs
    ca = err[names[0]][:, idx].sum(axis=1); cb = err[names[-1]][:, idx].sum(axis=1)
    diff = cb.mean() - ca.mean()
    se = np.sqrt(ca.var(ddof=1) / len(ca) + cb.var(ddof=1) / len(cb))
    rows.append((diff, g, len(idx), cells, se))
for diff, g, k, cells, se in sorted(rows, key=lambda r: -r[0]):
    print(f"| {g} | {k} | " + " | ".join(f"{v:.3f}" for v in cells) + f" | {diff:+.3f} | {se:.3f} |")
if a.top:
    d = err[names[-1]].mean(axis=0) - err[names[0]].mean(axis=0)
    print(f"\nqueries whose mean error moved most ({names[-1]} - {names[0]}), x1e3:")
    print("| query | real | " + " | ".join(f"{n} bias | {n} err" for n in names) + " | moved |")
    print("|---|---|" + "---|---|" * len(names) + "---|")
    for i in np.argsort(-np.abs(d))[:a.top]:
        q = "; ".join(f"{c} {lo}-{hi}" for c, lo, hi in qs[i])
        cells = []
        for n in names:
            cells += [(runs[n][:, i] - fr[i]).mean() * 1e3, err[n][:, i].mean() * 1e3]
        print(f"| {q} | {fr[i]:.4f} | " + " | ".join(f"{v:+.2f}" if j % 2 == 0 else f"{v:.2f}" for j, v in enumerate(cells)) + f" | {d[i] * 1e3:+.2f} |")
