#!/usr/bin/env bash
# bench/speed.sh - time and memory of one dp_synthesize call on Adult (32,561 rows), on star (47
# columns, 7,732 rows) and on 1,000,000 rows (Adult rows repeated), domain.json declared, epsilon 1.  Peak backend memory is
# the largest RssAnon (private memory; shared buffers excluded) sampled every 20 ms during the call.
# Then the size series: for each size of SIZES (Adult's rows repeated), CREATE TABLE AS of the
# table and dp_synthesize of it back to back, SIZE_RUNS times (5 at 1,000,000 rows), wall seconds
# each and the ratio dp_synthesize / CREATE TABLE AS of the same run (the machine's load moves
# both alike).  Both are timed alike: one psql running the statement alone (no memory sampler
# beside dp_synthesize), the tables of the run before dropped outside the timing.
# Usage: bench/speed.sh [--record]   (RUNS=3 calls per table, TABLES="adult star adult_1m"; each
#        table's mean and largest total seconds and its calls over 1 s close the table;
#        SIZES="100000 1000000 3000000 10000000", SIZE_RUNS=2; SIZES="" skips the series;
#        SKIP_BUILD=1 uses the installed build instead of building and installing first;
#        SETTLE=1: the size series runs `sync` before each timed statement, outside its timing, so
#        that neither statement starts while the kernel still writes back the other's pages)
#        Each size's first dp_synthesize learns the quantile bins of the columns declared with
#        bounds only (discovery; any table pays it on its first call, and the bins are kept for
#        the later calls); the series' "discovered columns" says which calls did.  It reads the
#        table once, counting discovery's rows in the encoding scan (src/synth_onescan.c), where
#        the pages allow it: up to about 3.6M of Adult's rows at the default maintenance_work_mem
#        (64 MB); above, discovery's own scan first, and that call's read phase is about twice
#        the others'.
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
export DPSYNTH_CLUSTER_DIR=${DPSYNTH_CLUSTER_DIR:-$TOP/tmp_cluster_speed}
export DPSYNTH_PORT=${DPSYNTH_PORT:-54331}
CLUSTER_DIR=$DPSYNTH_CLUSTER_DIR
CLUSTER_PORT=$DPSYNTH_PORT
if [ "${SKIP_BUILD:-}" = 1 ]; then
	trap dp_cluster_stop EXIT
	dp_cluster_start
	psql -X -q -c "CREATE DATABASE bench"
	psql -X -q -d bench -c "CREATE EXTENSION dpsynth"
	dp_load_adult bench
else
	dp_start_with_adult bench >/dev/null
fi
RUNS=${RUNS:-3}
SIZES=${SIZES-"100000 1000000 3000000 10000000"}
SIZE_RUNS=${SIZE_RUNS:-2}
TABLES=${TABLES:-"adult star adult_1m"}
SETTLE=${SETTLE:-0}
settle() { [ "$SETTLE" = 1 ] && sync; return 0; }
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
# the size series: CREATE TABLE AS and dp_synthesize back to back
ratios=()
series=()
for n in $SIZES; do
	dp_make_adult_rows bench "big_$n" "$n"
	runs=$SIZE_RUNS
	[ "$n" = 1000000 ] && runs=5
	for run in $(seq 1 "$runs"); do
		# both timed alike: one psql with the statement alone, the last run's table dropped before
		psql -X -q -d bench -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS ctas" \
			-c "DROP TABLE IF EXISTS s_big" >/dev/null
		settle
		start=$(date +%s.%N)
		psql -X -q -d bench -c "CREATE TABLE ctas AS SELECT * FROM big_$n" >/dev/null
		ctas=$(echo "$(date +%s.%N) - $start" | bc)
		settle
		start=$(date +%s.%N)
		psql -X -qAt -d bench -c "SELECT seconds, rows_written FROM dp_synthesize('big_$n', epsilon => 1, target => 's_big')" \
			> "$TOP/bench/out/speed.big_$n.$run"
		wall=$(echo "$(date +%s.%N) - $start" | bc)
		res=$(head -n 1 "$TOP/bench/out/speed.big_$n.$run")
		# the columns whose quantile bins this call learned (its own discovery scan), from its charge
		disc=$(psql -X -qAt -d bench -c "SELECT details->>'discovered_columns' FROM dpsynth.ledger WHERE function = 'dp_synthesize' ORDER BY id DESC LIMIT 1")
		ratio=$(echo "scale=2; $wall / $ctas" | bc)
		echo "# $n rows run $run: CREATE TABLE AS $ctas s, dp_synthesize $wall s wall ($res), ratio $ratio, discovered columns $disc"
		series+=("| $n | $run | $(printf '%.2f' "$ctas") | $(printf '%.2f' "$wall") | $ratio | $disc | $(echo "$res" | cut -d'|' -f1) |")
		ratios+=("$n $ratio")
	done
	psql -X -q -d bench -c "DROP TABLE IF EXISTS ctas" -c "DROP TABLE IF EXISTS s_big" -c "DROP TABLE big_$n" >/dev/null
done
report=$(
	echo "### dp_synthesize speed, $(date -u +%Y-%m-%d), commit $(git -C "$TOP" rev-parse --short HEAD)$(git -C "$TOP" diff --quiet || echo '+dirty')"
	echo
	echo "Machine: $(nproc --all) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/Mem:/{print $2}') GiB; epsilon 1, domain.json declared; seconds as dp_synthesize reports them (read = scan and encode, write = create, decode and insert); peak = largest private memory (RssAnon) of the backend during the call."
	echo
	echo "| table | run | rows written | seconds per phase | peak MB |"
	echo "|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	printf -- '- %s\n' "${sums[@]}"
	if [ ${#series[@]} -gt 0 ]; then
		echo
		echo "Size series (Adult's rows repeated, domain.json declared, epsilon 1): CREATE TABLE AS of the table and dp_synthesize of it back to back, each the wall seconds of one psql running it alone$([ "$SETTLE" = 1 ] && echo ", after a sync outside the timing (SETTLE=1)"); ratio = dp_synthesize / CREATE TABLE AS."
		echo
		echo "| rows | run | CREATE TABLE AS s | dp_synthesize s | ratio | discovered columns | seconds per phase |"
		echo "|---|---|---|---|---|---|---|"
		printf '%s\n' "${series[@]}"
		echo
		printf '%s\n' "${ratios[@]}" | awk '{r[$1] = r[$1] " " $2; if (!($1 in m) || $2 > m[$1]) m[$1] = $2; if (!($1 in lo) || $2 < lo[$1]) lo[$1] = $2} END {for (n in m) printf "- %s rows: ratio %s to %s (%s)\n", n, lo[n], m[n], r[n]}' | sort -t' ' -k2 -n
	fi
)
echo "$report"
[ "${1:-}" = "--record" ] && printf '\n%s\n' "$report" >> "$TOP/bench/RESULTS.md"
exit 0
