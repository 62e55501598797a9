#!/usr/bin/env bash
# bench/first_call_ab.sh - a table's first dp_synthesize (the call that learns the quantile bins of
# the integer columns declared with bounds only) read in one scan against two, same cluster, same
# build, alternated: dpsynth.discovery_scans = 'one' (synth_onescan.c) and 'two' (discovery's own
# scan, then the encoding scan: the path every first call took before), the order rotated each
# round.  Before each call the table's domain.json is declared again, which drops its learned bins,
# so that every call is a first call.  Tables: big (ROWS rows, Adult's rows repeated, as
# bench/speed.sh's size series makes it) and adult (32,561 rows).  Per call, in a psql of its own:
# the load average, its read phase and total (seconds), the table's heap pages hit or read during
# it (pg_statio_user_tables), the backend's peak private memory (RssAnon, scripts/lib.sh's
# dp_call_with_peak) and the columns learned (its charge's discovered_columns).
# Uses the installed build (not built here).
# WORKERS=n sets dpsynth.scan_workers for every call (0: the backend reads alone).
# Usage: [ROWS=1000000] [ROUNDS=5] [TABLES="big adult"] [MODES="one two"] [WORKERS=2] bench/first_call_ab.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
export DPSYNTH_CLUSTER_DIR=${DPSYNTH_CLUSTER_DIR:-$TOP/tmp_cluster_first_call}
export DPSYNTH_PORT=${DPSYNTH_PORT:-54336}
CLUSTER_DIR=$DPSYNTH_CLUSTER_DIR
CLUSTER_PORT=$DPSYNTH_PORT
ROWS=${ROWS:-1000000}
ROUNDS=${ROUNDS:-5}
TABLES=${TABLES:-"big adult"}
MODES=${MODES:-"one two"}
trap dp_cluster_stop EXIT
dp_cluster_start >/dev/null
psql -X -q -c "CREATE DATABASE bench"
psql -X -q -d bench -c "CREATE EXTENSION dpsynth"
dp_load_adult bench
dp_protect_adult bench 999999
dp_make_adult_rows bench big "$ROWS"
DOMAIN=$(cat "$TOP/data/adult/domain.json")
pages() { psql -X -qAt -d bench -c "SELECT heap_blks_hit + heap_blks_read FROM pg_statio_user_tables WHERE relname = '$1'"; }
read -r -a modes <<< "$MODES"
echo "| table | round | mode | load | read s | total s | heap pages | peak MB | discovered columns |"
echo "|---|---|---|---|---|---|---|---|---|"
for t in $TABLES; do
	for r in $(seq 1 "$ROUNDS"); do
		for i in $(seq 0 $((${#modes[@]} - 1))); do
			m=${modes[$(( (i + r - 1) % ${#modes[@]} ))]}
			psql -X -q -d bench -v ON_ERROR_STOP=1 -v d="$DOMAIN" >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS s_ab;
SELECT dp_declare('$t', :'d'::jsonb);
ALTER DATABASE bench SET dpsynth.discovery_scans = '$m';
ALTER DATABASE bench SET dpsynth.scan_workers = ${WORKERS:-2};
SQL
			p0=$(pages "$t")
			load=$(cut -d' ' -f1 /proc/loadavg)
			dp_call_with_peak "SELECT (seconds->>'read') || ' ' || (seconds->>'total') FROM dp_synthesize('$t', epsilon => 1, target => 's_ab');" /tmp/first_call_ab.$$ bench
			read -r rs ts < /tmp/first_call_ab.$$
			sleep 0.3	# the backend and its workers report their pages as they exit
			p1=$(pages "$t")
			disc=$(psql -X -qAt -d bench -c "SELECT details->>'discovered_columns' FROM dpsynth.ledger WHERE function = 'dp_synthesize' ORDER BY id DESC LIMIT 1")
			echo "| $t | $r | $m | $load | $rs | $ts | $((p1 - p0)) | $(( (BENCH_PEAK_KB - BENCH_BASE_KB) / 1024 )) | $disc |"
		done
	done
done
rm -f /tmp/first_call_ab.$$
psql -X -q -d bench -c "ALTER DATABASE bench RESET dpsynth.discovery_scans" -c "ALTER DATABASE bench RESET dpsynth.scan_workers"
