#!/usr/bin/env bash
# bench/units_diag_males.sh EPS RUN [K] (issue 39 item 5 diagnosis; database diag holding males as males_raw, loaded
# as bench/units.sh loads it): per unit synthesis of males (k learned, or K), writes
# tmp_diag/males[K]-EPS-RUN.{csv,model.json} (evaluate.py and bench/units_target_diag.py read them).
set -e
eps=$1 run=$2 k=${3:-NULL}; DB=diag; SH=/work/wt/shared/datasets/males
q() { psql -X -qAt -d $DB -v ON_ERROR_STOP=1 "$@"; }
t=m_u
dom=$(/usr/bin/python3 -c "
import json; d=json.load(open('$SH/domain.json'))
print(json.dumps({k:v for k,v in d.items() if k!='nr' and not k.startswith('_')}))")
q >/dev/null -c "DROP TABLE IF EXISTS $t CASCADE" -c "CREATE TABLE $t AS SELECT * FROM males_raw" \
 -c "SELECT dp_protect('$t', epsilon => 999999)" -c "SELECT dp_privacy_unit('$t','nr', max_rows_per_unit => $k)" 2>/dev/null
echo "SELECT dp_declare('$t', :'dom'::jsonb);" | psql -X -q -d $DB -v ON_ERROR_STOP=1 -v dom="$dom" >/dev/null
tag=males${3:-}-$eps-$run
mid=$(q -c "DROP TABLE IF EXISTS s_m" -c "SELECT model_id FROM dp_synthesize('$t', epsilon => $eps, target => 's_m')" | tail -1)
q -c "SELECT dp_model_json($mid)" > tmp_diag/$tag.model.json
psql -X -q -d $DB -c "\\copy s_m TO 'tmp_diag/$tag.csv' WITH (FORMAT csv, HEADER true)"
