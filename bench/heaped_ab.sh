#!/usr/bin/env bash
# bench/heaped_ab.sh - a same-hour A/B of dpsynth.so builds on bench/heaped.sh's table: ROUNDS rounds,
# in each every build installed in turn (order rotated, bench/so_ab_lib.sh) for one
# `RUNS=1 EPSILONS=E bench/heaped.sh` call per epsilon; then per epsilon and build the mean (min-max)
# of hours1, tvd1, tvd2, tvd3 and range.  Builds: only the shared object (no SQL-visible change).
# Usage (against a running cluster, as bench/heaped.sh; PG_CONFIG of that installation exported):
#   ROUNDS=5 EPSILONS="0.3" bench/heaped_ab.sh base=/path/to/dpsynth.so new=/path/to/dpsynth.so
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=${ROUNDS:-3}
EPSILONS=${EPSILONS:-0.3}
LOG=$TOP/bench/out/heaped_ab.$$
mkdir -p "$TOP/bench/out"
: >"$LOG"
source "$TOP/bench/so_ab_lib.sh"
one_call() {
	local eps
	for eps in $EPSILONS; do
		RUNS=1 EPSILONS=$eps "$TOP/bench/heaped.sh" 2>/dev/null | awk -v b="$2" -v r="$1" \
			'$1 ~ /^[0-9.]+$/ { print b, r, $0 }' | tee -a "$LOG"
	done
}
echo "build round eps run hours1 tvd1 tvd2 tvd3 range seconds"
so_ab_run "$ROUNDS" one_call "$@"
echo "eps build runs hours1 tvd1 tvd2 tvd3 range (mean (min-max))"
"$TOP/bench/ab_summary.py" "$LOG" 2,0 4 5
