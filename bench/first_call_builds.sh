#!/usr/bin/env bash
# bench/first_call_builds.sh - a table's first dp_synthesize (the call that learns the quantile
# bins of the integer columns declared with bounds only) on two or more builds, each installed in
# its own PostgreSQL 15 and run on its own cluster, alternated call by call (the order rotated each
# round).  Each cluster holds big (ROWS rows, Adult's rows repeated, as bench/speed.sh's size series
# makes it); before each call the table's domain.json is declared again, which drops its learned
# bins, so that every call is a first call.  Per call, in a psql of its own: the load average, its
# read phase and total (seconds), the table's heap pages hit or read during it
# (pg_statio_user_tables) and the columns learned (its charge's discovered_columns).
# Usage: [ROWS=1000000] [ROUNDS=5] [PORT=54340] bench/first_call_builds.sh NAME=PGBIN NAME=PGBIN ...
#        (PGBIN: the bin directory of a PostgreSQL 15 with that build installed; the clusters
#        listen on PORT, PORT+1, ... in $TOP/tmp_cluster_first_call_<NAME>)
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
ROWS=${ROWS:-1000000}
ROUNDS=${ROUNDS:-5}
PORT=${PORT:-54340}
names=()
bins=()
for b in "$@"; do
	names+=("${b%%=*}")
	bins+=("${b#*=}")
done
[ ${#names[@]} -ge 1 ] || { echo "usage: $0 NAME=PGBIN ..." >&2; exit 2; }
stop_all() {
	for i in "${!names[@]}"; do
		PGBIN=${bins[$i]} CLUSTER_DIR=$TOP/tmp_cluster_first_call_${names[$i]} dp_cluster_stop
	done
}
trap stop_all EXIT
for i in "${!names[@]}"; do
	PGBIN=${bins[$i]}
	CLUSTER_DIR=$TOP/tmp_cluster_first_call_${names[$i]}
	CLUSTER_PORT=$((PORT + i))
	dp_cluster_start >/dev/null
	psql -X -q -c "CREATE DATABASE bench"
	psql -X -q -d bench -c "CREATE EXTENSION dpsynth"
	dp_load_adult bench
	dp_make_adult_rows bench big "$ROWS"
done
DOMAIN=$(cat "$TOP/data/adult/domain.json")
echo "| round | build | load | read s | total s | heap pages | discovered columns |"
echo "|---|---|---|---|---|---|---|"
n=${#names[@]}
for r in $(seq 1 "$ROUNDS"); do
	for k in $(seq 0 $((n - 1))); do
		i=$(( (k + r - 1) % n ))
		export PGHOST=$TOP/tmp_cluster_first_call_${names[$i]} PGPORT=$((PORT + i))
		psql -X -q -d bench -v ON_ERROR_STOP=1 -v d="$DOMAIN" >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS s_ab;
SELECT dp_declare('big', :'d'::jsonb);
SQL
		p0=$(psql -X -qAt -d bench -c "SELECT heap_blks_hit + heap_blks_read FROM pg_statio_user_tables WHERE relname = 'big'")
		load=$(cut -d' ' -f1 /proc/loadavg)
		res=$(psql -X -qAt -d bench -c "SELECT (seconds->>'read') || ' ' || (seconds->>'total') FROM dp_synthesize('big', epsilon => 1, target => 's_ab')")
		sleep 0.3	# the backend and its workers report their pages as they exit
		p1=$(psql -X -qAt -d bench -c "SELECT heap_blks_hit + heap_blks_read FROM pg_statio_user_tables WHERE relname = 'big'")
		disc=$(psql -X -qAt -d bench -c "SELECT details->>'discovered_columns' FROM dpsynth.ledger WHERE function = 'dp_synthesize' ORDER BY id DESC LIMIT 1")
		read -r rs ts <<< "$res"
		echo "| $r | ${names[$i]} | $load | $rs | $ts | $((p1 - p0)) | $disc |"
	done
done
