#!/usr/bin/env bash
# bench/big.sh - dp_synthesize of a big table against CREATE TABLE AS of the same table, in one
# session's cluster: Adult's rows repeated to $ROWS rows (default 10,000,000), domain.json
# declared, epsilon 1, $RUNS calls (default 2), each in its own session, then two CREATE TABLE AS
# of the same table.  Peak backend memory is the largest RssAnon (private memory; shared buffers
# excluded) sampled every 20 ms during the call, as bench/speed.sh does.
# WRITE_PAGES="on off" alternates dpsynth.write_pages within each run (the write's A/B), and
# SCAN_WORKERS="2 0" dpsynth.scan_workers (the read's A/B: parallel workers or none).
# Usage: [ROWS=N] [RUNS=N] [WRITE_PAGES="on off"] [SCAN_WORKERS="2 0"] bench/big.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
set +e
export DPSYNTH_CLUSTER_DIR=${DPSYNTH_CLUSTER_DIR:-$TOP/tmp_cluster_big}
export DPSYNTH_PORT=${DPSYNTH_PORT:-54336}
CLUSTER_DIR=$DPSYNTH_CLUSTER_DIR
CLUSTER_PORT=$DPSYNTH_PORT
ROWS=${ROWS:-10000000}
RUNS=${RUNS:-2}
WRITE_PAGES=${WRITE_PAGES:-on}	# "on off": each run calls once with each setting
SCAN_WORKERS=${SCAN_WORKERS:-2}	# "2 0": likewise
dp_start_with_adult bench >/dev/null
dp_make_adult_rows bench big "$ROWS"
out=$(mktemp)
for run in $(seq 1 "$RUNS"); do
	for pages in $WRITE_PAGES; do
		for workers in $SCAN_WORKERS; do
			dp_call_with_peak "SET dpsynth.write_pages = $pages; SET dpsynth.scan_workers = $workers; SELECT rows_written, seconds FROM dp_synthesize('big', epsilon => 1, target => 's_big_$run');" "$out"
			printf '# dp_synthesize, %s rows, run %s, write_pages %s, scan_workers %s: %.1f s wall; %s; RssAnon peak %d MB\n' "$ROWS" "$run" \
				"$pages" "$workers" "$BENCH_WALL" "$(head -n 1 "$out")" $((BENCH_PEAK_KB / 1024))
			psql -X -q -d bench -c "DROP TABLE s_big_$run" >/dev/null
		done
	done
done
for run in 1 2; do
	start=$(date +%s.%N)
	psql -X -q -d bench -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS ctas" -c "CREATE TABLE ctas AS SELECT * FROM big" >/dev/null
	end=$(date +%s.%N)
	printf '# CREATE TABLE ctas AS SELECT * FROM big, run %s: %.1f s\n' "$run" "$(echo "$end - $start" | bc)"
done
rm -f "$out"
dp_cluster_stop
