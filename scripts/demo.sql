-- The scenes of the demo (run by scripts/demo on the bundled Adult table, 32,561 rows).
\pset footer off
\set VERBOSITY default
\echo
\echo '*** 1. The data owner protects the table with a budget of epsilon 3 (delta 1e-6) and'
\echo '***    declares its public domain (categories from the documentation, round numeric bounds).'
SELECT dp_protect('adult', epsilon => 3.0, delta => 1e-6);
SELECT dp_declare('adult', :'domain'::jsonb) AS columns_declared;
SELECT column_name, kind, coalesce(array_length(categories, 1), bins) AS cells, lower, upper, binning
FROM dp_domains ORDER BY column_name;
\echo '***    Bounds without bins get binning auto: the first release that needs them learns'
\echo '***    quantile bins by DP, within its own epsilon.'
DO $$ BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'research_team') THEN
		CREATE ROLE research_team;
	END IF;
END $$;
GRANT dpsynth_analyst TO research_team;
-- a schema of its own, where its synthetic copies go (first in the default search_path, "$user")
CREATE SCHEMA research_team AUTHORIZATION research_team;

\echo
\echo '*** 2. The analyst (research_team) cannot read the table...'
SET ROLE research_team;
SELECT count(*) FROM adult;
\echo '***    ...but can ask for noisy marginals, each charged to the budget (epsilon 0.5 each).'
SELECT cell[1] AS sex, cell[2] AS income, noisy_count
FROM dp_marginal('adult', ARRAY['sex', 'income'], epsilon => 0.5);
CREATE TEMP TABLE edu AS
SELECT cell[1] AS education, noisy_count FROM dp_marginal('adult', ARRAY['education'], epsilon => 0.5);
SELECT * FROM edu ORDER BY noisy_count DESC LIMIT 6;
SELECT table_name, epsilon, round(rho_allowance, 6) AS rho_allowance, round(rho_spent, 6) AS rho_spent,
	   round(epsilon_spent::numeric, 4) AS epsilon_spent, epsilon_remaining
FROM dp_budget;
\echo '***    zCDP composes in rho: two calls at epsilon 0.5 spent far less than epsilon 1 of 3.'
RESET ROLE;

\echo
\echo '*** 3. How close were those counts?  (Only the owner can compute this.)'
SELECT e.education, e.noisy_count, t.true_count, e.noisy_count - t.true_count AS error
FROM edu e JOIN (SELECT education, count(*) AS true_count FROM adult GROUP BY 1) t USING (education)
ORDER BY t.true_count DESC LIMIT 6;

\echo
\echo '*** 4. The analyst makes a synthetic copy with epsilon 1 (PrivSyn, computed in the server).'
SET ROLE research_team;
SELECT target_table, rows_written, epsilon_charged, round(rho_charged, 6) AS rho_charged,
	   one_way_marginals, k_way_marginals, seconds->>'total' AS seconds
FROM dp_synthesize('adult', epsilon => 1.0);
SELECT * FROM adult_synthetic LIMIT 5;
RESET ROLE;
\echo '***    The bins it learned (and paid for) inside that epsilon, reused for free from now on:'
SELECT column_name, kind, binning, source, cardinality(edges) - 1 AS bins, ledger_id
FROM dp_domains WHERE source = 'dp' ORDER BY column_name;

\echo
\echo '*** 5. How faithful is it?  (The owner compares it with the real table.)'
CREATE TEMP VIEW pairs AS
SELECT * FROM (VALUES ('sex', 'income'), ('education', 'income'), ('race', 'sex'), ('relationship', 'marital_status'),
						('occupation', 'income'), ('workclass', 'sex')) p(a, b);
CREATE FUNCTION pg_temp.tvd(a text, b text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
	r numeric;
BEGIN
	EXECUTE format($q$
		WITH real AS (SELECT coalesce(%1$I::text, '(null)') x, coalesce(%2$I::text, '(null)') y, count(*)::numeric / sum(count(*)) OVER () p FROM adult GROUP BY 1, 2),
			 syn AS (SELECT coalesce(%1$I::text, '(null)') x, coalesce(%2$I::text, '(null)') y, count(*)::numeric / sum(count(*)) OVER () p FROM research_team.adult_synthetic GROUP BY 1, 2)
		SELECT round(sum(abs(coalesce(real.p, 0) - coalesce(syn.p, 0))) / 2, 3)
		FROM real FULL JOIN syn ON real.x = syn.x AND real.y = syn.y$q$, a, b) INTO r;
	RETURN r;
END $$;
SELECT a || ' x ' || b AS marginal, pg_temp.tvd(a, b) AS total_variation_distance FROM pairs;
SELECT education,
	   round(avg((income = '>50K')::int) FILTER (WHERE src = 'real'), 3) AS real_share_over_50k,
	   round(avg((income = '>50K')::int) FILTER (WHERE src = 'synthetic'), 3) AS synthetic_share_over_50k
FROM (SELECT 'real' src, education, income FROM adult UNION ALL
	  SELECT 'synthetic', education, income FROM research_team.adult_synthetic) u
GROUP BY education ORDER BY real_share_over_50k DESC LIMIT 6;

\echo '***    The owner''s full report, from SQL: dp_evaluate reads the real table with the owner''s rights'
\echo '***    (NOT a DP release, nothing charged), evaluate.py''s definitions (docs/EVALUATION.md):'
SELECT metric, round(value::numeric, 4) AS value, round(reference::numeric, 4) AS reference
FROM dp_evaluate('adult', 'research_team.adult_synthetic') WHERE scope = 'table' AND value IS NOT NULL;
\pset tuples_only on
\pset format unaligned
\o :report
SELECT dp_report('adult', 'research_team.adult_synthetic');
\o
\pset tuples_only off
\pset format aligned
\echo '***    ... and as one picture (dp_report: histograms, 2-way TVD heat map, the numbers, the budget):'
\echo '***    written to' :report

\echo
\echo '*** 6. The analyst spends the rest: calls at epsilon 1 until the budget refuses.'
SET ROLE research_team;
DO $$
DECLARE
	n int := 0;
BEGIN
	LOOP
		PERFORM count(*) FROM dp_marginal('adult', ARRAY['age', 'income'], epsilon => 1.0);
		n := n + 1;
	END LOOP;
EXCEPTION WHEN SQLSTATE 'YD001' THEN
	RAISE NOTICE '% more calls at epsilon 1 were released; the next was refused: %', n, SQLERRM;
END
$$;
SELECT count(*) FROM dp_marginal('adult', ARRAY['age'], epsilon => 1.0);
RESET ROLE;

\echo
\echo '*** 7. The auditor reads the ledger: every charge, committed before any noise was drawn.'
SELECT id, role, function, columns, epsilon, round(rho, 6) AS rho, status, reason FROM dp_ledger ORDER BY id;
SELECT round(rho_allowance, 6) AS allowance, round(rho_spent, 6) AS spent,
	   rho_spent = (SELECT sum(rho) FROM dp_ledger WHERE status <> 'refused') AS spent_equals_ledger
FROM dp_budget;
