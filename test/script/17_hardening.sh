#!/usr/bin/env bash
# The statistics hardening of README.md ("Hardening: take the statistics away from analysts"):
# in a fresh database with a protected table, an analyst first reads its row count from
# PostgreSQL's statistics (so that every check below can fail); then exactly the README's block,
# taken from between its markers, runs in that database and in a second one; then the analyst
# reads the count through none of the views and functions the README says are closed, still gets
# releases, and a monitoring role still sees the statistics.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_hardening
OTHER=dpsynth_hardening_other
ANALYST=hardening_analyst
MONITOR=hardening_monitor
N=1237

cleanup() {
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "DROP DATABASE IF EXISTS $OTHER" \
		-c "DROP ROLE IF EXISTS $ANALYST" -c "DROP ROLE IF EXISTS $MONITOR" 2>/dev/null
}
cleanup
fresh_db $DB
psql -X -q -d postgres -c "CREATE DATABASE $OTHER"
psql -X -q -d postgres -c "CREATE ROLE $ANALYST LOGIN IN ROLE dpsynth_analyst" \
	-c "CREATE ROLE $MONITOR LOGIN IN ROLE pg_monitor"

# The owner's table: the rows in one session, ANALYZE in another, so that every counter is N.
psql -X -q -v ON_ERROR_STOP=1 -d $DB >/dev/null <<SQL
SET client_min_messages = warning;
CREATE TABLE visits (ward int NOT NULL, kind text NOT NULL);
CREATE INDEX visits_ward ON visits (ward);
CREATE STATISTICS visits_stats ON ward, kind FROM visits;
INSERT INTO visits SELECT i % 10, (ARRAY['a', 'b', 'c'])[1 + i % 3] FROM generate_series(1, $N) i;
SELECT dp_protect('visits', epsilon => 100);
SELECT dp_declare('visits', 'ward', lower => 0, upper => 9, bins => 10);
SELECT dp_declare('visits', 'kind', categories => ARRAY['a', 'b', 'c']);
CREATE SCHEMA $ANALYST AUTHORIZATION $ANALYST;
SQL
q $DB "ANALYZE visits" >/dev/null

# as the analyst: its output and psql's status; stderr joins stdout
as_analyst() { psql -X -qAt -v ON_ERROR_STOP=1 -U $ANALYST -d "${2:-$DB}" -c "$1" 2>&1; }
# refused: psql fails with "permission denied"
refused() {
	local out
	out=$(as_analyst "$1" "${3:-$DB}")
	local rc=$?
	[ $rc -ne 0 ] && grep -q 'permission denied' <<<"$out"
	ok $? "$2 is refused to the analyst${3:+ in $3} (got '$(head -n 1 <<<"$out")')"
}
# the analyst's transaction: a release, then the rows its scan read
XACT="BEGIN; SELECT count(*) FROM dp_marginal('visits', ARRAY['ward'], 0.01);
	SELECT seq_tup_read FROM pg_stat_xact_all_tables WHERE relid = 'visits'::regclass; COMMIT;"

# ---- before: the analyst reads the count (or the size) through each
is "$(as_analyst "SELECT n_tup_ins FROM pg_stat_all_tables WHERE relname = 'visits'")" $N \
	"before: pg_stat_all_tables.n_tup_ins is the row count"
is "$(as_analyst "SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'visits'")" $N \
	"before: pg_stat_user_tables.n_live_tup is the row count"
is "$(as_analyst "SELECT pg_stat_get_live_tuples('visits'::regclass)")" $N \
	"before: pg_stat_get_live_tuples is the row count"
is "$(as_analyst "SELECT pg_stat_get_tuples_inserted('visits'::regclass)")" $N \
	"before: pg_stat_get_tuples_inserted is the row count"
is "$(as_analyst "SELECT reltuples FROM pg_class WHERE relname = 'visits'")" $N \
	"before: pg_class.reltuples is the row count"
is "$(as_analyst "SELECT reltuples FROM pg_class WHERE relname = 'visits_ward'")" $N \
	"before: the index's pg_class.reltuples is the row count"
is "$(as_analyst "SELECT relpages * 8192 = pg_relation_size('visits') AND relpages > 0 FROM pg_class WHERE relname = 'visits'")" t \
	"before: pg_class.relpages and pg_relation_size give the pages"
is "$(as_analyst "$XACT" | tail -n 1)" $N \
	"before: after its own release, pg_stat_xact_all_tables.seq_tup_read is the row count"
is "$(as_analyst "SELECT tup_inserted >= $N FROM pg_stat_database WHERE datname = '$DB'" $OTHER)" t \
	"before: pg_stat_database in another database shows the rows inserted"
is "$(as_analyst "SELECT heap_blks_hit + heap_blks_read > 0 FROM pg_statio_all_tables WHERE relname = 'visits'")" t \
	"before: pg_statio_all_tables shows the blocks read"
ok $([[ $(as_analyst "SELECT pg_current_wal_lsn()") =~ ^[0-9A-F]+/[0-9A-F]+$ ]]; echo $?) "before: pg_current_wal_lsn is readable"
# the planner's estimate, printed before the refusal (a session that has not loaded dpsynth)
PLAN="SET client_min_messages = log; SET debug_print_plan = on; EXPLAIN SELECT * FROM visits"
out=$(as_analyst "$PLAN")
ok $(grep -q ":plan_rows $N" <<<"$out"; echo $?) "before: with debug_print_plan, EXPLAIN of a query on the table prints its row estimate"

# ---- already closed without the hardening (PostgreSQL 15)
is "$(as_analyst "SELECT count(*) FROM pg_stats WHERE tablename = 'visits'")" 0 "pg_stats shows the analyst no column of the table"
is "$(as_analyst "SELECT count(*) FROM pg_stats_ext WHERE tablename = 'visits'")" 0 "pg_stats_ext shows the analyst nothing of the table"
is "$(q $DB "SELECT count(*) > 0 FROM pg_stats_ext WHERE tablename = 'visits'")" t "(the owner sees its extended statistics)"
refused "SELECT count(*) FROM pg_statistic" "pg_statistic"
refused "SELECT count(*) FROM pg_statistic_ext_data" "pg_statistic_ext_data"
refused "EXPLAIN SELECT * FROM visits" "EXPLAIN of a query on the table"

# ---- the README's block, exactly, in both databases
block=$(awk '/<!-- hardening:begin -->/{f=1; next} /<!-- hardening:end -->/{f=0} f' "$TOP/README.md" |
	awk '/^```/{n++; next} n==1')
ok $([ -n "$block" ] && grep -q 'REVOKE' <<<"$block"; echo $?) "README.md holds the hardening block between its markers"
for db in $DB $OTHER; do
	out=$(echo "$block" | psql -X -q -v ON_ERROR_STOP=1 -d $db 2>&1)
	ok $? "the hardening block runs in $db${out:+ ($out)}"
done

# ---- after: nowhere
refused "SELECT n_tup_ins FROM pg_stat_all_tables WHERE relname = 'visits'" "pg_stat_all_tables"
refused "SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'visits'" "pg_stat_user_tables"
refused "SELECT n_live_tup FROM pg_stat_sys_tables" "pg_stat_sys_tables"
refused "SELECT n_tup_ins FROM pg_stat_xact_user_tables" "pg_stat_xact_user_tables"
refused "SELECT heap_blks_hit FROM pg_statio_all_tables" "pg_statio_all_tables"
refused "SELECT heap_blks_hit FROM pg_statio_user_tables" "pg_statio_user_tables"
refused "SELECT idx_tup_read FROM pg_stat_all_indexes" "pg_stat_all_indexes"
refused "SELECT idx_blks_hit FROM pg_statio_all_indexes" "pg_statio_all_indexes"
refused "SELECT tup_inserted FROM pg_stat_database" "pg_stat_database"
refused "SELECT tup_inserted FROM pg_stat_database" "pg_stat_database" $OTHER
refused "SELECT pg_database_size('$DB')" "pg_database_size" $OTHER
refused "SELECT wal_records FROM pg_stat_wal" "pg_stat_wal"
refused "SELECT count(*) FROM pg_stat_activity" "pg_stat_activity"
for f in live_tuples dead_tuples tuples_inserted tuples_deleted tuples_returned ins_since_vacuum \
	xact_tuples_inserted xact_tuples_returned blocks_fetched; do
	refused "SELECT pg_stat_get_$f('visits'::regclass)" "pg_stat_get_$f"
done
refused "SELECT pg_stat_get_db_tuples_inserted(oid) FROM pg_database WHERE datname = '$DB'" "pg_stat_get_db_tuples_inserted"
refused "SELECT reltuples FROM pg_class WHERE relname = 'visits'" "pg_class.reltuples"
refused "SELECT relpages FROM pg_class WHERE relname = 'visits'" "pg_class.relpages"
refused "SELECT relallvisible FROM pg_class WHERE relname = 'visits'" "pg_class.relallvisible"
refused "SELECT * FROM pg_class WHERE relname = 'visits'" "SELECT * FROM pg_class"
for f in "pg_relation_size('visits')" "pg_relation_size('visits', 'main')" "pg_table_size('visits')" \
	"pg_indexes_size('visits')" "pg_total_relation_size('visits')" "pg_database_size('$DB')" \
	"pg_tablespace_size('pg_default')" "pg_current_wal_lsn()" "pg_current_wal_insert_lsn()" \
	"pg_current_wal_flush_lsn()" "(pg_control_checkpoint()).redo_lsn"; do
	refused "SELECT $f" "$f"
done
refused "$XACT" "pg_stat_xact_all_tables after the analyst's own release"
out=$(as_analyst "$PLAN")
ok $([ -n "$out" ] && ! grep -q 'LOG:\|plan_rows' <<<"$out"; echo $?) "debug_print_plan prints the analyst no plan before the refusal (got '$(head -n 1 <<<"$out")')"
out=$(as_analyst "SET client_min_messages = log; SET debug_print_plan = on; SELECT count(*) FROM dp_marginal('visits', ARRAY['ward'], 0.01)")
ok $([ "$out" = 10 ]; echo $?) "nor the plans of a release's own statements (got '$(head -n 1 <<<"$out")')"
# every statistics view and function of this server's catalog, not only those named above
is "$(as_analyst "SELECT count(*) FROM pg_class WHERE relnamespace = 'pg_catalog'::regnamespace AND relkind = 'v'
	AND (relname LIKE 'pg\_stat\_%' OR relname LIKE 'pg\_statio\_%') AND has_table_privilege(oid, 'SELECT')")" 0 \
	"no pg_stat_* or pg_statio_* view is left to the analyst"
is "$(as_analyst "SELECT count(*) FROM pg_proc WHERE pronamespace = 'pg_catalog'::regnamespace
	AND proname LIKE 'pg\_stat\_get\_%' AND has_function_privilege(oid, 'EXECUTE')")" 0 \
	"no pg_stat_get_* function is left to the analyst"
is "$(as_analyst "SELECT count(*) FROM pg_stats WHERE tablename = 'visits'")" 0 "pg_stats still shows the analyst nothing"

# ---- what still works for the analyst
is "$(as_analyst "SELECT relname || ' ' || relkind::text FROM pg_class WHERE oid = 'visits'::regclass")" "visits r" \
	"the analyst reads pg_class's other columns"
dv=$(psql -X -q -U $ANALYST -d $DB -c '\d visits' 2>&1)
dv_rc=$?
ok $([ $dv_rc -eq 0 ] && grep -q 'ward' <<<"$dv"; echo $?) "psql's \\d works for the analyst"
is "$(as_analyst "SELECT count(*) FROM dp_marginal('visits', ARRAY['ward', 'kind'], 0.5)")" 40 \
	"dp_marginal releases all 40 cells (10 wards, 3 kinds and other) to the analyst"
out=$(as_analyst "SELECT rows_written > 0 FROM dp_synthesize('visits', epsilon => 1, target => '$ANALYST.copy')")
is "$out" t "dp_synthesize writes a copy for the analyst"
is "$(as_analyst "SELECT count(*) > 0 FROM $ANALYST.copy")" t "the analyst reads its copy"
is "$(as_analyst "SELECT rho_spent > 0 FROM dp_budget WHERE table_name = 'visits'::regclass")" t "the analyst reads dp_budget"
is "$(as_analyst "SELECT count(*) FROM dp_ledger WHERE status = 'completed'")" 4 "the analyst reads its 4 ledger rows"

# ---- monitoring keeps the statistics (pg_monitor includes pg_read_all_stats)
is "$(psql -X -qAt -U $MONITOR -d $DB -c "SELECT n_tup_ins FROM pg_stat_all_tables WHERE relname = 'visits'")" $N \
	"a member of pg_monitor still reads pg_stat_all_tables"
is "$(psql -X -qAt -U $MONITOR -d $DB -c "SELECT reltuples FROM pg_class WHERE relname = 'visits'")" $N \
	"a member of pg_monitor still reads pg_class.reltuples"
out=$(psql -X -qAt -U $MONITOR -d $DB -c "$PLAN" 2>&1)
ok $([ -n "$out" ] && ! grep -q 'LOG:\|plan_rows' <<<"$out"; echo $?) "a member of pg_monitor does not read the planner's estimates (they are pg_statistic's, not the statistics views')"

cleanup
done_testing
