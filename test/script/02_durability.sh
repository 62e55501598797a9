#!/usr/bin/env bash
# The charge survives what can happen after it: a cancel, a killed client, a crashed backend
# (the whole server restarts from its WAL), and a clean restart.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_durability
fresh_db $DB
psql -X -q -d $DB >/dev/null 2>&1 <<'SQL'
CREATE TABLE t (g text NOT NULL);
INSERT INTO t SELECT (ARRAY['a', 'b'])[1 + i % 2] FROM generate_series(1, 1000) i;
SELECT dp_protect('t', epsilon => 5, delta => 1e-6);
SELECT dp_declare('t', 'g', categories => ARRAY['a', 'b']);
SQL
per_call=$(q $DB "SELECT dpsynth._units_rho(dpsynth._rho_units(0.5, 1e-6))")
spent() { q $DB "SELECT rho_spent FROM dpsynth.budgets"; }

# Starts a call that has released its marginal and then sleeps inside the same statement;
# prints the backend's PID.
start_sleeping_call() {
	psql -X -qAt -d $DB -c "SELECT pg_sleep(60), count(*) FROM dp_marginal('t', ARRAY['g'], epsilon => 0.5)" \
		>/dev/null 2>&1 &
	client=$!
	for _ in $(seq 1 100); do
		pid=$(q $DB "SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(60)%' AND wait_event = 'PgSleep'")
		[ -n "$pid" ] && break
		sleep 0.1
	done
}

# 1. cancel
s0=$(spent)
start_sleeping_call
q $DB "SELECT pg_cancel_backend($pid)" >/dev/null
wait $client
is "$(q $DB "SELECT $(spent) - $s0 = $per_call")" t "cancel after release keeps the charge"

# 2. lost connection: the client is killed
s0=$(spent)
start_sleeping_call
kill -9 $client; wait $client 2>/dev/null
q $DB "SELECT pg_terminate_backend($pid)" >/dev/null
is "$(q $DB "SELECT $(spent) - $s0 = $per_call")" t "a killed client keeps the charge"

# 3. crash: SIGKILL of the backend makes the postmaster reinitialize from WAL
s0=$(spent)
start_sleeping_call
kill -9 "$pid"
wait $client 2>/dev/null
for _ in $(seq 1 100); do q $DB "SELECT 1" >/dev/null 2>&1 && break; sleep 0.2; done
is "$(q $DB "SELECT $(spent) - $s0 = $per_call")" t "a backend crash (server recovery) keeps the charge"
is "$(q $DB "SELECT status FROM dpsynth.ledger ORDER BY id DESC LIMIT 1")" charged "the crashed call's ledger row stays 'charged'"

# 4. clean restart
s0=$(spent)
as_pg "$PGBIN/pg_ctl" -D "$DATADIR" -w -m fast restart -l "$PGHOST/server.log" >/dev/null
is "$(spent)" "$s0" "budget survives a restart"
is "$(q $DB "SELECT rho_spent = (SELECT sum(rho) FROM dpsynth.ledger WHERE status <> 'refused') FROM dpsynth.budgets")" t "ledger sum equals spent after all of it"

# 5. fail closed: while another session holds the budget row, the charge cannot commit in
#    time; the call raises, releases nothing and charges nothing.
s0=$(spent)
rows0=$(q $DB "SELECT count(*) FROM dpsynth.ledger")
psql -X -q -d $DB -c "BEGIN; SELECT 1 FROM dpsynth.budgets FOR UPDATE; SELECT pg_sleep(5); COMMIT;" >/dev/null 2>&1 &
locker=$!
for _ in $(seq 1 100); do
	[ -n "$(q $DB "SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep'")" ] && break
	sleep 0.1
done
res=$(psql -X -qAt -d $DB -c "SET dpsynth.charge_timeout = 300" \
	-c "SELECT 'RELEASED', count(*) FROM dp_marginal('t', ARRAY['g'], epsilon => 0.5)" 2>&1)
echo "# $res" | head -n 3
ok $(echo "$res" | grep -q 'could not record the privacy charge; nothing was computed or released'; echo $?) \
	"a charge that cannot commit raises YD003"
ok $(echo "$res" | grep -vq RELEASED; echo $?) "and releases nothing"
wait $locker
is "$(spent)" "$s0" "and charges nothing"
is "$(q $DB "SELECT count(*) FROM dpsynth.ledger")" "$rows0" "and writes no ledger row"
res=$(psql -X -qAt -d $DB -c "SELECT 'RELEASED', count(*) FROM dp_marginal('t', ARRAY['g'], epsilon => 0.5)" 2>&1)
is "$res" "RELEASED|3" "once the lock is gone, calls work again"
psql -X -q -d postgres -c "DROP DATABASE $DB"
done_testing
