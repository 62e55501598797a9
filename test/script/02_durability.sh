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
# (the locker holds the row until it is let go below, not for a fixed time)
psql -X -q -d $DB -c "BEGIN; SELECT 1 FROM dpsynth.budgets FOR UPDATE; SELECT pg_sleep(60); COMMIT;" >/dev/null 2>&1 &
locker=$!
for _ in $(seq 1 100); do
	[ -n "$(q $DB "SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep'")" ] && break
	sleep 0.1
done
res=$(psql -X -qAt -d $DB -c "SET dpsynth.charge_timeout = 300" \
	-c "SELECT 'RELEASED', count(*) FROM dp_marginal('t', ARRAY['g'], epsilon => 0.5)" 2>&1)
head -n 3 <<<"# $res"
ok $(grep -q 'could not record the privacy charge; nothing was computed or released' <<<"$res"; echo $?) \
	"a charge that cannot commit raises YD003"
ok $(! grep -q RELEASED <<<"$res"; echo $?) "and releases nothing"
# let the locker go (its transaction rolls back, which ends the row lock as its commit would),
# then wait until no charging worker is left that could still commit a charge
q $DB "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE 'BEGIN; SELECT 1 FROM dpsynth.budgets FOR UPDATE%'" >/dev/null
wait $locker
for _ in $(seq 1 50); do
	[ "$(q $DB "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'dpsynth charge'")" = 0 ] && break
	sleep 0.1
done
is "$(spent)" "$s0" "and charges nothing"
is "$(q $DB "SELECT count(*) FROM dpsynth.ledger")" "$rows0" "and writes no ledger row"
res=$(psql -X -qAt -d $DB -c "SELECT 'RELEASED', count(*) FROM dp_marginal('t', ARRAY['g'], epsilon => 0.5)" 2>&1)
is "$res" "RELEASED|3" "once the lock is gone, calls work again"
# 6. A synthetic table's pages: on PostgreSQL 15 they are written outside shared buffers, each
#    chunk's sync request queued before its WAL record (src/synth_pagewrite.c).  Tables of over
#    1 GB (two segment files).  A crash cannot lose the OS page cache, so a missing fsync is
#    checked where it shows: the checkpointer's own log of the files it syncs.
psql -X -q -d $DB -v ON_ERROR_STOP=1 >/dev/null 2>&1 <<'SQL'
CREATE EXTENSION amcheck;
CREATE EXTENSION pageinspect;
CREATE EXTENSION pg_walinspect;
CREATE TABLE long_rows (kind text NOT NULL);
INSERT INTO long_rows
SELECT label FROM (SELECT (SELECT string_agg(md5(k || ':' || i), '') FROM generate_series(1, 30) i) AS label
				   FROM generate_series(1, 4) k) x, generate_series(1, 250);
SELECT dp_protect('long_rows', epsilon => 20);
SELECT dp_declare('long_rows', 'kind', categories => (SELECT array_agg(DISTINCT kind) FROM long_rows));
SQL
big_call() { q $DB "SELECT rows_written FROM dp_synthesize('long_rows', epsilon => 1, \"rows\" => 1100000, target => '$1')"; }
crash_and_restart() {
	as_pg "$PGBIN/pg_ctl" -D "$DATADIR" -w -m immediate stop >/dev/null
	as_pg "$PGBIN/pg_ctl" -D "$DATADIR" -w start -l "$PGHOST/server.log" >/dev/null
}
set_and_reload() { q postgres "ALTER SYSTEM SET $1" >/dev/null; q postgres "SELECT pg_reload_conf()" >/dev/null; sleep 0.5; }
check_table() {   # $1 table, $2 rows written, $3 what happened
	# one scan for both (a hash of the 4 values, where count(DISTINCT kind) sorted the 1.1 GB of
	# text): the rows per value add up to the rows written, and the non-null values are the 4
	# labels (a NULL value, as before, is neither counted nor checked)
	local counts
	counts=$(q $DB "SELECT sum(n) = $2 AND $2 > 1000000, count(kind) = 4 AND bool_and(kind IN (SELECT kind FROM long_rows))
					FROM (SELECT kind, count(*) AS n FROM $1 GROUP BY kind) g")
	is "${counts%%|*}" t "$3: every row of the 1.1 GB table is there"
	is "${counts#*|}" t "$3: every value is a label"
	is "$(q $DB "SELECT count(*) FROM verify_heapam('$1')")" 0 "$3: amcheck finds no corruption"
	local last; last=$(q $DB "SELECT pg_relation_size('$1') / current_setting('block_size')::int - 1")
	is "$(q $DB "SELECT bool_and(h.t_ctid = format('(%s,%s)', b, h.lp)::tid AND h.t_xmax = '0' AND h.t_xmin = (SELECT xmin FROM $1 LIMIT 1)
				AND h.t_infomask & 2048 <> 0) FROM unnest(ARRAY[0, 131071, 131072, $last]) b,
				LATERAL heap_page_items(get_raw_page('$1', b)) h")" t \
		"$3: tuple headers on the first page, a segment's last and first, and the last page (own ctid, the inserting xid, xmax invalid)"
}

# 6a. No checkpoint during the write (and none after it): recovery replays every page's full
#     image from the WAL, over the pages already in the files.
set_and_reload "max_wal_size = '20GB'"
set_and_reload "checkpoint_timeout = '1h'"
q postgres "CHECKPOINT" >/dev/null
lsn0=$(q $DB "SELECT pg_current_wal_insert_lsn()")
written=$(big_call long_replayed)
wal=$(q $DB "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$lsn0') >= 0.9 * pg_relation_size('long_replayed')")
path=$(q $DB "SELECT pg_relation_filepath('long_replayed')")
crash_and_restart
echo "# $written rows written, then the server was killed; recovery replayed the write's WAL"
is "$wal" t "the call wrote WAL of at least 90% of the table's size (every page logged, less each page's free space)"
ok $([ -s "$DATADIR/$path.1" ]; echo $?) "the table spans two segment files"
check_table long_replayed "$written" "replayed"
q postgres "ALTER SYSTEM RESET max_wal_size" >/dev/null
set_and_reload "checkpoint_timeout = DEFAULT"

# 6b. Checkpoints one after another during the write: the checkpointer syncs both segment files
#     (its DEBUG1 log names each file it syncs), and a crash right after the commit loses nothing.
set_and_reload "log_min_messages = debug1"
log_from=$(wc -c < "$PGHOST/server.log")
stop_flag=$(mktemp -u)
( while [ ! -e "$stop_flag" ]; do q postgres "CHECKPOINT" >/dev/null 2>&1; sleep 0.3; done ) &
checkpointer=$!
written=$(big_call long_synced)
touch "$stop_flag"; wait $checkpointer 2>/dev/null; rm -f "$stop_flag"
q postgres "CHECKPOINT" >/dev/null
path=$(q $DB "SELECT pg_relation_filepath('long_synced')")
synced=$(tail -c +"$((log_from + 1))" "$PGHOST/server.log" | grep -o "checkpoint sync: number=[0-9]* file=$path[.0-9]* " | sed 's/.*file=//' | sort -u | tr -d ' ' | tr '\n' ' ')
q postgres "ALTER SYSTEM RESET log_min_messages" >/dev/null
crash_and_restart
is "$synced" "$path $path.1 " "the checkpoints synced both segment files of the table"
check_table long_synced "$written" "checkpointed"

# 6c. The WAL holds full page images and no row records (Heap2 MULTI_INSERT), unless
#     dpsynth.write_pages is off.
wal_kinds() {   # $1 setting: FPI records, MULTI_INSERT records on the table of one 20,000-row call
	local l0 l1
	l0=$(q $DB "SELECT pg_current_wal_insert_lsn()")
	q $DB "SET dpsynth.write_pages = $1; SELECT count(*) FROM dp_synthesize('long_rows', epsilon => 0.5, \"rows\" => 20000, target => 'kinds_$1')" >/dev/null
	l1=$(q $DB "SELECT pg_current_wal_insert_lsn()")
	q $DB "SELECT count(*) FILTER (WHERE record_type = 'FPI') > 0, count(*) FILTER (WHERE record_type LIKE 'MULTI_INSERT%') > 0
		   FROM pg_get_wal_records_info('$l0', '$l1')
		   WHERE block_ref LIKE '%/' || pg_relation_filenode('kinds_$1') || ' %'"
}
is "$(wal_kinds on)" "t|f" "dpsynth.write_pages on: full page images, no row records"
is "$(wal_kinds off)" "f|t" "dpsynth.write_pages off: row records, as table_multi_insert writes"

# 6d. wal_level minimal: no WAL for the new table; the commit syncs it (over wal_skip_threshold)
#     or logs it through shared buffers (under it), and both survive a crash.
set_and_reload "wal_level = minimal"
q postgres "ALTER SYSTEM SET max_wal_senders = 0" >/dev/null
as_pg "$PGBIN/pg_ctl" -D "$DATADIR" -w -m fast restart -l "$PGHOST/server.log" >/dev/null
small=$(q $DB "SELECT rows_written FROM dp_synthesize('long_rows', epsilon => 0.5, \"rows\" => 1000, target => 'minimal_small')")
big=$(q $DB "SELECT rows_written FROM dp_synthesize('long_rows', epsilon => 0.5, \"rows\" => 100000, target => 'minimal_big')")
sizes=$(q $DB "SELECT pg_relation_size('minimal_small') < 2 * 1024 * 1024, pg_relation_size('minimal_big') > 2 * 1024 * 1024")
crash_and_restart
is "$sizes" "t|t" "wal_level minimal: one table under wal_skip_threshold, one over it"
is "$(q $DB "SELECT (SELECT count(*) FROM minimal_small) = $small AND (SELECT count(*) FROM minimal_big) = $big")" t \
	"wal_level minimal: both tables whole after a crash"
is "$(q $DB "SELECT (SELECT count(*) FROM verify_heapam('minimal_small')) + (SELECT count(*) FROM verify_heapam('minimal_big'))")" 0 \
	"wal_level minimal: amcheck finds no corruption"
q postgres "ALTER SYSTEM RESET wal_level" >/dev/null
q postgres "ALTER SYSTEM RESET max_wal_senders" >/dev/null
as_pg "$PGBIN/pg_ctl" -D "$DATADIR" -w -m fast restart -l "$PGHOST/server.log" >/dev/null
is "$(q postgres "SHOW wal_level")" replica "wal_level back to replica"

# 6e. A rolled-back call leaves no data (PostgreSQL empties the first segment at once and
#     unlinks it at the next checkpoint; the others go at once).
res=$(psql -X -qAt -d $DB -c "BEGIN" -c "SELECT rows_written FROM dp_synthesize('long_rows', epsilon => 1, \"rows\" => 1100000, target => 'long_gone')" \
	-c "SELECT pg_relation_filepath('long_gone')" -c "ROLLBACK" 2>&1)
path=$(echo "$res" | sed -n 2p)
ok $([ -n "$path" ] && [ ! -s "$DATADIR/$path" ] && [ ! -e "$DATADIR/$path.1" ]; echo $?) "a rolled-back 1.1 GB call leaves no data: the first segment emptied, the second gone ($path)"
psql -X -q -d postgres -c "DROP DATABASE $DB"
done_testing
