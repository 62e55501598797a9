-- Error bars for the analyst from the released model alone (dp_model_marginals,
-- dp_marginal_intervals): post-processing of a stored model, no charge, and the source table is
-- never read: the analyst has no SELECT on it, and the answers are the same once it is dropped.
\i test/regress_helpers.sql
CREATE ROLE regress_i_analyst IN ROLE dpsynth_analyst;
CREATE ROLE regress_i_other IN ROLE dpsynth_analyst;
CREATE ROLE regress_i_owner IN ROLE dpsynth_analyst;
CREATE SCHEMA i_space AUTHORIZATION regress_i_analyst;
CREATE TABLE i_src (
	id		serial PRIMARY KEY,
	sex		text NOT NULL CHECK (sex IN ('F', 'M')),
	age		integer NOT NULL CHECK (age BETWEEN 0 AND 99),
	city	text,
	smoker	boolean NOT NULL,
	notes	text
);
-- 2,000 rows: city has two common values and five rare ones (one or two rows each), which the
-- rare-value merge puts together with the empty NULL cell
INSERT INTO i_src (sex, age, city, smoker, notes)
SELECT (ARRAY['F', 'M'])[1 + i % 2], 20 + (i * 7) % 60,
	   CASE WHEN i <= 8 THEN (ARRAY['r1', 'r2', 'r3', 'r4', 'r5'])[1 + i % 5] WHEN i % 4 = 0 THEN 'Lyon' ELSE 'Paris' END,
	   i % 3 = 0, 'secret ' || i
FROM generate_series(1, 2000) i;
SELECT dp_protect('i_src', epsilon => 20);
SELECT dp_declare('i_src', 'age', lower => 0, upper => 99, bins => 10);
SELECT dp_declare('i_src', 'city', categories => ARRAY['Paris', 'Lyon', 'r1', 'r2', 'r3', 'r4', 'r5']);
SELECT dp_column_policy('i_src', 'notes', treatment => 'exclude');
ALTER TABLE i_src OWNER TO regress_i_owner;
-- the true count behind a cell of one column (a merged cell: the sum over its values), for the
-- superuser to check the intervals with; the analyst never sees it
CREATE TABLE i_truth AS
	SELECT c AS col, v AS label, count(*) AS n
	FROM i_src, LATERAL (VALUES ('sex', sex), ('city', coalesce(city, 'NULL')), ('smoker', smoker::text)) x(c, v)
	GROUP BY 1, 2;
CREATE FUNCTION i_true_count(col text, cell text) RETURNS int8 LANGUAGE sql STABLE
	AS $$ SELECT coalesce(sum(n), 0)::int8 FROM i_truth t WHERE t.col = $1 AND t.label = ANY (string_to_array($2, ' | ')) $$;

SET ROLE regress_i_analyst;
SELECT has_table_privilege('i_src', 'SELECT') AS analyst_reads_source;
SELECT model_id AS model FROM dp_synthesize('public.i_src', epsilon => 1, target => 'i_space.i_synth') \gset
SELECT model_id AS privsyn_model FROM dp_synthesize('public.i_src', epsilon => 1, target => 'i_space.i_synth2', method => 'privsyn') \gset
RESET ROLE;
SELECT count(*) AS ledger_before FROM dpsynth.ledger \gset
SELECT rho_spent AS spent_before FROM dpsynth.budgets WHERE relid = 'i_src'::regclass \gset

-- What the model measured: the four synthesized columns' one-way marginals first, then the
-- others; sigma is the noise of a cell measured with rho; together they spent at most the rho
-- charged (the rest went on selection).
SET ROLE regress_i_analyst;
SELECT marginal, columns, abs(sigma - sqrt((1 + 2.0 ^ (-30)) / (2 * rho))) < 1e-9 * sigma AS sigma_of_rho,
	   -- a category column merges its rare labels into one cell; age's empty bins at each end
	   -- (0-19 and 80-99) join their neighbours, one merged cell per end at most
	   merged_cells <= CASE WHEN columns = '{age}' THEN 2 ELSE 1 END AS merged_cells_as_expected
FROM dp_model_marginals(:model) WHERE marginal <= 4 ORDER BY marginal;
SELECT count(*) >= 5 AS has_k_way, bool_and(cardinality(columns) IN (2, 3)) FILTER (WHERE marginal > 4) AS pairs_or_triples,
	   sum(rho) <= (SELECT rho FROM dp_models WHERE model_id = :model) AS within_charge,
	   bool_and(rho > 0) AS all_measured
FROM dp_model_marginals(:model);
SELECT sum(rho) <= (SELECT rho FROM dp_models WHERE model_id = :privsyn_model) AS privsyn_within_charge
FROM dp_model_marginals(:privsyn_model);

-- One column: its cells with their values (from its one-way marginal or projected from a pair,
-- whichever is less noisy), intervals around the estimate, shares.
-- city's rare values (and its empty NULL cell) are merged: such a cell lists its values; which
-- of them fall below the merge's threshold is up to the noise, Paris and Lyon never do.
SELECT bool_and(basis IN ('measured', 'projected')) AS covered, bool_and('city' = ANY (measured_columns)) AS from_city,
	   count(*) FILTER (WHERE members > 1) AS merged, sum(members) AS city_codes,
	   bool_and(cardinality(string_to_array(cell[1], ' | ')) = members) AS lists_its_values,
	   bool_or(cell = '{Paris}') AND bool_or(cell = '{Lyon}') AS common_alone
FROM dp_marginal_intervals(:model, ARRAY['city']);
SELECT bool_and(lower <= estimate AND estimate <= upper AND lower >= 0) AS count_ok,
	   bool_and(share_lower <= share AND share <= share_upper AND share_lower >= 0 AND share_upper <= 1) AS share_ok,
	   abs(sum(estimate) - (SELECT noisy_total FROM dp_models WHERE model_id = :model)) < 1e-6 AS sums_to_total,
	   abs(sum(share) - 1) < 1e-9 AS shares_sum_to_1
FROM dp_marginal_intervals(:model, ARRAY['city']);
-- Higher confidence, wider intervals; the default is 0.95.
SELECT bool_and(w99.upper - w99.lower > w95.upper - w95.lower) AS wider_at_99,
	   bool_and(w95.upper = d.upper) AS default_95
FROM dp_marginal_intervals(:model, ARRAY['sex'], 0.99) w99
JOIN dp_marginal_intervals(:model, ARRAY['sex'], 0.95) w95 USING (cell)
JOIN dp_marginal_intervals(:model, ARRAY['sex']) d USING (cell);
RESET ROLE;
-- The truth lies inside (checked by the superuser, at 1 - 1e-6: a false alarm is one in a
-- million per cell), whichever marginal each column's intervals come from.
SELECT c AS col, bool_and(i_true_count(c, i.cell[1]) BETWEEN i.lower AND i.upper) AS truth_covered,
	   sum(i_true_count(c, i.cell[1])) AS rows
FROM unnest(ARRAY['sex', 'city', 'smoker']) c, dp_marginal_intervals(:model, ARRAY[c], 1 - 1e-6) i
GROUP BY c ORDER BY c;
SELECT c AS col, bool_and(i_true_count(c, i.cell[1]) BETWEEN i.lower AND i.upper) AS privsyn_truth_covered
FROM unnest(ARRAY['sex', 'city', 'smoker']) c, dp_marginal_intervals(:privsyn_model, ARRAY[c], 1 - 1e-6) i
GROUP BY c ORDER BY c;

-- A measured pair (the first; a triple is only measured after two of its pairs), in the caller's
-- column order: read from itself ('measured'), or projected from a measured triple that holds it
-- when that one is less noisy; its columns projected from it or from their own one-way
-- marginals; four columns (the adaptive method measures triples at most): not measured.
SELECT columns AS pair FROM dp_model_marginals(:model) WHERE cardinality(columns) = 2 ORDER BY marginal LIMIT 1 \gset
SET ROLE regress_i_analyst;
SELECT count(DISTINCT basis) = 1 AND min(basis) IN ('measured', 'projected') AS pair_covered,
	   bool_and(CASE basis WHEN 'measured' THEN measured_columns = :'pair'::text[]
			   ELSE cardinality(measured_columns) = 3 AND measured_columns @> :'pair'::text[] END) AS from_the_pair_or_a_triple
FROM dp_marginal_intervals(:model, :'pair'::text[]);
SELECT count(*) = count(r.cell) AS same_cells_reversed
FROM dp_marginal_intervals(:model, :'pair'::text[]) a
LEFT JOIN dp_marginal_intervals(:model, ARRAY[(:'pair'::text[])[2], (:'pair'::text[])[1]]) r
	ON r.cell[1] IS NOT DISTINCT FROM a.cell[2] AND r.cell[2] IS NOT DISTINCT FROM a.cell[1]
	   AND r.estimate = a.estimate AND r.lower = a.lower AND r.share_upper = a.share_upper;
SELECT DISTINCT basis IN ('measured', 'projected') AS single_column_covered
FROM dp_marginal_intervals(:model, (:'pair'::text[])[1:1]);
SELECT basis, count(*) = (SELECT round(exp(sum(ln(cells))))::int8 FROM dp_model_marginals(:model)
						   WHERE columns IN ('{sex}', '{smoker}', '{city}', '{age}')) AS every_cell,
	   count(estimate) AS estimates, count(lower) AS intervals, count(measured_columns) AS sources
FROM dp_marginal_intervals(:model, ARRAY['sex', 'smoker', 'city', 'age']) GROUP BY basis;
RESET ROLE;

-- Nothing was charged.
SELECT count(*) = :ledger_before AS no_ledger_row FROM dpsynth.ledger;
SELECT rho_spent = :'spent_before' AS budget_unchanged FROM dpsynth.budgets WHERE relid = 'i_src'::regclass;

-- Who may: as dp_sample.  Another analyst learns nothing, not even whether the model exists.
SET ROLE regress_i_other;
SELECT try_sql(format('SELECT * FROM dp_model_marginals(%s)', :model)) ~ 'model \d+ does not exist or you may not use it' AS other_marginals;
SELECT try_sql(format('SELECT * FROM dp_marginal_intervals(%s, ARRAY[''sex''])', :model)) ~ '^42501: model \d+ does not exist' AS other_intervals;
SELECT try_sql('SELECT * FROM dp_marginal_intervals(999999, ARRAY[''sex''])') AS no_such_model;
RESET ROLE;
SET ROLE regress_i_owner;
SELECT count(*) > 0 AS owner_may FROM dp_marginal_intervals(:model, ARRAY['sex']);
RESET ROLE;
SET ROLE regress_i_analyst;
SELECT try_sql('SELECT * FROM dp_marginal_intervals(NULL, ARRAY[''sex''])') AS null_model;
SELECT try_sql(format('SELECT * FROM dp_marginal_intervals(%s, NULL)', :model)) AS null_columns;
SELECT try_sql(format('SELECT * FROM dp_marginal_intervals(%s, ''{}'')', :model)) AS no_columns;
SELECT try_sql(format('SELECT * FROM dp_marginal_intervals(%s, ARRAY[''sex'', NULL])', :model)) AS null_column;
SELECT replace(try_sql(format('SELECT * FROM dp_marginal_intervals(%s, ARRAY[''nope''])', :model)), 'model ' || :model, 'model N') AS unknown_column;
SELECT replace(try_sql(format('SELECT * FROM dp_marginal_intervals(%s, ARRAY[''notes''])', :model)), 'model ' || :model, 'model N') AS excluded_column;
SELECT try_sql(format('SELECT * FROM dp_marginal_intervals(%s, ARRAY[''sex'', ''sex''])', :model)) AS twice;
SELECT try_sql(format('SELECT * FROM dp_marginal_intervals(%s, ARRAY[''sex''], %s)', :model, c)) AS bad_confidence
FROM unnest(ARRAY['0', '1', '''NaN''', '-0.5', 'NULL']) c;
SELECT try_sql(format('SELECT * FROM dp_marginal_intervals(%s, ''{{sex}}'')', :model)) AS two_dimensions;
-- the intervals now, to compare once the source is gone
SELECT string_agg(format('%s %s %s %s', cell, estimate, lower, upper), '; ' ORDER BY cell) AS before_drop
FROM dp_marginal_intervals(:model, ARRAY['city', 'sex']) \gset
RESET ROLE;

-- The source table dropped: its models stay, and say the same.
DROP TABLE i_src;
SET ROLE regress_i_analyst;
SELECT string_agg(format('%s %s %s %s', cell, estimate, lower, upper), '; ' ORDER BY cell) = :'before_drop' AS same_after_drop
FROM dp_marginal_intervals(:model, ARRAY['city', 'sex']);
SELECT count(*) > 4 AS marginals_after_drop FROM dp_model_marginals(:model);
RESET ROLE;

DROP FUNCTION i_true_count(text, text);
DROP TABLE i_truth;
DROP SCHEMA i_space CASCADE;
DROP OWNED BY regress_i_analyst, regress_i_other, regress_i_owner;
DROP ROLE regress_i_analyst, regress_i_other, regress_i_owner;
