#!/usr/bin/env bash
# bench/units.sh - privacy per person (issue 39): fidelity of the group-privacy baseline a user has
# with a row-level synthesizer, and of dpsynth's per-unit synthesis where the build has it, on the
# tables with many rows per person in ../shared/datasets (covid_testing: unit subject_id; males:
# unit nr), judged by ../shared/tools/evaluate.py as ../shared/datasets/ANCHORS.md judged AIM and MST.
#
# Methods (METHODS, default "rowk unit"; unit is skipped when the build has no dp_privacy_unit):
#   rowk  group privacy: each person keeps at most k rows, chosen uniformly at random within the
#         person (ORDER BY random() after setseed(run / 1000): reproducible, the same rows for every
#         epsilon of one run); the unit and identifier columns are dropped; the table is protected
#         row-level and declared with domain.json (without those columns); dp_synthesize runs at
#         epsilon_row = dp_epsilon(dp_rho(E, 1e-6) / k^2, 1e-6), so that its rho is the person-level
#         rho of epsilon E divided by k^2 (checked against the rho_charged it reports).  The synthetic
#         rows have no persons: each synthetic row gets a unit id of its own (rows per unit 1).
#   rowk_nodisc  rowk with dp_protect(discovery => false), as the unit runs are protected (below):
#         tells what the bins learned by DP are worth, apart from the unit.
#   unit  dpsynth per unit: the table with its unit column (identifiers dropped), protected with
#         discovery => UNIT_DISCOVERY (default true: a column declared with bounds only learns
#         quantile bins by DP from the unit-bounded rows; false keeps equal-width bins over the
#         declared bounds, as builds before per-unit discovery did), dp_privacy_unit(table, UNIT, max_rows_per_unit => k),
#         domain.json declared (without the unit and identifiers), dp_synthesize at epsilon E: it
#         keeps k random rows per person itself (CSPRNG: the run's setseed does not reach it); its
#         synthetic table keeps the unit column with synthetic ids.  k = learned (e.g.
#         KS_males="learned"): max_rows_per_unit => NULL, each call learns k under DP (docs/PRIVACY.md);
#         the k each run learned goes to OUT/learned_k.txt.
#   unitconst  unit, with the columns constant per person declared (dp_unit_constant(table,
#         CONSTANT)): covid_testing gender, age, demo_group; males school, ethn (their READMEs).
# For unit and unitconst, const_share is the share of the synthetic persons of two rows or more
# whose rows agree on those columns (1 where every person holds them constant).
# Every run is evaluated with `evaluate.py TRAIN SYNTH --test TEST --target T --unit U --exclude IDS
# --json` against the full train table.  The table printed has, per dataset, AIM's and MST's rows from
# ANCHORS.md (epsilon 1) and one row per method, k and epsilon: means with (min-max) over the runs.
#
# Usage (against a running cluster with dpsynth installed: PGHOST, PGPORT, PGUSER exported; without
# PGHOST a throwaway cluster of PGBIN's installation is started on DPSYNTH_PORT and stopped at exit):
#   RUNS=5 EPSILONS="0.3 1 3" bench/units.sh [--record]
#   bench/units.sh --summarize DIR... [--record]   (one table of the runs already in the DIRs, e.g.
#                                                   an interrupted run's bench/out/units.PID)
# Other settings: UNDECLARED_DATASET (e.g. UNDECLARED_males="year,school,exper,wage": for unit and
# unitconst, columns left without a domain, whose bounds the call discovers by DP), DATASETS ("covid_testing males"), METHODS, KS_covid_testing ("1 2 4"),
# KS_males ("1 2 4 8") (ANCHORS.md's k; KS_METHOD_DATASET, e.g. KS_unit_covid_testing="learned 1",
# overrides them for one method), UNITS_DB (units), EVAL_JOBS (2: evaluations run beside the
# next synthesis, each on one thread; at most one synthesis at a time), FOCUS (empty; 1: every
# synthesis of every method gets focus => ARRAY[target], the dataset's TSTR target, so that each
# pair with the target is measured before the rounds: the comparison of a user who names the column
# the copy is for).  Runs are ordered run-major
# (every cell gets its first run before any gets its second), so a cut-short run summarizes evenly.
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$TOP/bench/units_lib.sh"
SHARED=${SHARED:-$TOP/../shared}
RUNS=${RUNS:-5}
EPSILONS=${EPSILONS:-"0.3 1 3"}
DATASETS=${DATASETS:-"covid_testing males"}
METHODS=${METHODS:-"rowk unit"}
KS_covid_testing=${KS_covid_testing:-"1 2 4"}
KS_males=${KS_males:-"1 2 4 8"}
DB=${UNITS_DB:-units}
EVAL_JOBS=${EVAL_JOBS:-2}
FOCUS=${FOCUS:-}
DELTA=1e-6
declare -A TARGET=([covid_testing]=result [males]=union)
declare -A UNIT=([covid_testing]=subject_id [males]=nr)
declare -A IDS=([covid_testing]=fake_first_name,fake_last_name [males]=)
declare -A CONSTANT=([covid_testing]=gender,age,demo_group [males]=school,ethn)
export OMP_NUM_THREADS=1

summarize() {	# $@ directories of runs' JSON lines (and meta.json); prints the report
	/usr/bin/python3 - "$SHARED" "$TOP" "$@" <<'PY'
import glob, json, os, re, subprocess, sys, csv, collections
shared, top, outs = sys.argv[1], sys.argv[2], sys.argv[3:]
metas = [json.load(open(os.path.join(o, "meta.json"))) for o in outs]
meta = dict(metas[0])
for key in ("date", "commit", "load", "command"):
    vals = [m[key] for m in metas]
    meta[key] = vals[0] if len(set(vals)) == 1 else "; ".join(vals)
meta["datasets"] = [d for m in metas for d in m["datasets"]]
meta["datasets"] = sorted(set(meta["datasets"]), key=meta["datasets"].index)
runs = collections.defaultdict(list)
for o in outs:
    for f in sorted(glob.glob(os.path.join(o, "*.jsonl"))):
        for line in open(f):
            r = json.loads(line)
            runs[(r["dataset"], r["method"], r["k"], r["epsilon"])].append(r)
METRICS = ["rows_synth", "unit_rows_tvd", "tvd1", "tvd2", "tvd3", "range", "tstr_acc", "tstr_auc"]
if any(r.get("const_share") is not None for rs in runs.values() for r in rs):
    METRICS.append("const_share")
def fmt(v, key):
    if key == "rows_synth":
        return f"{v:.0f}"
    nd = 4 if key in ("range",) else 3
    if key == "const_share" and v == 1:
        return "1"
    return f"{v:.{nd}f}".replace("0.", ".", 1) if abs(v) < 1 else f"{v:.{nd}f}"
def cell(rs, key):
    v = [r[key] for r in rs if r.get(key) is not None]
    if not v:
        return ""
    m = sum(v) / len(v)
    return fmt(m, key) if len(v) == 1 else f"{fmt(m, key)} ({fmt(min(v), key)}-{fmt(max(v), key)})"
def anchors(dataset):
    """AIM and MST rows of the dataset's section in ANCHORS.md: (system, k, rho, rows, metrics)."""
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
def single_share(dataset, unit):
    """Share of the train table's persons with exactly one row: 1 minus it is unit_rows_tvd of a
    synthetic table whose every row is its own person (how the baseline's rows are scored)."""
    n = collections.Counter(r[unit] for r in csv.DictReader(open(os.path.join(shared, "datasets", dataset, f"{dataset}_train.csv"))))
    return sum(1 for c in n.values() if c == 1) / len(n)
def sci(v):
    m, e = f"{v:.2e}".split("e")
    return f"{m}e{int(e)}"
def epskey(e):
    return float(e)
print(f"### Privacy per person: group-privacy baseline vs per unit (issue 39), {meta['date']}, commit {meta['commit']}")
print()
print(f"Machine: {meta['machine']} "
      f"(load average {meta['load']} at the start; other work on the machine moves the seconds). "
      f"Command: `{meta['command']}`. delta {meta['delta']}; evaluate.py {meta['evaluate']}.")
print()
for d in meta["datasets"]:
    unit = meta["unit"][d]
    trtr = [r for k, rs in runs.items() if k[0] == d for r in rs]
    print(f"#### {d} (unit {unit}; target {meta['target'][d]})")
    print()
    print("| method | k | epsilon | rho per person | rho charged | runs | " + " | ".join(METRICS) + " | seconds |")
    print("|---|---|---|---|---|---|" + "---|" * (len(METRICS) + 1))
    share = single_share(d, unit)
    for a in anchors(d):
        sysname, k, rho, nrows, t1, t2, t3, rg, auc = a
        print(f"| {sysname} (ANCHORS.md) | {k} | 1 | 2.44e-2 | {rho} | 2 | {nrows} | {fmt(1 - share, 'tvd1')}* | {t1} | {t2} | {t3} | {rg} | | {auc} | |")
    keys = sorted((k for k in runs if k[0] == d), key=lambda k: (["rowk", "rowk_nodisc", "unit", "unitconst"].index(k[1]), (int(k[2]) if k[2].isdigit() else 99), epskey(k[3])))
    for key in keys:
        rs = runs[key]
        name = {"rowk": "dpsynth row-level, group privacy", "unit": "dpsynth per unit",
                "rowk_nodisc": "dpsynth row-level, group privacy, discovery off",
                "unitconst": "dpsynth per unit, constant columns declared"}[key[1]]
        print(f"| {name} | {key[2]} | {key[3]} | {sci(rs[0]['rho_person'])} | {sci(rs[0]['rho_charged'])} | {len(rs)} | " +
              " | ".join(cell(rs, m) for m in METRICS) + f" | {cell(rs, 'seconds')} |")
    if trtr:
        print(f"| train on real | | | | | | {trtr[0]['rows_real']} | 0 | | | | | {trtr[0]['trtr_acc']:.3f} | {trtr[0]['trtr_auc']:.3f} | |")
    print()
    print(f"\\* AIM's and MST's unit_rows_tvd is not in ANCHORS.md (their synthetic rows have no person column): "
          f"scored as the baseline's rows are, one person per synthetic row, it is 1 minus the share of train "
          f"persons with one row ({share:.3f}).")
    print()
PY
}

record() {	# $1 the report: into bench/RESULTS.md before its first section (newest first)
	/usr/bin/python3 - "$TOP/bench/RESULTS.md" "$1" <<'PY'
import sys
path, report = sys.argv[1], sys.argv[2]
text = open(path).read()
at = text.index("\n### ") + 1
open(path, "w").write(text[:at] + report.rstrip("\n") + "\n\n" + text[at:])
PY
}

if [ "${1:-}" = "--summarize" ]; then
	shift
	dirs=()
	rec=""
	for a in "$@"; do [ "$a" = --record ] && rec=1 || dirs+=("$a"); done
	report=$(summarize "${dirs[@]}")
	echo "$report"
	[ -n "$rec" ] && record "$report"
	exit 0
fi

if [ -z "${PGHOST:-}" ]; then
	export DPSYNTH_CLUSTER_DIR=${DPSYNTH_CLUSTER_DIR:-$TOP/tmp_cluster_units}
	source "$TOP/scripts/lib.sh"
	trap dp_cluster_stop EXIT
	dp_cluster_start
fi
OUT=$TOP/bench/out/units.$$
mkdir -p "$OUT"

if ! psql -X -qAt -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1; then
	psql -X -q -d postgres -c "CREATE DATABASE $DB"
fi
psql -X -q -d "$DB" -c "CREATE EXTENSION IF NOT EXISTS dpsynth"
HAS_UNIT=$(psql -X -qAt -d "$DB" -c "SELECT count(*) FROM pg_proc WHERE proname = 'dp_privacy_unit'")

# The owner's tables as scripts/load_dataset.py creates them (types and NOT NULL from domain.json and
# the rows), named DATASET_raw, unprotected: every run copies from it.
for d in $DATASETS; do
	python3 "$TOP/scripts/load_dataset.py" "$SHARED/datasets/$d" "$d" 1 | grep -v '^SELECT dp_' |
		sed "s/\\b$d\\b/${d}_raw/; s/TABLE IF EXISTS ${d}_raw;/TABLE IF EXISTS ${d}_raw CASCADE;/" |
		psql -X -q -d "$DB" -v ON_ERROR_STOP=1 >/dev/null
done

domain_without() {	# $1 dataset, $2 comma-separated columns: domain.json without them
	/usr/bin/python3 -c "
import json, sys
d = json.load(open('$SHARED/datasets/$1/domain.json'))
drop = set(c for c in '$2'.split(',') if c)
print(json.dumps({k: v for k, v in d.items() if k not in drop and not k.startswith('_')}))"
}

# make_table DATASET TABLE DROP K RUN: bench/units_lib.sh's units_make_table with this script's
# database and the dataset's unit column
make_table() {
	units_make_table "$DB" "$1" "$2" "$3" "$4" "$5" "${UNIT[$1]}"
}

evaluate() {	# $1 dataset, $2 synthetic CSV, $3 JSON to merge in, $4 output file; runs in the background
	local d=$1 res
	res=$(/usr/bin/python3 "$SHARED/tools/evaluate.py" "$SHARED/datasets/$d/${d}_train.csv" "$2" \
		--test "$SHARED/datasets/$d/${d}_test.csv" --target "${TARGET[$d]}" --unit "${UNIT[$d]}" \
		${IDS[$d]:+--exclude "${IDS[$d]}"} --json) || { echo "evaluation failed: $2" >&2; return 1; }
	/usr/bin/python3 -c "import json,sys; a=json.loads(sys.argv[1]); a.update(json.loads(sys.argv[2])); print(json.dumps(a))" \
		"$3" "$res" >> "$4"
	rm -f "$2"
	echo "# $(basename "$4" .jsonl): $res"
}

wait_slot() {	# at most EVAL_JOBS evaluations at a time
	while [ "$(jobs -rp | wc -l)" -ge "$EVAL_JOBS" ]; do wait -n || true; done
}

run_once() {	# $1 method, $2 dataset, $3 k, $4 epsilon, $5 run
	local m=$1 d=$2 k=$3 eps=$4 run=$5 t csv rho_person eps_call out info disc const=null undeclared
	t="${d}_${m}"
	csv="$OUT/synth-$m-$d-$k-$eps-$run.csv"
	rho_person=$(psql -X -qAt -d "$DB" -c "SELECT dp_rho($eps, $DELTA)")
	if [ "$m" = rowk ] || [ "$m" = rowk_nodisc ]; then
		[ "$m" = rowk ] && disc=true || disc=false
		make_table "$d" "$t" "${UNIT[$d]}${IDS[$d]:+,${IDS[$d]}}" "$k" "$run" || return 1
		psql -X -q -d "$DB" -v ON_ERROR_STOP=1 -c "SELECT dp_protect('$t', epsilon => 999999, discovery => $disc)" >/dev/null || return 1
		echo "SELECT dp_declare('$t', :'dom'::jsonb);" | psql -X -q -d "$DB" -v ON_ERROR_STOP=1 \
			-v dom="$(domain_without "$d" "${UNIT[$d]},${IDS[$d]}")" >/dev/null || return 1
		# the row-level epsilon whose rho is rho_person / k^2, nudged down if the round trip lands above
		eps_call=$(psql -X -qAt -d "$DB" -c "WITH RECURSIVE e(v, i) AS (
				SELECT dp_epsilon($rho_person / ($k * $k), $DELTA), 0
				UNION ALL SELECT v * (1 - 1e-12), i + 1 FROM e WHERE dp_rho(v, $DELTA) > $rho_person / ($k * $k) AND i < 1000)
			SELECT v FROM e ORDER BY i DESC LIMIT 1") || return 1
	else
		make_table "$d" "$t" "${IDS[$d]}" 1000000 "$run" || return 1
		psql -X -q -d "$DB" -v ON_ERROR_STOP=1 -c "SELECT dp_protect('$t', epsilon => 999999, discovery => ${UNIT_DISCOVERY:-true})" \
			-c "SELECT dp_privacy_unit('$t', '${UNIT[$d]}', max_rows_per_unit => $([ "$k" = learned ] && echo NULL || echo "$k"))" >/dev/null || return 1
		undeclared=UNDECLARED_$d
		echo "SELECT dp_declare('$t', :'dom'::jsonb);" | psql -X -q -d "$DB" -v ON_ERROR_STOP=1 \
			-v dom="$(domain_without "$d" "${UNIT[$d]},${IDS[$d]}${!undeclared:+,${!undeclared}}")" >/dev/null || return 1
		eps_call=$eps
		if [ "$m" = unitconst ]; then
			psql -X -q -d "$DB" -v ON_ERROR_STOP=1 \
				-c "SELECT dp_unit_constant('$t', string_to_array('${CONSTANT[$d]}', ',')::name[])" >/dev/null || return 1
		fi
	fi
	psql -X -q -d "$DB" -c "DROP TABLE IF EXISTS synth" >/dev/null
	info=$(psql -X -qAt -F ' ' -d "$DB" -v ON_ERROR_STOP=1 -c "SELECT seconds->>'total', rho_charged
		FROM dp_synthesize('$t', epsilon => $eps_call, target => 'synth'${FOCUS:+, focus => ARRAY['${TARGET[$d]}']})") || return 1
	read -r secs rho_charged <<<"$info"
	[ "$k" = learned ] && echo "$d $eps $run k=$(psql -X -qAt -d "$DB" -c "SELECT jsonb_array_length(dp_model_json(model_id)->'rows_per_unit') FROM dp_models WHERE table_name = '$t'::regclass ORDER BY model_id DESC LIMIT 1")" >>"$OUT/learned_k.txt"
	if [ "$m" != unit ] && [ "$m" != unitconst ]; then
		# the group-privacy guarantee: k^2 times the row-level rho is at most the person-level rho
		/usr/bin/python3 -c "import sys; sys.exit(0 if $rho_charged * $k * $k <= $rho_person * (1 + 1e-12) else 1)" ||
			{ echo "rho_charged $rho_charged * $k^2 exceeds $rho_person" >&2; return 1; }
		psql -X -q -d "$DB" -c "\\copy (SELECT row_number() OVER () AS ${UNIT[$d]}, * FROM synth) TO '$csv' WITH (FORMAT csv, HEADER true)" || return 1
	else
		psql -X -q -d "$DB" -c "\\copy synth TO '$csv' WITH (FORMAT csv, HEADER true)" || return 1
		const=$(psql -X -qAt -d "$DB" -v ON_ERROR_STOP=1 -c "SELECT coalesce(avg((n_distinct = 1)::int), 1) FROM (
				SELECT count(DISTINCT concat_ws('|', $(echo "${CONSTANT[$d]}" | sed "s/\([a-z_][a-z_]*\)/coalesce(\1::text, 'NULL')/g"))) n_distinct
				FROM synth GROUP BY ${UNIT[$d]} HAVING count(*) > 1) u") || return 1
	fi
	out="$OUT/$m-$d-$k-$eps.jsonl"
	wait_slot
	evaluate "$d" "$csv" "{\"dataset\": \"$d\", \"method\": \"$m\", \"k\": \"$k\", \"epsilon\": \"$eps\", \"run\": $run,
		\"epsilon_call\": $eps_call, \"rho_person\": $rho_person, \"rho_charged\": $rho_charged, \"seconds\": $secs, \"const_share\": $const}" "$out" &
}

methods=""
for m in $METHODS; do
	if { [ "$m" = unit ] || [ "$m" = unitconst ]; } && [ "$HAS_UNIT" = 0 ]; then
		echo "note: this build has no dp_privacy_unit: per-unit runs skipped" >&2
		continue
	fi
	methods="$methods $m"
done
# the command that reproduces the table: every setting that changes a synthesis, the k of each
# method and dataset included (KS_*: learned or declared), as this run had them
ks=""
for v in $(compgen -v | grep '^KS_\|^UNDECLARED_' | sort); do ks="$ks $v=\"${!v}\""; done
cmd="RUNS=$RUNS EPSILONS=\"$EPSILONS\" DATASETS=\"$DATASETS\" METHODS=\"${methods# }\"$ks${FOCUS:+ FOCUS=$FOCUS}${UNIT_DISCOVERY:+ UNIT_DISCOVERY=$UNIT_DISCOVERY} bench/units.sh"
/usr/bin/python3 - "$OUT/meta.json" <<PY
import json, sys
json.dump({"date": "$(date -u '+%Y-%m-%d %H:%M UTC')",
           "commit": "$(git -C "$TOP" rev-parse --short HEAD)$(git -C "$TOP" diff --quiet HEAD -- src sql || echo '+dirty')",
           "machine": "$(grep -c ^processor /proc/cpuinfo) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/Mem:/{print $2}') GiB",
           "load": "$(cut -d' ' -f1-3 /proc/loadavg)",
           "command": """$cmd""", "delta": "$DELTA",
           "evaluate": "TRAIN SYNTH --test TEST --target T --unit U --exclude IDS --json (OMP_NUM_THREADS=1)",
           "datasets": "$DATASETS".split(),
           "unit": {"covid_testing": "subject_id", "males": "nr"},
           "target": {"covid_testing": "result", "males": "union"}}, open(sys.argv[1], "w"))
PY
echo "# runs in $OUT"
for run in $(seq 1 "$RUNS"); do
	for d in $DATASETS; do
		for m in $methods; do
			ks_var="KS_${m}_$d"
			[ -n "${!ks_var:-}" ] || ks_var="KS_$d"
			for k in ${!ks_var}; do
				for eps in $EPSILONS; do
					run_once "$m" "$d" "$k" "$eps" "$run" || { echo "run failed: $m $d k=$k eps=$eps run $run" >&2; exit 1; }
				done
			done
		done
	done
done
wait
report=$(summarize "$OUT")
echo "$report"
[ "${1:-}" = "--record" ] && record "$report"
exit 0
