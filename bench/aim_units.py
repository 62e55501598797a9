#!/usr/bin/python3
"""bench/aim_units.py - AIM's group-privacy baseline per person, many runs of one cell (issue 39).

The baseline of ../shared/datasets/ANCHORS.md, "Tables with many rows per person": keep at most k
rows per person (chosen uniformly at random within the person), leave the person column out, run
AIM (bench/aim_baseline.py, private-pgm's numpy version) at zCDP rho = cdp_rho(epsilon, delta) / k^2
with as many synthetic rows as the truncated table has, and evaluate against the FULL train table:
    evaluate.py TRAIN SYNTH --test TEST --target T --exclude UNIT[,IDS] --json
Each run draws a fresh truncation (numpy default_rng(seed)) and gives AIM the same fresh seed
(seed = --seed-base + run number); PYTHONHASHSEED=0 as in ANCHORS.md. One JSON line per run is
appended to --out (failed runs too, with "failed"). Columns modelled: every domain.json column but
the unit and --ids, as aim_baseline.py codes them (categorical by declared values plus a missing
code; integer in at most 32 equal-width bins; numeric in 32 equal-width bins over the bounds).

Usage (one AIM process at a time; nice it on a shared machine):
  OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 nice -n 10 bench/aim_units.py males 1 1 20 \\
      --out bench/out/aim_units.jsonl [--seed-base 1000] [--target union] [--ids a,b] [--delta 1e-6]
      [--no-start-after HH:MM (UTC)] [--keep DIR] [--pgm /work/tmp/pgm]
  bench/aim_units.py --summarize bench/out/aim_units.jsonl... [--auc-bar 0.58]
      (per cell: mean, sd, min-max of each metric; with --auc-bar, how many runs and 2-run means of
      tstr_auc reach the bar)
"""
import argparse, datetime, json, os, sys, tempfile
import numpy as np
import pandas as pd

from aim_run import add_run_args, dataset_files, run_and_evaluate

TARGETS = {"males": "union", "covid_testing": "result"}
IDS = {"covid_testing": "fake_first_name,fake_last_name"}
METRICS = ["tvd1", "tvd2", "tvd3", "range", "tstr_auc", "tstr_acc"]


def summarize(args):
    bar = None
    if "--auc-bar" in args:
        i = args.index("--auc-bar")
        bar = float(args[i + 1])
        args = args[:i] + args[i + 2:]
    paths, rows = args, []
    for p in paths:
        with open(p) as f:
            rows += [json.loads(l) for l in f if l.strip()]
    cells = {}
    for r in rows:
        cells.setdefault((r["dataset"], r["k"], r["epsilon"]), []).append(r)
    for (d, k, e), rs in sorted(cells.items()):
        ok = [r for r in rs if "failed" not in r]
        print("%s k=%s epsilon=%s rho=%.6g: %d runs, %d failed, rows %s" % (
            d, k, e, rs[0]["rho"], len(ok), len(rs) - len(ok), sorted({r["rows"] for r in ok})))
        for m in METRICS + ["seconds", "cpu_seconds"]:
            v = np.array([r[m] for r in ok], dtype=float)
            if len(v) == 0:
                continue
            sd = v.std(ddof=1) if len(v) > 1 else float("nan")
            print("  %-11s mean %.4f  sd %.4f  min %.4f  max %.4f  (sd of the mean %.4f)" % (
                m, v.mean(), sd, v.min(), v.max(), sd / np.sqrt(len(v))))
        if ok:
            print("  tstr_auc per run: " + " ".join("%.3f" % r["tstr_auc"] for r in ok))
        if bar is not None and len(ok) > 1:
            auc = [r["tstr_auc"] for r in ok]
            pairs = [(x + y) / 2 for i, x in enumerate(auc) for y in auc[i + 1:]]
            print("  2-run means of tstr_auc at %g or more: %d of %d; runs at %g or more: %d of %d" % (
                bar, sum(p >= bar for p in pairs), len(pairs), bar, sum(x >= bar for x in auc), len(auc)))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--summarize":
        return summarize(sys.argv[2:])
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset")
    ap.add_argument("k", type=int)
    ap.add_argument("epsilon", type=float)
    ap.add_argument("runs", type=int)
    add_run_args(ap, seed_base=1000)
    ap.add_argument("--target", default=None)
    ap.add_argument("--ids", default=None)
    ap.add_argument("--keep", default=None, help="directory to keep each run's truncated and synthetic CSV")
    a = ap.parse_args()

    train, test, domain = dataset_files(a.shared, a.dataset)
    dom = {c: v for c, v in json.load(open(domain)).items() if not c.startswith("_")}
    unit = [c for c, v in dom.items() if v.get("privacy_unit")]
    if len(unit) != 1:
        sys.exit("domain.json must declare exactly one privacy_unit column")
    unit = unit[0]
    ids = [c for c in (a.ids if a.ids is not None else IDS.get(a.dataset, "")).split(",") if c]
    target = a.target or TARGETS[a.dataset]
    cols = [c for c in dom if c != unit and c not in ids]
    exclude = ",".join([unit] + ids)

    sys.path.insert(0, a.pgm)
    from mechanisms.cdp2adp import cdp_rho
    rho = cdp_rho(a.epsilon, a.delta) / a.k ** 2

    real = pd.read_csv(train, dtype=str, keep_default_na=False)
    groups = list(real.groupby(real[unit].str.strip(), sort=False).indices.values())
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
    work = tempfile.mkdtemp(prefix="aim_units.")
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
    stop = None
    if a.no_start_after:
        hh, mm = map(int, a.no_start_after.split(":"))
        now = datetime.datetime.utcnow()
        stop = now.replace(hour=hh, minute=mm, second=0, microsecond=0)

    for run in range(1, a.runs + 1):
        if stop is not None and datetime.datetime.utcnow() > stop:
            print("aim_units: %s UTC passed, no run %d started" % (a.no_start_after, run), file=sys.stderr)
            break
        seed = a.seed_base + run
        rng = np.random.default_rng(seed)
        keep = np.sort(np.concatenate([rng.choice(g, size=min(a.k, len(g)), replace=False) for g in groups]))
        trunc = real.iloc[keep]
        tag = "%s_k%d_e%g_s%d" % (a.dataset, a.k, a.epsilon, seed)
        tpath = os.path.join(a.keep or work, tag + "_trunc.csv")
        spath = os.path.join(a.keep or work, tag + "_synth.csv")
        trunc.to_csv(tpath, index=False)
        rec = {"dataset": a.dataset, "k": a.k, "epsilon": a.epsilon, "delta": a.delta, "rho": rho,
               "run": run, "seed": seed, "rows": int(len(trunc)),
               "start_utc": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M:%S")}
        run_and_evaluate(rec, [tpath, domain, spath, "--epsilon", repr(a.epsilon), "--delta", repr(a.delta),
                               "--rho", repr(rho), "--rows", str(len(trunc)), "--seed", str(seed),
                               "--columns", ",".join(cols), "--pgm", a.pgm],
                         [os.path.join(a.shared, "tools", "evaluate.py"), train, spath, "--test", test,
                          "--target", target, "--exclude", exclude, "--json"], env)
        with open(a.out, "a") as f:
            f.write(json.dumps(rec) + "\n")
        print("aim_units: " + json.dumps({x: rec.get(x) for x in ["run", "seed", "rows", "seconds", "tvd1", "tvd2",
                                                                     "tvd3", "range", "tstr_auc", "failed"]}),
              file=sys.stderr, flush=True)
        if not a.keep:
            for x in (tpath, spath):
                if os.path.exists(x):
                    os.remove(x)
    if not a.keep:
        os.rmdir(work)


if __name__ == "__main__":
    main()
