-- dp_evaluate and dp_report: the data owner's quality report (issue 13, items 1 and 3).  NOT a
-- DP release: it reads the real table with the caller's rights, charges nothing, and refuses a
-- role that may not SELECT the tables (an analyst of a protected table included).
\i test/regress_helpers.sql
CREATE ROLE regress_eval_analyst IN ROLE dpsynth_analyst;
-- g: 3 labels; n: 50 distinct integers (numeric: quantile bins); s: a number-like label ('1' and
-- '1.0' are one label); every table is a deterministic function of i.
CREATE TABLE ev_real (g text NOT NULL, n int NOT NULL, s text);
INSERT INTO ev_real SELECT (ARRAY['a', 'b', 'c'])[1 + i % 3], i % 50, CASE WHEN i % 7 = 0 THEN NULL ELSE (i % 2)::text END
FROM generate_series(1, 3000) i;
CREATE TABLE ev_copy AS SELECT * FROM ev_real;
-- a shifted copy: g's labels rotate for one row in five, n drifts, s spelled as floats
CREATE TABLE ev_synth (s text, n int, g text);	-- the column order may differ
INSERT INTO ev_synth SELECT CASE WHEN i % 7 = 0 THEN NULL ELSE (i % 2)::text || '.0' END, (i + i % 4) % 55,
	(ARRAY['a', 'b', 'c'])[1 + (i + (i % 5 = 0)::int) % 3]
FROM generate_series(1, 2000) i;
CREATE TABLE ev_holdout AS SELECT * FROM ev_real WHERE false;
INSERT INTO ev_holdout SELECT (ARRAY['a', 'b', 'c'])[1 + i % 3], i % 50, CASE WHEN i % 7 = 0 THEN NULL ELSE (i % 2)::text END
FROM generate_series(5001, 6000) i;
SELECT dp_protect('ev_real', epsilon => 1);
SELECT dp_declare('ev_real', 'g', categories => ARRAY['a', 'b', 'c']);
SELECT coalesce(max(id), 0) AS ledger_max FROM dpsynth.ledger \gset

-- An exact copy: every distance is 0, every row is a copy.
SELECT metric, value, reference
FROM dp_evaluate('ev_real', 'ev_copy') WHERE scope = 'table' ORDER BY metric;

-- The shifted table, with holdout and target: the table's figures, rounded.  The model's figures
-- (tstr_*) to 2 digits: OpenBLAS picks its kernels by CPU (FMA or not), which moves the fourth.
SELECT metric, round(value::numeric, CASE WHEN metric LIKE 'tstr%' THEN 2 ELSE 4 END) AS value,
	   round(reference::numeric, CASE WHEN metric LIKE 'tstr%' THEN 2 ELSE 4 END) AS reference
FROM dp_evaluate('ev_real', 'ev_synth', 'ev_holdout', 'g') WHERE scope = 'table' ORDER BY metric;
-- per column: s's labels agree by value ('1.0' is '1'), so only NULL vs NULL and the spelling
SELECT column_name, metric, round(value::numeric, 4) AS value, note
FROM dp_evaluate('ev_real', 'ev_synth') WHERE scope = 'column' ORDER BY column_name, metric;
-- without a target or a holdout: skipped, with the reason
SELECT metric, value, note FROM dp_evaluate('ev_real', 'ev_synth', target => 'g')
WHERE metric LIKE 'tstr%' OR metric = 'exact_copy_rate' ORDER BY metric;
SELECT metric, value, note FROM dp_evaluate('ev_real', 'ev_synth', 'ev_holdout')
WHERE metric LIKE 'tstr%' ORDER BY metric;

-- Errors, before a row is read.
CREATE TABLE ev_other (g text, n int);
CREATE TABLE ev_empty (LIKE ev_real);
SELECT try_sql($$SELECT * FROM dp_evaluate('ev_real', 'ev_other')$$) AS different_columns;
SELECT try_sql($$SELECT * FROM dp_evaluate('ev_real', 'ev_synth', 'ev_other')$$) AS different_holdout;
SELECT try_sql($$SELECT * FROM dp_evaluate('ev_real', 'ev_synth', 'ev_holdout', 'nope')$$) AS unknown_target;
SELECT try_sql($$SELECT * FROM dp_evaluate('ev_real', 'ev_empty')$$) AS empty_synthetic;
SELECT try_sql($$SELECT * FROM dp_evaluate('ev_empty', 'ev_synth')$$) AS empty_real;
SELECT try_sql($$SELECT * FROM dp_evaluate(NULL, 'ev_synth')$$) AS null_real;

-- An analyst of the protected table (dpsynth rights, no SELECT on it) is refused with 42501 and
-- gets nothing, though it may SELECT the synthetic table; the same for dp_report.
GRANT SELECT ON ev_synth, ev_holdout TO regress_eval_analyst;
SET ROLE regress_eval_analyst;
SELECT count(*) FROM dp_marginal('ev_real', ARRAY['g'], epsilon => 0.1) AS analyst_may_release;
SELECT try_sql($$SELECT * FROM dp_evaluate('ev_real', 'ev_synth')$$) AS analyst_evaluate;
SELECT try_sql($$SELECT dp_report('ev_real', 'ev_synth')$$) AS analyst_report;
-- nor through the synthetic or holdout position
SELECT try_sql($$SELECT * FROM dp_evaluate('ev_synth', 'ev_real')$$) AS real_as_synthetic;
SELECT try_sql($$SELECT * FROM dp_evaluate('ev_synth', 'ev_holdout', 'ev_real')$$) AS real_as_holdout;
RESET ROLE;
-- column privileges on every column are enough (what a SELECT of them needs)
GRANT SELECT (g, n, s) ON ev_real TO regress_eval_analyst;
SET ROLE regress_eval_analyst;
SELECT count(*) > 0 AS with_column_privileges FROM dp_evaluate('ev_real', 'ev_synth');
RESET ROLE;
-- nothing was charged by any dp_evaluate (the one ledger row is the analyst's dp_marginal)
SELECT array_agg(function) AS charged_since FROM dpsynth.ledger WHERE id > :ledger_max;

-- dp_report: one self-contained page with its panels, one histogram per column, no network.
SELECT dp_report('ev_real', 'ev_synth', 'ev_holdout', 'g') AS page \gset
SELECT position('id="headline"' IN :'page') > 0 AS headline, position('id="privacy"' IN :'page') > 0 AS privacy,
	   position('id="heatmap"' IN :'page') > 0 AS heatmap, position('id="hist-2"' IN :'page') > 0 AS hist_2,
	   position('id="hist-3"' IN :'page') = 0 AS no_hist_3, position('not</b> differentially private' IN :'page') > 0 AS says_not_dp,
	   :'page' !~ '(src|href)=' AS nothing_fetched;

DROP TABLE ev_real, ev_copy, ev_synth, ev_holdout, ev_other, ev_empty;
DROP ROLE regress_eval_analyst;
