#!/usr/bin/env bash
# The one-protection-per-tree guard's catalog walks (dpsynth._tree_conflict, _protected_relatives)
# are not JIT-compiled: their recursive unions over pg_inherits are estimated far above what they
# read, and at the default JIT costs a database with one partition (a row in pg_inherits) had
# every dp_protect, dp_declare and CREATE TABLE ... PARTITION OF compile a plan that runs in
# milliseconds (most of a second of CPU per call).  auto_explain logs the plans of every nested
# statement of the calls, at the default JIT costs, into the session; none may show a JIT
# section.  A query planned above jit_above_cost in the same session must show one (else JIT is
# not there and the check says nothing).  The guard still refuses a second protection in a tree.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_guard_jit
fresh_db $DB >/dev/null
if [ "$(q $DB "SELECT pg_jit_available()")" != t ]; then
	ok 0 "JIT # skip: no JIT provider in this PostgreSQL"
	psql -X -q -d postgres -c "DROP DATABASE $DB" >/dev/null
	done_testing
	exit
fi
psql -X -q -v ON_ERROR_STOP=1 -d $DB >/dev/null <<'SQL'
CREATE TABLE parted (id int NOT NULL, a int NOT NULL) PARTITION BY RANGE (id);
CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (100);
CREATE TABLE t (id int NOT NULL, a int NOT NULL);
SQL
is "$(q $DB "SELECT count(*) FROM pg_inherits")" 1 "pg_inherits holds the one partition"

# log DB SQL: the session's output with the plan of every statement, nested ones included, at the
# default JIT costs
log() {
	psql -X -q -d "$1" 2>&1 <<SQL
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_nested_statements = on;
SET auto_explain.log_analyze = on;
SET auto_explain.log_level = notice;
RESET jit_above_cost; RESET jit_inline_above_cost; RESET jit_optimize_above_cost;
SET jit = on;
$2
SQL
}
out=$(log $DB "SET jit_above_cost = 0; SELECT sum(i) FROM generate_series(1, 10) i;")
grep -q "^JIT:" <<<"$out"
ok $? "a statement planned above jit_above_cost shows a JIT section in the log"

out=$(log $DB "SELECT dp_protect('t', epsilon => 10);
SELECT dp_declare('t', 'id', lower => 0, upper => 100, bins => 10);
SELECT dp_declare('t', 'a', lower => 0, upper => 100, bins => 10);
SELECT dp_protect('parted', epsilon => 10);
CREATE TABLE parted_2 PARTITION OF parted FOR VALUES FROM (100) TO (200);
SELECT dp_undeclare('t', 'a');")
[ "$(echo "$out" | grep -c "^Query Text:.*WITH RECURSIVE")" -ge 2 ]
ok $? "the calls' nested plans are logged, the catalog walks' among them"
is "$(echo "$out" | grep -c "^JIT:")" 0 "no nested statement of dp_protect, dp_declare, dp_undeclare or CREATE TABLE ... PARTITION OF is JIT-compiled"
echo "$out" | grep -B3 -A3 "^JIT:" | sed -n 1,20p | sed 's/^/# /'
is "$(q $DB "SELECT string_agg(relid::regclass::text, ' ' ORDER BY relid::regclass::text) FROM dpsynth.budgets")" \
	"parted t" "t and parted are protected"
out=$(psql -X -qAt -v VERBOSITY=verbose -d $DB -c "SELECT dp_protect('parted_1', epsilon => 10)" 2>&1)
grep -q "ERROR:  55000: table public.parted_1 shares rows with protected table public.parted" <<<"$out"
ok $? "the guard still refuses protecting a partition of a protected table (55000)"
psql -X -q -d postgres -c "DROP DATABASE $DB" >/dev/null
done_testing
