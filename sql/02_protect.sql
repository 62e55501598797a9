-- Registering tables, budgets, declarations, role limits: who may do what, and validation.
\i test/regress_helpers.sql
CREATE ROLE regress_dp_owner;
CREATE ROLE regress_dp_other;
CREATE ROLE regress_dp_admin_user IN ROLE dpsynth_admin;
CREATE TABLE patients (id serial, sex text, age integer NOT NULL, score float8, smoker boolean);
ALTER TABLE patients OWNER TO regress_dp_owner;
CREATE VIEW patients_v AS SELECT * FROM patients;
ALTER VIEW patients_v OWNER TO regress_dp_owner;

-- Unregistered tables are refused (fail closed) - checked in 03_marginal too.
SELECT * FROM dp_budget;

-- Only the owner or an admin may protect.
SET ROLE regress_dp_other;
SELECT try_sql($$SELECT dp_protect('patients', epsilon => 3.0, delta => 1e-6)$$);
RESET ROLE;
SET ROLE regress_dp_owner;
SELECT dp_protect('patients', epsilon => 3.0, delta => 1e-6);
SELECT table_name, epsilon, delta, rho_allowance, rho_spent, rho_remaining, epsilon_spent, epsilon_remaining
FROM dp_budget;
SELECT try_sql($$SELECT dp_protect('patients_v', epsilon => 1)$$);
RESET ROLE;

-- Argument validation.
SET ROLE regress_dp_owner;
SELECT try_sql($$SELECT dp_protect('patients', epsilon => 'NaN')$$);
SELECT try_sql($$SELECT dp_protect('patients', epsilon => 'Infinity')$$);
SELECT try_sql($$SELECT dp_protect('patients', epsilon => 0)$$);
SELECT try_sql($$SELECT dp_protect('patients', epsilon => -1)$$);
SELECT try_sql($$SELECT dp_protect('patients', epsilon => NULL)$$);
SELECT try_sql($$SELECT dp_protect('patients', epsilon => 1, delta => 0)$$);
SELECT try_sql($$SELECT dp_protect('patients', epsilon => 1, delta => 1.5)$$);
SELECT try_sql($$SELECT dp_protect(NULL, epsilon => 1)$$);
SELECT try_sql($$SELECT dp_protect('no_such_table', epsilon => 1)$$);

-- Declarations.
SELECT dp_declare('patients', 'sex', categories => ARRAY['F', 'M']);
SELECT dp_declare('patients', 'age', lower => 0, upper => 119, bins => 24);
SELECT dp_declare('patients', 'score', lower => 0, upper => 1);
SELECT table_name, column_name, type, kind, categories, lower, upper, bins, source, declared_by
FROM dp_domains ORDER BY column_name;
SELECT try_sql($$SELECT dp_declare('patients', 'nope', categories => ARRAY['a'])$$);
SELECT try_sql($$SELECT dp_declare('patients', 'sex', categories => ARRAY['F', 'F'])$$);
SELECT try_sql($$SELECT dp_declare('patients', 'sex', categories => ARRAY['F', NULL])$$);
SELECT try_sql($$SELECT dp_declare('patients', 'sex', categories => ARRAY[]::text[])$$);
SELECT try_sql($$SELECT dp_declare('patients', 'sex', lower => 0, upper => 1)$$);
SELECT try_sql($$SELECT dp_declare('patients', 'age', categories => ARRAY['1'], lower => 0)$$);
SELECT try_sql($$SELECT dp_declare('patients', 'age', lower => 10, upper => 5)$$);
SELECT try_sql($$SELECT dp_declare('patients', 'age', lower => 0, upper => 'Infinity')$$);
SELECT try_sql($$SELECT dp_declare('patients', 'age', lower => 'NaN', upper => 5)$$);
SELECT try_sql($$SELECT dp_declare('patients', 'age', lower => 0.5, upper => 5)$$);
SELECT try_sql($$SELECT dp_declare('patients', 'age', lower => 0, upper => 5, bins => 7)$$);
SELECT try_sql($$SELECT dp_declare('patients', 'age', lower => 0, upper => 5)$$);
SELECT try_sql($$SELECT dp_declare('patients', 'score', lower => 0, upper => 1, bins => 0)$$);
SELECT try_sql($$SELECT dp_declare('patients', 'smoker', categories => ARRAY['yes'])$$);
SELECT try_sql($$SELECT dp_declare('patients', NULL, categories => ARRAY['a'])$$);
-- the default for an integer column with few values is one bin per value (6 here)
SELECT bins FROM dp_domains WHERE column_name = 'age';
SELECT dp_declare('patients', 'age', lower => 0, upper => 119, bins => 24);
-- JSON declarations (the format of the bundled Adult domain.json)
SELECT dp_declare('patients', '{"_comment": "ignored", "sex": {"type": "categorical", "values": ["F", "M", "X"]},
                                "score": {"type": "float", "lower": 0, "upper": 10, "bins": 5}}'::jsonb);
SELECT column_name, categories, lower, upper, bins FROM dp_domains ORDER BY column_name;
SELECT try_sql($$SELECT dp_declare('patients', '[1, 2]'::jsonb)$$);
SELECT try_sql($$SELECT dp_declare('patients', '{"nope": {"values": ["a"]}}'::jsonb)$$);
-- a misspelt key is refused, not ignored ("_" keys are comments)
SELECT try_sql($$SELECT dp_declare('patients', '{"age": {"type": "integer", "lower": 0, "upper": 120, "point_masses": [0]}}'::jsonb)$$);
SELECT try_sql($$SELECT dp_declare('patients', '{"score": {"type": "float", "lower": 0, "upper": 10, "bins": 5, "_note": "x", "nullable": true}}'::jsonb)$$);
RESET ROLE;

-- Others may not declare; admins may, but only on tables they may read.
SET ROLE regress_dp_other;
SELECT try_sql($$SELECT dp_declare('patients', 'sex', categories => ARRAY['F', 'M'])$$);
RESET ROLE;
SET ROLE regress_dp_admin_user;
SELECT try_sql($$SELECT dp_protect('patients', epsilon => 4.0, delta => 1e-6)$$);
RESET ROLE;
GRANT SELECT ON patients TO regress_dp_admin_user;
SET ROLE regress_dp_admin_user;
SELECT dp_declare('patients', 'sex', categories => ARRAY['F', 'M']);
SELECT dp_protect('patients', epsilon => 4.0, delta => 1e-6);
RESET ROLE;

-- Role limits.
SET ROLE regress_dp_owner;
SELECT dp_limit_role('patients', 'regress_dp_other', epsilon => 1.0);
SELECT table_name, role, epsilon, rho_limit, rho_spent FROM dp_role_limits;
SELECT try_sql($$SELECT dp_limit_role('patients', 'regress_dp_other', epsilon => -1)$$);
SELECT try_sql($$SELECT dp_limit_role('patients', 'no_such_role', epsilon => 1)$$);
SELECT dp_limit_role('patients', 'regress_dp_other', epsilon => NULL);
SELECT count(*) FROM dp_role_limits;
RESET ROLE;
SET ROLE regress_dp_other;
SELECT try_sql($$SELECT dp_limit_role('patients', 'regress_dp_other', epsilon => 100)$$);
-- the catalog itself is out of reach
SELECT try_sql($$UPDATE dpsynth.budgets SET rho_spent = 0$$);
SELECT try_sql($$SELECT * FROM dpsynth.budgets$$);
SELECT try_sql($$SELECT dpsynth._dp_protect('regress_dp_owner'::regrole, 'patients', 100, 1e-6, 0, true)$$);
SELECT try_sql($$SELECT * FROM dpsynth._charge('patients'::regclass, 'regress_dp_other'::regrole, 'regress_dp_other'::regrole, 'x', NULL, 1, 1e-6, 0, 0, NULL)$$);
-- system tables cannot be protected, even by a superuser
RESET ROLE;
SELECT try_sql($$SELECT dp_protect('pg_catalog.pg_authid', epsilon => 1)$$);
SET ROLE regress_dp_other;
RESET ROLE;

-- Dropping a protected table removes its budget and domains; its ledger rows stay.
DROP VIEW patients_v;
DROP TABLE patients;
DROP ROLE regress_dp_owner;
DROP ROLE regress_dp_other;
DROP OWNED BY regress_dp_admin_user;
DROP ROLE regress_dp_admin_user;
SELECT count(*) AS budgets_left FROM dpsynth.budgets;
SELECT count(*) AS domains_left FROM dpsynth.domains;
