-- Privacy per unit (issue 39, docs/PRIVACY.md "Privacy per unit"): dp_privacy_unit names the
-- column whose value is the person a row belongs to; every release keeps at most
-- max_rows_per_unit rows of each unit (at most max_rows_per_cell in one cell of dp_marginal) and
-- is calibrated to that bound.  At epsilon 1000 the noise is far below 1/2 (sigma^2 < 0.001), so
-- the counts below are the bounded counts.
\i test/regress_helpers.sql
CREATE FUNCTION ledger_rows() RETURNS bigint LANGUAGE sql AS $$ SELECT count(*) FROM dpsynth.ledger $$;
-- unit 1 has 10 visits, all in dept a; units 2..5 one visit each, in dept b
CREATE TABLE visits (patient_id int4, dept text, age int4);
INSERT INTO visits SELECT 1, 'a', 30 + g FROM generate_series(1, 10) g;
INSERT INTO visits SELECT g, 'b', 40 FROM generate_series(2, 5) g;
CREATE TABLE visits_row AS SELECT * FROM visits;

-- ---- declaration: refusals, each with its SQLSTATE ----
SELECT try_sql($$SELECT dp_privacy_unit('visits', 'patient_id', 3)$$);	-- not protected yet
SELECT dp_protect('visits', epsilon => 1e6), dp_protect('visits_row', epsilon => 1e6);
SELECT try_sql($$SELECT dp_privacy_unit('visits', 'nope', 3)$$);
SELECT try_sql($$SELECT dp_privacy_unit('visits', 'age', 0)$$);
SELECT try_sql($$SELECT dp_privacy_unit('visits', 'age', 1001)$$);
SELECT try_sql($$SELECT dp_privacy_unit('visits', 'age', 3, max_rows_per_cell => 4)$$);
CREATE TABLE other_units (id float8, x text);
SELECT dp_protect('other_units', epsilon => 1);
SELECT try_sql($$SELECT dp_privacy_unit('other_units', 'id')$$);
-- the default bound is 10 rows per unit, no cell bound beyond it
SELECT dp_privacy_unit('other_units', 'x');
SELECT privacy_unit, max_rows_per_unit, max_rows_per_cell FROM dpsynth.budgets WHERE relid = 'other_units'::regclass;
SELECT dp_privacy_unit('other_units', NULL);
SELECT privacy_unit IS NULL AS removed FROM dpsynth.budgets WHERE relid = 'other_units'::regclass;
-- only the owner (or dpsynth_admin) may set it
CREATE ROLE regress_dp_unit_analyst IN ROLE dpsynth_analyst;
GRANT SELECT ON visits TO regress_dp_unit_analyst;
SET ROLE regress_dp_unit_analyst;
SELECT try_sql($$SELECT dp_privacy_unit('visits', 'patient_id', 3)$$);
RESET ROLE;

SELECT dp_privacy_unit('visits', 'patient_id', max_rows_per_unit => 3);
SELECT dp_declare('visits', 'dept', categories => ARRAY['a', 'b']);
SELECT dp_declare('visits_row', 'dept', categories => ARRAY['a', 'b']);

-- ---- dp_marginal: unit 1 keeps 3 of its 10 rows; the per-row table counts all 10 ----
SELECT * FROM dp_marginal('visits', ARRAY['dept'], 1000) WHERE cell <> ARRAY[NULL];
SELECT * FROM dp_marginal('visits_row', ARRAY['dept'], 1000) WHERE cell <> ARRAY[NULL];
-- the noise is calibrated to the bounded unit: sensitivity^2 = k^2 = 9, sigma^2 9 times the per-row one
SELECT u.details->'privacy_unit' AS unit,
	   round(((u.details->>'sigma2')::float8 / (r.details->>'sigma2')::float8)::numeric, 6) AS sigma2_ratio,
	   r.details ? 'privacy_unit' AS row_table_has_unit
FROM dpsynth.ledger u, dpsynth.ledger r
WHERE u.relid = 'visits'::regclass AND r.relid = 'visits_row'::regclass AND u.function = 'dp_marginal'
  AND r.function = 'dp_marginal';

-- ---- the unit and its bounds cannot change once budget is spent ----
SELECT try_sql($$SELECT dp_privacy_unit('visits', 'patient_id', 4)$$);
SELECT try_sql($$SELECT dp_privacy_unit('visits', NULL)$$);
SELECT try_sql($$SELECT dp_privacy_unit('visits', 'age', 3)$$);
SELECT dp_privacy_unit('visits', 'patient_id', 3, 3);	-- the same: nothing changes
-- a new budget keeps the unit
SELECT dp_protect('visits', epsilon => 2e6);
SELECT privacy_unit, max_rows_per_unit, max_rows_per_cell FROM dpsynth.budgets WHERE relid = 'visits'::regclass;

-- ---- a per-cell bound: unit 1 adds at most 1 row to one cell; sensitivity^2 = k c = 3 ----
CREATE TABLE visits_c AS SELECT * FROM visits;
SELECT dp_protect('visits_c', epsilon => 1e6);
SELECT dp_privacy_unit('visits_c', 'patient_id', max_rows_per_unit => 3, max_rows_per_cell => 1);
SELECT dp_declare('visits_c', 'dept', categories => ARRAY['a', 'b']);
SELECT * FROM dp_marginal('visits_c', ARRAY['dept'], 1000) WHERE cell <> ARRAY[NULL];
SELECT details->'privacy_unit' AS unit FROM dpsynth.ledger WHERE relid = 'visits_c'::regclass;

-- ---- discovery per unit: from the rows each unit keeps; a value counts the units holding it ----
-- dept 'a' is held by one unit (100 rows), 'b' by 200: per unit 'a' counts 1, which the threshold
-- (a value of count 1 released with probability at most delta_each / k) does not pass; per row
-- it counts 100 and is released
CREATE TABLE visits_d AS SELECT 1 AS patient_id, 'a' AS dept, 30 + g % 10 AS age FROM generate_series(1, 100) g
UNION ALL SELECT g, 'b', 40 FROM generate_series(2, 201) g;
CREATE TABLE visits_d_row AS SELECT * FROM visits_d;
SELECT dp_protect('visits_d', epsilon => 100, selection_delta => 1e-6);
SELECT dp_privacy_unit('visits_d', 'patient_id', 3);
SELECT column_name, kind FROM dp_discover('visits_d', 20) ORDER BY 1;	-- not the unit column
SELECT column_name, categories FROM dp_domains WHERE table_name = 'visits_d'::regclass AND kind = 'categories';
SELECT dp_protect('visits_d_row', epsilon => 100, selection_delta => 1e-6);
SELECT column_name, kind FROM dp_discover('visits_d_row', 20, ARRAY['dept']);
SELECT categories AS per_row FROM dp_domains WHERE table_name = 'visits_d_row'::regclass AND column_name = 'dept';
-- the ledger: the selections' noise counts units (sensitivity^2 k = 3), their delta split k ways
SELECT details->'privacy_unit' AS unit, details->>'selection_delta_divided_by' AS delta_divided_by,
	   round(((details->>'selection_sigma2')::float8 * 2 * (details->>'rho_units_per_discovery')::float8 * 1e-12)::numeric, 6) AS k,
	   details ? 'discovery_sigma2' AS rows_histogram
FROM dpsynth.ledger WHERE relid = 'visits_d'::regclass AND function = 'dp_discover';
-- inside dp_marginal and dp_synthesize too (age declared, dept discovered)
CREATE TABLE visits_d2 AS SELECT * FROM visits_d;
SELECT dp_protect('visits_d2', epsilon => 100, selection_delta => 1e-6);
SELECT dp_privacy_unit('visits_d2', 'patient_id', 3);
SELECT dp_declare('visits_d2', 'age', lower => 0, upper => 100, bins => 10);
SELECT cell FROM dp_marginal('visits_d2', ARRAY['dept'], 20) ORDER BY 1;
SELECT categories FROM dp_domains WHERE table_name = 'visits_d2'::regclass AND column_name = 'dept';
CREATE TABLE visits_d3 AS SELECT * FROM visits_d2;
SELECT dp_protect('visits_d3', epsilon => 100, selection_delta => 1e-6);
SELECT dp_privacy_unit('visits_d3', 'patient_id', 3);
SELECT dp_declare('visits_d3', 'age', lower => 0, upper => 100, bins => 10);
SELECT rows_written > 0 AS wrote FROM dp_synthesize('visits_d3', 20, target => 'visits_d3_syn');
SELECT DISTINCT dept FROM visits_d3_syn WHERE dept IS NOT NULL ORDER BY 1;
SELECT details->>'selection_delta_divided_by' AS delta_divided_by FROM dpsynth.ledger
WHERE relid = 'visits_d3'::regclass AND function = 'dp_synthesize';
-- the model names the noise of each kind of discovery it made (here a selection only), the
-- variance drawn, which is the ledger's
SELECT dp_model_json(model_id) ? 'rows_per_unit_selection_sigma2' AS selection_noise,
	   dp_model_json(model_id) ? 'rows_per_unit_discovery_sigma2' AS rows_noise,
	   abs((dp_model_json(model_id)->>'rows_per_unit_selection_sigma2')::float8
		   / (SELECT (details->>'selection_sigma2')::float8 FROM dpsynth.ledger
			  WHERE relid = 'visits_d3'::regclass AND function = 'dp_synthesize') - 1) < 1e-12 AS drawn_as_charged
FROM dp_models WHERE table_name = 'visits_d3'::regclass;
-- k learned inside dp_synthesize, which selects dept at the k it learns: the ledger (before k)
-- has the variance per row bound, the model the variance drawn at k
CREATE TABLE visits_d4 AS SELECT * FROM visits_d2;
SELECT dp_protect('visits_d4', epsilon => 100, selection_delta => 1e-6);
SELECT dp_privacy_unit('visits_d4', 'patient_id', NULL);
SELECT dp_declare('visits_d4', 'age', lower => 0, upper => 100, bins => 10);
SELECT rows_written > 0 AS wrote FROM dp_synthesize('visits_d4', 20, target => 'visits_d4_syn');
SELECT DISTINCT dept FROM visits_d4_syn WHERE dept IS NOT NULL ORDER BY 1;
SELECT l.details->'selection_sigma2' AS before_k,
	   abs((m->>'rows_per_unit_selection_sigma2')::float8
		   / ((l.details->>'selection_sigma2_per_row_bound')::float8 * jsonb_array_length(m->'rows_per_unit')) - 1) < 1e-12 AS drawn_at_k
FROM dpsynth.ledger l, (SELECT dp_model_json(model_id) AS m FROM dp_models WHERE table_name = 'visits_d4'::regclass) x
WHERE l.relid = 'visits_d4'::regclass AND l.function = 'dp_synthesize';
DROP TABLE visits_d4_syn;
DROP TABLE visits_d3_syn;
-- k learned by dp_discover: its scan releases the rows-per-unit histogram first (a fiftieth of the
-- call) and bounds at the k it learns; the ledger has the histogram's share, k null
CREATE TABLE visits_dk AS SELECT * FROM visits_d;
SELECT dp_protect('visits_dk', epsilon => 100, selection_delta => 1e-6);
SELECT dp_privacy_unit('visits_dk', 'patient_id', NULL);
SELECT column_name, kind FROM dp_discover('visits_dk', 20, ARRAY['dept']);
SELECT categories FROM dp_domains WHERE table_name = 'visits_dk'::regclass AND column_name = 'dept';
SELECT details->'privacy_unit'->'max_rows_per_unit' AS k, details->'privacy_unit'->'learned_rule' AS rule,
	   details->'selection_sigma2' AS selection_sigma2,
	   (details->>'rho_units_rows_per_unit')::int8 * 50 <= (SELECT rho_spent * 1e12 FROM dpsynth.budgets
														 WHERE relid = 'visits_dk'::regclass) AS a_fiftieth,
	   (details->>'rho_units_rows_per_unit')::int8 + (details->>'rho_units_per_discovery')::int8
		 = (SELECT rho_spent * 1e12 FROM dpsynth.budgets WHERE relid = 'visits_dk'::regclass) AS charged_in_full
FROM dpsynth.ledger WHERE relid = 'visits_dk'::regclass;
-- refused before any charge: discovery the table's policy forbids
SELECT ledger_rows() AS before \gset
CREATE TABLE visits_dp AS SELECT * FROM visits;
SELECT dp_protect('visits_dp', epsilon => 100, selection_delta => 1e-6, discovery => false);
SELECT dp_privacy_unit('visits_dp', 'patient_id', 3);
SELECT try_sql($$SELECT * FROM dp_marginal('visits_dp', ARRAY['dept'], 1)$$);
SELECT ledger_rows() = :before AS nothing_charged;

-- ---- dp_synthesize: the unit column holds synthetic ids, at most k rows each ----
SELECT dp_declare('visits', 'age', lower => 0, upper => 100, bins => 10);
SELECT rows_written > 0 AS wrote, one_way_marginals FROM dp_synthesize('visits', 100, target => 'visits_syn');
SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute
WHERE attrelid = 'visits_syn'::regclass AND attname = 'patient_id';
SELECT max(n) <= 3 AS at_most_k_rows, min(n) >= 1 AS at_least_one, count(*) > 1 AS several_units
FROM (SELECT patient_id, count(*) AS n FROM visits_syn GROUP BY 1) x;
SELECT count(*) = 0 AS no_null_unit FROM visits_syn WHERE patient_id IS NULL;
-- the unit is no attribute of any marginal; its treatment is recorded, with the released histogram
SELECT c->>'name' AS name, c->>'treatment' AS treatment
FROM dp_models m, jsonb_array_elements(dp_model_json(m.model_id)->'columns') c
WHERE m.table_name = 'visits'::regclass ORDER BY 1;
SELECT jsonb_array_length(dp_model_json(model_id)->'rows_per_unit') AS k FROM dp_models WHERE table_name = 'visits'::regclass;
SELECT count(*) AS marginals_with_unit FROM dp_model_marginals((SELECT model_id FROM dp_models WHERE table_name = 'visits'::regclass))
WHERE 'patient_id' = ANY (columns);
-- the charge: the rows-per-unit histogram's share and the bound, in the ledger
SELECT details->'privacy_unit' AS unit, (details->>'rho_units_rows_per_unit')::int8 > 0 AS shape_charged
FROM dpsynth.ledger WHERE relid = 'visits'::regclass AND function = 'dp_synthesize';
-- dp_sample draws units from the stored histogram too
SELECT rows_written > 0 AS wrote FROM dp_sample((SELECT model_id FROM dp_models WHERE table_name = 'visits'::regclass),
												 seed => 1, target => 'visits_sam');
SELECT max(n) <= 3 AS at_most_k_rows FROM (SELECT patient_id, count(*) AS n FROM visits_sam GROUP BY 1) x;
-- a text unit keeps its type, with synthetic ids
CREATE TABLE tests (subject text, result text);
INSERT INTO tests SELECT 's' || (g % 7), CASE WHEN g % 2 = 0 THEN 'pos' ELSE 'neg' END FROM generate_series(1, 40) g;
SELECT dp_protect('tests', epsilon => 1e6);
SELECT dp_privacy_unit('tests', 'subject', 2);
SELECT dp_declare('tests', 'result', categories => ARRAY['neg', 'pos']);
-- each subject has rows of both results: which 2 it keeps is random, that it keeps 2 is not
SELECT sum(noisy_count) AS seven_units_of_two FROM dp_marginal('tests', ARRAY['result'], 1000);
SELECT rows_written > 0 AS wrote FROM dp_synthesize('tests', 100, target => 'tests_syn');
SELECT max(n) <= 2 AS at_most_k_rows, bool_and(subject LIKE 'synthetic-%') AS synthetic_ids
FROM (SELECT subject, count(*) AS n FROM tests_syn GROUP BY 1) x;

DROP TABLE visits_syn, visits_sam, tests_syn;
REVOKE SELECT ON visits FROM regress_dp_unit_analyst;
DROP ROLE regress_dp_unit_analyst;
-- a partitioned table whose partitions place the unit column elsewhere (read by name), and PrivSyn
CREATE TABLE pv (patient_id int8, dept text, x int4) PARTITION BY LIST (dept);
CREATE TABLE pv_a (x int4, junk int4, dept text, patient_id int8);
ALTER TABLE pv_a DROP COLUMN junk;
ALTER TABLE pv ATTACH PARTITION pv_a FOR VALUES IN ('a');
CREATE TABLE pv_b PARTITION OF pv FOR VALUES IN ('b');
-- unit 1: 20 rows in each partition; units 2..11: one row each
INSERT INTO pv SELECT 1, 'a', g FROM generate_series(1, 20) g;
INSERT INTO pv SELECT 1, 'b', g FROM generate_series(1, 20) g;
INSERT INTO pv SELECT g, 'b', 1 FROM generate_series(2, 11) g;
SELECT dp_protect('pv', epsilon => 1e6);
SELECT dp_privacy_unit('pv', 'patient_id', 4);
SELECT dp_declare('pv', 'dept', categories => ARRAY['a', 'b']);
SELECT dp_declare('pv', 'x', lower => 0, upper => 20, bins => 2);
SELECT sum(noisy_count) AS four_plus_ten FROM dp_marginal('pv', ARRAY['dept'], 1000);
SELECT rows_written > 0 AS wrote FROM dp_synthesize('pv', 100, method => 'privsyn', target => 'pv_syn');
SELECT max(n) <= 4 AS at_most_k_rows FROM (SELECT patient_id, count(*) AS n FROM pv_syn GROUP BY 1) x;
DROP TABLE pv_syn;
-- bounds without bins ('auto' binning) get quantile bins learned by DP from the bounded rows (at
-- most k of a unit), fewer than the 32 equal-width ones, with noise of sensitivity k:
-- discovery sigma^2 = k^2 / (2 rho_each), so 2 rho_each sigma^2 = k^2 = 9
CREATE TABLE visits_auto AS SELECT * FROM visits;
SELECT dp_protect('visits_auto', epsilon => 1e6);
SELECT dp_privacy_unit('visits_auto', 'patient_id', 3);
SELECT dp_declare('visits_auto', 'age', lower => 0, upper => 100);
SELECT count(*) < 33 AS learned_bins, sum(noisy_count) AS three_plus_four FROM dp_marginal('visits_auto', ARRAY['age'], 1000);
SELECT count(*) AS domains_learned FROM dp_domains WHERE table_name = 'visits_auto'::regclass AND source = 'dp';
SELECT (details->>'discovered_columns')::int AS discovered,
	   round(((details->>'discovery_sigma2')::float8 * 2 * (details->>'rho_units_per_discovery')::float8 * 1e-12)::numeric, 6) AS k_squared
FROM dpsynth.ledger WHERE relid = 'visits_auto'::regclass AND function = 'dp_marginal';
-- bounds over a small integer range ('auto', 32 bins) refine their cells into one bin a value
-- where the rows afford it, per unit too (both stages with noise of sensitivity k): 560 units of
-- one row each over the 28 values 100..127, which the log grid holds in cells of 8 values, and
-- one unit of 50 rows at 127, which keeps 3: a bin a value of 100..127 (and one or two below 100,
-- as the noise places the lowest edge), where the unrefined grid gives 16 bins in all
CREATE TABLE visits_fine AS SELECT g AS patient_id, 100 + g % 28 AS age FROM generate_series(1, 560) g
UNION ALL SELECT 9999, 127 FROM generate_series(1, 50);
SELECT dp_protect('visits_fine', epsilon => 1e6);
SELECT dp_privacy_unit('visits_fine', 'patient_id', 3);
SELECT dp_declare('visits_fine', 'age', lower => 0, upper => 127);
SELECT count(*) >= 28 AS a_bin_a_value, sum(noisy_count) AS rows_560_plus_3 FROM dp_marginal('visits_fine', ARRAY['age'], 1000)
WHERE cell <> ARRAY[NULL];
SELECT array_length(edges, 1) - 1 >= 28 AS a_bin_a_value FROM dp_domains WHERE table_name = 'visits_fine'::regclass;
-- dp_synthesize learns them too, and stores them
CREATE TABLE visits_auto_s AS SELECT patient_id, age FROM visits;
SELECT dp_protect('visits_auto_s', epsilon => 1e6);
SELECT dp_privacy_unit('visits_auto_s', 'patient_id', 3);
SELECT dp_declare('visits_auto_s', 'age', lower => 0, upper => 100);
SELECT rows_written > 0 AS wrote FROM dp_synthesize('visits_auto_s', 100, target => 'visits_auto_syn');
SELECT count(*) AS domains_learned FROM dp_domains WHERE table_name = 'visits_auto_s'::regclass AND source = 'dp';
SELECT round(((details->>'discovery_sigma2')::float8 * 2 * (details->>'rho_units_per_discovery')::float8 * 1e-12)::numeric, 6) AS k_squared
FROM dpsynth.ledger WHERE relid = 'visits_auto_s'::regclass AND function = 'dp_synthesize';
DROP TABLE visits_auto_syn;
-- a dropped unit column refuses every release, before the charge
CREATE TABLE gone (person int4, g text);
INSERT INTO gone VALUES (1, 'a');
SELECT dp_protect('gone', epsilon => 1);
SELECT dp_privacy_unit('gone', 'person');
SELECT dp_declare('gone', 'g', categories => ARRAY['a']);
ALTER TABLE gone DROP COLUMN person;
SELECT try_sql($$SELECT * FROM dp_marginal('gone', ARRAY['g'], 0.5)$$);
SELECT count(*) AS charged FROM dpsynth.ledger WHERE relid = 'gone'::regclass;
-- dp_declare(table, jsonb): "privacy_unit": true names the unit (the default bound), or agrees with it
CREATE TABLE panel (nr int4, year int4, wage float8);
INSERT INTO panel SELECT p, 1980 + y, y FROM generate_series(1, 5) p, generate_series(0, 7) y;
SELECT dp_protect('panel', epsilon => 1e6);
SELECT dp_declare('panel', '{"nr": {"type": "integer", "lower": 1, "upper": 100, "privacy_unit": true},
							 "year": {"type": "integer", "lower": 1980, "upper": 1987}}'::jsonb);
SELECT privacy_unit, max_rows_per_unit FROM dpsynth.budgets WHERE relid = 'panel'::regclass;
SELECT dp_privacy_unit('panel', 'nr', 4);
SELECT dp_declare('panel', '{"nr": {"type": "integer", "lower": 1, "upper": 100, "privacy_unit": true}}'::jsonb);
SELECT privacy_unit, max_rows_per_unit FROM dpsynth.budgets WHERE relid = 'panel'::regclass;
SELECT try_sql($$SELECT dp_declare('panel', '{"year": {"type": "integer", "lower": 1980, "upper": 1987, "privacy_unit": true}}'::jsonb)$$);
SELECT try_sql($$SELECT dp_declare('panel', '{"nr": {"type": "integer", "lower": 1, "upper": 100, "privacy_unit": 1}}'::jsonb)$$);
SELECT sum(noisy_count) AS five_units_of_four FROM dp_marginal('panel', ARRAY['year'], 1000);
