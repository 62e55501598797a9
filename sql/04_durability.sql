-- Charges are committed before release and survive whatever the caller does afterwards.
\i test/regress_helpers.sql
CREATE ROLE regress_dp_analyst IN ROLE dpsynth_analyst;
CREATE ROLE regress_dp_analyst2 IN ROLE dpsynth_analyst;
CREATE TABLE t (sex text);
INSERT INTO t SELECT CASE WHEN i % 2 = 0 THEN 'F' ELSE 'M' END FROM generate_series(1, 100) i;
SELECT dp_protect('t', epsilon => 10);
SELECT dp_declare('t', 'sex', categories => ARRAY['F', 'M']);
CREATE FUNCTION spent() RETURNS numeric LANGUAGE sql AS $$ SELECT rho_spent FROM dpsynth.budgets WHERE relid = 't'::regclass $$;
CREATE FUNCTION charge(e float8) RETURNS numeric LANGUAGE sql AS $$ SELECT dpsynth._units_rho(dpsynth._rho_units(e, 1e-6)) $$;

-- ROLLBACK keeps the charge; the ledger row stays "charged" (its release never committed).
SELECT spent() AS s0 \gset
SET ROLE regress_dp_analyst;
BEGIN;
SELECT count(*) FROM dp_marginal('t', ARRAY['sex'], 0.5);
ROLLBACK;
RESET ROLE;
SELECT spent() - :s0 = charge(0.5) AS rollback_kept_charge;
SELECT status FROM dpsynth.ledger ORDER BY id DESC LIMIT 1;

-- An error later in the same statement keeps the charge.
SELECT spent() AS s1 \gset
SET ROLE regress_dp_analyst;
SELECT count(*) / 0 FROM dp_marginal('t', ARRAY['sex'], 0.25);
RESET ROLE;
SELECT spent() - :s1 = charge(0.25) AS error_kept_charge;

-- So does ROLLBACK TO SAVEPOINT, and an error in a later statement of the transaction.
SELECT spent() AS s2 \gset
SET ROLE regress_dp_analyst;
BEGIN;
SAVEPOINT a;
SELECT count(*) FROM dp_marginal('t', ARRAY['sex'], 0.1);
ROLLBACK TO SAVEPOINT a;
SELECT count(*) FROM dp_marginal('t', ARRAY['sex'], 0.1);
SELECT 1 / 0;
COMMIT;
RESET ROLE;
SELECT spent() - :s2 = 2 * charge(0.1) AS savepoint_kept_charges;

-- A successful call is "completed"; spent always equals the sum of the ledger's charges.
SET ROLE regress_dp_analyst;
SELECT count(*) FROM dp_marginal('t', ARRAY['sex'], 0.2);
RESET ROLE;
SELECT status, count(*) FROM dpsynth.ledger
WHERE budget_id = (SELECT id FROM dpsynth.budgets WHERE relid = 't'::regclass) GROUP BY 1 ORDER BY 1;
SELECT spent() = (SELECT sum(rho) FROM dpsynth.ledger WHERE relid = 't'::regclass AND status <> 'refused') AS spent_is_ledger_sum;

-- The ledger is append-only, even for a superuser (short of disabling the trigger).
SELECT try_sql($$UPDATE dpsynth.ledger SET rho = 0$$);
SELECT try_sql($$UPDATE dpsynth.ledger SET status = 'refused' WHERE status = 'completed'$$);
SELECT try_sql($$DELETE FROM dpsynth.ledger$$);
SELECT try_sql($$TRUNCATE dpsynth.ledger$$);

-- Analysts see their own ledger rows through dp_ledger, not others'.
SET ROLE regress_dp_analyst2;
SELECT count(*) AS rows_seen_by_other_analyst FROM dp_ledger;
RESET ROLE;
SET ROLE regress_dp_analyst;
SELECT count(*) > 0 AS sees_own_rows, bool_and(role = 'regress_dp_analyst') AS only_own FROM dp_ledger;
RESET ROLE;
-- A caller is recognised by role oid and name (a restore into another cluster may give the oid to
-- another role): a role renamed since, standing in for that, sees none of those rows.
ALTER ROLE regress_dp_analyst RENAME TO dp_analyst_renamed;
SET ROLE dp_analyst_renamed;
SELECT count(*) AS rows_seen_after_rename FROM dp_ledger;
RESET ROLE;
ALTER ROLE dp_analyst_renamed RENAME TO regress_dp_analyst;
SET ROLE regress_dp_analyst;
SELECT count(*) > 0 AS sees_own_rows_again FROM dp_ledger;
RESET ROLE;

-- Budget in epsilon: what is spent plus what remains never exceeds the total (zCDP composes
-- in rho, so the epsilons do not add up: that is the point of zCDP).
SELECT epsilon_spent < 10 AND epsilon_remaining < 10 AS within,
	   dp_rho(epsilon_remaining, 1e-6) <= rho_remaining AS remaining_fits
FROM dp_budget;

DROP TABLE t;
DROP FUNCTION spent();
DROP FUNCTION charge(float8);
DROP ROLE regress_dp_analyst;
DROP ROLE regress_dp_analyst2;
