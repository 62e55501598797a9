#!/usr/bin/env bash
# bench/speed.sh - time and memory of one dp_synthesize call on Adult (32,561 rows), on star (47
# columns, 7,732 rows) and on 1,000,000 rows (Adult rows repeated), domain.json declared, epsilon 1.  Peak backend memory is
# the largest RssAnon (private memory; shared buffers excluded) sampled every 20 ms during the call.
# Usage: bench/speed.sh [--record]   (RUNS=3 calls per table, TABLES="adult star adult_1m"; each
#        table's mean and largest total seconds and its calls over 1 s close the table)
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
export DPSYNTH_CLUSTER_DIR=${DPSYNTH_CLUSTER_DIR:-$TOP/tmp_cluster_speed}
export DPSYNTH_PORT=${DPSYNTH_PORT:-54331}
CLUSTER_DIR=$DPSYNTH_CLUSTER_DIR
CLUSTER_PORT=$DPSYNTH_PORT
dp_start_with_adult bench >/dev/null
RUNS=${RUNS:-3}
TABLES=${TABLES:-"adult star adult_1m"}
dp_protect_adult bench 999
case " $TABLES " in *" adult_1m "*) dp_make_adult_1m bench 999 ;; esac
# star: 47 columns, 7,732 rows (the wide-table case of the tracker), loaded as its owner would
case " $TABLES " in *" star "*)
	python3 "$TOP/scripts/load_dataset.py" "$TOP/../shared/datasets/star" star 999 | psql -X -q -d bench -v ON_ERROR_STOP=1 >/dev/null ;;
esac

rows=()
sums=()
mkdir -p "$TOP/bench/out"
for t in $TABLES; do
	totals=()
	for run in $(seq 1 "$RUNS"); do
		dp_call_with_peak "SELECT seconds, rows_written FROM dp_synthesize('$t', epsilon => 1, target => 's_${t}_$run');" \
			"$TOP/bench/out/speed.$t.$run"
		base=$BENCH_BASE_KB
		peak=$BENCH_PEAK_KB
		res=$(head -n 1 "$TOP/bench/out/speed.$t.$run")
		echo "# $t run $run: $res; RssAnon peak $((peak / 1024)) MB (before the call $((base / 1024)) MB)"
		rows+=("| $t | $run | $(echo "$res" | cut -d'|' -f2) | $(echo "$res" | cut -d'|' -f1) | $((peak / 1024)) |")
		totals+=("$(echo "$res" | cut -d'|' -f1 | python3 -c 'import json, sys; print(json.load(sys.stdin)["total"])')")
	done
	sums+=("$t: $(printf '%s\n' "${totals[@]}" | awk '{s += $1; if ($1 > m) m = $1; if ($1 > 1) o++} END {printf "mean %.3f s, largest %.3f s, %d of %d calls over 1 s", s / NR, m, o, NR}')")
done
report=$(
	echo "### dp_synthesize speed, $(date -u +%Y-%m-%d), commit $(git -C "$TOP" rev-parse --short HEAD)$(git -C "$TOP" diff --quiet || echo '+dirty')"
	echo
	echo "Machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/Mem:/{print $2}') GiB; epsilon 1, domain.json declared; seconds as dp_synthesize reports them (read = scan and encode, write = create, decode and insert); peak = largest private memory (RssAnon) of the backend during the call."
	echo
	echo "| table | run | rows written | seconds per phase | peak MB |"
	echo "|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	printf -- '- %s\n' "${sums[@]}"
)
echo "$report"
[ "${1:-}" = "--record" ] && printf '\n%s\n' "$report" >> "$TOP/bench/RESULTS.md"
exit 0
