-- The privacy schedule of dp_synthesize (src/core/dp_schedule.h, docs/PRIVACY.md): the ledger
-- charges exactly the schedule's units, and the stored model lists the schedule's releases, each
-- beside what the call spent on it, one for one: a fixed release at its rho, one that depends on
-- released values (focus, the rounds' selections and measurements) within its bounds, nothing
-- spent outside the schedule, and the method's releases adding up to its rho.
\i test/regress_helpers.sql
CREATE TABLE sched (id serial, sex text NOT NULL, age int4 NOT NULL, dept text, score float8);
INSERT INTO sched (sex, age, dept, score)
SELECT (ARRAY['F', 'M'])[1 + i % 2], 20 + (i * 7) % 60, (ARRAY['a', 'b', 'c'])[1 + (i / 2) % 3], (i % 97) * 1.5
FROM generate_series(1, 2000) i;
SELECT dp_protect('sched', epsilon => 50);
SELECT dp_declare('sched', 'sex', categories => ARRAY['F', 'M']);
SELECT dp_declare('sched', 'age', lower => 0, upper => 99, bins => 10);
SELECT dp_declare('sched', 'dept', categories => ARRAY['a', 'b', 'c']);
SELECT dp_column_policy('sched', 'id', treatment => 'exclude');

-- One model's schedule against its ledger row and itself (the tolerances: the floating sums of
-- a release's parts, 1e-12 relative; the last round leaves at most 1e-9 of the pool).
CREATE FUNCTION schedule_of(model int8) RETURNS TABLE (
	releases text, charge_is_the_sum bool, ledger_charges_it bool, one_for_one bool, nothing_unplanned bool,
	method_adds_up bool, one_way_per_column bool)
LANGUAGE sql AS $$
	WITH p AS (SELECT dp_model_json(model)->'privacy' AS p, m.ledger_id, m.columns
			   FROM dp_models m WHERE m.model_id = model),
	r AS (SELECT x.r, x.i FROM p, jsonb_array_elements(p.p->'releases') WITH ORDINALITY x(r, i)),
	method AS (SELECT coalesce(sum((r->>'spent')::float8), 0) AS spent FROM r
			   WHERE r->>'release' NOT IN ('discovery', 'rows per unit'))
	SELECT (SELECT string_agg(r->>'release' || ' (' || (r->>'mechanism') || ')', ', ' ORDER BY i) FROM r),
		   (p->>'rho_units_charged')::int8 =
				(SELECT sum((r->>'rho_units')::int8) FROM r) + (p->>'rho_units_method')::int8,
		   (SELECT l.rho = dpsynth._units_rho((p->>'rho_units_charged')::int8) FROM dpsynth.ledger l
			WHERE l.id = p.ledger_id),
		   (SELECT bool_and((r->>'spent')::float8 >= (r->>'rho_min')::float8 * (1 - 1e-12) AND
							(r->>'spent')::float8 <= (r->>'rho_max')::float8 * (1 + 1e-12) AND
							((r->>'draws')::int > 0 OR (r->>'rho_max')::float8 = 0 OR r->>'release' = 'focus'))
			FROM r),
		   (p->>'spent_unplanned')::float8 = 0,
		   method.spent + (p->>'rho_unspent')::float8 <= (p->>'rho_method')::float8 * (1 + 1e-12) AND
		   method.spent + (p->>'rho_unspent')::float8 >= (p->>'rho_method')::float8 * (1 - 1e-8),
		   (SELECT (r->>'count')::int = p.columns AND
				   ((r->>'draws')::int = p.columns OR
					((r->>'draws')::int = 2 * p.columns AND (r->>'spent')::float8 > (r->>'rho')::float8 * (1 + 1e-9)))
			FROM r WHERE r->>'release' = 'one-way')
	FROM p, method
$$;

-- dp_synthesize_plan: the schedule before the call, charged nothing; after it, the same releases
-- in the stored model, field for field, and the ledger's charge the plan's sum of rho_units.
CREATE TABLE plans (tag text, release text, mechanism text, rho_units int8, count int4, rho float8,
					rho_min float8, rho_max float8, i int8);
CREATE FUNCTION plan_vs_model(t text, model int8) RETURNS TABLE (ledger_charges_the_plan bool, same_releases bool)
LANGUAGE sql AS $$
	WITH j AS (SELECT dp_model_json(model)->'privacy' AS p, m.ledger_id FROM dp_models m WHERE m.model_id = model),
	stored AS (SELECT x.n, x.r FROM j, jsonb_array_elements(j.p->'releases') WITH ORDINALITY x(r, n)),
	planned AS (SELECT row_number() OVER (ORDER BY p.i) AS n, p.* FROM plans p
				WHERE p.tag = t AND p.release NOT IN ('method', 'unspent'))
	SELECT (SELECT l.rho = dpsynth._units_rho((SELECT sum(q.rho_units) FROM plans q WHERE q.tag = t)::int8)
			FROM dpsynth.ledger l, j WHERE l.id = j.ledger_id),
		   (SELECT count(*) FROM planned) = (SELECT count(*) FROM stored) AND
		   (SELECT bool_and(p.release = s.r->>'release' AND p.mechanism = s.r->>'mechanism' AND
							coalesce(p.rho_units, 0) = (s.r->>'rho_units')::int8 AND p.count = (s.r->>'count')::int AND
							p.rho = (s.r->>'rho')::float8 AND p.rho_min = (s.r->>'rho_min')::float8 AND
							p.rho_max = (s.r->>'rho_max')::float8)
			FROM planned p JOIN stored s ON s.n = p.n)
$$;
SELECT count(*) AS ledger_before FROM dpsynth.ledger \gset
INSERT INTO plans SELECT 'adaptive', * FROM dp_synthesize_plan('sched', epsilon => 1) WITH ORDINALITY x;
SELECT release, mechanism, rho_units IS NOT NULL AS charged_units, count FROM plans WHERE tag = 'adaptive' ORDER BY i;
SELECT count(*) - :ledger_before AS charged_by_the_plan FROM dpsynth.ledger;
SELECT try_sql($$SELECT * FROM dp_synthesize_plan('sched', epsilon => 1, method => 'privsyn', focus => ARRAY['age'])$$) AS focus_privsyn;
SELECT try_sql($$SELECT * FROM dp_synthesize_plan('sched', epsilon => -1)$$) AS bad_epsilon;

SET client_min_messages = warning;
-- adaptive (the default), score's bounds discovered: discovery, one-way, select, measure
SELECT model_id AS m_adaptive FROM dp_synthesize('sched', epsilon => 1, target => 's_adaptive') \gset
SELECT * FROM schedule_of(:m_adaptive);
SELECT * FROM plan_vs_model('adaptive', :m_adaptive);
SELECT (r->>'count')::int AS discovered, (r->>'rho_units')::int8 =
	   (l.details->>'discovered_columns')::int8 * (l.details->>'rho_units_per_discovery')::int8 AS ledger_agrees,
	   (r->>'spent')::float8 = (r->>'rho')::float8 AS spent_as_planned
FROM dp_models m, dpsynth.ledger l, jsonb_array_elements(dp_model_json(m.model_id)->'privacy'->'releases') r
WHERE m.model_id = :m_adaptive AND l.id = m.ledger_id AND r->>'release' = 'discovery';
-- focus: every pair with age measured first, from the rounds' pool
INSERT INTO plans SELECT 'focus', * FROM dp_synthesize_plan('sched', epsilon => 1, focus => ARRAY['age'],
													  columns => ARRAY['sex', 'age', 'dept']) WITH ORDINALITY x;
SELECT model_id AS m_focus FROM dp_synthesize('sched', epsilon => 1, target => 's_focus', focus => ARRAY['age'],
											  columns => ARRAY['sex', 'age', 'dept']) \gset
SELECT * FROM schedule_of(:m_focus);
SELECT * FROM plan_vs_model('focus', :m_focus);
SELECT (r->>'draws')::int AS focus_pairs, (r->>'spent')::float8 > 0 AS focus_spent,
	   (r->>'spent')::float8 <= (dp_model_json(:m_focus)->'privacy'->>'rho_rounds')::float8 / 2 AS at_most_half_the_pool
FROM jsonb_array_elements(dp_model_json(:m_focus)->'privacy'->'releases') r WHERE r->>'release' = 'focus';
-- PrivSyn: one-way, InDif, publish, each at its share of the method's rho
INSERT INTO plans SELECT 'privsyn', * FROM dp_synthesize_plan('sched', epsilon => 1, method => 'privsyn',
														columns => ARRAY['sex', 'age', 'dept']) WITH ORDINALITY x;
SELECT model_id AS m_privsyn FROM dp_synthesize('sched', epsilon => 1, target => 's_privsyn', method => 'privsyn',
												columns => ARRAY['sex', 'age', 'dept']) \gset
SELECT * FROM schedule_of(:m_privsyn);
SELECT * FROM plan_vs_model('privsyn', :m_privsyn);
SELECT r->>'release' AS release, round(((r->>'rho')::float8 / (dp_model_json(:m_privsyn)->'privacy'->>'rho_method')::float8)::numeric, 12) AS share
FROM jsonb_array_elements(dp_model_json(:m_privsyn)->'privacy'->'releases') r;
-- PrivSyn on one column: no pair to score or publish, their shares unspent (and said so)
CREATE TABLE sched_one (dept text);
INSERT INTO sched_one SELECT (ARRAY['a', 'b', 'c'])[1 + i % 3] FROM generate_series(1, 500) i;
SELECT dp_protect('sched_one', epsilon => 50);
SELECT dp_declare('sched_one', 'dept', categories => ARRAY['a', 'b', 'c']);
INSERT INTO plans SELECT 'one', * FROM dp_synthesize_plan('sched_one', epsilon => 1, method => 'privsyn') WITH ORDINALITY x;
SELECT release, round((rho / (SELECT rho FROM plans WHERE tag = 'one' AND release = 'method'))::numeric, 12) AS share
FROM plans WHERE tag = 'one' ORDER BY i;
SELECT model_id AS m_one FROM dp_synthesize('sched_one', epsilon => 1, target => 's_one', method => 'privsyn') \gset
SELECT * FROM schedule_of(:m_one);
SELECT * FROM plan_vs_model('one', :m_one);
SELECT round(((dp_model_json(:m_one)->'privacy'->>'rho_unspent')::float8 /
			  (dp_model_json(:m_one)->'privacy'->>'rho_method')::float8)::numeric, 12) AS unspent_share;

-- The adaptive method's one-way top-up (dp_oneway_topup): on a table of few rows for its budget,
-- the one-way marginals are released a second time from the rounds' pool (twice the draws,
-- more than the one-way share's rho, at most its rho_max), and the whole still adds up
CREATE TABLE sched_small (sex text NOT NULL, dept text NOT NULL, age int4 NOT NULL);
INSERT INTO sched_small SELECT (ARRAY['F', 'M'])[1 + i % 2], (ARRAY['a', 'b', 'c', 'd', 'e'])[1 + (i / 2) % 5],
	20 + (i * 7) % 60 FROM generate_series(1, 120) i;
SELECT dp_protect('sched_small', epsilon => 50);
SELECT dp_declare('sched_small', 'sex', categories => ARRAY['F', 'M']);
SELECT dp_declare('sched_small', 'dept', categories => ARRAY['a', 'b', 'c', 'd', 'e']);
SELECT dp_declare('sched_small', 'age', lower => 0, upper => 99, bins => 10);
INSERT INTO plans SELECT 'small', * FROM dp_synthesize_plan('sched_small', epsilon => 0.5) WITH ORDINALITY x;
SELECT model_id AS m_small FROM dp_synthesize('sched_small', epsilon => 0.5, target => 's_small') \gset
SELECT * FROM schedule_of(:m_small);
SELECT * FROM plan_vs_model('small', :m_small);
SELECT (r->>'draws')::int AS one_way_draws, (r->>'spent')::float8 > (r->>'rho')::float8 * 1.01 AS topped_up,
	   (r->>'spent')::float8 <= (r->>'rho_max')::float8 AS within_its_most,
	   round(((r->>'rho_max')::float8 / (dp_model_json(:m_small)->'privacy'->>'rho_method')::float8)::numeric, 12) AS most_share
FROM jsonb_array_elements(dp_model_json(:m_small)->'privacy'->'releases') r WHERE r->>'release' = 'one-way';

-- A table with a privacy unit: the rows-per-unit histogram, charged in units of its own; the
-- method's rho is per group of k rows (its sensitivity^2 in the schedule)
CREATE TABLE sched_units (patient int4, dept text, age int4);
INSERT INTO sched_units SELECT i % 300, (ARRAY['a', 'b'])[1 + i % 2], 20 + i % 50 FROM generate_series(1, 900) i;
SELECT dp_protect('sched_units', epsilon => 50);
SELECT dp_declare('sched_units', 'dept', categories => ARRAY['a', 'b']);
SELECT dp_declare('sched_units', 'age', lower => 0, upper => 99, bins => 5);
SELECT dp_privacy_unit('sched_units', 'patient', max_rows_per_unit => 3);
INSERT INTO plans SELECT 'unit', * FROM dp_synthesize_plan('sched_units', epsilon => 1) WITH ORDINALITY x;
SELECT model_id AS m_unit FROM dp_synthesize('sched_units', epsilon => 1, target => 's_unit') \gset
SELECT * FROM schedule_of(:m_unit);
SELECT * FROM plan_vs_model('unit', :m_unit);
SELECT (p->>'unit_sensitivity2')::int AS sensitivity2, (r->>'count')::int AS histogram_cells,
	   (r->>'rho_units')::int8 = (l.details->>'rho_units_rows_per_unit')::int8 AS ledger_agrees,
	   (r->>'spent')::float8 = (r->>'rho')::float8 AS spent_as_planned
FROM dp_models m, dpsynth.ledger l, LATERAL (SELECT dp_model_json(m.model_id)->'privacy' AS p) x,
	 jsonb_array_elements(p->'releases') r
WHERE m.model_id = :m_unit AND l.id = m.ledger_id AND r->>'release' = 'rows per unit';
RESET client_min_messages;
