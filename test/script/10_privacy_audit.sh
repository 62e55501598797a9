#!/usr/bin/env bash
# Empirical privacy audit with teeth (issue 9): N dp_marginal releases (epsilon 8 each) from two
# neighbouring tables, one row apart, and the hypothesis test of privacy_audit.py (statistics,
# false-alarm and miss probabilities in its header).  The installed build must pass; the same test
# must refute a deliberately broken build, compiled here with -DDPSYNTH_TEST_HALVE_NOISE (every
# noise scale halved) into a private copy of the PostgreSQL installation in use, with a temporary
# cluster, so that the installed extension is never touched.  AUDIT_RELEASES=N (default 200).
# At N = 200, epsilon 8, computed exactly from privacy_audit.py's test and the binomial laws of
# its two counts (bench/audit_power.py row 200): a correct build is refuted with probability
# 4.3e-5, the halved build kept with probability 1.6e-31 (at N = 500: 5.5e-5 and 1e-107).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
N=${AUDIT_RELEASES:-200}
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

audit_real_and_broken -DDPSYNTH_TEST_HALVE_NOISE 71 "" "the broken build (noise halved)"
done_testing
