#!/usr/bin/env bash
# bench/regenerate.sh - one command for the generated part of bench/RESULTS.md and its plots:
#   quality  every table in ../shared/datasets at every epsilon, RUNS runs each (dp_synthesize with
#            its default method, domain.json declared anew before each run so that every run pays
#            for what it learns), judged by ../shared/tools/evaluate.py as bench/quality_all.sh does;
#   speed    one dp_synthesize call at epsilon 1 on Adult's rows repeated to each size of ROWS
#            (domain.json declared), SPEED_RUNS times: seconds as dp_synthesize reports them and
#            the peak private memory (RssAnon) of the backend, sampled every 20 ms as bench/speed.sh
#            does.
# It writes the tables between the GENERATED markers of bench/RESULTS.md (added at the end the
# first time; the hand-written sections around them are kept) and draws bench/quality_TABLE.png
# (tvd2, tvd3 and TSTR AUC against epsilon, AIM and MST from ANCHORS.md where given) and
# bench/speed.png (time and memory against rows) with bench/plot_results.py.
#
# Usage: bench/regenerate.sh
#   RUNS=5  EPSILONS="0.3 1 3"  DATASETS="adult diamonds arrests smokeban star"
#   ROWS="10000 100000 1000000 10000000"  SPEED_RUNS=3
#   REUSE_QUALITY=FILE: take the quality lines from FILE (the quality.jsonl of an earlier run of
#   the same matrix, e.g. ROWS="" RECORD=0, copied out of bench/out/regenerate) instead of measuring
#   them again, so that the speed series can be timed on an otherwise idle machine; QUALITY_COMMIT
#   names the commit they were measured on, and the record says so.
#   A reduced matrix (any knob changed) is a smoke run: it is written to bench/out/regenerate/
#   only, never to RESULTS.md or next to it, unless RECORD=1 is set.
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
export DPSYNTH_CLUSTER_DIR=${DPSYNTH_CLUSTER_DIR:-$TOP/tmp_cluster_regenerate}
export DPSYNTH_PORT=${DPSYNTH_PORT:-54337}
CLUSTER_DIR=$DPSYNTH_CLUSTER_DIR
CLUSTER_PORT=$DPSYNTH_PORT

FULL_RUNS=5 FULL_EPSILONS="0.3 1 3" FULL_DATASETS="adult diamonds arrests smokeban star"
FULL_ROWS="10000 100000 1000000 10000000" FULL_SPEED_RUNS=3
RUNS=${RUNS:-$FULL_RUNS}
EPSILONS=${EPSILONS:-$FULL_EPSILONS}
DATASETS=${DATASETS:-$FULL_DATASETS}
ROWS=${ROWS-$FULL_ROWS}	# ROWS="" (set and empty): no speed series
SPEED_RUNS=${SPEED_RUNS:-$FULL_SPEED_RUNS}
SHARED=${SHARED:-$TOP/../shared}
OUT=$TOP/bench/out/regenerate
declare -A TARGET=([adult]=income [diamonds]=cut [arrests]=released [smokeban]=smoker [star]=star1)

full=1
[ "$RUNS $EPSILONS $DATASETS $ROWS $SPEED_RUNS" = "$FULL_RUNS $FULL_EPSILONS $FULL_DATASETS $FULL_ROWS $FULL_SPEED_RUNS" ] || full=0
record=${RECORD:-$full}

for d in $DATASETS; do
	[ -n "${TARGET[$d]:-}" ] && [ -f "$SHARED/datasets/$d/domain.json" ] || { echo "unknown dataset: $d" >&2; exit 2; }
done
for n in $ROWS; do
	[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "ROWS must be positive integers: $n" >&2; exit 2; }
done

rm -rf "$OUT"
mkdir -p "$OUT"
dp_start_with_adult bench python3-numpy python3-pandas python3-sklearn python3-matplotlib >/dev/null

# ---- quality ----
for d in $DATASETS; do
	python3 "$TOP/scripts/load_dataset.py" "$SHARED/datasets/$d" "$d" 999999 | psql -X -q -d bench -v ON_ERROR_STOP=1 >/dev/null
done

quality_once() {	# $1 dataset, $2 epsilon: declare, synthesize, evaluate; appends a JSON line
	local d=$1 eps=$2 secs res
	echo "SELECT dp_declare('$d', :'dom'::jsonb);" | psql -X -q -d bench -v ON_ERROR_STOP=1 \
		-v dom="$(cat "$SHARED/datasets/$d/domain.json")" >/dev/null || return 1
	psql -X -q -d bench -c "DROP TABLE IF EXISTS synth" >/dev/null || return 1
	secs=$(psql -X -qAt -d bench -v ON_ERROR_STOP=1 \
		-c "SELECT (seconds->>'total') FROM dp_synthesize('$d', epsilon => $eps, target => 'synth')") || return 1
	psql -X -q -d bench -c "\\copy synth TO '$OUT/synth.csv' WITH (FORMAT csv, HEADER true)" || return 1
	res=$(/usr/bin/python3 "$SHARED/tools/evaluate.py" "$SHARED/datasets/$d/${d}_train.csv" "$OUT/synth.csv" \
		--test "$SHARED/datasets/$d/${d}_test.csv" --target "${TARGET[$d]}" --json) || return 1
	echo "$res" | /usr/bin/python3 -c "import json, sys; r = json.load(sys.stdin); r.update(table='$d', epsilon=$eps, seconds=$secs); print(json.dumps(r))" \
		>> "$OUT/quality.jsonl"
}

if [ -n "${REUSE_QUALITY:-}" ]; then
	cp "$REUSE_QUALITY" "$OUT/quality.jsonl"
	EPSILONS_TO_RUN=""
	echo "# quality: $(wc -l < "$OUT/quality.jsonl") runs reused from $REUSE_QUALITY (commit ${QUALITY_COMMIT:-unknown})"
else
	EPSILONS_TO_RUN=$EPSILONS
fi
for eps in $EPSILONS_TO_RUN; do
	for d in $DATASETS; do
		for run in $(seq 1 "$RUNS"); do
			quality_once "$d" "$eps" || { echo "quality run failed: $d epsilon $eps" >&2; exit 1; }
			echo "# quality $d epsilon $eps run $run: $(tail -n 1 "$OUT/quality.jsonl")"
		done
	done
done

# ---- speed ----
make_rows() {	# $1 rows: table adult_$1
	dp_make_adult_rows bench "adult_$1" "$1"
}

speed_once() {	# $1 rows, $2 run: one call in its own session; appends a JSON line
	local n=$1 run=$2 t=adult_$1 res
	dp_call_with_peak "SELECT rows_written, seconds FROM dp_synthesize('$t', epsilon => 1, target => 's_$t');" \
		"$OUT/speed.out" || return 1
	res=$(head -n 1 "$OUT/speed.out")
	[ -n "$res" ] || return 1
	/usr/bin/python3 -c "import json, sys; w, s = sys.argv[1].split('|', 1); print(json.dumps({'rows': $n, 'run': $run, 'rows_written': int(w), 'seconds': json.loads(s), 'peak_kb': $BENCH_PEAK_KB, 'base_kb': $BENCH_BASE_KB}))" \
		"$res" >> "$OUT/speed.jsonl"
	psql -X -q -d bench -c "DROP TABLE IF EXISTS s_$t" >/dev/null
}

for n in $ROWS; do
	make_rows "$n"
	for run in $(seq 1 "$SPEED_RUNS"); do
		speed_once "$n" "$run" || { echo "speed run failed: $n rows" >&2; exit 1; }
		echo "# speed $n rows run $run: $(tail -n 1 "$OUT/speed.jsonl")"
	done
	psql -X -q -d bench -c "DROP TABLE adult_$n" >/dev/null
done

# ---- tables and plots ----
commit="$(git -C "$TOP" rev-parse --short HEAD)$(git -C "$TOP" diff --quiet HEAD || echo '+dirty')"
machine="$(nproc --all) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/Mem:/{print $2}') GiB; $(psql -X -qAt -d bench -c 'SELECT version()' | cut -d, -f1)"
command="RUNS=\"$RUNS\" EPSILONS=\"$EPSILONS\" DATASETS=\"$DATASETS\" ROWS=\"$ROWS\" SPEED_RUNS=\"$SPEED_RUNS\" bench/regenerate.sh"
[ -n "${REUSE_QUALITY:-}" ] && command="$command (quality runs measured on commit ${QUALITY_COMMIT:-unknown} with ROWS=\"\", then reused with REUSE_QUALITY)"
/usr/bin/python3 "$TOP/bench/plot_results.py" --out "$OUT" --anchors "$SHARED/datasets/ANCHORS.md" \
	--date "$(date -u +%Y-%m-%d)" --commit "$commit" --machine "$machine" --command "$command" \
	$( [ "$full" = 1 ] || echo --smoke ) > "$OUT/generated.md"
cat "$OUT/generated.md"

if [ "$record" = 1 ]; then
	cp "$OUT"/*.png "$TOP/bench/"
	/usr/bin/python3 - "$TOP/bench/RESULTS.md" "$OUT/generated.md" <<'PY'
import sys
path, gen = sys.argv[1], open(sys.argv[2]).read().rstrip("\n")
begin = "<!-- BEGIN GENERATED by bench/regenerate.sh: do not edit by hand, run it again -->"
end = "<!-- END GENERATED -->"
text = open(path).read()
block = f"{begin}\n{gen}\n{end}"
if begin in text and end in text:
    head, rest = text.split(begin, 1)
    text = head + block + rest.split(end, 1)[1]
else:
    text = text.rstrip("\n") + "\n\n" + block + "\n"
open(path, "w").write(text)
PY
	echo "# written: bench/RESULTS.md (generated section), bench/*.png"
else
	echo "# smoke run (reduced matrix): bench/RESULTS.md untouched; tables and plots in $OUT"
fi
exit 0
