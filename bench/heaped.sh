#!/usr/bin/env bash
# bench/heaped.sh - a big table with a heaped integer column declared with bounds only: Adult's
# rows (10 columns, hours_per_week heaped at 40, 35, 45, 50, 60, 20 and at its ends) repeated
# COPIES times (default 6: 195,366 rows), protected, declared from data/adult/domain.json (age and
# hours_per_week: bounds only), synthesized RUNS times at each of EPSILONS.  Reports per run the
# one-way TVD of hours_per_week value by value (hours1) and evaluate.py's tvd1/tvd2/tvd3/range.
# Usage (against a running cluster: PGHOST, PGPORT, PGUSER exported; database HEAPED_DB, default
# heaped, created if missing): RUNS=2 EPSILONS="0.3 1 3" bench/heaped.sh
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=${RUNS:-2}
EPSILONS=${EPSILONS:-"0.3 1 3"}
COPIES=${COPIES:-6}
DB=${HEAPED_DB:-heaped}
SHARED=${SHARED:-$TOP/../shared}
OUT=$TOP/bench/out/heaped.$$
mkdir -p "$OUT"
COLS="age, workclass, education, marital_status, occupation, relationship, race, sex, hours_per_week, income"
if ! psql -X -qAt -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1; then
	psql -X -q -d postgres -c "CREATE DATABASE $DB"
	psql -X -q -d "$DB" -c "CREATE EXTENSION dpsynth"
fi
if ! psql -X -qAt -d "$DB" -c "SELECT to_regclass('heaped') IS NOT NULL" | grep -q t; then
	psql -X -q -d "$DB" -c "DROP TABLE IF EXISTS adult"
	psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -f "$TOP/data/adult/adult.sql"
	psql -X -q -v ON_ERROR_STOP=1 -d "$DB" \
		-c "\\copy adult FROM '$TOP/data/adult/adult_train.csv' WITH (FORMAT csv, HEADER true, NULL '?')"
	psql -X -q -v ON_ERROR_STOP=1 -d "$DB" <<SQL
CREATE TABLE heaped AS SELECT $COLS FROM adult a, generate_series(1, $COPIES) g;
VACUUM ANALYZE heaped;
SELECT dp_protect('heaped', epsilon => 999999);
SQL
fi
REAL=$TOP/bench/out/${DB}_real.csv	# one per database: COPIES differ
if [ ! -s "$REAL" ]; then
	psql -X -q -d "$DB" -c "\\copy heaped TO '$REAL' WITH (FORMAT csv, HEADER true)"
fi
DOMAIN=$(/usr/bin/python3 -c "
import json; d = json.load(open('$TOP/data/adult/domain.json'))
print(json.dumps({k: v for k, v in d.items() if k in '$COLS'.replace(' ', '').split(',')}))")
echo "eps run hours1 tvd1 tvd2 tvd3 range seconds"
for eps in $EPSILONS; do
	for r in $(seq 1 "$RUNS"); do
		echo "SELECT dp_declare('heaped', :'dom'::jsonb);" | psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -v dom="$DOMAIN" >/dev/null
		psql -X -q -d "$DB" -c "DROP TABLE IF EXISTS synth" >/dev/null
		secs=$(psql -X -qAt -d "$DB" -c "SELECT (seconds->>'total') FROM dp_synthesize('heaped', epsilon => $eps, target => 'synth')")
		h1=$(psql -X -qAt -d "$DB" -c "WITH r AS (SELECT hours_per_week v, count(*)::float8 / sum(count(*)) OVER () p FROM heaped GROUP BY 1),
			s AS (SELECT hours_per_week v, count(*)::float8 / sum(count(*)) OVER () p FROM synth GROUP BY 1)
			SELECT round((0.5 * sum(abs(coalesce(r.p, 0) - coalesce(s.p, 0))))::numeric, 4) FROM r FULL JOIN s USING (v)")
		psql -X -q -d "$DB" -c "\\copy synth TO '$OUT/synth.csv' WITH (FORMAT csv, HEADER true)"
		res=$(/usr/bin/python3 "$SHARED/tools/evaluate.py" "$REAL" "$OUT/synth.csv" --json)
		echo "$eps $r $h1 $(echo "$res" | /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print(' '.join('%.4f' % d[k] for k in ('tvd1','tvd2','tvd3','range')))") $secs"
	done
done
