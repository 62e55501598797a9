#!/usr/bin/env bash
# bench/quality.sh - fidelity of dp_synthesize on UCI Adult, judged by ../shared/tools/evaluate.py
# (tvd2, tvd3, range queries, train-on-synthetic test-on-real AUC on adult_test.csv, target income).
# For each epsilon (0.3, 1, 3) and each binning (the public domain.json as declared: 32 equal-width
# bins; and quantile bins learned by DP inside the same call's epsilon), RUNS runs; prints the means
# and, with --record, appends them to bench/RESULTS.md.  Every run pays for everything it learns:
# quantile bins are declared anew before each run.
# Usage: bench/quality.sh [--record]      (RUNS=5 by default; EPSILONS="0.3 1 3")
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
export DPSYNTH_CLUSTER_DIR=${DPSYNTH_CLUSTER_DIR:-$TOP/tmp_cluster_bench}
CLUSTER_DIR=$DPSYNTH_CLUSTER_DIR
RUNS=${RUNS:-5}
EPSILONS=${EPSILONS:-"0.3 1 3"}
SHARED=${SHARED:-$TOP/../shared}
OUT=$TOP/bench/out
mkdir -p "$OUT"
dp_start_with_adult bench python3-numpy python3-pandas python3-sklearn >/dev/null
dp_protect_adult bench 999

declare_quantiles() {
	psql -X -q -d bench >/dev/null <<'SQL'
SELECT dp_declare('adult', 'age', lower => 16, upper => 100, bins => 24, binning => 'quantile');
SELECT dp_declare('adult', 'fnlwgt', lower => 10000, upper => 1500000, bins => 24, binning => 'quantile');
SELECT dp_declare('adult', 'capital_gain', lower => 0, upper => 100000, bins => 10, binning => 'quantile');
SELECT dp_declare('adult', 'capital_loss', lower => 0, upper => 5000, bins => 10, binning => 'quantile');
SELECT dp_declare('adult', 'hours_per_week', lower => 0, upper => 100, bins => 24, binning => 'quantile');
SQL
}
declare_equal() {
	dp_protect_adult bench 999	# re-declares domain.json (the budget stays as it is)
}

rows=()
for binning in equal quantile; do
	for eps in $EPSILONS; do
		: > "$OUT/$binning-$eps.jsonl"
		for run in $(seq 1 "$RUNS"); do
			if [ $binning = quantile ]; then declare_quantiles; else declare_equal; fi
			psql -X -q -d bench -c "DROP TABLE IF EXISTS synth" >/dev/null
			secs=$(psql -X -qAt -d bench -c "SELECT (seconds->>'total') FROM dp_synthesize('adult', epsilon => $eps, target => 'synth')")
			psql -X -q -d bench -c "\\copy synth TO '$OUT/synth.csv' WITH (FORMAT csv, HEADER true)"
			/usr/bin/python3 "$SHARED/tools/evaluate.py" "$SHARED/datasets/adult/adult_train.csv" "$OUT/synth.csv" \
				--test "$SHARED/datasets/adult/adult_test.csv" --target income --json |
				/usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); d['seconds']=$secs; print(json.dumps(d))" >> "$OUT/$binning-$eps.jsonl"
			echo "# $binning eps=$eps run $run: $(tail -n 1 "$OUT/$binning-$eps.jsonl")"
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
	echo "Machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/Mem:/{print $2}') GiB. delta 1e-6; means of the runs; evaluate.py against adult_train.csv, TSTR on adult_test.csv (target income); seconds = the dp_synthesize call (read, synthesize, write)."
	echo
	echo "| binning | epsilon | tvd2 | tvd3 | range | TSTR AUC | seconds | runs |"
	echo "|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
)
echo "$report"
[ "${1:-}" = "--record" ] && printf '\n%s\n' "$report" >> "$TOP/bench/RESULTS.md"
exit 0
