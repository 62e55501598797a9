#!/usr/bin/env bash
# Concurrent first discovery of a column (issue 9, finding 2): sessions that call dp_marginal at
# once on a column whose categories are still unknown all succeed; the column is discovered and
# paid for once (the others wait for it and reuse it), and nothing fails after a charge.  Under
# REPEATABLE READ or SERIALIZABLE, discovery is refused before any charge.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_discovery_race
SESSIONS=6
fresh_db $DB
ensure_analyst $DB regress_race_analyst
psql -X -q -d $DB >/dev/null 2>&1 <<'SQL'
CREATE TABLE t (g text NOT NULL, h text NOT NULL);
INSERT INTO t SELECT (ARRAY['a', 'b', 'c'])[1 + i % 3], (ARRAY['x', 'y'])[1 + i % 2] FROM generate_series(1, 3000) i;
SELECT dp_protect('t', epsilon => 50, delta => 1e-6, selection_delta => 1e-4);
SQL

# Every session waits on an advisory lock that one holder keeps for a moment, so that all of
# them call dp_marginal at the same instant.
out=$(mktemp -d)
psql -X -qAt -d $DB -c "SELECT pg_advisory_lock(4242), pg_sleep(2)" >/dev/null &
holder=$!
sleep 0.5
for s in $(seq 1 $SESSIONS); do
	psql -X -qAt -U regress_race_analyst -d $DB -v ON_ERROR_STOP=1 \
		-c "SELECT pg_advisory_lock_shared(4242)" \
		-c "SELECT 'OK', count(*) FROM dp_marginal('t', ARRAY['g'], epsilon => 0.5)" >"$out/$s.out" 2>"$out/$s.err" &
done
wait

calls_ok=$(cat "$out"/*.out | grep -c '^OK')
errors=$(cat "$out"/*.err | grep -c 'ERROR')
echo "# $SESSIONS concurrent first calls: $calls_ok released, $errors errors"
[ "$errors" -gt 0 ] && cat "$out"/*.err | grep ERROR | sort | uniq -c | sed 's/^/# /'
is "$calls_ok" "$SESSIONS" "every concurrent call is released"
is "$errors" 0 "no call fails (no duplicate key after a charge)"
is "$(q $DB "SELECT count(*) FROM dpsynth.ledger WHERE (details->>'discovered_columns')::int > 0")" 1 \
	"the column is discovered, and paid for, once"
is "$(q $DB "SELECT count(*) FROM dpsynth.ledger WHERE status = 'completed'")" "$SESSIONS" "one completed charge per call"
is "$(q $DB "SELECT count(*) FROM dpsynth.domains WHERE source = 'dp'")" 1 "one discovered domain is stored"
is "$(q $DB "SELECT rho_spent = (SELECT sum(rho) FROM dpsynth.ledger WHERE status <> 'refused') FROM dpsynth.budgets")" t \
	"the ledger's sum equals spent"
is "$(q $DB "SELECT delta_spent = (SELECT sum(delta_add) FROM dpsynth.ledger) AND delta_spent > 0 FROM dpsynth.budgets")" t \
	"the selection delta is spent once"

# REPEATABLE READ and SERIALIZABLE: a discovery is refused before anything is charged (the
# transaction's snapshot could predate another call's discovery, and the domain's store could
# not be made after the charge); with declared domains a release works and is completed.
ledger_before=$(q $DB "SELECT count(*) FROM dpsynth.ledger")
for level in "REPEATABLE READ" SERIALIZABLE; do
	res=$(psql -X -qAt -U regress_race_analyst -d $DB -c "BEGIN ISOLATION LEVEL $level" \
		-c "SELECT count(*) FROM dp_marginal('t', ARRAY['h'], epsilon => 0.5)" -c "COMMIT" 2>&1)
	ok "$(grep -q 'cannot be discovered in a REPEATABLE READ or SERIALIZABLE transaction' <<<"$res"; echo $?)" \
		"$level: discovery refused"
done
is "$(q $DB "SELECT count(*) - $ledger_before FROM dpsynth.ledger")" 0 "and nothing charged"
q $DB "SELECT dp_declare('t', 'h', categories => ARRAY['x', 'y'])" >/dev/null
is "$(psql -X -qAt -U regress_race_analyst -d $DB -c "BEGIN ISOLATION LEVEL REPEATABLE READ" \
	-c "SELECT count(*) FROM dp_budget" -c "SELECT count(*) FROM dp_marginal('t', ARRAY['h'], epsilon => 0.5)" \
	-c "COMMIT" 2>&1 | tail -n 1)" 3 "REPEATABLE READ: a release of declared columns works"
is "$(q $DB "SELECT status FROM dpsynth.ledger ORDER BY id DESC LIMIT 1")" completed \
	"and its ledger row is completed (the worker's row updated under the latest snapshot)"

rm -rf "$out"
psql -X -q -d postgres -c "DROP DATABASE $DB" >/dev/null
done_testing
