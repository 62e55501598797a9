#!/usr/bin/env bash
# bench/lowsignal/rowcount.sh DATASET EPS RUN CAP [K]: a prototype of "one row per unit, its row count as
# a column" (issue 39 item 5), built from the row-level method: each person keeps 1 random row (as
# bench/units.sh's rowk at k = 1, setseed(RUN / 1000)) plus a column unit_rows_ = least(the
# person's rows, CAP) as text '1'..'CAP' (declared categorical); dp_synthesize at the person's rho
# (one unit, one row: sensitivity 1, as rowk k = 1); then the synthetic rows are weighted by their
# count: each row of count n is written n times, and the copies of the rows of count n are shuffled
# and cut into units of n rows (so a unit holds n different synthetic rows, units of size n follow
# the synthetic persons' counts, and the rows' distribution is sum_n n P(x, n) / E[n]: the rows'
# distribution of the table, not the persons', up to the cap).  The count column is dropped.
# With K > 1 (default 1): each person keeps K random rows (each with the count column), the synthesis
# runs at rho / K^2 (group privacy, as bench/units.sh's rowk), and a synthetic row of count n is
# written n / min(n, K) times (randomized rounding of the fraction).
# Evaluated as bench/units.sh evaluates (against the full train table, --unit, --exclude).
# Prints one JSON line (the evaluation plus dataset, method rowcount, k = K, cap = CAP, epsilon, run) to stdout.
# Against a running cluster (PGHOST, PGPORT, PGUSER) whose database DB (units) holds DATASET_raw
# (bench/units.sh creates it).
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd); SHARED=${SHARED:-$TOP/../shared}
d=$1 eps=$2 run=$3 cap=$4 k=${5:-1}; DB=${UNITS_DB:-units}
declare -A UNIT=([covid_testing]=subject_id [males]=nr)
declare -A IDS=([covid_testing]=fake_first_name,fake_last_name [males]=)
declare -A TARGET=([covid_testing]=result [males]=union)
u=${UNIT[$d]}; drop="$u${IDS[$d]:+,${IDS[$d]}}"
q() { psql -X -qAt -d "$DB" -v ON_ERROR_STOP=1 "$@"; }
t=rc_${d}_$$
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cols=$(q -c "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute
	WHERE attrelid = '${d}_raw'::regclass AND attnum > 0 AND NOT attisdropped
	AND attname <> ALL (string_to_array('$drop', ','))")
q >/dev/null <<SQL
DROP TABLE IF EXISTS $t CASCADE;
SELECT setseed($run / 1000.0);
CREATE TABLE $t AS SELECT $cols, least(n_, $cap)::text AS unit_rows_ FROM (
	SELECT *, row_number() OVER (PARTITION BY $u ORDER BY random()) AS rn_, count(*) OVER (PARTITION BY $u) AS n_
	FROM ${d}_raw) s WHERE rn_ <= $k;
DO \$\$ DECLARE c name; BEGIN
	FOR c IN SELECT attname FROM pg_attribute WHERE attrelid = '${d}_raw'::regclass AND attnotnull
			AND attnum > 0 AND NOT attisdropped AND attname <> ALL (string_to_array('$drop', ',')) LOOP
		EXECUTE format('ALTER TABLE $t ALTER COLUMN %I SET NOT NULL', c);
	END LOOP;
END \$\$;
ALTER TABLE $t ALTER COLUMN unit_rows_ SET NOT NULL;
SELECT dp_protect('$t', epsilon => 999999);
SQL
dom=$(/usr/bin/python3 -c "
import json; d=json.load(open('$SHARED/datasets/$d/domain.json')); drop=set('$drop'.split(','))
o={k:v for k,v in d.items() if k not in drop and not k.startswith('_')}
o['unit_rows_']={'type': 'categorical', 'values': [str(i) for i in range(1, $cap + 1)]}
print(json.dumps(o))")
echo "SELECT dp_declare('$t', :'dom'::jsonb);" | psql -X -q -d "$DB" -v ON_ERROR_STOP=1 -v dom="$dom" >/dev/null
# the row-level epsilon whose rho is rho_person / k^2 (as bench/units.sh's rowk)
rho_person=$(q -c "SELECT dp_rho($eps, 1e-6)")
eps_call=$(q -c "WITH RECURSIVE e(v, i) AS (SELECT dp_epsilon($rho_person / ($k * $k), 1e-6), 0
	UNION ALL SELECT v * (1 - 1e-12), i + 1 FROM e WHERE dp_rho(v, 1e-6) > $rho_person / ($k * $k) AND i < 1000)
	SELECT v FROM e ORDER BY i DESC LIMIT 1")
info=$(q -F ' ' -c "DROP TABLE IF EXISTS s_$t" -c "SELECT seconds->>'total', rho_charged FROM dp_synthesize('$t', epsilon => $eps_call, target => 's_$t')" | tail -1)
read -r secs rho_charged <<<"$info"
# each synthetic row of count n written n / min(n, k) times (the fraction by a coin); the copies of
# count n shuffled and cut into units of n
psql -X -q -d "$DB" -c "\\copy (SELECT dense_rank() OVER (ORDER BY n_, (rn_ - 1) / n_) AS $u, $cols FROM (
	SELECT s.*, row_number() OVER (PARTITION BY n_ ORDER BY random()) AS rn_
	FROM (SELECT s.*, unit_rows_::int AS n_, unit_rows_::float8 / least(unit_rows_::int, $k) AS w_ FROM s_$t s) s,
		generate_series(1, floor(w_)::int + (random() < w_ - floor(w_))::int) g) x ORDER BY 1) TO '$tmp/synth.csv' WITH (FORMAT csv, HEADER true)"
q -c "DROP TABLE $t CASCADE" -c "DROP TABLE s_$t" >/dev/null
res=$(OMP_NUM_THREADS=1 /usr/bin/python3 "$SHARED/tools/evaluate.py" "$SHARED/datasets/$d/${d}_train.csv" "$tmp/synth.csv" \
	--test "$SHARED/datasets/$d/${d}_test.csv" --target "${TARGET[$d]}" --unit "$u" ${IDS[$d]:+--exclude "${IDS[$d]}"} --json)
/usr/bin/python3 -c "import json,sys; a=json.loads(sys.argv[1]); a.update(json.loads(sys.argv[2])); print(json.dumps(a))" \
	"{\"dataset\": \"$d\", \"method\": \"rowcount\", \"k\": \"$k\", \"cap\": $cap, \"epsilon\": \"$eps\", \"run\": $run, \"rho_charged\": $rho_charged, \"seconds\": $secs}" "$res"
