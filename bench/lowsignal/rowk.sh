#!/usr/bin/env bash
# bench/lowsignal/rowk.sh DATASET EPS RUN [K]: row-level synthesis of DATASET cut to K rows per person (as bench/units.sh rowk), the unit and identifier columns dropped; TAG names the variant
# writes $OUT/DATASET-kK-EPS-RUN.{csv,model.json,real.csv}
set -e
TOP=$(cd "$(dirname "$0")/../.." && pwd); SHARED=${SHARED:-$TOP/../shared}; OUT=${OUT:-$TOP/tmp_diag}; mkdir -p "$OUT"
d=$1 eps=$2 run=$3 k=${4:-1}; DB=diag; SH=$SHARED/datasets/$d; [ $d = adult363 ] && SH=$OUT/adult363_domain
declare -A UNIT=([covid_testing]=subject_id [males]=nr [adult363]=rid)
declare -A IDS=([covid_testing]=fake_first_name,fake_last_name [males]=)
u=${UNIT[$d]}; drop="$u${IDS[$d]:+,${IDS[$d]}}"
q() { psql -X -qAt -d $DB -v ON_ERROR_STOP=1 "$@"; }
t=t_${d}_$$
source "$TOP/bench/units_lib.sh"
units_make_table "$DB" "$d" "$t" "$drop" "$k" "$run" "$u"
q -c "SELECT dp_protect('$t', epsilon => 999999${DISC:+, discovery => $DISC})" >/dev/null
dom=$(/usr/bin/python3 -c "
import json; d=json.load(open('$SH/domain.json')); drop=set('$drop'.split(','))
print(json.dumps({k:v for k,v in d.items() if k not in drop and not k.startswith('_')}))")
echo "SELECT dp_declare('$t', :'dom'::jsonb);" | psql -X -q -d $DB -v ON_ERROR_STOP=1 -v dom="$dom" >/dev/null
rho=$(q -c "SELECT dp_rho($eps, 1e-6)")
epsc=$(q -c "WITH RECURSIVE e(v, i) AS (SELECT dp_epsilon($rho / ($k * $k), 1e-6), 0 UNION ALL SELECT v * (1 - 1e-12), i + 1 FROM e WHERE dp_rho(v, 1e-6) > $rho / ($k * $k) AND i < 1000) SELECT v FROM e ORDER BY i DESC LIMIT 1")
tag=$d-k$k-$eps-$run${TAG:+-$TAG}
mid=$(q -c "DROP TABLE IF EXISTS s_$t" -c "SELECT model_id FROM dp_synthesize('$t', epsilon => $epsc, target => 's_$t'${EXTRA:+, $EXTRA})" | tail -1)
q -c "SELECT dp_model_json($mid)" > $OUT/$tag.model.json
psql -X -q -d $DB -c "\\copy (SELECT row_number() OVER () AS $u, * FROM s_$t) TO '$OUT/$tag.csv' WITH (FORMAT csv, HEADER true)"
psql -X -q -d $DB -c "\\copy (SELECT row_number() OVER () AS $u, * FROM $t) TO '$OUT/$tag.real.csv' WITH (FORMAT csv, HEADER true)"
q -c "DROP TABLE $t CASCADE" -c "DROP TABLE s_$t" >/dev/null
echo $OUT/$tag
