#!/usr/bin/env bash
# A table leaving a protected tree while a release of the tree is in flight (review of
# 2026-11-30, finding 2): DETACH PARTITION and NO INHERIT copy the tree's spend to the leaving
# table's new budget.  An analyst's open transaction that released from the tree holds it; the
# owner's DETACH waits for that transaction, during which the analyst releases again, each
# release reading the leaving table's rows.  Every one of those charges must be on the leaving
# table's budget: its spend equals the tree's once the DETACH is done (before the fix the copy
# was made when the DETACH began, before it waited, and the later releases were never counted).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_detach_race
fresh_db $DB
ensure_analyst $DB regress_detach_race_analyst
psql -X -q -d $DB >/dev/null 2>&1 <<'SQL'
CREATE TABLE p (id int4, x int4) PARTITION BY RANGE (id);
CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (0) TO (100);
CREATE TABLE p2 PARTITION OF p FOR VALUES FROM (100) TO (200);
INSERT INTO p SELECT g, g % 10 FROM generate_series(0, 199) g;
SELECT dp_protect('p', epsilon => 1000);
SELECT dp_declare('p', 'x', lower => 0, upper => 9, bins => 10);
CREATE TABLE ip (id int4, x int4);
CREATE TABLE ic () INHERITS (ip);
INSERT INTO ic SELECT g, g % 10 FROM generate_series(0, 99) g;
INSERT INTO ip SELECT g, g % 10 FROM generate_series(100, 199) g;
SELECT dp_protect('ip', epsilon => 1000);
SELECT dp_declare('ip', 'x', lower => 0, upper => 9, bins => 10);
SQL

TMPD=$(mktemp -d)
owner=""
cleanup() { [ -n "$owner" ] && kill "$owner" 2>/dev/null; rm -rf "$TMPD"; }
trap cleanup EXIT
# the analyst's session: a psql on a pair of FIFOs, answering one statement at a time
session A $DB -U regress_detach_race_analyst
aq() { sq A "$1" 60; }

race() {	# $1: tree, $2: leaving table, $3: the owner's statement
	aq "BEGIN" >/dev/null
	aq "SELECT sum(noisy_count) > 0 FROM dp_marginal('$1', ARRAY['x'], 20)" >/dev/null
	psql -X -qAt -d $DB -c "$3" >"$TMPD/owner.out" 2>&1 &
	owner=$!
	wait_lock $DB "ALTER TABLE"
	ok $? "$3 waits for the analyst's open transaction"
	# two more releases in the open transaction, each reading the leaving table's rows
	aq "SELECT sum(noisy_count) > 150 FROM dp_marginal('$1', ARRAY['x'], 20)" >"$TMPD/r2"
	aq "SELECT sum(noisy_count) > 150 FROM dp_marginal('$1', ARRAY['x'], 20)" >>"$TMPD/r2"
	is "$(tr '\n' ' ' <"$TMPD/r2")" "t t " "the releases made while it waits read the whole tree"
	aq "COMMIT" >/dev/null
	wait $owner
	ok $? "$3 ends once the transaction does"
	owner=""
	is "$(q $DB "SELECT c.rho_spent = t.rho_spent AND c.delta_spent = t.delta_spent FROM dpsynth.budgets c, dpsynth.budgets t WHERE c.relid = '$2'::regclass AND t.relid = '$1'::regclass")" t \
		"the leaving table's budget holds every release that read its rows"
	is "$(q $DB "SELECT rho_spent = (SELECT sum(rho) FROM dpsynth.ledger l WHERE l.budget_id = b.id AND status <> 'refused') FROM dpsynth.budgets b WHERE relid = '$2'::regclass")" t \
		"and its ledger adds up to its spend"
	is "$(q $DB "SELECT round(rho_spent / (SELECT rho FROM dpsynth.ledger WHERE relid = '$1'::regclass AND function = 'dp_marginal' LIMIT 1)) FROM dpsynth.budgets WHERE relid = '$2'::regclass")" 3 \
		"three releases counted on it"
}
race p p1 "ALTER TABLE p DETACH PARTITION p1"
race ip ic "ALTER TABLE ic NO INHERIT ip"
done_testing
