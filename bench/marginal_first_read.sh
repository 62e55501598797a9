#!/usr/bin/env bash
# bench/marginal_first_read.sh - a table's first dp_marginal that learns quantile bins (age and
# hours_per_week, declared with bounds only in domain.json), read once (dpsynth.discovery_scans
# 'one', the default) or twice ('two'): on a table of ROWS rows (Adult's rows repeated,
# domain.json declared, VACUUM ANALYZE'd), REPS rounds alternating the two settings; each call in
# a psql of its own after domain.json is declared again (the bins learned anew), timed by psql
# (\timing), with the table's heap pages hit and read during the call (pg_statio_user_tables).
# Uses the installed build (not built here).
# Usage: [ROWS=1000000] [REPS=5] [EPSILON=1] bench/marginal_first_read.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
export DPSYNTH_CLUSTER_DIR=${DPSYNTH_CLUSTER_DIR:-$TOP/tmp_cluster_marginal_first_read}
export DPSYNTH_PORT=${DPSYNTH_PORT:-54336}
CLUSTER_DIR=$DPSYNTH_CLUSTER_DIR
CLUSTER_PORT=$DPSYNTH_PORT
ROWS=${ROWS:-1000000}
REPS=${REPS:-5}
EPSILON=${EPSILON:-1}
trap dp_cluster_stop EXIT
dp_cluster_start >/dev/null
psql -X -q -c "CREATE DATABASE bench"
psql -X -q -d bench -c "CREATE EXTENSION dpsynth"
dp_load_adult bench
dp_make_adult_rows bench big "$ROWS"
DOMAIN=$(cat "$TOP/data/adult/domain.json")
pages() { psql -X -qAt -d bench -c "SELECT pg_stat_force_next_flush()" -c "SELECT heap_blks_hit + heap_blks_read FROM pg_statio_user_tables WHERE relname = 'big'" | tail -n 1; }
echo "| round | discovery_scans | ms | heap pages (hit + read) | table pages | discovered columns |"
echo "|---|---|---|---|---|---|"
tpages=$(psql -X -qAt -d bench -c "SELECT pg_relation_size('big') / 8192")
for r in $(seq 1 "$REPS"); do
	for s in one two; do
		echo "SELECT dp_declare('big', :'domain'::jsonb);" | psql -X -q -d bench -v domain="$DOMAIN" >/dev/null
		p0=$(pages)
		ms=$(psql -X -qAt -d bench -c "SET dpsynth.discovery_scans = '$s'" -c '\timing on' \
			-c "SELECT count(*) FROM dp_marginal('big', ARRAY['age', 'hours_per_week', 'sex'], $EPSILON)" |
			sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -n 1)
		p1=$(pages)
		disc=$(psql -X -qAt -d bench -c "SELECT details->>'discovered_columns' FROM dpsynth.ledger WHERE function = 'dp_marginal' ORDER BY id DESC LIMIT 1")
		echo "| $r | $s | $ms | $((p1 - p0)) | $tpages | $disc |"
	done
done
