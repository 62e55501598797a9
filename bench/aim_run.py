"""bench/aim_run.py - one AIM run and its evaluation, shared by bench/aim_spread.py (row-level shared
tables) and bench/aim_units.py (person tables cut to k rows a person): bench/aim_baseline.py with
the given arguments, timed (wall and the children's CPU), then tools/evaluate.py on its rows; the
figures go into the run's record (failed: why, when either exits non-zero)."""
import json, os, resource, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("SHARED") or next(
    (p for p in (os.path.join(HERE, "..", "..", "shared"), os.path.join(HERE, "..", "..", "..", "shared"))
     if os.path.isdir(os.path.join(p, "datasets"))), "/work/shared")


def add_run_args(ap, seed_base):
    """The options every AIM driver takes (after its own positional arguments)."""
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed-base", type=int, default=seed_base)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--no-start-after", default=None, help="HH:MM UTC: start no run after it")
    ap.add_argument("--pgm", default="/work/tmp/pgm")
    ap.add_argument("--shared", default=SHARED)


def dataset_files(shared, dataset):
    """A shared dataset's train CSV, test CSV and domain.json."""
    d = os.path.join(shared, "datasets", dataset)
    return (os.path.join(d, dataset + "_train.csv"), os.path.join(d, dataset + "_test.csv"),
            os.path.join(d, "domain.json"))


def run_and_evaluate(rec, aim_args, evaluate_args, env):
    """aim_args: aim_baseline.py's arguments; evaluate_args: evaluate.py's path and arguments."""
    t0, c0 = time.time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([sys.executable, os.path.join(HERE, "aim_baseline.py")] + aim_args, env=env,
                       capture_output=True, text=True)
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    rec["seconds"] = round(time.time() - t0, 1)
    rec["cpu_seconds"] = round(c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime, 1)
    log = p.stdout + p.stderr
    rec["sigma_halvings"] = log.count("Reducing sigma")
    if p.returncode != 0:
        rec["failed"] = "aim_baseline.py exit %d: %s" % (p.returncode, log[-500:])
        return rec
    e = subprocess.run(["/usr/bin/python3"] + evaluate_args, env=env, capture_output=True, text=True)
    if e.returncode != 0:
        rec["failed"] = "evaluate.py exit %d: %s" % (e.returncode, e.stderr[-500:])
    else:
        rec.update(json.loads(e.stdout.strip().splitlines()[-1]))
    return rec
