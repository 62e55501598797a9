#!/usr/bin/env bash
# bench/quality.sh - fidelity of dp_synthesize on UCI Adult, judged by ../shared/tools/evaluate.py
# (tvd2, tvd3, range queries, train-on-synthetic test-on-real AUC on adult_test.csv, target income).
# For each epsilon (0.3, 1, 3) and each of two declarations, RUNS runs; prints the means and, with
# --record, appends them to bench/RESULTS.md:
#   auto   domain.json as declared: its numeric columns have bounds and no bins, so binning 'auto':
#          quantile bins learned by DP inside each call's own epsilon (discovery share)
#   equal  domain.json with "binning": "equal" on its numeric columns: the public equal-width bins
#          (32, or one per value)
# Every run pays for everything it learns: domain.json is declared anew before each run, which
# forgets the bins the previous run learned.
# Usage: bench/quality.sh [--record]      (RUNS=5 by default; EPSILONS="0.3 1 3"; BINNINGS="auto equal")
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
export DPSYNTH_CLUSTER_DIR=${DPSYNTH_CLUSTER_DIR:-$TOP/tmp_cluster_bench}
export DPSYNTH_PORT=${DPSYNTH_PORT:-54339}
CLUSTER_DIR=$DPSYNTH_CLUSTER_DIR
CLUSTER_PORT=$DPSYNTH_PORT
RUNS=${RUNS:-5}
EPSILONS=${EPSILONS:-"0.3 1 3"}
SHARED=${SHARED:-$TOP/../shared}
OUT=$TOP/bench/out/$(basename "$0" .sh).$$	# one directory per run: two runs at once must not share synth.csv
mkdir -p "$OUT"
dp_start_with_adult bench python3-numpy python3-pandas python3-sklearn >/dev/null
dp_protect_adult bench 999

DOMAIN_auto=$(cat "$TOP/data/adult/domain.json")
DOMAIN_equal=$(/usr/bin/python3 - "$TOP/data/adult/domain.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k, v in d.items():
    if not k.startswith("_") and "lower" in v:
        v["binning"] = "equal"
print(json.dumps(d))
PY
)
declare_domain() {	# $1: auto or equal
	local var=DOMAIN_$1
	echo "SELECT dp_declare('adult', :'domain'::jsonb);" | psql -X -q -d bench -v domain="${!var}" >/dev/null
}

run_once() {	# one run of $binning at $eps: declare, synthesize, evaluate; appends a JSON line
	local secs res
	declare_domain $binning || return 1
	psql -X -q -d bench -c "DROP TABLE IF EXISTS synth" >/dev/null || return 1
	secs=$(psql -X -qAt -d bench -c "SELECT (seconds->>'total') FROM dp_synthesize('adult', epsilon => $eps, target => 'synth')") || return 1
	learned=$(psql -X -qAt -d bench -c "SELECT count(*) FROM dp_domains WHERE source = 'dp' AND ledger_id IS NOT NULL") || return 1
	psql -X -q -d bench -c "\\copy synth TO '$OUT/synth.csv' WITH (FORMAT csv, HEADER true)" || return 1
	res=$(/usr/bin/python3 "$SHARED/tools/evaluate.py" "$SHARED/datasets/adult/adult_train.csv" "$OUT/synth.csv" \
		--test "$SHARED/datasets/adult/adult_test.csv" --target income --json) || return 1
	echo "$res" | /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); d['seconds']=$secs; print(json.dumps(d))" >> "$OUT/$binning-$eps.jsonl"
}

rows=()
for binning in ${BINNINGS:-auto equal}; do
	for eps in $EPSILONS; do
		: > "$OUT/$binning-$eps.jsonl"
		for run in $(seq 1 "$RUNS"); do
			# a failed attempt (e.g. the shared library being reinstalled meanwhile) is run again
			for attempt in 1 2 3; do
				if run_once; then break; fi
				[ $attempt = 3 ] && { echo "run failed 3 times" >&2; exit 1; }
				sleep 5
			done
			echo "# $binning eps=$eps run $run ($learned domains learned): $(tail -n 1 "$OUT/$binning-$eps.jsonl")"
		done
		rows+=("$(/usr/bin/python3 - "$OUT/$binning-$eps.jsonl" "$binning" "$eps" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
m = lambda k: sum(r[k] for r in rs) / len(rs)
print(f"| {sys.argv[2]} | {sys.argv[3]} | {m('tvd2'):.3f} | {m('tvd3'):.3f} | {m('range'):.4f} | {m('tstr_auc'):.3f} | {m('seconds'):.2f} | {len(rs)} |")
PY
)")
	done
done
report=$(
	echo "### dp_synthesize quality on Adult, $(date -u +%Y-%m-%d), commit $(git -C "$TOP" rev-parse --short HEAD)$(git -C "$TOP" diff --quiet || echo '+dirty')"
	echo
	echo "Machine: $(nproc --all) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/Mem:/{print $2}') GiB. delta 1e-6; means of the runs; evaluate.py against adult_train.csv, TSTR on adult_test.csv (target income); seconds = the dp_synthesize call (read, synthesize, write)."
	echo
	echo "binning: auto = domain.json as declared (bounds, no bins: quantile bins learned by DP in each call's epsilon, $(sed -n 's/^#define DPSYNTH_AUTO_BINS \([0-9]*\).*/\1/p' "$TOP/src/dpsynth.h") at most); equal = domain.json with \"binning\": \"equal\" (32 equal-width bins, or one per value)."
	echo
	echo "| binning | epsilon | tvd2 | tvd3 | range | TSTR AUC | seconds | runs |"
	echo "|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
)
echo "$report"
[ "${1:-}" = "--record" ] && printf '\n%s\n' "$report" >> "$TOP/bench/RESULTS.md"
exit 0
