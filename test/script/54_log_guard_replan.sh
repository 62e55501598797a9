#!/usr/bin/env bash
# The log guard's verdict of a role (may it read LOG messages: a superuser) is taken at each
# statement's parse analysis.  Through the extended protocol a prepared statement is planned again
# at each execution (a custom plan) without a new parse analysis, so a superuser demoted while its
# session kept a prepared statement went on reading debug_print_plan's plans, the planner's
# estimates of tables it may no longer read, under the old verdict (last review's N3).  The verdict
# is now also taken when a statement is planned.  pgbench -M prepared is the extended-protocol client.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_log_replan
fresh_db $DB
ROLE=regress_log_replan
PGBENCH=$PGBIN/pgbench
[ -x "$PGBENCH" ] || PGBENCH=$(command -v pgbench)
psql -X -q -d $DB >/dev/null 2>&1 <<SQL
DROP ROLE IF EXISTS $ROLE;
CREATE ROLE $ROLE LOGIN SUPERUSER;
ALTER ROLE $ROLE IN DATABASE $DB SET session_preload_libraries = 'dpsynth';
CREATE TABLE t (a int4);
INSERT INTO t SELECT g FROM generate_series(1, 1000) g;
ANALYZE t;
GRANT SELECT ON t TO $ROLE;
SQL
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT
printf 'SELECT count(*) FROM t WHERE a > :x;\n\\sleep 2500 ms\n' >"$TMPD/script.sql"

# run ROUNDS: pgbench prepares the statement once, then executes it ROUNDS times (a plan each
# time: a custom plan for the parameter), 2.5 s apart; prints the plans its client received
run() {
	PGOPTIONS="-c client_min_messages=log -c debug_print_plan=on" \
		"$PGBENCH" -n -M prepared -t "$1" -D x=10 -U $ROLE -f "$TMPD/script.sql" $DB >"$TMPD/out" 2>&1
	grep -c "LOG:  plan:" "$TMPD/out"
}
is "$(run 2)" 2 "a superuser's prepared statement prints its plan at each execution"

# demoted while its first execution sleeps: the later executions print nothing
PGOPTIONS="-c client_min_messages=log -c debug_print_plan=on" \
	"$PGBENCH" -n -M prepared -t 3 -D x=10 -U $ROLE -f "$TMPD/script.sql" $DB >"$TMPD/out" 2>&1 &
bg=$!
for _ in $(seq 1 100); do
	[ "$(q $DB "SELECT count(*) FROM pg_stat_activity WHERE usename = '$ROLE' AND query LIKE 'SELECT count(*) FROM t%'")" = 1 ] && break
	sleep 0.05
done
sleep 0.3
q $DB "ALTER ROLE $ROLE NOSUPERUSER"
wait $bg
ok $? "pgbench ran (its output: $(grep -v '^LOG\|^DETAIL\|^ ' "$TMPD/out" | head -n 3 | tr '\n' ' '))"
is "$(grep -c "LOG:  plan:" "$TMPD/out")" 1 "after the demotion, its prepared statement's plans reach it no more"
q $DB "SELECT 1 FROM pg_stat_activity" >/dev/null
psql -X -q -d $DB -c "DROP OWNED BY $ROLE" -c "DROP ROLE $ROLE" >/dev/null 2>&1
done_testing
