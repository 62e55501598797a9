#!/usr/bin/env bash
# A broken or hostile shard (issue 36, findings 1 and 2; docs/DISTRIBUTED.md, "What a failure
# costs"): a protected partitioned table whose postgres_fdw partitions are on a second throwaway
# cluster, the shard, where each partition is broken or hostile in one way.  Every dp_marginal of
# an analyst on them must either be refused before the charge (budget unchanged, no ledger row)
# or fail after it with dpsynth's generic error (YD004, or a cancel's 57014) and spent == the
# ledger's sum; and a value planted in the shard's rows (SECRET-4417-PLANTED) must never be in
# anything the analyst receives: psql's whole output with VERBOSITY verbose and SHOW_CONTEXT
# always (message, detail, hint, context, NOTICEs), and the ledger and refusals the analyst reads.
# The coordinator's server log keeps the original errors, secret included, for the administrator.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_hostile
SHARD_PORT=${DPSYNTH_HOSTILE_PORT:-$((PGPORT + 1))}
SHARD_DIR=$TOP/tmp_cluster_hostile
SECRET=SECRET-4417-PLANTED
ANALYST=regress_hostile_analyst
COORD_LOG=${DPSYNTH_SERVER_LOG:-$PGHOST/server.log}

shard_stop() {
	second_cluster_stop "$SHARD_DIR"
}
trap shard_stop EXIT

# ---- the shard: a second throwaway cluster, Unix socket only (as in 13_distributed.sh)
second_cluster_start "$SHARD_DIR" "$SHARD_PORT"
ok $? "the shard cluster starts on port $SHARD_PORT"
shard() { psql -X -qAt -v ON_ERROR_STOP=1 -h "$SHARD_DIR" -p "$SHARD_PORT" -d "$1" -c "$2"; }
for d in $DB ${DB}_noext ${DB}_old ${DB}_fake; do
	psql -X -q -h "$SHARD_DIR" -p "$SHARD_PORT" -d postgres -c "CREATE DATABASE $d"
done

# the shard's database with dpsynth: one partition broken or hostile in each way
shard $DB "CREATE EXTENSION dpsynth;
	CREATE TABLE r_ok (id int, a int);
	INSERT INTO r_ok SELECT 1000 + i, i % 10 FROM generate_series(1, 200) i;
	-- a text column where the coordinator declares int, and where it declares date
	CREATE TABLE r_text (id int, a text);
	INSERT INTO r_text SELECT 1000 + i, (i % 10)::text FROM generate_series(1, 50) i;
	INSERT INTO r_text VALUES (1051, '$SECRET');
	CREATE TABLE r_date (id int, a text);
	INSERT INTO r_date SELECT 1000 + i, '2020-03-0' || (i % 9 + 1) FROM generate_series(1, 50) i;
	INSERT INTO r_date VALUES (1051, '$SECRET');
	-- a view whose column raises with a value of the row in message, detail and hint
	CREATE FUNCTION leak(v int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS \$\$
	BEGIN
		IF v = 7 THEN
			RAISE EXCEPTION '$SECRET row %', v USING DETAIL = 'detail $SECRET', HINT = 'hint $SECRET';
		END IF;
		RETURN v;
	END \$\$;
	CREATE VIEW r_raise AS SELECT id, leak(a) AS a FROM r_ok;
	-- the same with the SQLSTATE of a cancel, whose words a local cancel keeps
	CREATE FUNCTION leak57(v int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS \$\$
	BEGIN
		IF v = 7 THEN
			RAISE EXCEPTION 'canceling statement due to user request $SECRET row %', v
				USING ERRCODE = 'query_canceled', DETAIL = 'detail $SECRET';
		END IF;
		RETURN v;
	END \$\$;
	CREATE VIEW r_raise57 AS SELECT id, leak57(a) AS a FROM r_ok;
	-- a view that raises with the value while it is planned (a constant the planner folds), as a
	-- coordinator asking for remote estimates makes it do before any probe runs
	CREATE FUNCTION planleak() RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS \$\$
	BEGIN
		RAISE EXCEPTION 'planned $SECRET' USING DETAIL = 'detail $SECRET';
	END \$\$;
	CREATE VIEW r_planraise AS SELECT id, a FROM r_ok WHERE planleak();
	-- a view whose column speaks (a NOTICE with the value) and counts well
	CREATE FUNCTION chatty(v int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS \$\$
	BEGIN
		RAISE NOTICE '$SECRET row %', v;
		RETURN v;
	END \$\$;
	CREATE VIEW r_notice AS SELECT id, chatty(a) AS a FROM r_ok;
	-- a view slower than the caller's statement_timeout
	CREATE FUNCTION slow(v int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS \$\$
	BEGIN
		PERFORM pg_sleep(0.5);
		RETURN v;
	END \$\$;
	CREATE VIEW r_slow AS SELECT id, slow(a) AS a FROM r_ok WHERE id <= 1030;" >/dev/null
ok $? "the shard's tables and views"
# a shard without dpsynth, and one with dpsynth in another version (0.3.3)
shard ${DB}_noext "CREATE TABLE r_ok (id int, a int); INSERT INTO r_ok SELECT 1000 + i, i % 10 FROM generate_series(1, 200) i"
shard ${DB}_old "CREATE EXTENSION dpsynth VERSION '0.3.3';
	CREATE TABLE r_ok (id int, a int); INSERT INTO r_ok SELECT 1000 + i, i % 10 FROM generate_series(1, 200) i"
ok $? "a shard without dpsynth, and one with dpsynth 0.3.3"

# ---- the coordinator: one protected partitioned table per shard partition
fresh_db $DB >/dev/null
ensure_analyst $DB $ANALYST
# h_NAME (id, a int) with 1,000 local rows and a foreign partition on server SERVER over REMOTE
coordinator_table() {
	local name=$1 server=$2 remote=$3 coltype=${4:-int}
	psql -X -q -v ON_ERROR_STOP=1 -d $DB >/dev/null <<SQL
CREATE TABLE h_$name (id int NOT NULL, a $coltype) PARTITION BY RANGE (id);
CREATE TABLE h_${name}_local PARTITION OF h_$name FOR VALUES FROM (1) TO (1001);
CREATE FOREIGN TABLE h_${name}_shard PARTITION OF h_$name FOR VALUES FROM (1001) TO (MAXVALUE)
	SERVER $server OPTIONS (table_name '$remote');
INSERT INTO h_${name}_local SELECT i, $([ "$coltype" = date ] && echo "'2020-01-01'::date + i % 300" || echo "i % 10") FROM generate_series(1, 1000) i;
SELECT dp_protect('h_$name', epsilon => 100, discovery => false);
SELECT dp_declare('h_$name', 'a', $([ "$coltype" = date ] && echo "lower => '2020-01-01'::date, upper => '2020-12-31'::date, bins => 4" || echo "lower => 0, upper => 9, bins => 10"));
SQL
}
psql -X -q -v ON_ERROR_STOP=1 -d $DB >/dev/null <<SQL
CREATE EXTENSION postgres_fdw;
CREATE SERVER shard FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '$SHARD_DIR', port '$SHARD_PORT', dbname '$DB', extensions 'dpsynth');
CREATE SERVER noext FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '$SHARD_DIR', port '$SHARD_PORT', dbname '${DB}_noext', extensions 'dpsynth');
CREATE SERVER old FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '$SHARD_DIR', port '$SHARD_PORT', dbname '${DB}_old', extensions 'dpsynth');
CREATE SERVER fake FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '$SHARD_DIR', port '$SHARD_PORT', dbname '${DB}_fake', extensions 'dpsynth');
CREATE USER MAPPING FOR postgres SERVER shard OPTIONS (user 'postgres');
CREATE USER MAPPING FOR postgres SERVER noext OPTIONS (user 'postgres');
CREATE USER MAPPING FOR postgres SERVER old OPTIONS (user 'postgres');
CREATE USER MAPPING FOR postgres SERVER fake OPTIONS (user 'postgres');
SQL
for t in "ok shard r_ok" "text shard r_text" "date shard r_date date" "raise shard r_raise" "raise57 shard r_raise57" "planraise shard r_planraise" "notice shard r_notice" \
	"slow shard r_slow" "missing shard r_missing" "noext noext r_ok" "old old r_ok" "fake fake r_fake"; do
	# shellcheck disable=SC2086
	coordinator_table $t || echo "# coordinator_table $t failed"
done
ok $? "the coordinator's protected tables, one per shard partition"
q $DB "ALTER FOREIGN TABLE h_planraise_shard OPTIONS (ADD use_remote_estimate 'true')" >/dev/null

# A hostile shard's own dpsynth: no extension, a schema dpsynth with an aggregate that sends the
# state in fake_state (none over zero rows, so that the checks before the charge pass) and an
# identity that claims this version.  The states are made from true ones by the coordinator.
# (a's 10 bins and its NULL code: 11 cells, all counted, so the state is dense: 8 bytes a cell, last)
state11=$(q $DB "SELECT dpsynth._partial_counts(ARRAY[g % 11], '{11}') FROM generate_series(1, 110) g")
state5=$(q $DB "SELECT dpsynth._partial_counts(ARRAY[g % 5], '{5}') FROM generate_series(1, 100) g")
version=$(q $DB "SELECT extversion FROM pg_extension WHERE extname = 'dpsynth'")
shard ${DB}_fake "CREATE SCHEMA dpsynth;
	CREATE TABLE fake_state (s bytea);
	CREATE FUNCTION dpsynth.fake_add(s bytea, codes int4[], sizes int4[]) RETURNS bytea LANGUAGE sql IMMUTABLE
		AS 'SELECT s FROM public.fake_state';
	CREATE AGGREGATE dpsynth._partial_counts(int4[], int4[]) (SFUNC = dpsynth.fake_add, STYPE = bytea);
	CREATE FUNCTION dpsynth._shard_identity(bigint) RETURNS text LANGUAGE sql IMMUTABLE
		AS \$\$SELECT '$version 1 1'\$\$;
	CREATE TABLE r_fake (id int, a int); INSERT INTO r_fake SELECT 1000 + i, i % 10 FROM generate_series(1, 100) i" >/dev/null
ok $? "a hostile shard's fake dpsynth"

is "$(q $DB "SELECT has_function_privilege('public', 'dpsynth._shard_identity(bigint)', 'EXECUTE') OR has_function_privilege('$ANALYST', 'dpsynth._shard_identity(bigint)', 'EXECUTE')")" f \
	"neither PUBLIC nor an analyst may run dpsynth._shard_identity"

spent() { q $DB "SELECT rho_spent FROM dpsynth.budgets WHERE relid = 'h_$1'::regclass"; }
ledger_rows() { q $DB "SELECT count(*) FROM dpsynth.ledger WHERE relid = 'h_$1'::regclass AND status <> 'refused'"; }
# What the analyst receives from CALL (SETTINGS before it), everything: psql's output with every
# field of every message, then the ledger and refusals it reads.
as_analyst() {
	psql -X -q -U $ANALYST -d $DB 2>&1 <<SQL
\\set VERBOSITY verbose
\\set SHOW_CONTEXT always
SET client_min_messages = debug5;
$1
$2;
RESET statement_timeout;
SELECT * FROM dp_ledger;
SELECT * FROM dp_refusals;
SQL
}
# attempt NAME EXPECT SETTINGS DESCRIPTION [FUNCTION]: FUNCTION (dp_marginal on a, or
# dp_synthesize) on h_NAME; EXPECT is "refused:PATTERN" (refused before the charge with a message
# matching PATTERN), "charged:SQLSTATE" (charged, then the generic error), "cancelled:MESSAGE"
# (charged, then this server's own cancel or timeout with PostgreSQL's MESSAGE) or "ok".
attempt() {
	local name=$1 expect=$2 settings=$3 desc=$4 fn=${5:-dp_marginal} call s0 n0 out
	call="SELECT count(*) FROM dp_marginal('h_$name', ARRAY['a'], epsilon => 1)"
	[ "$fn" = dp_synthesize ] && call="SELECT rows_written FROM dp_synthesize('h_$name', epsilon => 1, target => '${ANALYST}_$name')"
	s0=$(spent "$name")
	n0=$(ledger_rows "$name")
	out=$(as_analyst "$settings" "$call")
	echo "$out" | grep -A3 '^ERROR' | grep -E '^(ERROR|DETAIL|HINT|CONTEXT)' | sed -n 1,4p | sed 's/^/# /'
	ok "$([[ "$out" != *SECRET* ]]; echo $?)" "$desc: the planted value is in nothing the analyst receives"
	case $expect in
	refused:*)
		ok "$([[ "$out" == *"ERROR:  "* ]] && grep -qE "${expect#refused:}" <<<"$out"; echo $?)" \
			"$desc: refused ($(grep -m1 '^ERROR' <<<"$out"))"
		is "$(spent "$name")|$(ledger_rows "$name")" "$s0|$n0" "$desc: before the charge (spent, ledger rows)"
		;;
	charged:*)
		ok "$([[ "$out" == *"ERROR:  ${expect#charged:}: $fn failed after its charge; nothing was released"* ]]; echo $?)" \
			"$desc: the generic error after the charge ($(grep -m1 '^ERROR' <<<"$out"))"
		is "$(ledger_rows "$name")|$(q $DB "SELECT status FROM dpsynth.ledger WHERE relid = 'h_$name'::regclass ORDER BY id DESC LIMIT 1")" \
			"$((n0 + 1))|charged" "$desc: charged once, nothing released (ledger rows, last status)"
		;;
	cancelled:*)
		ok "$([[ "$out" == *"ERROR:  57014: ${expect#cancelled:}"* ]]; echo $?)" \
			"$desc: this server's own cancel, in PostgreSQL's words ($(grep -m1 '^ERROR' <<<"$out"))"
		is "$(ledger_rows "$name")|$(q $DB "SELECT status FROM dpsynth.ledger WHERE relid = 'h_$name'::regclass ORDER BY id DESC LIMIT 1")" \
			"$((n0 + 1))|charged" "$desc: charged once, nothing released (ledger rows, last status)"
		;;
	ok)
		ok "$([[ "$out" != *"ERROR"* ]]; echo $?)" "$desc: released"
		;;
	esac
	is "$(q $DB "SELECT rho_spent = (SELECT coalesce(sum(rho), 0) FROM dpsynth.ledger l WHERE l.relid = b.relid AND status <> 'refused') FROM dpsynth.budgets b WHERE relid = 'h_$name'::regclass")" t \
		"$desc: spent == the ledger's sum"
}

log_mark=$(wc -l <"$COORD_LOG")
attempt ok ok "" "a sound shard"
# finding 1: errors that carry a value of the shard's rows
attempt text "refused:ERROR:  42804: .*does not have the column types" "" "int declared over a remote text column"
attempt date "refused:ERROR:  42804: .*does not have the column types" "" "date declared over a remote text column"
attempt raise charged:YD004 "" "a remote view that raises with a row's value"
attempt raise57 charged:57014 "" "a remote view that raises with a row's value and a cancel's SQLSTATE"
attempt planraise "refused:ERROR:  42804: " "" "a remote view that raises while planned for a remote estimate"
attempt notice ok "" "a remote view that sends a NOTICE with a row's value"
# a PL/pgSQL handler of the analyst's reads every field of the error, and its transaction goes on
out=$(psql -X -q -U $ANALYST -d $DB 2>&1 <<'SQL'
\set VERBOSITY verbose
BEGIN;
DO $$
DECLARE m text; d text; h text; c text; st text;
BEGIN
	PERFORM count(*) FROM dp_marginal('h_raise', ARRAY['a'], epsilon => 1);
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT,
		c = PG_EXCEPTION_CONTEXT, st = RETURNED_SQLSTATE;
	RAISE NOTICE 'caught [%] % | % | % | %', st, m, d, h, c;
END $$;
SELECT 'then ' || count(*) || ' ledger rows' FROM dp_ledger;
COMMIT;
SQL
)
echo "$out" | grep -m1 caught | cut -c1-200 | sed 's/^/# /'
ok "$([[ "$out" != *SECRET* && "$out" == *"caught [YD004] dp_marginal failed after its charge"* && "$out" == *"then "*" ledger rows"* && "$out" != *ERROR* ]]; echo $?)" \
	"an exception handler catches the generic error only (no planted value), and the transaction goes on"
is "$(q $DB "SELECT rho_spent = (SELECT sum(rho) FROM dpsynth.ledger l WHERE l.relid = b.relid AND status <> 'refused') FROM dpsynth.budgets b WHERE relid = 'h_raise'::regclass")" t \
	"the caught call's charge stays (spent == the ledger's sum)"
# dp_synthesize's adaptive method counts the foreign partition after its charge, as dp_marginal
q $DB "SELECT dp_declare('h_raise', 'id', lower => 1, upper => 2000, bins => 4);
	GRANT CREATE ON SCHEMA public TO $ANALYST" >/dev/null
attempt raise charged:YD004 "" "dp_synthesize over the view that raises" dp_synthesize
# finding 2: a broken shard costs nothing where it can be checked before the charge
attempt missing "refused:ERROR:  HV00R: the remote table of partition" "" "a missing remote table"
attempt noext "refused:ERROR:  55000: server \"noext\" .*cannot run dpsynth" "" "a shard without dpsynth"
attempt old "refused:ERROR:  55000: server \"old\" .*cannot run dpsynth" "" "a shard with dpsynth 0.3.3"
attempt slow "cancelled:canceling statement due to statement timeout" "SET statement_timeout = '4000ms';" "a shard slower than the statement timeout"
# a hostile shard's identity: another version; this very database (a loopback); and counts over
# zero rows (an aggregate with an initial state)
identity() {
	shard ${DB}_fake "CREATE OR REPLACE FUNCTION dpsynth._shard_identity(bigint) RETURNS text LANGUAGE sql IMMUTABLE
		AS \$\$SELECT '$1'\$\$"
}
identity "9.9.9 1 1"
attempt fake "refused:ERROR:  55000: server \"fake\" .*runs another version of dpsynth" "" "a shard with another dpsynth version"
identity "$(q $DB "SELECT dpsynth._shard_identity(0)")"
attempt fake "refused:ERROR:  0A000: .*was counted in this database" "" "a shard that says it is this database"
identity "$version 1 1"
shard ${DB}_fake "TRUNCATE fake_state; INSERT INTO fake_state VALUES ('$state11');
	CREATE OR REPLACE AGGREGATE dpsynth._partial_counts(int4[], int4[]) (SFUNC = dpsynth.fake_add, STYPE = bytea,
		INITCOND = '$state11')"
attempt fake "refused:ERROR:  55000: .*counts for no row" "" "a shard that sends counts for no row"
shard ${DB}_fake "CREATE OR REPLACE AGGREGATE dpsynth._partial_counts(int4[], int4[]) (SFUNC = dpsynth.fake_add, STYPE = bytea)"
# a hostile shard's states: negative, past INT64_MAX with the local counts, of another shape
# the count of cell 0 (a = 0, which the local partition holds too) set to -1, then to INT64_MAX
neg=$(q $DB "SELECT overlay('$state11'::bytea PLACING '\\xffffffffffffffff'::bytea FROM length('$state11'::bytea) - 87)")
huge=$(q $DB "SELECT overlay('$state11'::bytea PLACING '\\xffffffffffffff7f'::bytea FROM length('$state11'::bytea) - 87)")
for s in "negative:$neg" "huge:$huge" "shape:$state5"; do
	shard ${DB}_fake "TRUNCATE fake_state; INSERT INTO fake_state VALUES ('${s#*:}')"
	attempt fake charged:YD004 "" "a shard that sends a count state that is ${s%%:*}"
done

# the administrator has the originals: the planted value, with the ledger row, in the server log
# (the log is written asynchronously: wait until both lines are there, up to 10 s)
for _ in $(seq 1 50); do
	logged=$(tail -n +"$((log_mark + 1))" "$COORD_LOG")
	grep -q "dp_synthesize failed after its charge" <<<"$logged" && grep -q "dp_marginal failed after its charge" <<<"$logged" && break
	sleep 0.2
done
ok "$(grep -q "dp_marginal failed after its charge (ledger row [0-9]*).*$SECRET row 7" <<<"$logged"; echo $?)" \
	"the server log keeps the remote RAISE after the charge, with the value"
ok "$(grep -q "dp_synthesize failed after its charge (ledger row [0-9]*).*$SECRET row 7" <<<"$logged"; echo $?)" \
	"and dp_synthesize's"
ok "$(grep -q 'before the charge failed.*operator does not exist: text\[\] = integer\[\]' <<<"$logged"; echo $?)" \
	"and the server's errors before the charge"
# each false state reached the check it was made for
is "$(echo "$logged" | grep -c 'after its charge.*\[22P03\] invalid partial counts')|$(echo "$logged" | grep -c 'after its charge.*sent an invalid count')|$(echo "$logged" | grep -c 'after its charge.*of different marginals')" \
	"1|1|1" "the negative count, the overflow and the other shape were each refused after the charge"

psql -X -q -d postgres -c "DROP DATABASE $DB" 2>/dev/null
done_testing
