-- The adaptive method's triples (src/core/dp_adaptive.h, step 2c) through SQL: c = a XOR b (one
-- row in 20 flipped), a relation no pair of the three shows.  A focus on c measures {a, c} and
-- {b, c} before the rounds, so the triple {a, b, c} is a candidate from the first round; its
-- error is half the table, so it is selected and measured.  The stored model holds it, the
-- synthetic rows keep the relation, and so do rows sampled again from the model (a model with
-- triples loads: at most one marginal per column and pair, plus the triples).
\i test/regress_helpers.sql
CREATE TABLE x_src (a boolean NOT NULL, b boolean NOT NULL, c boolean NOT NULL);
INSERT INTO x_src
SELECT a, b, (a <> b) <> (i % 20 = 0)
FROM generate_series(1, 4000) i, LATERAL (SELECT (i * 7919) % 13 < 6 AS a, (i * 104729) % 17 < 8 AS b) x;
SELECT dp_protect('x_src', epsilon => 30);
SELECT round(avg((c = (a <> b))::int), 2) AS real_share FROM x_src;

SELECT model_id AS model FROM dp_synthesize('x_src', epsilon => 5, focus => ARRAY['c'], target => 'x_synth') \gset
SELECT count(*) FILTER (WHERE cardinality(columns) = 3) AS triples,
	   bool_and(columns = '{a,b,c}') FILTER (WHERE cardinality(columns) = 3) AS the_triple
FROM dp_model_marginals(:model);
SELECT avg((c = (a <> b))::int) > 0.85 AS synthetic_keeps_xor FROM x_synth;
SELECT rows_written = 2000 AS sampled FROM dp_sample(:model, rows => 2000, target => 'x_again');
SELECT avg((c = (a <> b))::int) > 0.85 AS sample_keeps_xor FROM x_again;
