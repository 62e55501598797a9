#!/usr/bin/env bash
# bench/so_ab_cpu.sh - same-hour A/B of builds of dpsynth.so on one dp_synthesize call, wall and
# CPU: each round calls dp_synthesize(TABLE, epsilon => 1) once with each build in turn (the order
# rotated each round, a new session per call; the installed dpsynth.so is replaced by rename, so
# a running backend keeps its own), and prints per call the load average, the call's wall seconds
# (clock_timestamp around it), the backend's CPU seconds during the call (utime + stime of its
# /proc/self/stat, read by pg_read_file: helper threads included), the CPU seconds of its own
# thread alone (/proc/self/task/<pid>/stat: the work that a helper thread does not take off it,
# the call's length on an idle machine when no helper makes it wait) and the phases' seconds
# (json).  The builds are only the shared object: for changes with no SQL-visible difference.
# Usage (PGHOST, PGPORT, PGUSER exported; PG_CONFIG names the installation whose dpsynth.so is
# replaced, and restored at the end; database DB, default bench):
#   TABLE=adult_1m bench/so_ab_cpu.sh ROUNDS NAME=path/to/dpsynth.so NAME=path/to/dpsynth.so ...
set -euo pipefail
ROUNDS=$1
shift
DB=${DB:-bench}
TABLE=${TABLE:-adult_1m}
PKGLIB=$("${PG_CONFIG:-pg_config}" --pkglibdir)
TICK=$(getconf CLK_TCK)
SAVED=$(mktemp)
cp "$PKGLIB/dpsynth.so" "$SAVED"
use() {
	cp "$1" "$PKGLIB/dpsynth.so.ab" && chmod 755 "$PKGLIB/dpsynth.so.ab" && mv "$PKGLIB/dpsynth.so.ab" "$PKGLIB/dpsynth.so"
}
trap 'use "$SAVED"; rm -f "$SAVED"' EXIT
names=()
paths=()
for a in "$@"; do
	names+=("${a%%=*}")
	paths+=("${a#*=}")
done
n=${#names[@]}
for r in $(seq 1 "$ROUNDS"); do
	for i in $(seq 0 $((n - 1))); do
		k=$(((i + r - 1) % n))
		use "${paths[$k]}"
		load=$(cut -d' ' -f1 /proc/loadavg)
		out=$(psql -X -qAt -d "$DB" -v t="$TABLE" <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS s_abcpu;
LOAD 'dpsynth';
CREATE TEMP VIEW cpu AS SELECT (split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint) AS ticks,
	(SELECT split_part(m, ' ', 14)::bigint + split_part(m, ' ', 15)::bigint
	 FROM pg_read_file('/proc/self/task/' || pg_backend_pid() || '/stat') m) AS main_ticks
	FROM pg_read_file('/proc/self/stat') s;
SELECT ticks AS c0, main_ticks AS m0, extract(epoch FROM clock_timestamp()) AS t0 FROM cpu \gset
SELECT 'seconds', seconds FROM dp_synthesize(:'t', epsilon => 1, target => 's_abcpu');
SELECT 'wall', extract(epoch FROM clock_timestamp()) - :t0, 'cpu', ticks - :c0, 'main', main_ticks - :m0 FROM cpu;
SQL
)
		wall=$(echo "$out" | awk -F'|' '$1 == "wall" {printf "%.2f", $2}')
		cpu=$(echo "$out" | awk -F'|' -v tick="$TICK" '$1 == "wall" {printf "%.2f", $4 / tick}')
		main=$(echo "$out" | awk -F'|' -v tick="$TICK" '$1 == "wall" {printf "%.2f", $6 / tick}')
		sec=$(echo "$out" | awk -F'|' '$1 == "seconds" {print $2}')
		echo "round $r ${names[$k]} load $load wall $wall cpu $cpu main $main | $sec"
	done
done
psql -X -q -d "$DB" -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS s_abcpu" >/dev/null
