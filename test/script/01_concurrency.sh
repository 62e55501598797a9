#!/usr/bin/env bash
# Eight sessions charge the same table as fast as they can until its budget is spent.
# Whatever the interleaving, spent never exceeds the allowance, the ledger's sum equals spent,
# and every successful call is exactly one charge.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_concurrency
SESSIONS=8
fresh_db $DB
ensure_analyst $DB dp_conc_analyst
psql -X -q -d $DB >/dev/null 2>&1 <<'SQL'
CREATE TABLE t (g text NOT NULL);
INSERT INTO t SELECT (ARRAY['a', 'b', 'c'])[1 + i % 3] FROM generate_series(1, 5000) i;
SELECT dp_protect('t', epsilon => 3, delta => 1e-6);
SELECT dp_declare('t', 'g', categories => ARRAY['a', 'b', 'c']);
SQL

# Each session: call dp_marginal at epsilon 0.3 until refused (each call is its own statement
# and transaction: a psql script of 100 calls, errors do not stop it).
out=$(mktemp -d)
for s in $(seq 1 $SESSIONS); do
	(
		for i in $(seq 1 100); do echo "SELECT 'OK', count(*) FROM dp_marginal('t', ARRAY['g'], epsilon => 0.3);"; done |
			psql -X -qAt -U dp_conc_analyst -d $DB >"$out/$s.out" 2>"$out/$s.err"
	) &
done
wait

calls_ok=$(cat "$out"/*.out | grep -c '^OK')
refused=$(cat "$out"/*.err | grep -c 'privacy budget of table "t" is exhausted')
other_errors=$(cat "$out"/*.err | grep 'ERROR' | grep -vc 'privacy budget of table "t" is exhausted')
allowance=$(q $DB "SELECT rho_allowance FROM dpsynth.budgets")
spent=$(q $DB "SELECT rho_spent FROM dpsynth.budgets")
per_call=$(q $DB "SELECT dpsynth._units_rho(dpsynth._rho_units(0.3, 1e-6))")
echo "# $SESSIONS sessions: $calls_ok calls released, $refused refused; rho spent $spent of $allowance; $per_call per call"

ok $([ "$calls_ok" -gt 0 ]; echo $?) "some calls were released"
is "$(q $DB "SELECT $calls_ok = floor($allowance / $per_call)")" t "exactly as many calls succeed as fit in the budget"
is "$(q $DB "SELECT rho_spent <= rho_allowance FROM dpsynth.budgets")" t "spent never exceeds the allowance"
is "$(q $DB "SELECT rho_spent = (SELECT coalesce(sum(rho), 0) FROM dpsynth.ledger WHERE status <> 'refused') FROM dpsynth.budgets")" t "the ledger's sum equals spent"
is "$(q $DB "SELECT count(*) FROM dpsynth.ledger WHERE status = 'completed'")" "$calls_ok" "one completed ledger row per released call"
is "$(q $DB "SELECT count(*) FROM dpsynth.ledger WHERE status = 'charged'")" 0 "no charge without a completed release"
is "$(q $DB "SELECT coalesce(sum(attempts), 0) FROM dpsynth.refusals")" "$refused" "every refusal is counted in dpsynth.refusals"
is "$(q $DB "SELECT count(*) FROM dpsynth.ledger WHERE status = 'refused'")" \
	"$(q $DB "SELECT count(*) FROM dpsynth.refusals")" "one ledger row per kind of refusal, not per attempt"
is "$other_errors" 0 "no other errors"
is "$(q $DB "SELECT count(DISTINCT role) FROM dpsynth.ledger")" 1 "ledger names the calling role"
rm -rf "$out"
psql -X -q -d postgres -c "DROP DATABASE $DB"
done_testing
