#!/usr/bin/env bash
# bench/quality_ab.sh - a same-hour A/B of dpsynth.so builds on the shared tables: ROUNDS rounds, in
# each every build installed in turn (order rotated, bench/so_ab_lib.sh) for one call per table
# and epsilon as bench/quality_all.sh makes it (domain.json declared, dp_synthesize, evaluate.py
# with TSTR on TABLE_test.csv); then per table, epsilon and build the mean (min-max) of tvd1, tvd2,
# tvd3, range and AUC.  Builds: only the shared object (no SQL-visible change).
# Usage (against a running cluster: PGHOST, PGPORT, PGUSER exported, PG_CONFIG of that
# installation; database QDB, default bench, holding the tables as scripts/load_dataset.py loads them):
#   ROUNDS=4 DATASETS="adult arrests" EPSILONS="0.3" bench/quality_ab.sh base=/path/a.so new=/path/b.so
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=${ROUNDS:-3}
EPSILONS=${EPSILONS:-0.3}
DATASETS=${DATASETS:-"adult arrests smokeban star"}
DB=${QDB:-bench}
SHARED=${SHARED:-$TOP/../shared}
OUT=$TOP/bench/out/quality_ab.$$
mkdir -p "$OUT"
: >"$OUT/log"
declare -A TARGET=([adult]=income [diamonds]=cut [arrests]=released [smokeban]=smoker [star]=star1)
source "$TOP/bench/so_ab_lib.sh"
one_call() {
	local d eps res
	for eps in $EPSILONS; do
		for d in $DATASETS; do
			echo "SELECT dp_declare('$d', :'dom'::jsonb);" | psql -X -q -d "$DB" -v dom="$(cat "$SHARED/datasets/$d/domain.json")" >/dev/null
			psql -X -q -d "$DB" -c "DROP TABLE IF EXISTS synth_ab" >/dev/null 2>&1
			psql -X -qAt -d "$DB" -c "SELECT 1 FROM dp_synthesize('$d', epsilon => $eps, target => 'synth_ab')" >/dev/null
			psql -X -q -d "$DB" -c "\\copy synth_ab TO '$OUT/synth.csv' WITH (FORMAT csv, HEADER true)"
			res=$(OMP_NUM_THREADS=1 /usr/bin/python3 "$SHARED/tools/evaluate.py" "$SHARED/datasets/$d/${d}_train.csv" "$OUT/synth.csv" \
				--test "$SHARED/datasets/$d/${d}_test.csv" --target "${TARGET[$d]}" --json | /usr/bin/python3 -c \
				"import json,sys; d=json.load(sys.stdin); print(' '.join('%.4f' % d[k] for k in ('tvd1','tvd2','tvd3','range','tstr_auc')))")
			echo "$2 $1 $d $eps $res" | tee -a "$OUT/log"
		done
	done
}
echo "build round table eps tvd1 tvd2 tvd3 range auc"
so_ab_run "$ROUNDS" one_call "$@"
echo "table eps build runs tvd1 tvd2 tvd3 range auc (mean (min-max))"
"$TOP/bench/ab_summary.py" "$OUT/log" 2,3,0 4 5
