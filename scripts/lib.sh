#!/usr/bin/env bash
# scripts/lib.sh - shared by scripts/demo and scripts/test: packages, build, throwaway cluster.
# Works as root on a fresh Debian 12 (the cluster then runs as the `postgres` system user) or as
# an ordinary user with sudo for the package and install steps.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGVER=${PGVER:-15}
# PGBIN may point at another installation (for example a private copy, so that parallel work does
# not share one extension directory); PG_CONFIG follows it.
PGBIN=${PGBIN:-/usr/lib/postgresql/$PGVER/bin}
export PG_CONFIG=${PG_CONFIG:-$PGBIN/pg_config}
CLUSTER_DIR=${DPSYNTH_CLUSTER_DIR:-$TOP/tmp_cluster}
CLUSTER_PORT=${DPSYNTH_PORT:-54329}
source "$TOP/scripts/apt.sh"	# SUDO, dp_missing_packages, dp_apt_install

DP_PACKAGES=(gcc make libc6-dev postgresql-$PGVER postgresql-server-dev-$PGVER libsodium-dev
             libopenblas-dev python3 bc)	# bc: dp_call_with_peak below, test/script/06_synthesize_sessions.sh

log() { printf '\n=== %s\n' "$*"; }

# Installs scripts/lib.sh's packages (the build's and the server's) plus the ones given, after an
# apt-get update; nothing runs when all are installed.
dp_install_packages() {
	local missing
	missing=$(dp_missing_packages "${DP_PACKAGES[@]}" "$@")
	if [ -n "$missing" ]; then
		log "installing packages: $(echo $missing)"
		$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
		# shellcheck disable=SC2086 # one package a word
		DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
			--no-install-recommends $missing >/dev/null
	fi
}

# tap_plan_problem FILE: what is wrong with the TAP plan of a test's output FILE, nothing when it is
# right.  A test prints one plan line, "1..N", and N results ("ok N ..." or "not ok N ...", a skip
# being an ok): a test that stopped early (an exit before its end) prints no plan or another count.
tap_plan_problem() {
	local plans n planned
	plans=$(grep -cE '^1\.\.[0-9]+' "$1")
	n=$(grep -cE '^(not )?ok [0-9]+' "$1")
	if [ "$plans" = 0 ]; then
		echo "no TAP plan (1..N): the test stopped before its end, after $n result(s)"
	elif [ "$plans" != 1 ]; then
		echo "$plans TAP plans (1..N) where there is one"
	else
		planned=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$1")
		[ "$planned" = "$n" ] || echo "its TAP plan says 1..$planned, but it printed $n result(s)"
	fi
}

# One script at a time builds and tests in a checkout: a second one (a bench beside another, or
# beside scripts/test) waits for the first to end instead of cleaning its objects under it, or
# rebuilding its unit tests and bench binaries.  The lock is held until the script
# exits; its children (scripts/test-versions, bench/gum.sh under scripts/test) inherit it.
dp_lock_checkout() {
	[ -n "${DPSYNTH_CHECKOUT_LOCKED:-}" ] && return 0
	exec 9>"$TOP/tmp_build.lock"
	if ! flock -n 9; then
		log "waiting for another script in this checkout to end (tmp_build.lock)"
		flock 9
	fi
	export DPSYNTH_CHECKOUT_LOCKED=1
}

# A clean build, whose output (tmp_build.log) scripts/test checks for warnings.  A checkout that
# scripts/test has just built that way (it exports DPSYNTH_BUILT=its path) is only brought up to
# date by make: scripts/demo under the test command (03_readme) compiles nothing a second time.
dp_build_install() {
	dp_lock_checkout
	log "building and installing dpsynth"
	if [ "${DPSYNTH_BUILT:-}" = "$TOP" ]; then
		make -C "$TOP" -s
	else
		make -C "$TOP" -s clean >/dev/null
		make -C "$TOP" -s 2>&1 | tee "$TOP/tmp_build.log"
	fi
	$SUDO make -C "$TOP" -s install >/dev/null
}

# Runs a command as the cluster's owner.  Without the checkout's lock (fd 9, dp_lock_checkout): a
# server it starts would hold the lock after the script ends.
as_pg() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@" 9>&-; else "$@" 9>&-; fi
}

dp_cluster_stop() {
	if [ -f "$CLUSTER_DIR/data/postmaster.pid" ]; then
		as_pg "$PGBIN/pg_ctl" -D "$CLUSTER_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$CLUSTER_DIR"
}

# Starts a throwaway cluster listening only on a Unix socket in $CLUSTER_DIR.
dp_cluster_start() {
	dp_cluster_stop
	mkdir -p "$CLUSTER_DIR"
	if [ "$(id -u)" = 0 ]; then
		chown postgres: "$CLUSTER_DIR"
		if ! runuser -u postgres -- test -w "$CLUSTER_DIR"; then
			# the checkout is not reachable by the postgres user (e.g. under /root): use /tmp
			rmdir "$CLUSTER_DIR"
			CLUSTER_DIR=$(mktemp -d /tmp/dpsynth_cluster.XXXXXX)
			chown postgres: "$CLUSTER_DIR"
			echo "note: the checkout is not accessible to user postgres; cluster in $CLUSTER_DIR"
		fi
	fi
	log "starting a throwaway PostgreSQL $PGVER cluster in $CLUSTER_DIR"
	as_pg "$PGBIN/initdb" -D "$CLUSTER_DIR/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
		--no-sync >/dev/null
	cat >> "$CLUSTER_DIR/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$CLUSTER_DIR'
port = $CLUSTER_PORT
max_worker_processes = 32
max_connections = 50
shared_buffers = 256MB
log_min_messages = warning
CONF
	as_pg "$PGBIN/pg_ctl" -D "$CLUSTER_DIR/data" -l "$CLUSTER_DIR/server.log" -w start >/dev/null
	export PGHOST=$CLUSTER_DIR PGPORT=$CLUSTER_PORT PGUSER=postgres PGDATABASE=postgres
}

# Loads ../shared/datasets/adult (bundled copy in data/adult) into table `adult` of the current
# database and declares its public domain from domain.json.
dp_load_adult() {
	local db=${1:-$PGDATABASE}
	psql -X -q -v ON_ERROR_STOP=1 -d "$db" -f "$TOP/data/adult/adult.sql"
	psql -X -q -v ON_ERROR_STOP=1 -d "$db" \
		-c "\\copy adult FROM '$TOP/data/adult/adult_train.csv' WITH (FORMAT csv, HEADER true, NULL '?')"
}

# Installs what is needed (plus the packages given after the name), builds, starts a throwaway
# cluster that is removed on exit, and creates database $1 with dpsynth and the Adult table.
dp_start_with_adult() {
	local db=$1
	shift
	trap dp_cluster_stop EXIT
	dp_install_packages "$@"
	dp_build_install
	dp_cluster_start
	psql -X -q -c "CREATE DATABASE $db"
	psql -X -q -d "$db" -c "CREATE EXTENSION dpsynth"
	dp_load_adult "$db"
}

# Protects adult with a budget of epsilon $2 and its domain.json, in database $1.
dp_protect_adult() {
	echo "SELECT dp_protect('adult', epsilon => $2); SELECT dp_declare('adult', :'domain'::jsonb);" |
		psql -X -q -d "$1" -v domain="$(cat "$TOP/data/adult/domain.json")" >/dev/null
}

# Creates adult_1m (exactly 1,000,000 rows: Adult's rows repeated) in database $1, protected
# with a budget of epsilon $2 and declared with domain.json.
dp_make_adult_1m() {
	psql -X -q -d "$1" -v domain="$(cat "$TOP/data/adult/domain.json")" -v eps="$2" >/dev/null <<'SQL'
CREATE TABLE adult_1m (LIKE adult INCLUDING ALL);
INSERT INTO adult_1m SELECT a.* FROM adult a, generate_series(1, 30) g;
INSERT INTO adult_1m SELECT * FROM adult LIMIT 1000000 - 30 * 32561;
VACUUM ANALYZE adult_1m;
SELECT dp_protect('adult_1m', epsilon => :eps);
SELECT dp_declare('adult_1m', :'domain'::jsonb);
SQL
}

# Creates table $2 (dropped first) in database $1: Adult's rows repeated, cut at $3 rows, protected
# with a budget of epsilon 999 and domain.json declared.  Used by bench/big.sh and
# regenerate.sh.
dp_make_adult_rows() {
	psql -X -q -d "$1" -v ON_ERROR_STOP=1 -v t="$2" -v n="$3" -v domain="$(cat "$TOP/data/adult/domain.json")" >/dev/null <<'SQL'
DROP TABLE IF EXISTS :"t";
CREATE TABLE :"t" (LIKE adult INCLUDING ALL);
INSERT INTO :"t" SELECT a.* FROM generate_series(1, ceil(:n / 32561.0)::int) g, adult a LIMIT :n;
VACUUM ANALYZE :"t";
SELECT dp_protect(:'t', epsilon => 999);
SELECT dp_declare(:'t', :'domain'::jsonb);
SQL
}

# Sets DP_RSS_KB to a process's private memory in kB (RssAnon of /proc/PID/status), or to nothing
# once it has exited; bash's read only, no process started.
dp_rss_anon_kb() {
	local k v _
	DP_RSS_KB=
	{ while read -r k v _; do [ "$k" = RssAnon: ] && { DP_RSS_KB=$v; break; }; done; } 2>/dev/null < "/proc/$1/status" || true
}

# Runs one SQL statement ($1) in a session of its own in database $3 (default bench) and samples
# that backend's private memory (RssAnon: shared buffers excluded) every 20 ms while it runs.
# The statement's output (psql -qAt) goes to file $2.  Sets BENCH_BASE_KB (before the call),
# BENCH_PEAK_KB and BENCH_WALL (seconds); returns psql's status.  Used by the bench/ scripts.
# The sampling loop starts no process (bash's read and kill, a timed read for the pause): a
# loop that forked awk and sleep 50 times a second took about a tenth of a core, which a call
# using both cores of a 2-core machine lost to it (bench/RESULTS.md, "The speed bench's
# sampler").
dp_call_with_peak() {
	local sql=$1 out=$2 db=${3:-bench} fifo client pid="" v start end pause
	fifo=$(mktemp -u); mkfifo "$fifo"
	# one session: report its pid, wait for the go, run the statement
	# (psql's status goes through a file: bash 5.2 once answered `wait` with "not a child of
	# this shell" for a finished pipeline here, and the bench script stopped)
	rm -f "$out.rc" "$out.raw"
	( ( echo "SELECT pg_backend_pid();"; read -r _ < "$fifo"; echo "$sql" ) |
		psql -X -qAt -d "$db" > "$out.raw" 2>&1; echo $? > "$out.rc" ) &
	client=$!
	for _ in $(seq 1 100); do pid=$(head -n1 "$out.raw" 2>/dev/null || true); [ -n "$pid" ] && break; sleep 0.1; done
	if [ -z "$pid" ]; then echo go > "$fifo"; rm -f "$fifo"; cat "$out.raw" > "$out"; return 1; fi
	dp_rss_anon_kb "$pid"
	BENCH_BASE_KB=$DP_RSS_KB
	BENCH_PEAK_KB=$BENCH_BASE_KB
	# the pause: a read with a timeout on a pipe nobody writes to (opened read-write: no block)
	mkfifo "$fifo.pause"
	exec {pause}<>"$fifo.pause"
	rm -f "$fifo.pause"
	start=$(date +%s.%N)
	echo go > "$fifo"
	while kill -0 $client 2>/dev/null; do
		# the backend may exit before its client does: no status file then, and set -e must not
		# end the caller for it
		dp_rss_anon_kb "$pid"
		v=$DP_RSS_KB
		[ -n "$v" ] && [ "$v" -gt "$BENCH_PEAK_KB" ] && BENCH_PEAK_KB=$v
		read -r -t 0.02 -u "$pause" _ || true
	done
	end=$(date +%s.%N)
	exec {pause}<&-
	rm -f "$fifo"
	BENCH_WALL=$(echo "$end - $start" | bc)
	sed 1d "$out.raw" > "$out"
	rm -f "$out.raw"
	wait $client 2>/dev/null || true
	v=$(cat "$out.rc" 2>/dev/null || echo 1)
	rm -f "$out.rc"
	return "$v"
}
