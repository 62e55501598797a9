#!/usr/bin/python3
"""bench/aim_spread.py - AIM's own run spread on the row-level shared tables, many runs of one cell.

ANCHORS.md's AIM rows at epsilon 0.3 and 3 are 2-run means with no spread. This driver runs the
ANCHORS.md recipe (bench/aim_baseline.py: private-pgm's numpy AIM, all 2-way marginals, max_iters
100, numeric and integer columns in at most 32 equal-width bins over domain.json's bounds, AIM's
own row count, delta 1e-6, PYTHONHASHSEED=0) RUNS times on TABLE at EPSILON, seed = --seed-base +
run, and evaluates each run as bench/quality_all.sh evaluates dpsynth's:
    evaluate.py TABLE_train.csv SYNTH --test TABLE_test.csv --target T --json
One JSON line per run is appended to --out (failed runs too, with "failed").

Usage (one AIM process at a time; nice it on a shared machine):
  OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 nice -n 10 bench/aim_spread.py adult 0.3 5 \\
      --out bench/out/aim_spread.jsonl [--seed-base 100] [--no-start-after HH:MM (UTC)] [--pgm /work/tmp/pgm]
"""
import argparse, datetime, json, os, sys, tempfile

from aim_run import add_run_args, dataset_files, run_and_evaluate

# bench/quality_all.sh's targets
TARGETS = {"adult": "income", "diamonds": "cut", "arrests": "released", "smokeban": "smoker", "star": "star1"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset")
    ap.add_argument("epsilon", type=float)
    ap.add_argument("runs", type=int)
    add_run_args(ap, seed_base=100)
    a = ap.parse_args()

    train, test, domain = dataset_files(a.shared, a.dataset)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
    work = tempfile.mkdtemp(prefix="aim_spread.")
    stop = None
    if a.no_start_after:
        hh, mm = map(int, a.no_start_after.split(":"))
        stop = datetime.datetime.utcnow().replace(hour=hh, minute=mm, second=0, microsecond=0)

    for run in range(1, a.runs + 1):
        if stop is not None and datetime.datetime.utcnow() > stop:
            print("aim_spread: %s UTC passed, no run %d started" % (a.no_start_after, run), file=sys.stderr)
            break
        seed = a.seed_base + run
        spath = os.path.join(work, "%s_e%g_s%d_synth.csv" % (a.dataset, a.epsilon, seed))
        rec = {"dataset": a.dataset, "epsilon": a.epsilon, "delta": a.delta, "run": run, "seed": seed,
               "start_utc": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M:%S")}
        run_and_evaluate(rec, [train, domain, spath, "--epsilon", repr(a.epsilon), "--delta", repr(a.delta),
                               "--seed", str(seed), "--pgm", a.pgm],
                         [os.path.join(a.shared, "tools", "evaluate.py"), train, spath, "--test", test,
                          "--target", TARGETS[a.dataset], "--json"], env)
        with open(a.out, "a") as f:
            f.write(json.dumps(rec) + "\n")
        print("aim_spread: " + json.dumps({x: rec.get(x) for x in ["dataset", "epsilon", "run", "seed", "seconds",
                                                                      "cpu_seconds", "tvd1", "tvd2", "tvd3", "range",
                                                                      "tstr_auc", "failed"]}),
              file=sys.stderr, flush=True)
        if os.path.exists(spath):
            os.remove(spath)
    os.rmdir(work)


if __name__ == "__main__":
    main()
