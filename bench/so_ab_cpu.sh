#!/usr/bin/env bash
# bench/so_ab_cpu.sh - same-hour A/B of builds of dpsynth.so on one dp_synthesize call, wall and
# CPU: each round calls dp_synthesize(TABLE, epsilon => 1) once with each build in turn (the order
# rotated each round, a new session per call; the installed dpsynth.so is replaced by rename, so
# a running backend keeps its own), and prints per call the load average, the call's wall seconds
# (clock_timestamp around it), the backend's CPU seconds during the call (utime + stime of its
# /proc/self/stat, read by pg_read_file: helper threads included), the CPU seconds of its own
# thread alone (/proc/self/task/<pid>/stat: the work that a helper thread does not take off it,
# the call's length on an idle machine when no helper makes it wait), the model's k-way marginals
# and the phases' seconds
# (json).  The builds are only the shared object: for changes with no SQL-visible difference.
# Usage (PGHOST, PGPORT, PGUSER exported; PG_CONFIG names the installation whose dpsynth.so is
# replaced, and restored at the end; database DB, default bench):
#   TABLE=adult_1m bench/so_ab_cpu.sh ROUNDS NAME=path/to/dpsynth.so NAME=path/to/dpsynth.so ...
set -euo pipefail
source "$(dirname "$0")/so_ab_lib.sh"
DB=${DB:-bench}
TABLE=${TABLE:-adult_1m}
TICK=$(getconf CLK_TCK)
# one call: round $1, build $2
one_call() {
	local load out wall cpu main sec
	load=$(cut -d' ' -f1 /proc/loadavg)
	out=$( { echo "SET client_min_messages = warning; DROP TABLE IF EXISTS s_abcpu;"; so_ab_cpu_view; cat <<'SQL'; } | psql -X -qAt -d "$DB" -v t="$TABLE"
SELECT ticks AS c0, main_ticks AS m0, extract(epoch FROM clock_timestamp()) AS t0 FROM cpu \gset
SELECT 'seconds', k_way_marginals || ' ' || seconds FROM dp_synthesize(:'t', epsilon => 1, target => 's_abcpu');
SELECT 'wall', extract(epoch FROM clock_timestamp()) - :t0, 'cpu', ticks - :c0, 'main', main_ticks - :m0 FROM cpu;
SQL
)
	wall=$(echo "$out" | awk -F'|' '$1 == "wall" {printf "%.2f", $2}')
	cpu=$(echo "$out" | awk -F'|' -v tick="$TICK" '$1 == "wall" {printf "%.2f", $4 / tick}')
	main=$(echo "$out" | awk -F'|' -v tick="$TICK" '$1 == "wall" {printf "%.2f", $6 / tick}')
	sec=$(echo "$out" | awk -F'|' '$1 == "seconds" {print $2}')
	echo "round $1 $2 load $load wall $wall cpu $cpu main $main | $sec"
}
ROUNDS=$1
shift
so_ab_run "$ROUNDS" one_call "$@"
psql -X -q -d "$DB" -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS s_abcpu" >/dev/null
