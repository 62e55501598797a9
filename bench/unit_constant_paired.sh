#!/usr/bin/env bash
# bench/unit_constant_paired.sh - what dp_unit_constant's grouping does given a released model: each
# stored model is copied twice in dpsynth.models, once with the dataset's columns constant per
# person as `constant_per_unit` and once without, and dp_sample(copy, seed => s) of each is
# evaluated (evaluate.py TRAIN SYNTH --test TEST --target T --unit U --exclude IDS --json).  Prints
# the means per variant and the per-model differences (with minus without).
#
# Usage (PGHOST, PGPORT, PGUSER exported; the models of a bench/units.sh run in its database):
#   bench/unit_constant_paired.sh DATASET "MODEL_IDS" ["SEEDS"]
#   e.g. bench/unit_constant_paired.sh males "8 10 16 18 24 26" "1 2"
# Settings: UNITS_DB (units), OUT (a new directory under bench/out).  Copies stay in dpsynth.models
# (a superuser's INSERT); the database is the benchmark's own.
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED=${SHARED:-$TOP/../shared}
d=$1 models=$2 seeds=${3:-1}
DB=${UNITS_DB:-units}
OUT=${OUT:-$TOP/bench/out/unit_constant_paired.$$}
declare -A TARGET=([covid_testing]=result [males]=union)
declare -A UNIT=([covid_testing]=subject_id [males]=nr)
declare -A IDS=([covid_testing]=fake_first_name,fake_last_name [males]=)
declare -A CONSTANT=([covid_testing]='["gender", "age", "demo_group"]' [males]='["school", "ethn"]')
export OMP_NUM_THREADS=1
mkdir -p "$OUT"
S=$SHARED/datasets/$d
for m in $models; do
	for v in with without; do
		if [ $v = with ]; then expr="jsonb_set(model, '{constant_per_unit}', '${CONSTANT[$d]}')"; else expr="model - 'constant_per_unit'"; fi
		id=$(psql -X -qAt -v ON_ERROR_STOP=1 -d "$DB" -c "INSERT INTO dpsynth.models (budget_id, relid, relname, ledger_id,
				created_by, created_by_name, epsilon, delta, rho, noisy_total, columns, k_way_marginals, cells, model)
			SELECT budget_id, relid, relname, ledger_id, created_by, created_by_name, epsilon, delta, rho, noisy_total,
				columns, k_way_marginals, cells, $expr FROM dpsynth.models WHERE id = $m RETURNING id")
		for seed in $seeds; do
			csv="$OUT/s-$m-$v-$seed.csv"
			psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -c "DROP TABLE IF EXISTS paired_sample" \
				-c "SELECT 1 FROM dp_sample($id, seed => $seed, target => 'paired_sample')" >/dev/null
			psql -X -q -d "$DB" -c "\\copy paired_sample TO '$csv' WITH (FORMAT csv, HEADER true)"
			r=$(/usr/bin/python3 "$SHARED/tools/evaluate.py" "$S/${d}_train.csv" "$csv" --test "$S/${d}_test.csv" \
				--target "${TARGET[$d]}" --unit "${UNIT[$d]}" ${IDS[$d]:+--exclude "${IDS[$d]}"} --json)
			echo "{\"model\": $m, \"variant\": \"$v\", \"seed\": $seed, \"eval\": $r}" >>"$OUT/results.jsonl"
		done
	done
done
/usr/bin/python3 - "$OUT/results.jsonl" <<'PY'
import json, sys, collections
rs = [json.loads(l) for l in open(sys.argv[1])]
by = collections.defaultdict(list)
for r in rs:
    by[(r["model"], r["variant"])].append(r["eval"])
keys = ["rows_synth", "unit_rows_tvd", "tvd1", "tvd2", "tvd3", "tstr_auc"]
mean = lambda es, k: sum(e[k] for e in es) / len(es)
for v in ("with", "without"):
    es = [e for (m, vv), l in by.items() if vv == v for e in l]
    print(v, len(es), " ".join(f"{k} {mean(es, k):.4f}" for k in keys))
for k in keys:
    diff = [mean(by[(m, "with")], k) - mean(by[(m, "without")], k) for m in sorted({m for m, _ in by})]
    print(f"{k}: with - without per model {[round(x, 4) for x in diff]}, mean {sum(diff) / len(diff):.4f}")
PY
echo "# samples in $OUT"
