#!/usr/bin/env bash
# The caller's wait for its charge responds to a cancel, and a cancelled caller's charge is not
# committed afterwards for nothing: while another session holds the budget row, the charging
# worker waits; the caller is cancelled (statement_timeout, pg_cancel_backend), raises at once,
# and once the other session lets go nothing has been charged.  (Several releases in one
# transaction of one session: sql/24_one_transaction.sql.)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_one_transaction
fresh_db $DB
ensure_analyst $DB dp_onetx_analyst
psql -X -q -d $DB >/dev/null 2>&1 <<'SQL'
CREATE TABLE t (g text NOT NULL);
INSERT INTO t SELECT (ARRAY['a', 'b'])[1 + i % 2] FROM generate_series(1, 1000) i;
SELECT dp_protect('t', epsilon => 5, delta => 1e-6);
SELECT dp_declare('t', 'g', categories => ARRAY['a', 'b']);
SQL
spent() { q $DB "SELECT rho_spent FROM dpsynth.budgets"; }
ledger_rows() { q $DB "SELECT count(*) FROM dpsynth.ledger"; }
charge_workers() { q $DB "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'dpsynth charge'"; }

# Holds the budget row in another session until wait_for_locker lets it go.
hold_budget_row() {
	psql -X -q -d $DB -c "BEGIN; SELECT 1 FROM dpsynth.budgets FOR UPDATE; SELECT pg_sleep(60); COMMIT;" >/dev/null 2>&1 &
	locker=$!
	for _ in $(seq 1 100); do
		[ -n "$(q $DB "SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep'")" ] && break
		sleep 0.1
	done
}
# Lets the locker go (its transaction rolls back, which ends the row lock as its commit would), then
# waits until no worker is left that could still commit a charge.
wait_for_locker() {
	q $DB "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE 'BEGIN; SELECT 1 FROM dpsynth.budgets FOR UPDATE%'" >/dev/null
	wait $locker
	for _ in $(seq 1 50); do [ "$(charge_workers)" = 0 ] && break; sleep 0.1; done
	sleep 0.5
}

# 1. statement_timeout while the worker waits
s0=$(spent); rows0=$(ledger_rows)
hold_budget_row
start=$(date +%s%N)
res=$(psql -X -qAt -d $DB -U dp_onetx_analyst -c "SET statement_timeout = '1s'" \
	-c "SELECT 'RELEASED', count(*) FROM dp_marginal('t', ARRAY['g'], epsilon => 0.5)" 2>&1)
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "# $res (${elapsed_ms} ms)"
ok $(grep -q 'canceling statement due to statement timeout' <<<"$res"; echo $?) "statement_timeout ends the caller's wait"
ok $([ $elapsed_ms -lt 4000 ]; echo $?) "at once, not when the charge's lock wait ends"
wait_for_locker
is "$(spent)" "$s0" "the cancelled call's charge is not committed after the lock is released"
is "$(ledger_rows)" "$rows0" "and writes no ledger row"

# 2. pg_cancel_backend of the waiting caller
s0=$(spent); rows0=$(ledger_rows)
hold_budget_row
psql -X -qAt -d $DB -U dp_onetx_analyst \
	-c "SELECT 'RELEASED', count(*) FROM dp_marginal('t', ARRAY['g'], epsilon => 0.5)" >"$PGHOST/onetx.out" 2>&1 &
caller=$!
pid=
for _ in $(seq 1 100); do
	pid=$(q $DB "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND wait_event = 'BgWorkerShutdown' AND query LIKE '%dp_marginal%'")
	[ -n "$pid" ] && break
	sleep 0.1
done
ok $([ -n "$pid" ]; echo $?) "the caller waits for its charging worker (wait event BgWorkerShutdown)"
q $DB "SELECT pg_cancel_backend(${pid:-0})" >/dev/null
wait $caller
res=$(cat "$PGHOST/onetx.out")
echo "# $res"
ok $(grep -q 'canceling statement due to user request' <<<"$res"; echo $?) "a cancel ends the caller's wait"
ok $(! grep -q RELEASED <<<"$res"; echo $?) "and releases nothing"
wait_for_locker
is "$(spent)" "$s0" "and nothing is charged once the lock is released"
is "$(ledger_rows)" "$rows0" "and no ledger row is written"

res=$(psql -X -qAt -d $DB -U dp_onetx_analyst -c "SELECT 'RELEASED', count(*) FROM dp_marginal('t', ARRAY['g'], epsilon => 0.5)" 2>&1)
is "$res" "RELEASED|3" "calls work again"
is "$(q $DB "SELECT rho_spent = (SELECT sum(rho) FROM dpsynth.ledger WHERE status <> 'refused') FROM dpsynth.budgets")" t "spent equals the ledger's sum"
rm -f "$PGHOST/onetx.out"
psql -X -q -d postgres -c "DROP DATABASE $DB" >/dev/null 2>&1
done_testing
