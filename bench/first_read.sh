#!/usr/bin/env bash
# bench/first_read.sh - why a table's first dp_synthesize reads longer than the next ones: on a
# fresh table of ROWS rows (Adult's rows repeated, domain.json declared, VACUUM ANALYZE'd, as
# bench/speed.sh's size series makes it), for each treatment of TREATMENTS the table is made anew,
# treated, then synthesized CALLS times at epsilon 1, each call in a psql of its own; per call: its
# read phase (seconds->>'read'), the table's heap pages hit in shared buffers and read from the
# kernel during the call (pg_statio_user_tables), and the columns whose quantile bins the call
# learned (its charge's discovered_columns).  Uses the installed build (not built here).
# Treatments: none; scans (two plain `SELECT count(*)` first, with EXPLAIN (ANALYZE, BUFFERS)'s
# buffer counts); checkpoint; discover (`dp_discover` first); serial (dpsynth.scan_workers = 0
# for every call).
# Usage: [ROWS=1000000] [CALLS=3] [TREATMENTS="none scans checkpoint discover serial"] bench/first_read.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
export DPSYNTH_CLUSTER_DIR=${DPSYNTH_CLUSTER_DIR:-$TOP/tmp_cluster_first_read}
export DPSYNTH_PORT=${DPSYNTH_PORT:-54335}
CLUSTER_DIR=$DPSYNTH_CLUSTER_DIR
CLUSTER_PORT=$DPSYNTH_PORT
ROWS=${ROWS:-1000000}
CALLS=${CALLS:-3}
TREATMENTS=${TREATMENTS:-"none scans checkpoint discover serial"}
trap dp_cluster_stop EXIT
dp_cluster_start >/dev/null
psql -X -q -c "CREATE DATABASE bench"
psql -X -q -d bench -c "CREATE EXTENSION dpsynth"
dp_load_adult bench
pages() { psql -X -qAt -d bench -c "SELECT heap_blks_hit || ' ' || heap_blks_read FROM pg_statio_user_tables WHERE relname = 'big'"; }
echo "| treatment | call | read s | heap pages hit | heap pages read | discovered columns |"
echo "|---|---|---|---|---|---|"
for t in $TREATMENTS; do
	dp_make_adult_rows bench big "$ROWS"
	workers=
	case $t in
		none) ;;
		scans) for i in 1 2; do
			echo "# scan $i before the calls: $(psql -X -qAt -d bench -c "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, COSTS OFF) SELECT count(*) FROM big" |
				grep -E "Buffers|Execution" | sed 's/^ *//' | sed -n '1p;$p' | tr '\n' ' ')"
			done ;;
		checkpoint) psql -X -q -d bench -c "CHECKPOINT" ;;
		discover) psql -X -q -d bench -c "SELECT * FROM dp_discover('big', 1)" >/dev/null 2>&1 ;;
		serial) workers="SET dpsynth.scan_workers = 0" ;;
		*) echo "unknown treatment $t" >&2; exit 1 ;;
	esac
	for call in $(seq 1 "$CALLS"); do
		read -r hit0 rd0 <<< "$(pages)"
		psql -X -q -d bench -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS s_big" >/dev/null
		read_s=$(psql -X -qAt -d bench -c "SET client_min_messages = warning" ${workers:+-c "$workers"} \
			-c "SELECT seconds->>'read' FROM dp_synthesize('big', epsilon => 1, target => 's_big')")
		read -r hit1 rd1 <<< "$(pages)"
		disc=$(psql -X -qAt -d bench -c "SELECT details->>'discovered_columns' FROM dpsynth.ledger WHERE function = 'dp_synthesize' ORDER BY id DESC LIMIT 1")
		echo "| $t | $call | $read_s | $((hit1 - hit0)) | $((rd1 - rd0)) | $disc |"
	done
done
