#!/usr/bin/env bash
# bench/tiled.sh - a big table from a shared one: ../shared/datasets/DATASET's training rows
# repeated COPIES times (default diamonds x 5 = 179,800 rows: seven real-valued or wide integer
# columns declared with bounds only), declared from its domain.json, synthesized RUNS times at each
# of EPSILONS with the analyst defaults; evaluate.py's tvd1/tvd2/tvd3/range against the tiled rows,
# and the call's seconds.  Against a running cluster (PGHOST, PGPORT, PGUSER exported; database
# TILED_DB, default tiled, created if missing).
# COLS=1 also prints each column's one-way TVD of every run (bench/tvd_cols.py).
# Usage: DATASET=diamonds COPIES=5 RUNS=2 EPSILONS="0.3 1 3" [COLS=1] bench/tiled.sh
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DATASET=${DATASET:-diamonds}
COPIES=${COPIES:-5}
RUNS=${RUNS:-2}
EPSILONS=${EPSILONS:-"0.3 1 3"}
COLS=${COLS:-0}
DB=${TILED_DB:-tiled}
SHARED=${SHARED:-$TOP/../shared}
T=${DATASET}_x$COPIES
OUT=$TOP/bench/out/tiled.$$
mkdir -p "$OUT"
if ! psql -X -qAt -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1; then
	psql -X -q -d postgres -c "CREATE DATABASE $DB"
	psql -X -q -d "$DB" -c "CREATE EXTENSION dpsynth"
fi
if ! psql -X -qAt -d "$DB" -c "SELECT to_regclass('$T') IS NOT NULL" | grep -q t; then
	python3 "$TOP/scripts/load_dataset.py" "$SHARED/datasets/$DATASET" "$DATASET" 999999 |
		psql -X -q -d "$DB" -v ON_ERROR_STOP=1 >/dev/null
	psql -X -q -v ON_ERROR_STOP=1 -d "$DB" <<SQL
CREATE TABLE $T AS SELECT d.* FROM $DATASET d, generate_series(1, $COPIES) g;
VACUUM ANALYZE $T;
SELECT dp_protect('$T', epsilon => 999999);
SQL
fi
REAL=$TOP/bench/out/${DB}_$T.csv
if [ ! -s "$REAL" ]; then
	psql -X -q -d "$DB" -c "\\copy $T TO '$REAL' WITH (FORMAT csv, HEADER true)"
fi
DOMAIN=$(cat "$SHARED/datasets/$DATASET/domain.json")
echo "table eps run tvd1 tvd2 tvd3 range seconds"
for eps in $EPSILONS; do
	for r in $(seq 1 "$RUNS"); do
		echo "SELECT dp_declare('$T', :'dom'::jsonb);" | psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -v dom="$DOMAIN" >/dev/null
		psql -X -q -d "$DB" -c "DROP TABLE IF EXISTS synth" >/dev/null
		secs=$(psql -X -qAt -d "$DB" -c "SELECT (seconds->>'total') FROM dp_synthesize('$T', epsilon => $eps, target => 'synth')")
		psql -X -q -d "$DB" -c "\\copy synth TO '$OUT/synth.csv' WITH (FORMAT csv, HEADER true)"
		res=$(/usr/bin/python3 "$SHARED/tools/evaluate.py" "$REAL" "$OUT/synth.csv" --json)
		echo "$T $eps $r $(echo "$res" | /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('%.4f' % d[k] for k in ('tvd1','tvd2','tvd3','range')))") $secs"
		if [ "$COLS" = 1 ]; then
			echo "# $T $eps $r one-way: $(/usr/bin/python3 "$TOP/bench/tvd_cols.py" "$REAL" "$OUT/synth.csv" "$SHARED" | tr '\n' ' ')"
		fi
	done
done
