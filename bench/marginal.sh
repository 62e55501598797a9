#!/usr/bin/env bash
# bench/marginal.sh - times dp_marginal on the bundled Adult table (32,561 rows) and on a
# 1,000,000-row table (Adult rows repeated), on a throwaway cluster.  Prints a Markdown table
# and, with --record, appends it to bench/RESULTS.md with the date, commit and machine.
# Usage: bench/marginal.sh [--record]    (runs scripts/lib.sh's install and build first)
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
export DPSYNTH_CLUSTER_DIR=${DPSYNTH_CLUSTER_DIR:-$TOP/tmp_cluster_marginal}
export DPSYNTH_PORT=${DPSYNTH_PORT:-54338}
CLUSTER_PORT=$DPSYNTH_PORT
CLUSTER_DIR=$DPSYNTH_CLUSTER_DIR
RUNS=${RUNS:-7}
dp_start_with_adult bench >/dev/null
dp_protect_adult bench 1e6
dp_make_adult_1m bench 1e6
psql -X -q -d bench >/dev/null <<'SQL'
CREATE TABLE tiny (g text);
INSERT INTO tiny VALUES ('a');
SELECT dp_protect('tiny', epsilon => 1e6);
SELECT dp_declare('tiny', 'g', categories => ARRAY['a']);
SQL

# median wall time in ms of RUNS executions of a statement, each in its own psql call
median_ms() {
	local sql=$1 t times=()
	for _ in $(seq 1 "$RUNS"); do
		t=$(psql -X -qAt -d bench -c '\timing on' -c "$sql" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
		times+=("$t")
	done
	printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

rows=()
bench_one() {
	local label=$1 table=$2 cols=$3
	local cells ms
	cells=$(psql -X -qAt -d bench -c "SELECT count(*) FROM dp_marginal('$table', ARRAY[$cols], 1)")
	ms=$(median_ms "SELECT count(*) FROM dp_marginal('$table', ARRAY[$cols], 1)")
	rows+=("| $label | $table | $cells | $ms |")
}
bench_one "charge only (1-row table)" tiny "'g'"
bench_one "1-way sex" adult "'sex'"
bench_one "2-way age x income" adult "'age','income'"
bench_one "3-way age x education x hours_per_week" adult "'age','education','hours_per_week'"
bench_one "4-way age x workclass x education x native_country" adult "'age','workclass','education','native_country'"
bench_one "1-way sex" adult_1m "'sex'"
bench_one "3-way age x education x hours_per_week" adult_1m "'age','education','hours_per_week'"

report=$(
	echo "### dp_marginal, $(date -u +%Y-%m-%d), commit $(git -C "$TOP" rev-parse --short HEAD)$(git -C "$TOP" diff --quiet || echo '+dirty')"
	echo
	echo "Machine: $(nproc --all) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/Mem:/{print $2}') GiB; PostgreSQL $(psql -X -qAt -d bench -c 'SHOW server_version')."
	echo "Median of $RUNS runs, wall time of the whole statement as psql sees it (\\timing), epsilon 1."
	echo
	echo "| query | table | cells | ms |"
	echo "|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
)
echo "$report"
if [ "${1:-}" = "--record" ]; then
	printf '\n%s\n' "$report" >> "$TOP/bench/RESULTS.md"
fi
