#!/usr/bin/env bash
# Empirical privacy audit at unit level (issue 39): N dp_marginal releases (epsilon 8 each) from two
# neighbouring tables with a privacy unit (dp_privacy_unit, k = 5 rows per unit), which differ in one
# unit of 30 rows, all in the audited cell; the test of privacy_audit.py with SHIFT = k (the unit
# keeps k rows: counts m and m + k, the claimed noise sigma^2 = k^2 / (2 rho)).  The installed
# build must pass; the same test must refute a build that ignores the unit, compiled here with
# -DDPSYNTH_TEST_IGNORE_UNIT (no bounding, noise for one row; src/units.c) into a private copy of
# the PostgreSQL installation in use, with a temporary cluster, so that the installed extension is
# never touched.  AUDIT_RELEASES=N (default 500).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
N=${AUDIT_RELEASES:-500}
EPS=8
M=50
DB=dpsynth_unit_audit
K=5
UNIT_ROWS=30

# $1: database (PGHOST/PGPORT of the cluster to use); fills $2.d0 and $2.d1 with N counts each
releases() {
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1" >/dev/null 2>&1
	psql -X -q -d "$1" -v ON_ERROR_STOP=1 >/dev/null 2>&1 <<SQL
CREATE EXTENSION dpsynth;
CREATE TABLE d0 (person int4 NOT NULL, g text NOT NULL);
INSERT INTO d0 SELECT i, 'a' FROM generate_series(1, $M) i;
INSERT INTO d0 SELECT 1000 + i, 'b' FROM generate_series(1, 40) i;
CREATE TABLE d1 AS SELECT * FROM d0;
INSERT INTO d1 SELECT 999, 'a' FROM generate_series(1, $UNIT_ROWS);	-- the neighbour: one more unit, all in cell a
SELECT dp_protect('d0', epsilon => 1000), dp_protect('d1', epsilon => 1000);
SELECT dp_privacy_unit('d0', 'person', $K), dp_privacy_unit('d1', 'person', $K);
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
	/usr/bin/python3 "$TOP/test/script/privacy_audit.py" "$2.d0" "$2.d1" "$M" "$rho" "$delta" "$EPS" "$K"
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
ok $rc "the installed build keeps its claim per unit (and its epsilon lower bound stays under $EPS)"
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
	make -C "$work/src" -s PG_CONFIG="$ALT_CONFIG" COPT=-DDPSYNTH_TEST_IGNORE_UNIT >"$work/build.log" 2>&1 &&
	make -C "$work/src" -s PG_CONFIG="$ALT_CONFIG" install >>"$work/build.log" 2>&1; then
	built=0
fi
ok $built "the broken build (-DDPSYNTH_TEST_IGNORE_UNIT) compiles into a private copy of PostgreSQL"
[ $built = 0 ] || tail -n 20 "$work/build.log"
mkdir -p "$work/cluster"
chown -R postgres: "$work/cluster" 2>/dev/null
as_pg "$work/pg$ALT_BIN/initdb" -D "$work/cluster/data" -U postgres --auth=trust --no-sync >/dev/null 2>&1
cat >> "$work/cluster/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$work/cluster'
port = $((PGPORT + 72))
max_worker_processes = 16
CONF
as_pg "$work/pg$ALT_BIN/pg_ctl" -D "$work/cluster/data" -l "$work/cluster/server.log" -w start >/dev/null 2>&1
ok $? "a temporary cluster runs the broken build"
(
	export PGHOST=$work/cluster PGPORT=$((PGPORT + 72))
	releases $DB "$work/broken"
	res=$(audit $DB "$work/broken"); rc=$?
	echo "# broken build: $res"
	[ $rc != 0 ]
)
ok $? "the same test refutes the build that ignores the unit"
done_testing
