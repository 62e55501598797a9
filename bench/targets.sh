#!/usr/bin/env bash
# bench/targets.sh - every categorical column as a model's target (bench/targets.py): how much
# of each column's predictability on the real table the synthetic copies keep, for targets
# dp_synthesize is never told.  RUNS synthetic copies per table at EPSILON, domain.json declared,
# analyst defaults (as bench/quality_all.sh).
# Usage: bench/targets.sh [--record]   (RUNS=5, EPSILON=1, DATASETS="adult diamonds arrests smokeban star",
#        EXTRA= more dp_synthesize arguments, e.g. ", method => 'privsyn'")
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
export DPSYNTH_CLUSTER_DIR=${DPSYNTH_CLUSTER_DIR:-$TOP/tmp_cluster_targets}
export DPSYNTH_PORT=${DPSYNTH_PORT:-54333}
CLUSTER_DIR=$DPSYNTH_CLUSTER_DIR
CLUSTER_PORT=$DPSYNTH_PORT
RUNS=${RUNS:-5}
EPSILON=${EPSILON:-1}
DATASETS=${DATASETS:-"adult diamonds arrests smokeban star"}
EXTRA=${EXTRA:-}
SHARED=${SHARED:-$TOP/../shared}
OUT=$TOP/bench/out/$(basename "$0" .sh).$$
mkdir -p "$OUT"

dp_start_with_adult bench python3-numpy python3-pandas python3-sklearn >/dev/null
for d in $DATASETS; do
	python3 "$TOP/scripts/load_dataset.py" "$SHARED/datasets/$d" "$d" 999999 | psql -X -q -d bench -v ON_ERROR_STOP=1 >/dev/null
done
for d in $DATASETS; do
	for run in $(seq 1 "$RUNS"); do
		echo "SELECT dp_declare('$d', :'dom'::jsonb);" | psql -X -q -d bench -v ON_ERROR_STOP=1 -v dom="$(cat "$SHARED/datasets/$d/domain.json")" >/dev/null || exit 1
		psql -X -q -d bench -v ON_ERROR_STOP=1 -c "DROP TABLE IF EXISTS synth" >/dev/null || exit 1
		psql -X -q -d bench -v ON_ERROR_STOP=1 -c "SELECT count(*) FROM dp_synthesize('$d', epsilon => $EPSILON, target => 'synth'$EXTRA)" >/dev/null || exit 1
		psql -X -q -d bench -v ON_ERROR_STOP=1 -c "\\copy synth TO '$OUT/synth-$d-$run.csv' WITH (FORMAT csv, HEADER true)" || exit 1
	done
done
dp_cluster_stop
trap - EXIT
/usr/bin/python3 "$TOP/bench/targets.py" "$SHARED" "$OUT" $DATASETS | tee "$OUT/targets.txt" || exit 1
report=$(
	echo "### Every categorical column as the target, $(date -u +%Y-%m-%d), commit $(git -C "$TOP" rev-parse --short HEAD)$(git -C "$TOP" diff --quiet || echo '+dirty')"
	echo
	echo "Machine: $(nproc --all) cores, $(lscpu | sed -n 's/^Model name: *//p'). Command: \`RUNS=$RUNS EPSILON=$EPSILON bench/targets.sh\`$( [ -n "$EXTRA" ] && echo " with EXTRA=\"$EXTRA\""), domain.json declared, delta 1e-6, analyst defaults."
	echo
	sed -n '/^| table/,$p' "$OUT/targets.txt"
)
[ "${1:-}" = "--record" ] && printf '\n%s\n' "$report" >> "$TOP/bench/RESULTS.md"
exit 0
