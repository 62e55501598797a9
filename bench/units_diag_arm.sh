#!/usr/bin/env bash
# bench/units_diag_arm.sh ARM EPS RUN (issue 39 diagnosis; database diag holding covid_raw as bench/units.sh loads
# covid_testing_raw): ARM unitL (per unit, k learned) | unit1 | row1 | row2 (row-level k at rho / k^2);
# FOCUS={result} adds focus => FOCUS. Writes tmp_diag/ARM[f]-EPS-RUN.csv and its model JSON.
set -e
arm=$1 eps=$2 run=$3; DB=diag; SH=/work/wt/shared/datasets/covid_testing
dom() { /usr/bin/python3 -c "
import json; d=json.load(open('$SH/domain.json')); drop=set('$1'.split(','))
print(json.dumps({k:v for k,v in d.items() if k not in drop and not k.startswith('_')}))"; }
q() { psql -X -qAt -d $DB -v ON_ERROR_STOP=1 "$@"; }
t=c_$arm
case $arm in
unit*) cols="subject_id,gender,pan_day,test_id,clinic_name,result,demo_group,age,drive_thru_ind,ct_result,orderset,payor_group,patient_class,col_rec_tat,rec_ver_tat"; k=1000000;;
row1) cols="gender,pan_day,test_id,clinic_name,result,demo_group,age,drive_thru_ind,ct_result,orderset,payor_group,patient_class,col_rec_tat,rec_ver_tat"; k=1;;
row2) cols="gender,pan_day,test_id,clinic_name,result,demo_group,age,drive_thru_ind,ct_result,orderset,payor_group,patient_class,col_rec_tat,rec_ver_tat"; k=2;;
esac
q >/dev/null <<SQL
DROP TABLE IF EXISTS $t; CREATE TABLE $t AS SELECT $cols FROM covid_raw WITH NO DATA;
SELECT setseed($run/1000.0);
INSERT INTO $t SELECT $cols FROM (SELECT *, row_number() OVER (PARTITION BY subject_id ORDER BY random()) rn_ FROM covid_raw) s WHERE rn_ <= $k;
SQL
case $arm in
unitL) q -c "SELECT dp_protect('$t', epsilon => 999999)" -c "SELECT dp_privacy_unit('$t','subject_id', max_rows_per_unit => NULL)" >/dev/null; e=$eps;;
unit1) q -c "SELECT dp_protect('$t', epsilon => 999999)" -c "SELECT dp_privacy_unit('$t','subject_id', max_rows_per_unit => 1)" >/dev/null; e=$eps;;
row*) q -c "SELECT dp_protect('$t', epsilon => 999999)" >/dev/null; e=$(q -c "SELECT dp_epsilon(dp_rho($eps,1e-6)/($k*$k),1e-6)*(1-1e-9)");;
esac
echo "SELECT dp_declare('$t', :'dom'::jsonb);" | psql -X -q -d $DB -v ON_ERROR_STOP=1 -v dom="$(dom subject_id,fake_first_name,fake_last_name)" >/dev/null
q -c "DROP TABLE IF EXISTS s_$arm" -c "SELECT model_id FROM dp_synthesize('$t', epsilon => $e, target => 's_$arm'${FOCUS:+, focus => '$FOCUS'})" > tmp_diag/$arm${FOCUS:+f}-$eps-$run.mid
mid=$(tail -1 tmp_diag/$arm${FOCUS:+f}-$eps-$run.mid)
q -c "SELECT dp_model_json($mid)" > tmp_diag/$arm${FOCUS:+f}-$eps-$run.model.json
psql -X -q -d $DB -c "\\copy s_$arm TO 'tmp_diag/$arm${FOCUS:+f}-$eps-$run.csv' WITH (FORMAT csv, HEADER true)"
