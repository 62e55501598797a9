#!/usr/bin/env bash
# The one scan of discovery and encoding (src/synth_onescan.c) encodes the columns that have a
# domain under the call's load of them made before the charge, and every later step reads them
# from the load discovery's finish makes.  An enum's label added in between (ALTER TYPE ... ADD
# VALUE, which the domain lock does not block) shifts the codes after it.  Every step of the call
# reads the columns that had a domain as it loaded them before the charge (discover.c,
# dpsynth_discover_finish): the one scan's codes, the plan and the output's labels agree.  Before,
# the one scan's rows were encoded under the old labels and read under the new ones, and with
# two scans the encoding scan's codes under the new labels were decoded with the output's labels
# prepared from the old (a code past them: invalid enum values written to the copy).
# Deterministic: the owner's session holds the table's budget row, so the call's charge waits
# (after the call loaded its columns, before it reads a row) while the label is added.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_one_scan_enum
fresh_db $DB
psql -X -q -d $DB >/dev/null 2>&1 <<'SQL'
CREATE TYPE lvl AS ENUM ('a', 'b', 'c');
CREATE TYPE lvl2 AS ENUM ('a', 'b', 'c');
CREATE TABLE t (e lvl NOT NULL, n int4);
INSERT INTO t SELECT 'c', g % 50 FROM generate_series(1, 20000) g;
SELECT dp_protect('t', epsilon => 1000);
CREATE TABLE t2 (e lvl2 NOT NULL, n int4);
INSERT INTO t2 SELECT 'c', g % 50 FROM generate_series(1, 20000) g;
SELECT dp_protect('t2', epsilon => 1000);
CREATE TYPE lvl3 AS ENUM ('a', 'b', 'c');
CREATE TABLE t3 (e lvl3 NOT NULL, n int4);
INSERT INTO t3 SELECT 'c', g % 50 FROM generate_series(1, 20000) g;
SELECT dp_protect('t3', epsilon => 1000);
SQL

TMPD=$(mktemp -d)
client=""
cleanup() { [ -n "$client" ] && kill "$client" 2>/dev/null; rm -rf "$TMPD"; }
trap cleanup EXIT
session O $DB
oq() { sq O "$1" 60; }

# wait_charge: waits (up to 30 s) until a backend of DB waits for a lock (the charging worker)
wait_charge() {
	for _ in $(seq 1 600); do
		[ "$(q $DB "SELECT count(*) FROM pg_stat_activity WHERE datname = '$DB' AND wait_event_type = 'Lock'")" -ge 1 ] && return 0
		sleep 0.05
	done
	return 1
}

# race TABLE TYPE SCANS: n declared with bounds only (learned in the call: one scan), the call's
# charge held while 'aa' is added before 'b' (c's code goes from 2 to 3)
race() {
	q $DB "SELECT dp_declare('$1', 'n', lower => 0, upper => 49)" >/dev/null
	oq "BEGIN" >/dev/null
	oq "SELECT 1 FROM dpsynth.budgets WHERE relid = '$1'::regclass FOR UPDATE" >/dev/null
	psql -X -qAt -d $DB -c "SET dpsynth.discovery_scans = '$3'" \
		-c "SELECT rows_written FROM dp_synthesize('$1', 10, target => '${1}_s')" >"$TMPD/call.out" 2>&1 &
	client=$!
	wait_charge
	ok $? "$3: the call's charge waits for the owner's lock on the budget row"
	oq "ALTER TYPE $2 ADD VALUE 'aa' BEFORE 'b'" >/dev/null
	oq "COMMIT" >/dev/null
	wait $client
	ok $? "$3: the call ends once the label is added ($(tr '\n' ' ' <"$TMPD/call.out"))"
	client=""
	is "$(q $DB "SELECT status FROM dpsynth.ledger WHERE relid = '$1'::regclass ORDER BY id DESC LIMIT 1")" completed \
		"$3: the call completes"
	# every row is 'c' (epsilon 10 on 20,000 rows): the synthetic rows are too, not the shifted code's 'b'
	is "$(q $DB "SELECT count(*) FILTER (WHERE e = 'c') > 0.9 * count(*) FROM ${1}_s")" t \
		"$3: the synthetic rows have the rows' label"
}
# 'check': the one scan's rows are compared with the encoding scan's under the columns the later
# steps read (an error if they differ); 'one' and 'two': what the synthetic rows say
race t lvl check
race t2 lvl2 one
race t3 lvl3 two
done_testing
