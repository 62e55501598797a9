#!/usr/bin/env bash
# Empirical privacy audit at unit level (issue 39): N dp_marginal releases (epsilon 8 each) from two
# neighbouring tables with a privacy unit (dp_privacy_unit, k = 5 rows per unit), which differ in one
# unit of 30 rows, all in the audited cell; the test of privacy_audit.py with SHIFT = k (the unit
# keeps k rows: counts m and m + k, the claimed noise sigma^2 = k^2 / (2 rho)).  The installed
# build must pass; the same test must refute a build that ignores the unit, compiled here with
# -DDPSYNTH_TEST_IGNORE_UNIT (no bounding, noise for one row; src/units.c) into a private copy of
# the PostgreSQL installation in use, with a temporary cluster, so that the installed extension is
# never touched.  AUDIT_RELEASES=N (default 200).  At N = 200, epsilon 8, computed exactly
# (bench/audit_power.py unit 200): a correct build is refuted with probability 6.8e-6, the build
# that ignores the unit kept with probability below 1e-300.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
N=${AUDIT_RELEASES:-200}
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

audit_real_and_broken -DDPSYNTH_TEST_IGNORE_UNIT 72 " per unit" "the build that ignores the unit"
done_testing
