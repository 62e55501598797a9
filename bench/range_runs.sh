#!/usr/bin/env bash
# bench/range_runs.sh - keeps every synthetic copy for a per-query look at evaluate.py's range
# metric (bench/range_split.py): RUNS dp_synthesize calls per table and epsilon with the build
# installed in $PGBIN (not built here: install the checkout to compare first), each call's rows
# (OUTDIR/TABLE-EPS-RUN.csv), its released model (dp_model_json, .json) and its verbose notices
# (.log).  Works with any checkout's SQL API from 0.3.3 on (dp_declare, dp_synthesize verbose).
# Usage: OUTDIR=dir [RUNS=20] [EPSILONS="1 3"] [DATASETS="smokeban arrests"] [DOMAIN=file] bench/range_runs.sh
#        (DOMAIN: a domain.json each run declares instead of the table's own, e.g. a copy with a
#        column's binning changed; with one table in DATASETS)
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
RUNS=${RUNS:-20}
EPSILONS=${EPSILONS:-"1 3"}
DATASETS=${DATASETS:-"smokeban arrests"}
SHARED=${SHARED:-$TOP/../shared}
: "${OUTDIR:?OUTDIR=directory for the runs}"
mkdir -p "$OUTDIR"
trap dp_cluster_stop EXIT
dp_cluster_start >/dev/null
psql -X -q -c "CREATE DATABASE bench"
psql -X -q -d bench -c "CREATE EXTENSION dpsynth"
psql -X -qAt -d bench -c "SELECT extversion FROM pg_extension WHERE extname = 'dpsynth'" > "$OUTDIR/extversion"
for d in $DATASETS; do
	python3 "$TOP/scripts/load_dataset.py" "$SHARED/datasets/$d" "$d" 999999 | psql -X -q -d bench -v ON_ERROR_STOP=1 >/dev/null
done
for eps in $EPSILONS; do
	for d in $DATASETS; do
		for run in $(seq 1 "$RUNS"); do
			f=$OUTDIR/$d-$eps-$run
			echo "SELECT dp_declare('$d', :'dom'::jsonb);" | psql -X -q -d bench -v dom="$(cat "${DOMAIN:-$SHARED/datasets/$d/domain.json}")" >/dev/null
			psql -X -q -d bench -c "DROP TABLE IF EXISTS synth" >/dev/null
			psql -X -qAt -d bench -c "SELECT model_id FROM dp_synthesize('$d', epsilon => $eps, target => 'synth', verbose => true)" \
				> "$f.model" 2> "$f.log"
			psql -X -q -d bench -c "\\copy synth TO '$f.csv' WITH (FORMAT csv, HEADER true)"
			psql -X -qAt -d bench -c "SELECT dp_model_json($(cat "$f.model"))" > "$f.json" 2>/dev/null || true
		done
		echo "# $d eps=$eps: $RUNS runs in $OUTDIR"
	done
done
