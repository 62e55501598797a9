-- The holes an outside audit found (issue 9), each closed: every check here failed on 0.1.0.
\i test/regress_helpers.sql
CREATE ROLE regress_hole_analyst IN ROLE dpsynth_analyst;
CREATE ROLE regress_hole_owner;
CREATE SCHEMA hole AUTHORIZATION regress_hole_owner;
SET ROLE regress_hole_owner;
CREATE TABLE hole.t (g text NOT NULL, k integer NOT NULL);
INSERT INTO hole.t SELECT (ARRAY['a', 'b', 'c'])[1 + i % 3], i % 5 FROM generate_series(1, 300) i;
SELECT dp_protect('hole.t', epsilon => 5);
SELECT dp_declare('hole.t', 'k', lower => 0, upper => 4);
RESET ROLE;
GRANT USAGE ON SCHEMA hole TO regress_hole_analyst;
SELECT count(*) AS ledger_before FROM dpsynth.ledger \gset
SELECT rho_spent AS spent_before FROM dpsynth.budgets WHERE relid = 'hole.t'::regclass \gset

-- 1. A temporary table cannot be protected (it vanishes without any event that could take its
--    budget along, and its OID may later name another table); nothing is written.
SET ROLE regress_hole_analyst;
CREATE TEMP TABLE bait (x int);
SELECT try_sql($$SELECT dp_protect('bait', epsilon => 1000)$$) AS temp_table;
RESET ROLE;
SELECT count(*) AS budgets_of_temp_tables FROM dpsynth.budgets b JOIN pg_class c ON c.oid = b.relid
WHERE c.relpersistence = 't';
-- ... nor released from, should a protection exist from before (here planted directly): refused
-- before the charge (finding 5 takes the same path for another session's temp table).
CREATE TEMP TABLE legacy_temp (g text NOT NULL);
INSERT INTO legacy_temp SELECT 'a' FROM generate_series(1, 10);
INSERT INTO dpsynth.budgets (relid, relname, epsilon, delta, rho_allowance, protected_by)
	VALUES ('legacy_temp'::regclass, dpsynth._qualified_name('legacy_temp'::regclass), 1000, 1e-6, 1, 10);
INSERT INTO dpsynth.domains (relid, attnum, kind, categories, declared_by)
	VALUES ('legacy_temp'::regclass, 1, 'categories', ARRAY['a'], 10);
SELECT try_sql($$SELECT * FROM dp_marginal('legacy_temp', ARRAY['g'], epsilon => 1)$$) AS temp_release;
SELECT count(*) = :ledger_before AS nothing_charged FROM dpsynth.ledger;
DELETE FROM dpsynth.budgets WHERE relid = 'legacy_temp'::regclass;
DROP TABLE legacy_temp;

-- A protection row applies only to the table it was made for: OID and qualified name.  A row
-- left by a vanished table whose OID a new table reuses (simulated: a row with another name)
-- protects nothing, is not dumped, not shown, and goes at the next dp_protect.
CREATE TABLE hole.victim (g text NOT NULL);
INSERT INTO hole.victim SELECT (ARRAY['x', 'y'])[1 + i % 2] FROM generate_series(1, 100) i;
INSERT INTO dpsynth.budgets (relid, relname, epsilon, delta, rho_allowance, protected_by)
	VALUES ('hole.victim'::regclass, 'pg_temp_3.bait', 1000, 1e-6, 1, 10);
INSERT INTO dpsynth.domains (relid, attnum, kind, categories, declared_by)
	VALUES ('hole.victim'::regclass, 1, 'categories', ARRAY['x', 'y'], 10);
SET ROLE regress_hole_analyst;
SELECT try_sql($$SELECT * FROM dp_marginal('hole.victim', ARRAY['g'], epsilon => 1)$$) AS inherited_budget;
SELECT count(*) AS shown_in_dp_budget FROM dp_budget WHERE table_name = 'hole.victim'::regclass;
RESET ROLE;
SELECT count(*) = :ledger_before AS nothing_charged FROM dpsynth.ledger;
-- what pg_dump would dump (the condition registered with pg_extension_config_dump)
SELECT c.relname, cond LIKE '%_identifies%' AS filtered
FROM pg_extension e, unnest(e.extconfig, e.extcondition) AS x(cfg, cond) JOIN pg_class c ON c.oid = x.cfg
WHERE e.extname = 'dpsynth' AND c.relname IN ('budgets', 'domains', 'column_policies', 'role_limits') ORDER BY 1;
SELECT count(*) AS dumped_rows_of_victim FROM dpsynth.budgets
WHERE relid = 'hole.victim'::regclass AND dpsynth._identifies(relid, relname);
-- its owner protects it: the stale row and its domain are gone, the new budget starts clean
SELECT dp_protect('hole.victim', epsilon => 1);
SELECT relname, epsilon, rho_spent FROM dpsynth.budgets WHERE relid = 'hole.victim'::regclass;
SELECT count(*) AS stale_domains FROM dpsynth.domains WHERE relid = 'hole.victim'::regclass;

-- Renames keep a protection: of the table, of its schema, and a move to another schema.
ALTER TABLE hole.t RENAME TO t2;
ALTER SCHEMA hole RENAME TO hole2;
CREATE SCHEMA hole_other;
GRANT USAGE ON SCHEMA hole_other TO regress_hole_analyst;
ALTER TABLE hole2.t2 SET SCHEMA hole_other;
SELECT relname, dpsynth._identifies(relid, relname) AS identifies FROM dpsynth.budgets
WHERE relid = 'hole_other.t2'::regclass;
SET ROLE regress_hole_analyst;
SELECT try_sql($$SELECT * FROM dp_marginal('hole_other.t2', ARRAY['k'], epsilon => 0.5)$$) AS after_renames;
RESET ROLE;
ALTER TABLE hole_other.t2 SET SCHEMA hole2;
ALTER SCHEMA hole2 RENAME TO hole;
ALTER TABLE hole.t2 RENAME TO t;
SELECT relname FROM dpsynth.budgets WHERE relid = 'hole.t'::regclass;
GRANT USAGE ON SCHEMA hole TO regress_hole_analyst;

-- 4. The table's discovery => false forbids discovery, whatever a column's policy says.
SET ROLE regress_hole_owner;
SELECT dp_protect('hole.t', epsilon => 5, selection_delta => 1e-7, discovery => false);
SELECT dp_column_policy('hole.t', 'g', discovery => true);
RESET ROLE;
SELECT count(*) AS ledger_before FROM dpsynth.ledger \gset
SET ROLE regress_hole_analyst;
SELECT try_sql($$SELECT * FROM dp_marginal('hole.t', ARRAY['g'], epsilon => 0.5)$$) AS column_cannot_override_table;
RESET ROLE;
SELECT count(*) = :ledger_before AS nothing_charged FROM dpsynth.ledger;
SET ROLE regress_hole_owner;
SELECT dp_column_policy('hole.t', 'g');
RESET ROLE;

-- 6. Refused calls are counted, not logged one row each: five refusals, one ledger row.
SET ROLE regress_hole_analyst;
SELECT try_sql($$SELECT * FROM dp_marginal('hole.t', ARRAY['k'], epsilon => 100)$$) AS refused
FROM generate_series(1, 5);
SELECT role, function, reason, attempts, first_ledger_id IS NOT NULL AS has_ledger_row
FROM dp_refusals WHERE table_name = 'hole.t'::regclass;
RESET ROLE;
SELECT count(*) AS refused_ledger_rows FROM dpsynth.ledger WHERE status = 'refused' AND relname = 'hole.t';

-- 7. DROP EXTENSION (also through DROP SCHEMA ... CASCADE of its schema) would delete every budget
--    and the ledger: refused until a superuser confirms it for the session.
SELECT try_sql('DROP EXTENSION dpsynth') AS drop_extension;
SELECT try_sql('DROP EXTENSION IF EXISTS plpgsql, dpsynth CASCADE') AS drop_extension_list;
SELECT try_sql('DROP SCHEMA public CASCADE') AS drop_its_schema;
SET ROLE regress_hole_owner;
SELECT try_sql('SET dpsynth.allow_drop_extension = on') AS not_superuser;
RESET ROLE;
BEGIN;
SET LOCAL dpsynth.allow_drop_extension = on;
DROP EXTENSION dpsynth;
SELECT count(*) AS dpsynth_installed FROM pg_extension WHERE extname = 'dpsynth';
ROLLBACK;
SELECT count(*) AS dpsynth_installed FROM pg_extension WHERE extname = 'dpsynth';

-- 8. dpsynth's own catalog tables cannot be protected.
SELECT try_sql($$SELECT dp_protect('dpsynth.ledger', epsilon => 1)$$) AS own_catalog;
SELECT try_sql($$SELECT dp_protect('dpsynth.budgets', epsilon => 1)$$) AS own_catalog2;

SET ROLE regress_hole_analyst;
DROP TABLE bait;
RESET ROLE;
DROP SCHEMA hole CASCADE;
DROP SCHEMA hole_other;
DROP ROLE regress_hole_analyst;
DROP ROLE regress_hole_owner;
