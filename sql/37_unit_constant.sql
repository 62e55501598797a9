-- Columns constant within a unit (issue 39 item 3, docs/PRIVACY.md "Columns constant within a
-- unit"): the owner names them with dp_unit_constant (public; charges nothing; checked against no
-- row); a synthetic unit then holds one value of each, its rows drawn from the synthetic rows of
-- that value, and its size from the released rows-per-unit histogram as before.
\i test/regress_helpers.sql
-- 400 patients of 3 visits each: sex and birth (years, in 10-year bins, so that a code decodes
-- to many values) are the patient's; dept follows sex (f: a or b, m: c), a visit's own column
CREATE TABLE pat (patient_id int4, sex text, birth int4, dept text);
INSERT INTO pat SELECT p, CASE WHEN p % 3 = 0 THEN 'm' ELSE 'f' END, 1920 + (p * 7) % 80,
	CASE WHEN p % 3 = 0 THEN 'c' WHEN v = 1 THEN 'a' ELSE 'b' END
FROM generate_series(1, 400) p, generate_series(1, 3) v;
CREATE TABLE pat_plain AS SELECT * FROM pat;

-- ---- refusals, before anything: SQLSTATEs ----
SELECT try_sql($$SELECT dp_unit_constant('pat', ARRAY['sex'])$$);			-- not protected
SELECT dp_protect('pat', epsilon => 1e6), dp_protect('pat_plain', epsilon => 1e6);
SELECT try_sql($$SELECT dp_unit_constant('pat', ARRAY['sex'])$$);			-- no unit
SELECT dp_privacy_unit('pat', 'patient_id', 3), dp_privacy_unit('pat_plain', 'patient_id', 3);
SELECT try_sql($$SELECT dp_unit_constant('pat', ARRAY['nope'])$$);			-- unknown column
SELECT try_sql($$SELECT dp_unit_constant('pat', ARRAY['sex', 'patient_id'])$$);	-- the unit itself
SELECT try_sql($$SELECT dp_unit_constant('pat', ARRAY['sex', NULL])$$);
SELECT try_sql($$SELECT dp_unit_constant(NULL, ARRAY['sex'])$$);
-- only the owner (or dpsynth_admin)
CREATE ROLE regress_dp_const_analyst IN ROLE dpsynth_analyst;
SET ROLE regress_dp_const_analyst;
SELECT try_sql($$SELECT dp_unit_constant('pat', ARRAY['sex'])$$);
RESET ROLE;
SELECT unit_constant IS NULL AS nothing_declared FROM dpsynth.budgets WHERE relid = 'pat'::regclass;

-- ---- the declaration: attnums, in column order, duplicates once ----
SELECT dp_unit_constant('pat', ARRAY['birth', 'sex', 'birth']);
SELECT unit_constant FROM dpsynth.budgets WHERE relid = 'pat'::regclass;
SELECT dp_declare(t, 'sex', categories => ARRAY['f', 'm']), dp_declare(t, 'dept', categories => ARRAY['a', 'b', 'c']),
	   dp_declare(t, 'birth', lower => 1900, upper => 2000, bins => 10, binning => 'equal')
FROM unnest(ARRAY['pat', 'pat_plain']::regclass[]) t;

-- ---- it releases nothing: the plan and the charge are those of a table without it ----
SELECT (SELECT array_agg(rho_units ORDER BY release) FROM dp_synthesize_plan('pat', 1000))
	 = (SELECT array_agg(rho_units ORDER BY release) FROM dp_synthesize_plan('pat_plain', 1000)) AS same_plan;
SELECT count(*) AS ledger_rows_before FROM dpsynth.ledger \gset

-- ---- adaptive: every synthetic unit holds one sex and one birth year ----
SELECT rows_written > 0 AS wrote, rho_charged AS rho_const FROM dp_synthesize('pat', 1000, target => 'pat_syn') \gset
SELECT :'wrote' AS wrote;
SELECT rho_charged = :rho_const AS same_charge FROM dp_synthesize('pat_plain', 1000, target => 'pat_plain_syn');
CREATE FUNCTION unit_shape(t regclass, OUT units bigint, OUT multi_row_units bigint, OUT mixed_units bigint,
						   OUT largest bigint) LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('SELECT count(*), count(*) FILTER (WHERE n > 1), count(*) FILTER (WHERE sexes > 1 OR births > 1), max(n)
					FROM (SELECT patient_id, count(*) n, count(DISTINCT sex) sexes, count(DISTINCT birth) births
						  FROM %s GROUP BY 1) u', t) INTO units, multi_row_units, mixed_units, largest;
END
$$;
-- no unit mixes values (the test that fails where units ignore the declaration), and there are
-- units of several rows for it to hold on; none is larger than the bound
SELECT multi_row_units > 100 AS many_multi_row_units, mixed_units, largest <= 3 AS bounded FROM unit_shape('pat_syn');
-- the same table without the declaration mixes them (units of 3 rows, 1 in 3 of them male)
SELECT mixed_units > 0 AS plain_mixes FROM unit_shape('pat_plain_syn');
-- the visits are drawn given the unit's values: dept c is the men's
SELECT count(*) FILTER (WHERE sex = 'm' AND dept = 'c') > 0.8 * count(*) FILTER (WHERE sex = 'm') AS men_in_c,
	   count(*) FILTER (WHERE sex = 'f' AND dept <> 'c') > 0.8 * count(*) FILTER (WHERE sex = 'f') AS women_not_in_c
FROM pat_syn;
-- sizes from the histogram: nearly every unit has 3 rows, as in the source (a group's last unit is
-- filled up or dropped, not cut)
SELECT count(*) FILTER (WHERE n = 3) > 0.9 * count(*) AS sizes_kept
FROM (SELECT patient_id, count(*) n FROM pat_syn GROUP BY 1) u;

-- ---- the stored model names the columns; dp_sample holds them constant too ----
SELECT model->'constant_per_unit' AS constant_per_unit FROM dpsynth.models WHERE relid = 'pat'::regclass;
SELECT model ? 'constant_per_unit' AS plain_has_it FROM dpsynth.models WHERE relid = 'pat_plain'::regclass;
SELECT rows_written > 0 AS wrote FROM dp_sample((SELECT max(id) FROM dpsynth.models WHERE relid = 'pat'::regclass),
												 seed => 7, target => 'pat_sam');
SELECT multi_row_units > 100 AS many_multi_row_units, mixed_units FROM unit_shape('pat_sam');
-- a stored model that holds constant a column it does not synthesize (the unit) is refused as corrupt
INSERT INTO dpsynth.models (budget_id, relid, relname, ledger_id, created_by, created_by_name, epsilon, delta, rho,
							noisy_total, columns, k_way_marginals, cells, model)
SELECT budget_id, relid, relname, ledger_id, created_by, created_by_name, epsilon, delta, rho, noisy_total, columns,
	   k_way_marginals, cells, jsonb_set(model, '{constant_per_unit}', '["patient_id"]')
FROM dpsynth.models WHERE relid = 'pat'::regclass RETURNING id AS bad_model \gset
SELECT regexp_replace(try_sql(format('SELECT dp_sample(%s, seed => 1, target => %L)', :bad_model, 'pat_bad')),
					  'model [0-9]+', 'model N') AS refused;
DELETE FROM dpsynth.models WHERE id = :bad_model;

-- ---- privsyn ----
SELECT rows_written > 0 AS wrote FROM dp_synthesize('pat', 1000, method => 'privsyn', target => 'pat_ps');
SELECT multi_row_units > 100 AS many_multi_row_units, mixed_units FROM unit_shape('pat_ps');

-- ---- it may change after budget was spent, charging nothing; a column not synthesized is left out ----
SELECT dp_unit_constant('pat', ARRAY['sex']);
SELECT rows_written > 0 AS wrote FROM dp_synthesize('pat', 1000, columns => ARRAY['dept', 'birth'], target => 'pat_cols');
SELECT count(*) FILTER (WHERE sex IS NOT NULL) AS sexes FROM pat_cols;
SELECT dp_unit_constant('pat', NULL);
SELECT unit_constant IS NULL AS removed FROM dpsynth.budgets WHERE relid = 'pat'::regclass;
SELECT count(*) - :ledger_rows_before AS ledger_rows_added FROM dpsynth.ledger;	-- the 4 syntheses only

-- ---- changing the unit column (before any spend) drops the declaration; the bounds alone keep it ----
CREATE TABLE pat2 AS SELECT * FROM pat_plain;
SELECT dp_protect('pat2', epsilon => 1), dp_privacy_unit('pat2', 'patient_id', 3);
SELECT dp_unit_constant('pat2', ARRAY['sex']);
SELECT dp_privacy_unit('pat2', 'patient_id', 4);
SELECT unit_constant FROM dpsynth.budgets WHERE relid = 'pat2'::regclass;
SELECT dp_privacy_unit('pat2', 'sex', 4);
SELECT unit_constant IS NULL AS dropped FROM dpsynth.budgets WHERE relid = 'pat2'::regclass;
SELECT try_sql($$SELECT dp_unit_constant('pat2', ARRAY['sex'])$$);		-- now the unit

DROP ROLE regress_dp_const_analyst;
