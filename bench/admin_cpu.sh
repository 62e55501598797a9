#!/usr/bin/env bash
# bench/admin_cpu.sh - backend CPU per dp_protect / dp_declare call on a Citus coordinator (two
# workers on this machine, Unix sockets) whose database holds a distributed partitioned table (one
# row in pg_inherits, as in test/script/18_citus.sh), with the extension's definitions as shipped
# and with the tree guard's catalog walks (dpsynth._tree_conflict, _protected_relatives) given
# back the session's jit setting (their definition before 0.5.0).  N fresh two-column tables, one
# dp_protect and two dp_declare each; CPU is the backend's utime + stime (/proc/PID/stat, ticks of
# 10 ms) across the calls.  Citus is built once and cached by scripts/citusbuild into the
# PostgreSQL of $PG_CONFIG (or of PGBIN).  Ports CITUS_PORT .. CITUS_PORT + 2 (default 54370);
# clusters in tmp_bench_admin_*.
# Usage: N=5 CITUS_PORT=54370 bench/admin_cpu.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
PGBIN=${PGBIN:-$(dirname "$(command -v pg_config 2>/dev/null || echo /usr/lib/postgresql/15/bin/pg_config)")}
PG_CONFIG=${PG_CONFIG:-$PGBIN/pg_config}
N=${N:-5}
BASE=${CITUS_PORT:-54370}
DB=bench
CLUSTER_TAG=admin SHARED_BUFFERS=32MB
source "$TOP/bench/citus_cluster.sh"
c -c "CREATE TABLE parted (id int, a int) PARTITION BY RANGE (id);
      CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (100);
      SELECT create_distributed_table('parted', 'id')" >/dev/null 2>&1 || exit 1

# calls TAG: N tables TAG_i protected and declared in one session; the backend's CPU per call
calls() {
	c 2>/dev/null <<SQL | tail -n 1
$(for i in $(seq 1 "$N"); do echo "CREATE TABLE $1_$i (id int, a int);"; done)
SELECT pg_backend_pid() AS pid \gset
\set t0 \`awk '{print \$14 + \$15}' /proc/:pid/stat\`
$(for i in $(seq 1 "$N"); do echo "SELECT dp_protect('$1_$i', epsilon => 10);
SELECT dp_declare('$1_$i', 'id', lower => 0, upper => 100, bins => 10);
SELECT dp_declare('$1_$i', 'a', lower => 0, upper => 100, bins => 10);"; done)
\set t1 \`awk '{print \$14 + \$15}' /proc/:pid/stat\`
SELECT format('| %s | %s | %s | %s |', '$2', $N * 3, round((:t1 - :t0) / 100.0, 2), round((:t1 - :t0) * 10.0 / ($N * 3), 1));
SQL
}
echo "Citus $(c -c "SELECT extversion FROM pg_extension WHERE extname = 'citus'"), dpsynth $(git -C "$TOP" rev-parse --short HEAD), rows in pg_inherits: $(c -c "SELECT count(*) FROM pg_inherits"), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| catalog walks | calls | backend CPU (s) | per call (ms) |"
echo "|---|---|---|---|"
calls shipped "as shipped ($(c -c "SELECT array_to_string(proconfig, ', ') FROM pg_proc WHERE oid = 'dpsynth._tree_conflict'::regproc"))"
c -c "ALTER FUNCTION dpsynth._tree_conflict(oid, oid[], boolean) RESET jit;
      ALTER FUNCTION dpsynth._protected_relatives(oid) RESET jit" >/dev/null
calls before "jit setting reset (before 0.5.0)"
