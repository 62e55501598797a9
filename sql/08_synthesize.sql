-- dp_synthesize: the synthetic table looks like the source, is charged once, and is refused
-- before anything is read when it cannot be made.
\i test/regress_helpers.sql
CREATE ROLE regress_dp_analyst IN ROLE dpsynth_analyst;
CREATE SCHEMA analyst_space AUTHORIZATION regress_dp_analyst;
CREATE TYPE tier AS ENUM ('gold', 'silver');
CREATE TABLE people (
	id		serial PRIMARY KEY,
	token	uuid,
	sex		text NOT NULL CHECK (sex IN ('F', 'M')),
	age		integer NOT NULL CHECK (age BETWEEN 0 AND 99),
	income	numeric(10,2) CHECK (income >= 0 AND income <= 100000),
	member	tier,
	joined	date,
	notes	text,
	code	varchar(3) NOT NULL,
	CONSTRAINT young_or_poor CHECK (age < 40 OR income < 50000)	-- across columns: not a domain
);
INSERT INTO people (token, sex, age, income, member, joined, notes, code)
SELECT gen_random_uuid(), (ARRAY['F', 'M'])[1 + i % 2], 20 + (i * 7) % 60,
	   CASE WHEN i % 9 = 0 THEN NULL WHEN 20 + (i * 7) % 60 >= 40 THEN ((i * 37) % 49000) + 0.25
			ELSE ((i * 37) % 90000) + 0.25 END,
	   (ARRAY['gold', 'silver', NULL])[1 + i % 3]::tier, date '2020-01-01' + i % 366,
	   'private note ' || i, (ARRAY['abc', 'de'])[1 + i % 2]
FROM generate_series(1, 2000) i;
SELECT dp_protect('people', epsilon => 50);
SELECT dp_declare('people', 'income', lower => 0, upper => 100000, bins => 10);
SELECT dp_declare('people', 'joined', lower => '2020-01-01'::date, upper => '2020-12-31'::date, bins => 12);
SELECT dp_declare('people', 'code', categories => ARRAY['abc', 'de']);
SELECT dp_column_policy('people', 'notes', treatment => 'exclude');

-- The analyst, without any privilege on people, makes a copy in their own schema.
SET ROLE regress_dp_analyst;
SET search_path = analyst_space, public;
SELECT try_sql($$SELECT count(*) FROM public.people$$) AS cannot_read;
SELECT target_table, rows_written AS written, rows_written BETWEEN 250 AND 500 AS about_500, epsilon_charged,
	   delta_charged, one_way_marginals, k_way_marginals >= 1 AS has_k_way, (seconds->>'total')::float8 < 60 AS timed
FROM dp_synthesize('public.people', epsilon => 1, rows => 500) \gset
SELECT :'target_table' AS target_table, :'about_500' AS about_500, :'epsilon_charged' AS epsilon_charged,
	   :'delta_charged' AS delta_charged, :'one_way_marginals' AS one_way, :'has_k_way' AS has_k_way, :'timed' AS timed;
RESET search_path;
RESET ROLE;

-- The released model is stored, for the ledger row that paid for it (sql/09_model.sql tests it).
SELECT count(*) AS models, bool_and(table_name = 'people'::regclass) AS of_people,
	   bool_and(ledger_id = (SELECT id FROM dpsynth.ledger WHERE function = 'dp_synthesize')) AS paid_by
FROM dp_models WHERE relname = 'people';
-- Charged once, completed, for exactly what dp_rho says.
SELECT function, columns, status, rho = dpsynth._units_rho(dpsynth._rho_units(1, 1e-6)) AS rho_ok,
	   details->>'target' AS target
FROM dp_ledger WHERE function = 'dp_synthesize';

-- Same column names and types, in the source's order; NOT NULL; the CHECK constraints; owned by the caller.
-- (An enum column gets the copy's own type of the same name and labels: sql/22_copy_types.sql.)
SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull
FROM pg_attribute a WHERE a.attrelid = 'analyst_space.people_synthetic'::regclass AND a.attnum > 0 ORDER BY 1;
SELECT count(*) AS differences FROM (
	SELECT attname, (SELECT t.typname FROM pg_type t WHERE t.oid = atttypid), atttypmod, attnotnull FROM pg_attribute WHERE attrelid = 'people'::regclass AND attnum > 0
	EXCEPT
	SELECT attname, (SELECT t.typname FROM pg_type t WHERE t.oid = atttypid), atttypmod, attnotnull FROM pg_attribute
	WHERE attrelid = 'analyst_space.people_synthetic'::regclass AND attnum > 0) d;
SELECT pg_get_constraintdef(oid) FROM pg_constraint
WHERE conrelid = 'analyst_space.people_synthetic'::regclass AND contype = 'c' ORDER BY 1;
SELECT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE oid = 'analyst_space.people_synthetic'::regclass;
SELECT obj_description('analyst_space.people_synthetic'::regclass) LIKE
	   'dpsynth synthetic copy of people: adaptive (AIM-style rounds + GUM), epsilon 1, delta 1e-06, ledger row %' AS provenance;

-- The method: adaptive by default, PrivSyn on request (named in the ledger, the comment and the
-- model); an unknown method is refused before anything is charged.
SELECT try_sql($$SELECT * FROM dp_synthesize('public.people', epsilon => 1, method => 'mst')$$) AS unknown_method;
SELECT count(*) AS charges_so_far FROM dp_ledger WHERE function = 'dp_synthesize';
SELECT target_table, k_way_marginals >= 1 AS has_k_way
FROM dp_synthesize('public.people', epsilon => 1, target => 'people_privsyn', method => 'PrivSyn');
SELECT details->>'method' AS method FROM dp_ledger WHERE function = 'dp_synthesize' ORDER BY id;
SELECT obj_description('people_privsyn'::regclass) LIKE
	   'dpsynth synthetic copy of people: PrivSyn (DenseMarg + GUM), epsilon 1, %' AS privsyn_provenance;
DROP TABLE people_privsyn;
-- focus => columns: every pair with them measured before the rounds (the adaptive method only),
-- named in the ledger; refused before any charge with another method, an unknown or unsynthesized
-- column, or a NULL name.
SELECT try_sql($$SELECT * FROM dp_synthesize('public.people', epsilon => 1, method => 'privsyn', focus => ARRAY['sex'])$$) AS focus_privsyn;
SELECT try_sql($$SELECT * FROM dp_synthesize('public.people', epsilon => 1, focus => ARRAY['no_such'])$$) AS focus_unknown;
SELECT try_sql($$SELECT * FROM dp_synthesize('public.people', epsilon => 1, focus => ARRAY['id'])$$) AS focus_not_synthesized;
SELECT try_sql($$SELECT * FROM dp_synthesize('public.people', epsilon => 1, focus => ARRAY[NULL::text])$$) AS focus_null;
SELECT count(*) AS charges_so_far FROM dp_ledger WHERE function = 'dp_synthesize';
SELECT one_way_marginals - 1 AS sex_pairs, model_id AS focus_model
FROM dp_synthesize('public.people', epsilon => 1, target => 'people_focus', focus => ARRAY['sex', 'sex']) \gset
SELECT count(*) = :sex_pairs AS every_pair_with_sex_measured
FROM dp_model_marginals(:focus_model) WHERE cardinality(columns) = 2 AND 'sex' = ANY (columns);
SELECT details->'focus' AS focus, details->>'method' AS method
FROM dp_ledger WHERE function = 'dp_synthesize' ORDER BY id DESC LIMIT 1;
DROP TABLE people_focus;

-- The values: fresh identifiers, excluded columns NULL, everything inside its domain.
SELECT count(*) AS rows_violating_checks FROM analyst_space.people_synthetic WHERE NOT (age < 40 OR income < 50000);
-- rows the cross-column CHECK rejects are not written (post-processing): rows_written counts what is left
SELECT count(*) = :written AS rows_written_is_rows_in_table FROM analyst_space.people_synthetic;
SELECT count(*) <= 500 AS at_most_500, count(DISTINCT id) = count(*) AS distinct_ids,
	   count(notes) AS notes_released,
	   bool_and(sex IN ('F', 'M')) AS sex_ok, bool_and(age BETWEEN 0 AND 99) AS age_ok,
	   bool_and(income IS NULL OR (income BETWEEN 0 AND 100000 AND income = round(income, 2))) AS income_ok,
	   bool_and(joined IS NULL OR joined BETWEEN '2020-01-01' AND '2020-12-31') AS joined_ok,
	   bool_and(code IN ('abc', 'de')) AS code_ok, count(DISTINCT token) = count(*) AS distinct_tokens_ok,
	   count(*) FILTER (WHERE member IS NULL) > 0 AS member_has_nulls
FROM analyst_space.people_synthetic;
-- not a copy: the synthetic tokens are not the real ones
SELECT count(*) AS real_tokens_copied FROM analyst_space.people_synthetic s JOIN people p USING (token);

-- Refused before anything is charged or read.
SELECT count(*) AS ledger_before FROM dpsynth.ledger \gset
SET ROLE regress_dp_analyst;
SET search_path = analyst_space, public;
SELECT try_sql($$SELECT * FROM dp_synthesize('public.people', epsilon => 1)$$) AS target_exists;
SELECT try_sql($$SELECT * FROM dp_synthesize('public.people', epsilon => 1, target => 'x', columns => ARRAY['sex', 'age'])$$) AS not_null_left_out;
SELECT try_sql($$SELECT * FROM dp_synthesize('public.people', epsilon => 0)$$) AS bad_epsilon;
SELECT try_sql($$SELECT * FROM dp_synthesize('public.people', epsilon => 1, rows => -5)$$) AS bad_rows;
SELECT try_sql($$SELECT * FROM dp_synthesize('public.people', epsilon => 1, delta => 2)$$) AS bad_delta;
SELECT try_sql($$SELECT * FROM dp_synthesize('public.people', epsilon => 100, target => 'other')$$) AS over_budget;
RESET search_path;
SELECT try_sql($$SELECT * FROM dp_synthesize('people', epsilon => 1, target => 'nowhere')$$) AS no_create_privilege;
RESET ROLE;
SELECT count(*) - :ledger_before AS new_ledger_rows FROM dpsynth.ledger;
SELECT count(*) AS refused FROM dpsynth.ledger WHERE id > :ledger_before AND status = 'refused';

-- columns =>: the others are left NULL (when they may be).
ALTER TABLE people ALTER COLUMN code DROP NOT NULL;
SET ROLE regress_dp_analyst;
SELECT rows_written FROM dp_synthesize('public.people', epsilon => 1, target => 'analyst_space.two', rows => 100,
									   columns => ARRAY['sex', 'age']);
RESET ROLE;
SELECT count(*) AS rows, count(income) AS incomes, count(code) AS codes, count(DISTINCT sex) AS sexes FROM analyst_space.two;

-- A rolled-back call leaves no table, and keeps its charge.
SELECT rho_spent AS before FROM dpsynth.budgets \gset
SET ROLE regress_dp_analyst;
BEGIN;
SELECT rows_written <= 10 AS at_most_10 FROM dp_synthesize('public.people', epsilon => 1, target => 'analyst_space.gone', rows => 10);
ROLLBACK;
RESET ROLE;
SELECT to_regclass('analyst_space.gone') IS NULL AS no_table, rho_spent > :before AS charge_kept FROM dpsynth.budgets;

-- The default row count is the consistent noisy total (2,000 real rows).
SET ROLE regress_dp_analyst;
SELECT abs(rows_written - 2000) < 200 AS about_2000 FROM dp_synthesize('public.people', epsilon => 2, target => 'analyst_space.full');
RESET ROLE;

-- NOT NULL real and numeric columns have a NULL cell (for NaN); a synthetic row landing there
-- takes a value in the most populous bin instead of NULL.
CREATE TABLE measures (score float8 NOT NULL, amount numeric(8,2) NOT NULL);
INSERT INTO measures SELECT CASE WHEN i % 2 = 0 THEN 'NaN'::float8 ELSE i % 10 END,
	   CASE WHEN i % 2 = 0 THEN 'NaN'::numeric ELSE i % 7 END
FROM generate_series(1, 1000) i;
SELECT dp_protect('measures', epsilon => 50);
SELECT dp_declare('measures', 'score', lower => 0, upper => 10, bins => 5);
SELECT dp_declare('measures', 'amount', lower => 0, upper => 7, bins => 7);
SET ROLE regress_dp_analyst;
SELECT rows_written FROM dp_synthesize('public.measures', epsilon => 5, target => 'analyst_space.measured', rows => 400);
RESET ROLE;
SELECT count(*) AS rows, count(score) AS scores, count(amount) AS amounts,
	   bool_and(score BETWEEN 0 AND 10) AS score_in_bounds, bool_and(amount BETWEEN 0 AND 7) AS amount_in_bounds
FROM analyst_space.measured;
DROP TABLE measures;

-- Refused by the call's privacy plan (src/core/dp_plan.c) before anything is charged: a pair of
-- columns too large to measure together, and an epsilon too small to discover a domain with.
CREATE TABLE wide (a integer, b integer, t text);
INSERT INTO wide SELECT i % 2100, i % 2099, 'v' || i % 3 FROM generate_series(1, 100) i;
SELECT dp_protect('wide', epsilon => 10, selection_delta => 1e-7);
SELECT dp_declare('wide', 'a', lower => 0, upper => 2099, bins => 2100);
SELECT dp_declare('wide', 'b', lower => 0, upper => 2099, bins => 2100);
SET ROLE regress_dp_analyst;
SELECT try_sql($$SELECT * FROM dp_synthesize('public.wide', epsilon => 1, columns => ARRAY['a', 'b'])$$);
SELECT try_sql($$SELECT * FROM dp_synthesize('public.wide', epsilon => 1e-6, columns => ARRAY['t'])$$);
RESET ROLE;
SELECT count(*) AS charges FROM dpsynth.ledger WHERE relname = 'wide';
DROP TABLE wide;

-- The rare-value merge keeps bins in order (adaptive method): the empty end bins of x are rare
-- (their noisy counts fall below 3 sigma unless the noise exceeds it, p 0.0013 each), and each
-- joins its neighbour, never the other end: the merged codes of the bins run 0, 1, 2, ...
-- without going back.  PrivSyn's merge puts both ends in one code, which goes back.
CREATE TABLE tails (x int NOT NULL, y int NOT NULL);
INSERT INTO tails SELECT 10 + i % 80, i % 3 FROM generate_series(1, 4000) i;
SELECT dp_protect('tails', epsilon => 20);
SELECT dp_declare('tails', 'x', lower => 0, upper => 99, bins => 10);
SELECT dp_declare('tails', 'y', lower => 0, upper => 2);
SELECT rows_written > 0 AS written FROM dp_synthesize('tails', epsilon => 1, target => 'tails_synthetic');
WITH col AS (
	SELECT c FROM dpsynth.models m, jsonb_array_elements(m.model->'columns') c
	WHERE m.relname = 'tails' AND c->>'name' = 'x'),
codes AS (
	SELECT (m.value)::int AS merged, m.ordinality - 1 AS code,
		   (SELECT (c->>'codes')::int - CASE WHEN (c->'domain'->>'null_cell')::boolean THEN 1 ELSE 0 END FROM col) AS nbins
	FROM col, jsonb_array_elements_text(col.c->'merged_code') WITH ORDINALITY m)
SELECT bool_and(step IN (0, 1)) AS bins_merged_in_order, max(nbins) AS bins,
	   count(DISTINCT merged) < max(nbins) AS some_merged
FROM (SELECT code, nbins, merged, merged - lag(merged, 1, 0) OVER (ORDER BY code) AS step
	  FROM codes WHERE code < nbins) s;
DROP TABLE tails, tails_synthetic;

DROP TABLE people;
DROP TYPE tier CASCADE;
DROP SCHEMA analyst_space CASCADE;
DROP OWNED BY regress_dp_analyst;
DROP ROLE regress_dp_analyst;
