#!/usr/bin/env bash
# dp_synthesize seen from other sessions: its progress shows in pg_stat_activity, the table it
# makes is invisible to others until it commits, and statement_timeout or a cancel stop it
# within about a second, leaving no table behind but keeping the charge, also while parallel
# workers read the table.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_sessions
fresh_db $DB
dp_load_adult $DB
psql -X -q -d $DB -v domain="$(cat "$TOP/data/adult/domain.json")" >/dev/null 2>&1 <<'SQL'
SELECT dp_protect('adult', epsilon => 100);
SELECT dp_declare('adult', :'domain'::jsonb);
-- 300,000 rows so that a synthesis lasts a few seconds
CREATE TABLE big (LIKE adult);
INSERT INTO big SELECT a.* FROM adult a, generate_series(1, 9) g;
SELECT dp_protect('big', epsilon => 100);
SELECT dp_declare('big', :'domain'::jsonb);
SQL
spent() { q $DB "SELECT rho_spent FROM dpsynth.budgets WHERE relid = '$1'::regclass"; }

# 1. progress is visible from another session; the new table is not, until commit
psql -X -q -d $DB -c "BEGIN" -c "SELECT rows_written FROM dp_synthesize('big', epsilon => 1, target => 'big_copy')" \
	-c "SELECT pg_sleep(1)" -c "COMMIT" >/dev/null 2>&1 &
client=$!
seen=""
invisible=""
for _ in $(seq 1 100); do
	a=$(q $DB "SELECT query FROM pg_stat_activity WHERE query LIKE 'dp_synthesize(big)%'")
	[ -n "$a" ] && seen="$a"
	case "$a" in *"writing"*|*"GUM"*) [ "$(q $DB "SELECT to_regclass('big_copy') IS NULL")" = t ] && invisible=yes ;; esac
	[ -n "$seen" ] && [ -n "$invisible" ] && break
	sleep 0.05
done
wait $client
echo "# progress seen: $seen"
ok $([ -n "$seen" ]; echo $?) "progress (phase and percent) shows in pg_stat_activity"
ok $([ -n "$invisible" ]; echo $?) "the synthetic table is invisible to others while the call runs"
is "$(q $DB "SELECT count(*) > 0 FROM big_copy")" t "and visible after commit"

# 2. statement_timeout stops it within about a second, no table, the charge stays
s0=$(spent big)
start=$(date +%s.%N)
res=$(psql -X -qAt -d $DB -c "SET statement_timeout = '1500ms'" \
	-c "SELECT rows_written FROM dp_synthesize('big', epsilon => 1, target => 'timed_out', rows => 3000000)" 2>&1)
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
echo "# $res (after ${elapsed}s)"
ok $(grep -q "canceling statement due to statement timeout" <<<"$res"; echo $?) "statement_timeout cancels dp_synthesize"
ok $([ "$(echo "$elapsed < 2.7" | bc)" = 1 ]; echo $?) "within about a second of the timeout (${elapsed}s for a 1.5 s timeout)"
is "$(q $DB "SELECT to_regclass('timed_out') IS NULL")" t "no table is left behind"
is "$(q $DB "SELECT $(spent big) > $s0")" t "the charge stays"
is "$(q $DB "SELECT status FROM dpsynth.ledger ORDER BY id DESC LIMIT 1")" charged "its ledger row says charged, not completed"

# 3. pg_cancel_backend too
psql -X -qAt -d $DB -c "SELECT rows_written FROM dp_synthesize('big', epsilon => 1, target => 'cancelled', rows => 3000000)" >/dev/null 2>&1 &
client=$!
pid=$(backend_pid $DB 'dp_synthesize(big)%')
sleep 0.5
start=$(date +%s.%N)
q $DB "SELECT pg_cancel_backend($pid)" >/dev/null
wait $client
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
ok $([ "$(echo "$elapsed < 1.2" | bc)" = 1 ]; echo $?) "a cancel stops it within a second (${elapsed}s)"
is "$(q $DB "SELECT to_regclass('cancelled') IS NULL")" t "no table is left behind"

# 4. a cancel while parallel workers read the table (src/scan_parallel.c): the call ends, the
# workers with it, and the session's next call reads with workers again
q $DB "CREATE TABLE big3 AS SELECT b.* FROM big b, generate_series(1, 10) g" >/dev/null
psql -X -q -d $DB -v domain="$(cat "$TOP/data/adult/domain.json")" >/dev/null 2>&1 <<'SQL'
SELECT dp_protect('big3', epsilon => 100);
SELECT dp_declare('big3', :'domain'::jsonb);
SQL
out=$(mktemp)
psql -X -qAt -d $DB -c "SET client_min_messages = debug1" \
	-c "SELECT rows_written FROM dp_synthesize('big3', epsilon => 1, target => 'cancelled3')" >"$out" 2>&1 &
client=$!
pid=""
for _ in $(seq 1 500); do
	pid=$(q $DB "SELECT pid FROM pg_stat_activity WHERE query LIKE 'dp_synthesize(big3)%reading the table%'")
	[ -n "$pid" ] && break
	sleep 0.01
done
readers=$([ -n "$pid" ] && q $DB "SELECT count(*) FROM pg_stat_activity WHERE leader_pid = $pid AND backend_type = 'parallel worker'")
q $DB "SELECT pg_cancel_backend($pid)" >/dev/null
wait $client
echo "# $(tr '\n' ' ' <"$out") (workers seen: $readers)"
ok $(grep -q 'reading "big3" with 2 parallel workers' "$out"; echo $?) "the 3M-row table is read with two parallel workers"
ok $([ "${readers:-0}" -ge 1 ]; echo $?) "the workers show in pg_stat_activity under the caller (leader_pid)"
ok $(grep -q "canceling statement due to user request" "$out"; echo $?) "a cancel during the parallel read ends the call"
left=1
for _ in $(seq 1 100); do
	[ "$(q $DB "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'parallel worker' AND datname = '$DB'")" = 0 ] && { left=0; break; }
	sleep 0.05
done
ok $left "no parallel worker is left"
is "$(q $DB "SELECT to_regclass('cancelled3') IS NULL")" t "no table is left behind"
is "$(q $DB "SELECT status FROM dpsynth.ledger ORDER BY id DESC LIMIT 1")" charged "the charge stays (ledger row charged)"
# the next call: its read is what the cancel could have broken, so it writes only 30,000 rows
# (GUM's time is in the rows it writes), and its model's noisy count says it read all ~2.93M
psql -X -qAt -d $DB -c "SET client_min_messages = debug1" \
	-c "SELECT rows_written FROM dp_synthesize('big3', epsilon => 1, target => 'done3', rows => 30000)" \
	-c "SELECT noisy_total > 2900000 FROM dpsynth.models WHERE relname = 'big3' ORDER BY id DESC LIMIT 1" >"$out" 2>&1
echo "# $(tr '\n' ' ' <"$out")"
ok $(grep -q 'reading "big3" with 2 parallel workers' "$out"; echo $?) "the next call in a new session reads with two parallel workers again"
ok $(grep -qx t "$out"; echo $?) "and reads the whole table (its model's noisy row count > 2,900,000)"
rm -f "$out"
psql -X -q -d postgres -c "DROP DATABASE $DB"
done_testing
