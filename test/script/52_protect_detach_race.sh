#!/usr/bin/env bash
# A protection committed while a table leaves the tree (review of 2026-11-30, nit N1): DETACH
# PARTITION and NO INHERIT hand the leaving table the tree's budget only where the tree is
# protected, and that was checked before any lock, under the statement's snapshot.  A dp_protect
# of the tree committed between the check and the DETACH's own locks (or before a REPEATABLE READ
# transaction's snapshot saw it) let the table leave without the budget its rows had been charged
# on.  Now dp_protect locks the tree (SHARE UPDATE EXCLUSIVE) and the DETACH takes that lock on the
# parent before it checks, against the budgets as committed.  And a DETACH ... CONCURRENTLY begun
# before the protection, whose first transaction committed, no longer waits for that lock: while
# it is pending, dp_protect is refused (55000).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_protect_race
fresh_db $DB
psql -X -q -d $DB >/dev/null 2>&1 <<'SQL'
CREATE TABLE p (id int4, x int4) PARTITION BY RANGE (id);
CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (0) TO (100);
CREATE TABLE p2 PARTITION OF p FOR VALUES FROM (100) TO (200);
CREATE TABLE ip (id int4, x int4);
CREATE TABLE ic () INHERITS (ip);
CREATE TABLE rr (id int4, x int4) PARTITION BY RANGE (id);
CREATE TABLE rr1 PARTITION OF rr FOR VALUES FROM (0) TO (100);
CREATE TABLE rr2 PARTITION OF rr FOR VALUES FROM (100) TO (200);
CREATE TABLE d (id int4, x int4) PARTITION BY RANGE (id);
CREATE TABLE d1 PARTITION OF d FOR VALUES FROM (0) TO (100);
CREATE TABLE d2 PARTITION OF d FOR VALUES FROM (100) TO (200);
CREATE TABLE m (id int4, x int4) PARTITION BY RANGE (id);
CREATE TABLE m1 PARTITION OF m FOR VALUES FROM (0) TO (100);
CREATE TABLE m2 PARTITION OF m FOR VALUES FROM (100) TO (200);
CREATE TABLE n (id int4, x int4) PARTITION BY RANGE (id);
CREATE TABLE n1 PARTITION OF n FOR VALUES FROM (0) TO (100);
CREATE TABLE cc (id int4, x int4) PARTITION BY RANGE (id);
CREATE TABLE cc1 PARTITION OF cc FOR VALUES FROM (0) TO (100);
CREATE TABLE cc2 PARTITION OF cc FOR VALUES FROM (100) TO (200);
CREATE TABLE cf (id int4, x int4) PARTITION BY RANGE (id);
CREATE TABLE cf1 PARTITION OF cf FOR VALUES FROM (0) TO (100);
CREATE TABLE cf2 PARTITION OF cf FOR VALUES FROM (100) TO (200);
SELECT dp_protect('n', epsilon => 5);
DO $$ BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'regress_protect_admin') THEN
		CREATE ROLE regress_protect_admin LOGIN IN ROLE dpsynth_admin;
	END IF;
END $$;
GRANT SELECT ON m TO regress_protect_admin;
SQL
ensure_analyst $DB regress_protect_race_analyst

TMPD=$(mktemp -d)
bg=""
cleanup() { [ -n "$bg" ] && kill "$bg" 2>/dev/null; rm -rf "$TMPD"; }
trap cleanup EXIT
session O $DB -v VERBOSITY=verbose
budget() { q $DB "SELECT coalesce((SELECT epsilon::text FROM dpsynth.budgets WHERE relid = '$1'::regclass), 'none')"; }

# dp_protect first, uncommitted, in session $4 (O: the owner's); the table leaves while it is open
protect_then_leave() {	# $1: tree, $2: leaving table, $3: the statement, $4: the protecting session
	sq "$4" "BEGIN" >/dev/null
	sq "$4" "SELECT dp_protect('$1', epsilon => 5)" >/dev/null
	psql -X -qAt -d $DB -c "$3" >"$TMPD/bg.out" 2>&1 &
	bg=$!
	wait_lock $DB "ALTER TABLE"
	ok $? "$3 waits for the open dp_protect ($4)"
	sq "$4" "COMMIT" >/dev/null
	wait $bg
	ok $? "$3 ends once it commits"
	bg=""
	is "$(budget "$2")" 5 "the leaving table keeps the budget its tree was given"
	grep -q "keeps its protection" "$TMPD/bg.out"
	ok $? "and says so"
}
protect_then_leave p p1 "ALTER TABLE p DETACH PARTITION p1" O
protect_then_leave ip ic "ALTER TABLE ic NO INHERIT ip" O
# the same with a member of dpsynth_admin who may read the table protecting it (not its owner)
session M $DB -U regress_protect_admin
protect_then_leave m m1 "ALTER TABLE m DETACH PARTITION m1" M

# a role that does not own the tree is refused by PostgreSQL, and takes no lock on it first
# (else its DETACH would wait behind any reader of the tree, and every later reader behind it)
sq O "BEGIN" >/dev/null
sq O "SELECT count(*) FROM n" >/dev/null
out=$(psql -X -qAt -U regress_protect_race_analyst -d $DB -c "SET statement_timeout = '10s'" \
	-c "ALTER TABLE n DETACH PARTITION n1" 2>&1)
sq O "COMMIT" >/dev/null
echo "$out" | grep -q "must be owner"
ok $? "another role's DETACH of a protected tree is refused at once, without waiting for its readers (got '$out')"

# the table leaves first, uncommitted; dp_protect waits for it and protects what stays
sq O "BEGIN" >/dev/null
sq O "ALTER TABLE d DETACH PARTITION d1" >/dev/null
psql -X -qAt -d $DB -c "SELECT dp_protect('d', epsilon => 5)" >"$TMPD/bg.out" 2>&1 &
bg=$!
wait_lock $DB "SELECT dp_protect"
ok $? "dp_protect waits for the open DETACH"
sq O "COMMIT" >/dev/null
wait $bg
ok $? "and ends once it commits"
bg=""
is "$(budget d)/$(budget d1)" "5/none" "the tree is protected without the table that left before"

# a REPEATABLE READ transaction whose snapshot predates the protection
sq O "BEGIN ISOLATION LEVEL REPEATABLE READ" >/dev/null
sq O "SELECT count(*) FROM rr" >/dev/null
q $DB "SELECT dp_protect('rr', epsilon => 5)" >/dev/null 2>&1
out=$(sq O "ALTER TABLE rr DETACH PARTITION rr1; ROLLBACK" | head -n 1)
echo "$out" | grep -q "ERROR:  40001: could not serialize access to table \"rr\""
ok $? "a snapshot that does not see the protection refuses the detach (40001) (got '$out')"
is "$(budget rr1)" none "nothing left the tree"
sq O "ALTER TABLE rr DETACH PARTITION rr1" >/dev/null
is "$(budget rr1)" 5 "a retry detaches it with the tree's budget"

# a DETACH ... CONCURRENTLY of a tree not yet protected, its first transaction committed, waiting
# for an older snapshot: dp_protect is refused until it has finished (it would end without the
# tree's budget)
session R $DB
sq R "BEGIN ISOLATION LEVEL REPEATABLE READ" >/dev/null
sq R "SELECT count(*) FROM cc" >/dev/null
psql -X -qAt -d $DB -c "ALTER TABLE cc DETACH PARTITION cc1 CONCURRENTLY" >"$TMPD/bg.out" 2>&1 &
bg=$!
wait_lock $DB "ALTER TABLE cc"
ok $? "the concurrent detach waits for the older snapshot"
out=$(psql -X -qAt -v VERBOSITY=verbose -d $DB -c "SELECT dp_protect('cc', epsilon => 5)" 2>&1 | head -n 1)
echo "$out" | grep -q "ERROR:  55000: cannot protect table \"cc\" while partition \"cc1\" is being detached from it"
ok $? "dp_protect is refused while a partition is being detached (55000) (got '$out')"
is "$(budget cc)" none "and protects nothing"
sq R "COMMIT" >/dev/null
wait $bg
ok $? "the detach ends once the older snapshot is gone"
bg=""
q $DB "SELECT dp_protect('cc', epsilon => 5)" >/dev/null 2>&1
is "$(budget cc)/$(budget cc1)" "5/none" "then the tree is protected, without the table that left"

# one cancelled while it waited stays pending until FINALIZE: refused until then too
sq R "BEGIN ISOLATION LEVEL REPEATABLE READ" >/dev/null
sq R "SELECT count(*) FROM cf" >/dev/null
psql -X -qAt -d $DB -c "ALTER TABLE cf DETACH PARTITION cf1 CONCURRENTLY" >"$TMPD/bg.out" 2>&1 &
bg=$!
wait_lock $DB "ALTER TABLE cf"
q $DB "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE datname = '$DB' AND query LIKE 'ALTER TABLE cf%'" >/dev/null
wait $bg
bg=""
sq R "COMMIT" >/dev/null
is "$(q $DB "SELECT inhdetachpending FROM pg_inherits WHERE inhrelid = 'cf1'::regclass")" t "a cancelled concurrent detach leaves the partition pending"
out=$(psql -X -qAt -d $DB -c "SELECT dp_protect('cf', epsilon => 5)" 2>&1 | head -n 1)
echo "$out" | grep -q "is being detached"
ok $? "dp_protect is refused while it is pending (got '$out')"
q $DB "ALTER TABLE cf DETACH PARTITION cf1 FINALIZE" >/dev/null 2>&1
q $DB "SELECT dp_protect('cf', epsilon => 5)" >/dev/null 2>&1
is "$(budget cf)/$(budget cf1)" "5/none" "after FINALIZE the tree is protected without it"
done_testing
