-- dp_marginal: counts over the whole declared domain, privileges, validation, charging.
\i test/regress_helpers.sql
CREATE ROLE regress_dp_owner;
CREATE ROLE regress_dp_analyst IN ROLE dpsynth_analyst;
CREATE ROLE regress_dp_outsider;
CREATE TYPE blood AS ENUM ('A', 'B', 'AB', 'O');
CREATE TABLE patients (id serial, sex text, age integer NOT NULL, score float8, smoker boolean,
					   grp blood NOT NULL, note text);
INSERT INTO patients (sex, age, score, smoker, grp, note)
SELECT CASE WHEN i % 10 = 0 THEN NULL WHEN i % 10 = 1 THEN 'X' WHEN i % 2 = 0 THEN 'F' ELSE 'M' END,
	   i % 120,
	   CASE WHEN i = 5 THEN 'NaN' WHEN i = 7 THEN 'Infinity' WHEN i = 9 THEN '-Infinity' ELSE (i % 100) / 100.0 END,
	   CASE WHEN i % 7 = 0 THEN NULL ELSE i % 4 = 0 END,
	   (ARRAY['A', 'B', 'AB', 'O'])[1 + i % 4]::blood,
	   'secret ' || i
FROM generate_series(1, 1000) i;
ALTER TABLE patients OWNER TO regress_dp_owner;
CREATE TABLE unprotected (x int);
GRANT SELECT ON unprotected TO regress_dp_analyst;

SET ROLE regress_dp_owner;
SELECT dp_protect('patients', epsilon => 2000, delta => 1e-6);
SELECT dp_declare('patients', 'sex', categories => ARRAY['F', 'M']);
SELECT dp_declare('patients', 'age', lower => 0, upper => 119, bins => 24);
SELECT dp_declare('patients', 'score', lower => 0, upper => 1, bins => 4);
RESET ROLE;

-- The analyst cannot read the table, but can release marginals of it.
SET ROLE regress_dp_analyst;
SELECT try_sql($$SELECT count(*) FROM patients$$);
-- epsilon 300 leaves so little noise (sigma^2 < 0.002) that counts come out exact.
SELECT cell, noisy_count FROM dp_marginal('patients', ARRAY['sex'], epsilon => 300);
SELECT cell, noisy_count FROM dp_marginal('patients', ARRAY['grp', 'smoker'], epsilon => 300);
-- real bins: NaN goes to the NULL cell, +Infinity to the last bin, -Infinity to the first
SELECT cell, noisy_count FROM dp_marginal('patients', ARRAY['score'], epsilon => 300);
-- every cell of the domain is released, empty or not
SELECT count(*) AS cells, sum(noisy_count) AS total,
	   min(cell[1]) FILTER (WHERE cell[1] LIKE '[0,%') AS first_bin
FROM dp_marginal('patients', ARRAY['age'], epsilon => 300);
SELECT count(*) AS cells FROM dp_marginal('patients', ARRAY['age', 'sex', 'smoker', 'grp'], epsilon => 300);
RESET ROLE;

-- The counts agree with the truth computed by the superuser.
CREATE TEMP TABLE truth AS
SELECT CASE WHEN age >= 115 THEN '[115,119]' ELSE format('[%s,%s]', age / 5 * 5, age / 5 * 5 + 4) END AS label,
	   count(*) AS n
FROM patients GROUP BY 1;
GRANT SELECT ON truth TO regress_dp_analyst;
SET ROLE regress_dp_analyst;
SELECT count(*) AS cells, bool_and(m.noisy_count = coalesce(t.n, 0)) AS exact
FROM dp_marginal('patients', ARRAY['age'], epsilon => 300) m LEFT JOIN truth t ON t.label = m.cell[1];
-- At epsilon 0.5 (sigma about 6.4) the counts are noisy: that all 24 are exact has probability < 1e-20.
SELECT count(*) FILTER (WHERE m.noisy_count <> coalesce(t.n, 0)) > 0 AS noisy
FROM dp_marginal('patients', ARRAY['age'], epsilon => 0.5) m LEFT JOIN truth t ON t.label = m.cell[1];
RESET ROLE;

-- Every call is in the ledger, charged what dp_rho says, and spent equals the ledger's sum.
SELECT function, columns, epsilon, status,
	   rho = dpsynth._units_rho(dpsynth._rho_units(epsilon, 1e-6)) AS rho_ok, role
FROM dp_ledger ORDER BY id;
SELECT b.rho_spent = (SELECT sum(rho) FROM dpsynth.ledger WHERE status <> 'refused') AS spent_is_ledger_sum
FROM dpsynth.budgets b;

-- Validation, all before any row is read (nothing is charged: the ledger does not grow).
SELECT count(*) AS ledger_rows_before FROM dpsynth.ledger;
SET ROLE regress_dp_analyst;
SELECT try_sql($$SELECT * FROM dp_marginal(NULL, ARRAY['sex'], 1)$$);
SELECT try_sql($$SELECT * FROM dp_marginal('patients', NULL, 1)$$);
SELECT try_sql($$SELECT * FROM dp_marginal('patients', ARRAY[]::text[], 1)$$);
SELECT try_sql($$SELECT * FROM dp_marginal('patients', ARRAY['sex', NULL], 1)$$);
SELECT try_sql($$SELECT * FROM dp_marginal('patients', ARRAY['sex', 'sex'], 1)$$);
SELECT try_sql($$SELECT * FROM dp_marginal('patients', ARRAY['sex', 'nope'], 1)$$);
SELECT try_sql($$SELECT * FROM dp_marginal('patients', ARRAY['ctid'], 1)$$);
SELECT try_sql($$SELECT * FROM dp_marginal('patients', ARRAY['note'], 1)$$);
SELECT try_sql($$SELECT * FROM dp_marginal('patients', ARRAY['id'], 1)$$);
SELECT try_sql($$SELECT * FROM dp_marginal('patients', ARRAY['sex'], NULL)$$);
SELECT try_sql($$SELECT * FROM dp_marginal('patients', ARRAY['sex'], 'NaN')$$);
SELECT try_sql($$SELECT * FROM dp_marginal('patients', ARRAY['sex'], 'Infinity')$$);
SELECT try_sql($$SELECT * FROM dp_marginal('patients', ARRAY['sex'], 0)$$);
SELECT try_sql($$SELECT * FROM dp_marginal('patients', ARRAY['sex'], -1)$$);
SELECT try_sql($$SELECT * FROM dp_marginal('no_such_table', ARRAY['x'], 1)$$);
SELECT try_sql($$SELECT * FROM dp_marginal('unprotected', ARRAY['x'], 1)$$);
SELECT try_sql($$SELECT * FROM dp_marginal('patients', ARRAY[['sex'], ['age']], 1)$$);
RESET ROLE;
SET ROLE regress_dp_outsider;
SELECT try_sql($$SELECT * FROM dp_marginal('patients', ARRAY['sex'], 1)$$);
RESET ROLE;
SELECT count(*) AS ledger_rows_after FROM dpsynth.ledger;

-- Over budget: refused before reading, nothing released.
SET ROLE regress_dp_analyst;
SELECT try_sql($$SELECT * FROM dp_marginal('patients', ARRAY['sex'], 1e6)$$);
RESET ROLE;

-- Role limits: a limit on a group caps what all its members spend together.
CREATE TABLE limited (sex text);
INSERT INTO limited SELECT 'F' FROM generate_series(1, 10);
ALTER TABLE limited OWNER TO regress_dp_owner;
SET ROLE regress_dp_owner;
SELECT dp_protect('limited', epsilon => 10);
SELECT dp_declare('limited', 'sex', categories => ARRAY['F', 'M']);
SELECT dp_limit_role('limited', 'dpsynth_analyst', epsilon => 1.0);
RESET ROLE;
SET ROLE regress_dp_analyst;
SELECT table_name, my_limit_role, my_rho_remaining = (SELECT rho_limit FROM dp_role_limits) AS full
FROM dp_budget WHERE table_name = 'limited'::regclass;
SELECT count(*) FROM dp_marginal('limited', ARRAY['sex'], epsilon => 0.9);
SELECT try_sql($$SELECT * FROM dp_marginal('limited', ARRAY['sex'], 0.5)$$);
RESET ROLE;
SELECT status, reason FROM dpsynth.ledger WHERE relid = 'limited'::regclass ORDER BY id;
SET ROLE regress_dp_owner;
SELECT dp_limit_role('limited', 'dpsynth_analyst', epsilon => NULL);
RESET ROLE;
SET ROLE regress_dp_analyst;
SELECT count(*) FROM dp_marginal('limited', ARRAY['sex'], epsilon => 0.5);
RESET ROLE;
SET ROLE regress_dp_owner;
-- the owner cannot lower the budget below what is spent
SELECT try_sql($$SELECT dp_protect('patients', epsilon => 1)$$);
RESET ROLE;

-- Marginals too large to compute are refused before anything is charged.
CREATE TABLE wide (a int, b int, c int);
SELECT dp_protect('wide', epsilon => 1);
SELECT dp_declare('wide', c, lower => 0, upper => 1000000, bins => 65535) FROM unnest(ARRAY['a', 'b', 'c']) c;
SELECT try_sql($$SELECT * FROM dp_marginal('wide', ARRAY['a', 'b'], 1)$$);
DROP TABLE wide;

DROP TABLE patients, unprotected, limited;
DROP TYPE blood;
DROP OWNED BY regress_dp_analyst;
DROP ROLE regress_dp_owner;
DROP ROLE regress_dp_analyst;
DROP ROLE regress_dp_outsider;
