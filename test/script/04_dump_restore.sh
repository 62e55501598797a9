#!/usr/bin/env bash
# pg_dump / pg_restore keep a table's protection: the budget, what was spent, the domains and
# the ledger follow the table to its new OID (catalog keys are regclass, not raw OIDs); so do the
# stored models, which sample the same rows after the restore.  A protection row that no longer
# identifies its table is not dumped (issue 9, finding 1).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
SRC=dpsynth_dump_src
DST=dpsynth_dump_dst
fresh_db $SRC
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DST" 2>/dev/null
psql -X -q -d $SRC >/dev/null 2>&1 <<'SQL'
CREATE TABLE filler (x int);	-- shifts OIDs so that the restored table's differs
CREATE TABLE t (g text NOT NULL, n int NOT NULL);
INSERT INTO t SELECT (ARRAY['a', 'b'])[1 + i % 2], i % 50 FROM generate_series(1, 500) i;
SELECT dp_protect('t', epsilon => 2);
SELECT dp_declare('t', 'g', categories => ARRAY['a', 'b']);
SELECT dp_declare('t', 'n', lower => 0, upper => 49, bins => 5);
SELECT count(*) FROM dp_marginal('t', ARRAY['g', 'n'], epsilon => 0.5);
SELECT model_id FROM dp_synthesize('t', epsilon => 0.5, target => 'copy');
-- a protection row that no longer identifies its table (as a vanished temporary table would have
-- left, its OID now reused by filler): never dumped, so a restore cannot attach it to anything
INSERT INTO dpsynth.budgets (relid, relname, epsilon, delta, rho_allowance, protected_by)
	VALUES ('filler'::regclass, 'pg_temp_9.bait', 1000, 1e-6, 1, 10);
INSERT INTO dpsynth.domains (relid, attnum, kind, categories, declared_by)
	VALUES ('filler'::regclass, 1, 'categories', ARRAY['1'], 10);
SQL
model=$(q $SRC "SELECT max(model_id) FROM dp_models")
q $SRC "SELECT rows_written FROM dp_sample($model, seed => 5, target => 'sample_src')" >/dev/null
sample_src=$(q $SRC "SELECT md5(string_agg(s::text, ';' ORDER BY s::text)) FROM sample_src s")
spent=$(q $SRC "SELECT rho_spent FROM dpsynth.budgets WHERE relid = 't'::regclass")
dump=$(mktemp)
pg_dump -Fc -d $SRC -f "$dump"
psql -X -q -d postgres -c "CREATE DATABASE $DST"
# a table created before the restore takes OIDs the source used
psql -X -q -d $DST -c "CREATE TABLE squatter (y int)"
pg_restore -d $DST "$dump" 2>&1 | grep -v '^$' | sed 's/^/# /'
rm -f "$dump"
is "$(q $DST "SELECT string_agg(relid::text || ' ' || relname, ',') FROM dpsynth.budgets")" "t public.t" \
	"only the budget of t is restored, attached to the restored table (not the stale row)"
is "$(q $DST "SELECT count(*) FROM dpsynth.domains WHERE relid <> 't'::regclass")" 0 "no stale domain is restored"
is "$(q $DST "SELECT rho_spent FROM dpsynth.budgets")" "$spent" "what was spent is restored"
is "$(q $DST "SELECT count(*) FROM dpsynth.domains WHERE relid = 't'::regclass")" 2 "the domains follow the table"
is "$(q $DST "SELECT count(*) FROM dpsynth.ledger")" 2 "the ledger is restored"
is "$(q $DST "SELECT table_name = 't'::regclass FROM dp_models WHERE model_id = $model")" t "the model follows the table"
q $DST "SELECT rows_written FROM dp_sample($model, seed => 5, target => 'sample_dst')" >/dev/null
is "$(q $DST "SELECT md5(string_agg(s::text, ';' ORDER BY s::text)) FROM sample_dst s")" "$sample_src" \
	"the restored model samples the same rows with the same seed"
is "$(q $DST "SELECT count(*) FROM dp_marginal('t', ARRAY['g', 'n'], epsilon => 0.5)")" 15 "releases work on the restored table (3 x 5 cells)"
is "$(q $DST "SELECT rho_spent > $spent FROM dpsynth.budgets")" t "and are charged to the restored budget"
psql -X -q -d postgres -c "DROP DATABASE $SRC" -c "DROP DATABASE $DST"
done_testing
