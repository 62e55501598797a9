# bench/citus_cluster.sh - sourced by the Citus benches (bench/citus.sh, bench/admin_cpu.sh): a
# coordinator and two workers on this machine (Unix sockets), Citus built once and cached by
# scripts/citusbuild, database $DB with citus and dpsynth, stopped and removed on exit.
# Before sourcing: TOP (scripts/lib.sh), PGBIN, PG_CONFIG, BASE (the coordinator's port; workers
# BASE + 1, + 2), DB, CLUSTER_TAG (clusters in tmp_bench_TAG_*), SHARED_BUFFERS.
# Defines dir NODE, port NODE, stop_all, and c (psql on the coordinator's database).
"$TOP/scripts/citusbuild" "$PG_CONFIG" >/dev/null || { echo "Citus could not be built or installed" >&2; exit 1; }

NODES=(c w1 w2)
dir() { echo "$TOP/tmp_bench_${CLUSTER_TAG}_$1"; }
port() { case $1 in c) echo $BASE ;; w1) echo $((BASE + 1)) ;; w2) echo $((BASE + 2)) ;; esac; }
stop_all() {
	for n in "${NODES[@]}"; do
		[ -f "$(dir $n)/data/postmaster.pid" ] && as_pg "$PGBIN/pg_ctl" -D "$(dir $n)/data" -m immediate -w stop >/dev/null 2>&1
		rm -rf "$(dir $n)"
	done
}
trap stop_all EXIT
stop_all
for n in "${NODES[@]}"; do
	d=$(dir $n)
	mkdir -p "$d" && { [ "$(id -u)" != 0 ] || chown postgres: "$d"; }
	as_pg "$PGBIN/initdb" -D "$d/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null || exit 1
	cat >> "$d/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$d'
port = $(port $n)
shared_preload_libraries = 'citus'
max_connections = 40
shared_buffers = $SHARED_BUFFERS
log_min_messages = warning
CONF
	as_pg "$PGBIN/pg_ctl" -D "$d/data" -l "$d/server.log" -w start >/dev/null || exit 1
	psql -X -q -h "$d" -p "$(port $n)" -U postgres -d postgres -c "CREATE DATABASE $DB" >/dev/null
	psql -X -q -h "$d" -p "$(port $n)" -U postgres -d $DB -c "CREATE EXTENSION citus" >/dev/null 2>&1
done
c() { psql -X -qAt -v ON_ERROR_STOP=1 -h "$(dir c)" -p "$(port c)" -U postgres -d $DB "$@"; }
c -c "SELECT citus_set_coordinator_host('$(dir c)', $(port c)); SELECT citus_add_node('$(dir w1)', $(port w1));
      SELECT citus_add_node('$(dir w2)', $(port w2)); CREATE EXTENSION dpsynth" >/dev/null 2>&1 || exit 1
