#!/usr/bin/env bash
# The parallel read's leader ends when its workers have detached, even when every wakeup they
# sent came before the pass that sees the last queue detached (src/scan_parallel.c).  Made
# deterministic with SIGSTOP: the charge is held on the budget row's lock; the postmaster is
# stopped while the charge commits, so the call launches its workers, reads the whole table
# itself and waits for them; the leader is stopped, the postmaster resumed: the workers start,
# find nothing left, detach and exit while the leader sleeps; then the leader is resumed.  It
# must finish at once: before the fix it waited for a wakeup that never came (forever here; 10 s
# in a session whose idle-stats timeout was armed, the stall of issue 38 part 2).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_last_detach
fresh_db $DB
dp_load_adult $DB
psql -X -q -d $DB -v domain="$(cat "$TOP/data/adult/domain.json")" >/dev/null 2>&1 <<'SQL'
SELECT dp_protect('adult', epsilon => 100);
SELECT dp_declare('adult', :'domain'::jsonb);
SQL
PM=$(head -n 1 "$DATADIR/postmaster.pid")
OUT=$(mktemp)
TMPD=""
client=""
stopped=()
cleanup() {
	for p in "${stopped[@]}"; do kill -CONT "$p" 2>/dev/null; done
	[ -n "$client" ] && kill "$client" 2>/dev/null
	rm -rf "$OUT" ${TMPD:+"$TMPD"}
}
trap cleanup EXIT

# sessions opened before the postmaster is stopped (no new one can start then): a monitor, and
# the one holding the budget row; each a psql on a pair of FIFOs (session, common.sh)
TMPD=$(mktemp -d)
session MON $DB
session LOCKER $DB
mq() { sq MON "$1"; }
echo "BEGIN; SELECT 'locked' FROM dpsynth.budgets WHERE relid = 'adult'::regclass FOR UPDATE;" >&"$LOCKER_W"
read -r -t 30 line <&"$LOCKER_R"
is "$line" locked "the budget row is held by another session"

# wait_for NAME SQL WANT: polls the monitor (every 50 ms, up to 30 s) until SQL answers WANT
wait_for() {
	for _ in $(seq 1 600); do
		[ "$(mq "$2")" = "$3" ] && return 0
		sleep 0.05
	done
	return 1
}

# the call: its session's first statement, every table read by workers
PGOPTIONS="-c min_parallel_table_scan_size=0 -c statement_timeout=120s" \
	psql -X -qAt -d $DB -c "SELECT count(*) FROM dp_marginal('adult', ARRAY['sex'], epsilon => 1)" >"$OUT" 2>&1 &
client=$!
wait_for charge "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'dpsynth charge' AND wait_event_type = 'Lock'" 1
ok $? "the charge waits for the budget row"
S=$(mq "SELECT pid FROM pg_stat_activity WHERE query LIKE '%dp_marginal(%' AND backend_type = 'client backend' AND pid <> pg_backend_pid()")
echo "# leader $S, postmaster $PM"

kill -STOP "$PM" && stopped+=("$PM")
echo "COMMIT;" >&"$LOCKER_W"
wait_for leader "SELECT wait_event FROM pg_stat_activity WHERE pid = $S" MessageQueueReceive
ok $? "with the postmaster stopped, the leader read the table alone and waits for its workers"

kill -STOP "$S" && stopped+=("$S")
kill -CONT "$PM"
# the workers start, find no block left, detach and exit; the postmaster reaps them
seen=0
for _ in $(seq 1 200); do
	sleep 0.05
	n=$(mq "SELECT count(*) FROM pg_stat_activity WHERE leader_pid = $S")
	[ "$n" != 0 ] && seen=1
	[ "$seen" = 1 ] && [ "$n" = 0 ] && break
done
sleep 1
echo "# workers seen while the leader was stopped: $seen; left: $(mq "SELECT count(*) FROM pg_stat_activity WHERE leader_pid = $S")"
# (their process titles, read from /proc: no procps needed)
workers_alive() { cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' '\n' | grep -cE "parallel worker for PID $S( |$)"; }
is "$(workers_alive)" 0 "its workers have exited while it was stopped"

start=$(date +%s.%N)
kill -CONT "$S"
for _ in $(seq 1 300); do
	kill -0 "$client" 2>/dev/null || break
	sleep 0.05
done
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
finished=1
kill -0 "$client" 2>/dev/null || finished=0
echo "# after ${elapsed}s: $(tr '\n' ' ' <"$OUT")"
ok $finished "resumed, the leader ends its read without waiting (within 15 s; it took ${elapsed}s)"
if [ $finished != 0 ]; then
	psql -X -qAt -d $DB -c "SELECT pg_cancel_backend($S)" >/dev/null
fi
wait "$client"
is "$(head -n 1 "$OUT")" 3 "and the marginal is released (its three cells)"
echo "\\q" >&"$MON_W"
echo "\\q" >&"$LOCKER_W"
done_testing
