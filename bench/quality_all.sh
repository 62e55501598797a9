#!/usr/bin/env bash
# bench/quality_all.sh - fidelity of dp_synthesize on every table in ../shared/datasets, judged by
# ../shared/tools/evaluate.py (tvd1, tvd2, tvd3, range queries, train-on-synthetic test-on-real AUC
# on TABLE_test.csv), with AIM's and MST's figures from ../shared/datasets/ANCHORS.md beside it.
# Each table is loaded as its owner would (scripts/load_dataset.py: domain.json declared), and
# each run declares domain.json anew, so that every run pays for whatever it learns.
# Usage: bench/quality_all.sh [--record]   (RUNS=5, EPSILONS="1", DATASETS="adult diamonds arrests smokeban star",
#        METHOD= (dp_synthesize's default), EXTRA= (more dp_synthesize arguments, e.g. ", method => 'privsyn'"),
#        FOCUS_TARGET=1: each call passes focus => ARRAY[the table's evaluated target column] (the
#        analyst's public choice; adaptive method only),
#        DECLARE=none: nothing declared; every domain is learned once by dp_discover at epsilon
#        DISCOVER_EPS (default 1), stored, and reused by the runs; the table is protected with a
#        budget that covers them and SELECTION_DELTA, default 1e-6, for its text columns),
#        COLS=1: also each column's one-way TVD of every run (bench/tvd_cols.py)
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
export DPSYNTH_CLUSTER_DIR=${DPSYNTH_CLUSTER_DIR:-$TOP/tmp_cluster_quality}
export DPSYNTH_PORT=${DPSYNTH_PORT:-54332}
CLUSTER_DIR=$DPSYNTH_CLUSTER_DIR
CLUSTER_PORT=$DPSYNTH_PORT
RUNS=${RUNS:-5}
EPSILONS=${EPSILONS:-1}
DATASETS=${DATASETS:-"adult diamonds arrests smokeban star"}
EXTRA=${EXTRA:-}
FOCUS_TARGET=${FOCUS_TARGET:-0}
DECLARE=${DECLARE:-domain.json}
DISCOVER_EPS=${DISCOVER_EPS:-1}
SELECTION_DELTA=${SELECTION_DELTA:-1e-6}
SHARED=${SHARED:-$TOP/../shared}
COLS=${COLS:-0}
OUT=$TOP/bench/out/$(basename "$0" .sh).$$	# one directory per run: two runs at once must not share synth.csv
mkdir -p "$OUT"
declare -A TARGET=([adult]=income [diamonds]=cut [arrests]=released [smokeban]=smoker [star]=star1)

dp_start_with_adult bench python3-numpy python3-pandas python3-sklearn >/dev/null
for d in $DATASETS; do
	python3 "$TOP/scripts/load_dataset.py" "$SHARED/datasets/$d" "$d" 999999 | psql -X -q -d bench -v ON_ERROR_STOP=1 >/dev/null
done

run_once() {	# $1 dataset, $2 epsilon: declare, synthesize, evaluate; appends a JSON line
	local d=$1 eps=$2 secs res focus=
	[ "$FOCUS_TARGET" = 1 ] && focus=", focus => ARRAY['${TARGET[$d]}']"
	if [ "$DECLARE" != none ]; then
		echo "SELECT dp_declare('$d', :'dom'::jsonb);" | psql -X -q -d bench -v dom="$(cat "$SHARED/datasets/$d/domain.json")" >/dev/null || return 1
	fi
	psql -X -q -d bench -c "DROP TABLE IF EXISTS synth" >/dev/null || return 1
	secs=$(psql -X -qAt -d bench -c "SELECT (seconds->>'total') FROM dp_synthesize('$d', epsilon => $eps, target => 'synth'$EXTRA$focus)") || return 1
	psql -X -q -d bench -c "\\copy synth TO '$OUT/synth.csv' WITH (FORMAT csv, HEADER true)" || return 1
	# one OpenMP thread for the classifier: the same figures (HistGradientBoostingClassifier with
	# random_state 0), without threads that spin against other work on a shared machine
	res=$(OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} /usr/bin/python3 "$SHARED/tools/evaluate.py" "$SHARED/datasets/$d/${d}_train.csv" "$OUT/synth.csv" \
		--test "$SHARED/datasets/$d/${d}_test.csv" --target "${TARGET[$d]}" --json) || return 1
	echo "$res" | /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); d['seconds']=$secs; print(json.dumps(d))" >> "$OUT/q-$d-$eps.jsonl"
	if [ "$COLS" = 1 ]; then
		echo "# $d eps=$eps one-way: $(/usr/bin/python3 "$TOP/bench/tvd_cols.py" "$SHARED/datasets/$d/${d}_train.csv" "$OUT/synth.csv" "$SHARED" | tr '\n' ' ')"
	fi
}

rows=()
for eps in $EPSILONS; do
	for d in $DATASETS; do
		: > "$OUT/q-$d-$eps.jsonl"
		if [ "$DECLARE" = none ]; then
			# forget what load_dataset.py declared, then learn it once, as an owner would
			# a realistic budget (discovery plus every run): text discovery's delta share is
			# selection_delta / exp(budget epsilon), zero for the loader's 999999
			budget=$(/usr/bin/python3 -c "import sys; print($DISCOVER_EPS + $RUNS * sum(float(e) for e in '$EPSILONS'.split()) + 0.5)")
			psql -X -q -d bench -v ON_ERROR_STOP=1 -c "SELECT dp_protect('$d', epsilon => $budget, selection_delta => $SELECTION_DELTA)" >/dev/null || exit 1
			psql -X -q -d bench -v ON_ERROR_STOP=1 -c "SELECT count(dp_undeclare('$d', attname)) FROM pg_attribute
				WHERE attrelid = '$d'::regclass AND attnum > 0 AND NOT attisdropped" >/dev/null || exit 1
			psql -X -q -d bench -v ON_ERROR_STOP=1 -c "SELECT count(*) FROM dp_discover('$d', epsilon => $DISCOVER_EPS)" >/dev/null || exit 1
		fi
		for run in $(seq 1 "$RUNS"); do
			run_once "$d" "$eps" || { echo "run failed: $d eps=$eps" >&2; exit 1; }
			echo "# $d eps=$eps run $run: $(tail -n 1 "$OUT/q-$d-$eps.jsonl")"
		done
		rows+=("$(/usr/bin/python3 - "$OUT/q-$d-$eps.jsonl" "$d" "$eps" "$SHARED/datasets/ANCHORS.md" <<'PY'
import json, re, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
name, eps = sys.argv[2], sys.argv[3]
def m(k):
    v = [r[k] for r in rs if r.get(k) is not None]
    return sum(v) / len(v) if v else float("nan")
# AIM and MST rows of this table in ANCHORS.md: the epsilon-1 table (a cell per metric) and the
# epsilon 0.3 and 3 table (a cell per epsilon, "tvd1 / tvd2 / tvd3 / range / AUC")
anch, cur, other = {}, None, {}
for line in open(sys.argv[4]):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) < 4 or cells[0].startswith("---") or cells[0] in ("table (target)", "table"):
        continue
    if cells[0]:
        cur = cells[0].split(" ")[0]
    if cur != name:
        continue
    system = cells[1].split(",")[0]
    if len(cells) >= 9 and system in ("MST", "AIM"):
        anch[system] = cells[3:8]
    elif len(cells) == 4 and system in ("MST", "AIM"):
        other[(system, "0.3")] = [c.strip() for c in cells[2].split("/")]
        other[(system, "3")] = [c.strip() for c in cells[3].split("/")]
def f(v, nd):
    return f"{v:.{nd}f}".lstrip("0") if v == v else ""
ours = [f(m("tvd1"), 3), f(m("tvd2"), 3), f(m("tvd3"), 3), f(m("range"), 4), f(m("tstr_auc"), 3)]
def anchor(system):
    if eps in ("1", "1.0"):
        return " / ".join(anch.get(system, [""] * 5))
    key = {"0.3": "0.3", "3": "3", "3.0": "3"}.get(eps)
    return " / ".join(other.get((system, key), [])) if key else ""
aim, mst = anchor("AIM"), anchor("MST")
print(f"| {name} | {eps} | {' / '.join(ours)} | {aim} | {mst} | {m('seconds'):.2f} | {len(rs)} |")
PY
)")
	done
done
report=$(
	echo "### dp_synthesize quality on every dataset, $(date -u +%Y-%m-%d), commit $(git -C "$TOP" rev-parse --short HEAD)$(git -C "$TOP" diff --quiet || echo '+dirty')"
	echo
	echo "Machine: $(nproc --all) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/Mem:/{print $2}') GiB. Command: \`RUNS=$RUNS EPSILONS=\"$EPSILONS\" bench/quality_all.sh\`$( [ -n "$EXTRA" ] && echo " with EXTRA=\"$EXTRA\"")$( [ "$FOCUS_TARGET" = 1 ] && echo " with FOCUS_TARGET=1 (focus => ARRAY[target column])")$( [ "$DECLARE" = none ] && echo " with DECLARE=none DISCOVER_EPS=$DISCOVER_EPS SELECTION_DELTA=$SELECTION_DELTA"). delta 1e-6, $( [ "$DECLARE" = none ] && echo "nothing declared: every domain learned once by dp_discover at epsilon $DISCOVER_EPS (charged separately)" || echo "domain.json declared"), means of the runs; evaluate.py against TABLE_train.csv, TSTR on TABLE_test.csv. AIM and MST from ANCHORS.md (epsilon 1, and 0.3 and 3 where it has them). Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "| table | epsilon | dpsynth tvd1 / tvd2 / tvd3 / range / AUC | AIM | MST | seconds | runs |"
	echo "|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
)
echo "$report"
[ "${1:-}" = "--record" ] && printf '\n%s\n' "$report" >> "$TOP/bench/RESULTS.md"
exit 0
