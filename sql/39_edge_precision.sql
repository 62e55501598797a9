-- The rounded edges of wide-range bins keep the precision their bins need (dp_binning_round_edges):
-- a real column's inner edges keep no finer decimal than 1.5 times their narrower bin, nor than a
-- numeric column's scale, so that values recorded to a tenth (or a numeric(p, s) column's
-- values) keep their side of every edge when they are drawn inside a bin; bins that rounding
-- empties merge.
\i test/regress_helpers.sql

-- 40,000 rows: w recorded to a tenth, most of them in [60, 64), one cell of the discovery grid,
-- where the quantile bins are narrower than a tenth; m the same values rounded, in a numeric(6, 0);
-- d the same in a domain over a domain over numeric(6, 0) (the scale is the base type's).
CREATE DOMAIN prec_units AS numeric(6, 0);
CREATE DOMAIN prec_units_pos AS prec_units CHECK (VALUE >= 0);
CREATE TABLE prec (w float8 NOT NULL, m numeric(6, 0) NOT NULL, d prec_units_pos NOT NULL);
INSERT INTO prec SELECT x, round(x), round(x) FROM (SELECT 60 + (i % 37) / 10.0 + (i % 3) / 10.0 AS x
												   FROM generate_series(1, 36000) i) s;
INSERT INTO prec SELECT 45 + (i % 100) / 10.0, round(45 + (i % 100) / 10.0), round(45 + (i % 100) / 10.0)
FROM generate_series(1, 4000) i;
SELECT dp_protect('prec', epsilon => 50);
SELECT dp_declare('prec', 'w', lower => 0, upper => 100);
SELECT dp_declare('prec', 'm', lower => 0, upper => 100);
SELECT dp_declare('prec', 'd', lower => 0, upper => 100);
SELECT true AS synthesized FROM dp_synthesize('prec', epsilon => 5, target => 'prec_synth');
-- w: more than 16 bins, every inner edge on a tenth (at hundredths before, where its bins were
-- narrower than a tenth: half a tenth's values were then drawn below it); m and d: on units, the
-- scale of numeric(6, 0).
SELECT column_name, cardinality(edges) - 1 > 16 AS over_16_bins,
	   (SELECT bool_and(abs(e * 10 - round(e * 10)) < 1e-9) FROM unnest(edges) e) AS edges_on_tenths,
	   (SELECT bool_and(e = round(e)) FROM unnest(edges) e) AS edges_on_units
FROM dp_domains WHERE table_name = 'prec'::regclass ORDER BY 1;
DROP TABLE prec, prec_synth;
DROP DOMAIN prec_units_pos, prec_units;
