#!/usr/bin/env bash
# Empirical privacy audit with teeth (issue 9): N dp_marginal releases (epsilon 8 each) from two
# neighbouring tables, one row apart, and the hypothesis test of privacy_audit.py (statistics,
# false-alarm and miss probabilities in its header).  The installed build must pass; the same test
# must refute a deliberately broken build, compiled here with -DDPSYNTH_TEST_HALVE_NOISE (every
# noise scale halved) into a private copy of the PostgreSQL installation in use, with a temporary
# cluster, so that the installed extension is never touched.  AUDIT_RELEASES=N (default 500).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
N=${AUDIT_RELEASES:-500}
EPS=8
M=50
DB=dpsynth_audit

# $1: database (PGHOST/PGPORT of the cluster to use); fills $2.d0 and $2.d1 with N counts each
releases() {
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1" >/dev/null 2>&1
	psql -X -q -d "$1" -v ON_ERROR_STOP=1 >/dev/null 2>&1 <<SQL
CREATE EXTENSION dpsynth;
CREATE TABLE d0 (g text NOT NULL);
INSERT INTO d0 SELECT 'a' FROM generate_series(1, $M);
INSERT INTO d0 SELECT 'b' FROM generate_series(1, 40);
CREATE TABLE d1 AS SELECT * FROM d0;
INSERT INTO d1 VALUES ('a');		-- the neighbour: one more row in cell a
SELECT dp_protect('d0', epsilon => 1000), dp_protect('d1', epsilon => 1000);
SELECT dp_declare('d0', 'g', categories => ARRAY['a', 'b']), dp_declare('d1', 'g', categories => ARRAY['a', 'b']);
SQL
	for t in d0 d1; do
		for i in $(seq 1 "$N"); do
			echo "SELECT noisy_count FROM dp_marginal('$t', ARRAY['g'], epsilon => $EPS) WHERE cell = ARRAY['a'];"
		done | psql -X -qAt -d "$1" >"$2.$t" 2>/dev/null &
	done
	wait
}

# $1: database, $2: file prefix; runs the test, prints its line, returns its verdict
audit() {
	local rho delta
	rho=$(q "$1" "SELECT DISTINCT rho FROM dpsynth.ledger WHERE function = 'dp_marginal'")
	delta=$(q "$1" "SELECT DISTINCT delta FROM dpsynth.budgets")
	/usr/bin/python3 "$TOP/test/script/privacy_audit.py" "$2.d0" "$2.d1" "$M" "$rho" "$delta" "$EPS"
}

work=$(mktemp -d)
chmod 755 "$work"
alt_pid=""
cleanup() {
	[ -f "$work/cluster/data/postmaster.pid" ] &&
		as_pg "$work/pg$ALT_BIN/pg_ctl" -D "$work/cluster/data" -m immediate -w stop >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

# ---- 1. the installed build ----
releases $DB "$work/real"
is "$(cat "$work/real.d0" "$work/real.d1" | wc -l | tr -d ' ')" $((2 * N)) "$((2 * N)) releases from the installed build"
res=$(audit $DB "$work/real"); rc=$?
echo "# installed build: $res"
ok $rc "the installed build keeps its claim (and its epsilon lower bound stays under $EPS)"
psql -X -q -d postgres -c "DROP DATABASE $DB" >/dev/null

# ---- 2. a broken build (noise halved), in a private copy of this PostgreSQL installation ----
ALT_BIN=$("$PG_CONFIG" --bindir)
for d in "$("$PG_CONFIG" --bindir)/.." "$("$PG_CONFIG" --sharedir)" "$("$PG_CONFIG" --includedir)"; do
	d=$(cd "$d" && pwd)
	mkdir -p "$work/pg$(dirname "$d")"
	cp -a "$d" "$work/pg$(dirname "$d")/"
done
ALT_CONFIG=$work/pg$ALT_BIN/pg_config
mkdir -p "$work/src"
(cd "$TOP" && tar --exclude=.git --exclude='tmp_*' --exclude='test/unit/bin' --exclude='bench/out' -cf - .) | tar -C "$work/src" -xf -
built=1
if make -C "$work/src" -s clean >/dev/null 2>&1 &&
	make -C "$work/src" -s PG_CONFIG="$ALT_CONFIG" COPT=-DDPSYNTH_TEST_HALVE_NOISE >"$work/build.log" 2>&1 &&
	make -C "$work/src" -s PG_CONFIG="$ALT_CONFIG" install >>"$work/build.log" 2>&1; then
	built=0
fi
ok $built "the broken build (-DDPSYNTH_TEST_HALVE_NOISE) compiles into a private copy of PostgreSQL"
[ $built = 0 ] || tail -n 20 "$work/build.log"
mkdir -p "$work/cluster"
chown -R postgres: "$work/cluster" 2>/dev/null
as_pg "$work/pg$ALT_BIN/initdb" -D "$work/cluster/data" -U postgres --auth=trust --no-sync >/dev/null 2>&1
cat >> "$work/cluster/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$work/cluster'
port = $((PGPORT + 71))
max_worker_processes = 16
CONF
as_pg "$work/pg$ALT_BIN/pg_ctl" -D "$work/cluster/data" -l "$work/cluster/server.log" -w start >/dev/null 2>&1
ok $? "a temporary cluster runs the broken build"
(
	export PGHOST=$work/cluster PGPORT=$((PGPORT + 71))
	releases $DB "$work/broken"
	res=$(audit $DB "$work/broken"); rc=$?
	echo "# broken build: $res"
	[ $rc != 0 ]
)
ok $? "the same test refutes the broken build (noise halved)"
done_testing
