-- dpsynth 0.3.0 -> 0.3.1: the text discovery's delta share no longer fails for a budget whose
-- epsilon is between about 680 and 1000 (selection_delta / e^epsilon underflowed float8 and the
-- cast raised "out of range for type double precision"); it is 0 there, as above 1000.
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.3.1'" to load this file. \quit

CREATE OR REPLACE FUNCTION dpsynth._selection_share(t oid) RETURNS float8 LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp
	-- in numeric, then to float8; a share under 1e-300 (a budget's epsilon above about 680:
	-- selection_delta / e^epsilon underflows float8) is none
	AS $$ SELECT CASE WHEN s.share < 1e-300 THEN 0 ELSE s.share::float8 END
		  FROM dpsynth.budgets b,
			   LATERAL (SELECT CASE WHEN b.epsilon >= 1000 THEN 0 ELSE
						((b.selection_delta::numeric / exp(b.epsilon::numeric) - b.delta_spent) /
						 greatest(1, (SELECT count(*) FROM pg_catalog.pg_attribute a
									 WHERE a.attrelid = t AND a.attnum > 0 AND NOT a.attisdropped
									   AND dpsynth._base_type(a.atttypid) IN ('text'::regtype, 'varchar'::regtype, 'bpchar'::regtype)
									   AND NOT EXISTS (SELECT 1 FROM dpsynth.domains d WHERE d.relid = t AND d.attnum = a.attnum)
									   AND NOT EXISTS (SELECT 1 FROM dpsynth.column_policies p
													   WHERE p.relid = t AND p.attnum = a.attnum AND p.treatment <> 'synthesize')))
						 -- a hair less, so that float8 round trips can never push the sum past the allowance
						 * 0.999999999)
						END AS share) s
		  WHERE b.relid = t $$;
