#!/usr/bin/env python3
"""bench/units_compare.py [--aim FILE.jsonl[,FILE...]] DIR... - does dpsynth per unit lose to a naive group-privacy baseline?

Reads the runs bench/units.sh left in DIR... (its *.jsonl lines) and prints, per dataset, epsilon
and metric, per unit (method unit, each k it ran at) against the best baseline cell: dpsynth's
row-level method on the table truncated to k rows per person (method rowk, the k with the best
mean on that metric), AIM's group-privacy baseline per k and epsilon, and MST's rows of
../shared/datasets/ANCHORS.md at epsilon 1.  AIM's cells come from the runs of --aim (the JSON
lines bench/aim_units.py writes; failed runs skipped), one cell per (dataset, k, epsilon) with
its runs' range, at every epsilon they were run at; where no run of AIM exists for a dataset, k
and epsilon 1, ANCHORS.md's AIM row stands in (2 runs there, the mean only), as MST's rows always
do.  AIM and MST enter the metrics ANCHORS.md has (tvd1, tvd2, tvd3, range, tstr_auc).
A verdict per metric:
  loses   per unit's mean is worse and its runs' range does not overlap the baseline cell's range
          (for ANCHORS.md's rows, which have no range: every per-unit run is worse)
  behind  worse mean, the ranges overlap (within the run spread)
  level / ahead  as the words say ("level": the means differ by under a tenth of the spread)
with Welch's t of the two means where both cells have 2 runs or more.  Lower is better for every
metric but tstr_acc and tstr_auc.  unit_rows_tvd is compared too (the baseline's rows have one
row per person).  The baseline column names its source: "AIM k=1 (aim_units), 40 runs" for
AIM's runs, "(ANCHORS.md)" for a fallback row.

bench/units_compare.py --ab BEFORE AFTER: per unit against per unit, two builds or rules (each a
comma-separated list of DIRs): for each dataset, epsilon and k of AFTER's unit cells, AFTER's
mean against BEFORE's with the same verdicts ("ahead" = AFTER better).
"""
import collections
import glob
import json
import math
import os
import sys

HIGHER = {"tstr_acc", "tstr_auc"}
METRICS = ["unit_rows_tvd", "tvd1", "tvd2", "tvd3", "range", "tstr_acc", "tstr_auc"]
ANCHOR_COLS = {"tvd1": 4, "tvd2": 5, "tvd3": 6, "range": 7, "tstr_auc": 8}


def load(dirs):
    runs = collections.defaultdict(list)
    for d in dirs:
        for f in sorted(glob.glob(os.path.join(d, "*.jsonl"))):
            for line in open(f):
                r = json.loads(line)
                runs[(r["dataset"], r["method"], r["k"], r["epsilon"])].append(r)
    return runs


def load_aim(files):
    """AIM's runs from bench/aim_units.py's JSON lines: {(dataset, k, epsilon as float): [run, ...]}"""
    runs = collections.defaultdict(list)
    for f in files:
        for line in open(f):
            if line.strip():
                r = json.loads(line)
                if not r.get("failed"):
                    runs[(r["dataset"], int(r["k"]), float(r["epsilon"]))].append(r)
    return runs


def anchors(shared, dataset):
    rows, on = [], False
    for line in open(os.path.join(shared, "datasets", "ANCHORS.md")):
        if line.startswith("### "):
            on = line.startswith(f"### {dataset} ")
            continue
        if line.startswith("## "):
            on = False
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if on and len(cells) == 9 and cells[0] in ("AIM", "MST"):
            rows.append(cells)
    return rows


def stats(v):
    n = len(v)
    m = sum(v) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1)) if n > 1 else float("nan")
    return n, m, sd, min(v), max(v)


def better(a, b, metric):
    """a better than b"""
    return a > b if metric in HIGHER else a < b


def verdict(uv, bv, metric):
    """(Welch t, verdict) of cell uv against cell bv, as the module's docstring says"""
    un, um, usd, umin, umax = stats(uv)
    bn, bm, bsd, bmin, bmax = stats(bv)
    t = ""
    if un > 1 and bn > 1:
        se = math.sqrt(usd ** 2 / un + bsd ** 2 / bn)
        t = f"{(um - bm) / se:+.1f}" if se > 0 else "inf"
    spread = max(umax - umin, bmax - bmin, 1e-12)
    if abs(um - bm) < 0.1 * spread:
        return t, "level"
    if better(um, bm, metric):
        return t, "ahead"
    if bn == 1:	# ANCHORS.md's mean: every per-unit run worse than it
        worse_all = all(better(bm, x, metric) for x in uv)
    else:		# the two ranges do not overlap
        worse_all = umax < bmin if metric in HIGHER else umin > bmax
    return t, "**loses**" if worse_all else "behind"


def cellfmt(v):
    n, m, _, lo, hi = stats(v)
    return f"{m:.4f} ({lo:.4f}-{hi:.4f}) ({n} runs)"


def ab(before_dirs, after_dirs):
    before, after = load(before_dirs), load(after_dirs)
    print("| dataset | epsilon | k | metric | after mean (min-max) | before mean (min-max) | Welch t | verdict |")
    print("|---|---|---|---|---|---|---|---|")
    for key in sorted((k for k in after if k[1] == "unit" and k in before), key=lambda k: (k[0], float(k[3]), k[2])):
        for metric in METRICS:
            av = [r[metric] for r in after[key] if r.get(metric) is not None]
            bv = [r[metric] for r in before[key] if r.get(metric) is not None]
            if av and bv:
                t, v = verdict(av, bv, metric)
                print(f"| {key[0]} | {key[3]} | {key[2]} | {metric} | {cellfmt(av)} | {cellfmt(bv)} | {t} | {v} |")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--ab":
        ab(sys.argv[2].split(","), sys.argv[3].split(","))
        return
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shared = os.environ.get("SHARED", os.path.join(top, "..", "shared"))
    args = sys.argv[1:]
    aim_files = []
    while "--aim" in args:
        i = args.index("--aim")
        aim_files += args[i + 1].split(",")
        args = args[:i] + args[i + 2:]
    aim = load_aim(aim_files)
    runs = load(args)
    datasets = sorted({k[0] for k in runs})
    print("| dataset | epsilon | metric | per unit (k) mean (min-max) | best baseline mean (min-max) | Welch t | verdict |")
    print("|---|---|---|---|---|---|---|")
    for d in datasets:
        eps_all = sorted({k[3] for k in runs if k[0] == d}, key=float)
        for eps in eps_all:
            units = [k for k in runs if k[0] == d and k[1] == "unit" and k[3] == eps]
            base = [k for k in runs if k[0] == d and k[1] == "rowk" and k[3] == eps]
            for metric in METRICS:
                cands = []
                for k in base:
                    v = [r[metric] for r in runs[k] if r.get(metric) is not None]
                    if v:
                        cands.append((f"dpsynth row-level k={k[2]}", v))
                if metric in ANCHOR_COLS:
                    aim_ks = set()
                    for (ad, ak, ae), rs in sorted(aim.items()):
                        v = [r[metric] for r in rs if r.get(metric) is not None]
                        if ad == d and ae == float(eps) and v:
                            cands.append((f"AIM k={ak} (aim_units)", v))
                            aim_ks.add(ak)
                    for a in anchors(shared, d) if float(eps) == 1 else []:
                        cell = a[ANCHOR_COLS[metric]].strip()
                        if cell and not (a[0] == "AIM" and a[1].split()[0] in {str(x) for x in aim_ks}):
                            cands.append((f"{a[0]} k={a[1]} (ANCHORS.md)", [float(cell)]))
                if not cands:
                    continue
                name, bv = max(cands, key=lambda c: (sum(c[1]) / len(c[1])) * (1 if metric in HIGHER else -1))
                for uk in units:
                    uv = [r[metric] for r in runs[uk] if r.get(metric) is not None]
                    if not uv:
                        continue
                    un, um, usd, umin, umax = stats(uv)
                    bn, bm, bsd, bmin, bmax = stats(bv)
                    t, v = verdict(uv, bv, metric)
                    print(f"| {d} | {eps} | {metric} | {um:.4f} ({umin:.4f}-{umax:.4f}) (k {uk[2]}, {un} runs) | "
                          f"{bm:.4f} ({bmin:.4f}-{bmax:.4f}) ({name}, {bn} runs) | {t} | {v} |")


if __name__ == "__main__":
    main()
