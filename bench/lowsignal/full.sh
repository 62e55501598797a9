#!/usr/bin/env bash
# full.sh DATASET EPS RUN: row-level synthesis of the whole DATASET train table; $OUT/DATASET-EPS-RUN-TAG.csv
set -e
TOP=$(cd "$(dirname "$0")/../.." && pwd); SHARED=${SHARED:-$TOP/../shared}; OUT=${OUT:-$TOP/tmp_diag}; mkdir -p "$OUT"
d=$1 eps=$2 run=$3; DB=diag; SH=$SHARED/datasets/$d
q() { psql -X -qAt -d $DB -v ON_ERROR_STOP=1 "$@"; }
t=f_${d}_$$
q >/dev/null -c "DROP TABLE IF EXISTS $t CASCADE" -c "CREATE TABLE $t AS SELECT * FROM ${d}_raw" -c "SELECT dp_protect('$t', epsilon => 999999)" 2>/dev/null
dom=$(/usr/bin/python3 -c "
import json; d=json.load(open('$SH/domain.json'))
print(json.dumps({k:v for k,v in d.items() if not k.startswith('_')}))")
echo "SELECT dp_declare('$t', :'dom'::jsonb);" | psql -X -q -d $DB -v ON_ERROR_STOP=1 -v dom="$dom" >/dev/null
tag=$d-$eps-$run${TAG:+-$TAG}
mid=$(q -c "DROP TABLE IF EXISTS s_$t" -c "SELECT model_id FROM dp_synthesize('$t', epsilon => $eps, target => 's_$t')" 2>/dev/null | tail -1)
q -c "SELECT dp_model_json($mid)" > $OUT/$tag.model.json
psql -X -q -d $DB -c "\\copy s_$t TO '$OUT/$tag.csv' WITH (FORMAT csv, HEADER true)"
q -c "DROP TABLE $t CASCADE" -c "DROP TABLE s_$t" >/dev/null 2>&1
