#!/usr/bin/env bash
# The privacy unit cannot change under a release in flight (issue 39, review R1).  A release
# reads the table's unit before its charge; the charge, committed by a worker of its own, must
# find the same unit in force, else a release made per row (or per another column) would be
# recorded on a table whose later charges all mean "per unit".  Session A names the unit in an
# open transaction; session B's dp_marginal reads "no unit", and its charge waits for A's row
# lock; A commits.  B must fail with nothing charged, and every charge on the ledger must carry
# the unit the table has.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_unit_race
fresh_db $DB
ensure_analyst $DB regress_unit_race_analyst
psql -X -q -d $DB >/dev/null 2>&1 <<'SQL'
CREATE TABLE t (pid int4, g text NOT NULL);
INSERT INTO t SELECT 1, 'a' FROM generate_series(1, 50);
INSERT INTO t SELECT g, 'b' FROM generate_series(2, 20) g;
SELECT dp_protect('t', epsilon => 1e6);
SELECT dp_declare('t', 'g', categories => ARRAY['a', 'b']);
GRANT SELECT ON t TO regress_unit_race_analyst;
SQL

run_race() {	# $1: the owner's statement in the open transaction; $2: output prefix
	psql -X -qAt -d $DB -c "BEGIN" -c "$1" -c "SELECT pg_sleep(3)" -c "COMMIT" >"$2.a" 2>&1 &
	local owner=$!
	sleep 1
	psql -X -qAt -v VERBOSITY=verbose -U regress_unit_race_analyst -d $DB \
		-c "SELECT cell[1], noisy_count FROM dp_marginal('t', ARRAY['g'], epsilon => 1000) ORDER BY 1" >"$2.b" 2>&1
	wait $owner
}

out=$(mktemp -d)
run_race "SELECT dp_privacy_unit('t', 'pid', max_rows_per_unit => 1)" "$out/set"
is "$(q $DB "SELECT privacy_unit IS NOT NULL FROM dpsynth.budgets")" t "the owner named the unit"
ok "$(grep -q 'ERROR:  40001:' "$out/set.b"; echo $?)" "the release that read no unit is refused at its charge, as a serialization failure (40001)"
grep -q 'ERROR' "$out/set.b" || sed 's/^/# released: /' "$out/set.b"
ok "$(grep -q 'HINT:  Call again: the table.s privacy unit changed' "$out/set.b"; echo $?)" "its hint says to call again"
is "$(q $DB "SELECT count(*) FROM dpsynth.ledger WHERE status <> 'refused'")" 0 "and nothing was charged"
is "$(q $DB "SELECT rho_spent FROM dpsynth.budgets")" 0 "the budget is untouched"

# the other way: the unit removed while a per-unit release is in flight
run_race "SELECT dp_privacy_unit('t', NULL)" "$out/unset"
is "$(q $DB "SELECT privacy_unit IS NULL FROM dpsynth.budgets")" t "the owner removed the unit"
ok "$(grep -q 'ERROR:  40001:' "$out/unset.b"; echo $?)" "the release that read the unit is refused at its charge, as a serialization failure (40001)"
is "$(q $DB "SELECT count(*) FROM dpsynth.ledger WHERE status <> 'refused'")" 0 "and nothing was charged"

# without a race, releases are charged as before, each with the unit in force
q $DB "SELECT dp_privacy_unit('t', 'pid', max_rows_per_unit => 1)" >/dev/null 2>&1
is "$(psql -X -qAt -U regress_unit_race_analyst -d $DB \
	-c "SELECT string_agg(cell[1] || '=' || noisy_count, ',' ORDER BY cell[1]) FROM dp_marginal('t', ARRAY['g'], epsilon => 1000)" 2>&1)" \
	"a=1,b=19" "a release after the commit is bounded per unit"
is "$(q $DB "SELECT count(*) FROM dpsynth.ledger WHERE status <> 'refused' AND details->'privacy_unit'->>'column' = 'pid'")" 1 \
	"and charged with the unit recorded"
is "$(q $DB "SELECT rho_spent = (SELECT sum(rho) FROM dpsynth.ledger WHERE status <> 'refused') FROM dpsynth.budgets")" t \
	"the ledger's sum equals spent"
rm -rf "$out"
done_testing
