-- dpsynth 0.2.0 -> 0.3.0 (issue 10: values inside learned bins follow the released histogram).
--  * dpsynth.domains.shape: with learned quantile edges, the released noisy histogram that placed
--    them (its significant span, shrunk toward uniform inside each bin), as (lo, hi, weight)
--    pieces; synthetic values are drawn where it has mass instead of uniformly over each bin
--    (src/discover.c, dp_shape_* in src/core/dp_decode.c);
--  * a new declaration of a column forgets its shape, and a partition handed a protection gets it.
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.3.0'" to load this file. \quit

ALTER TABLE dpsynth.domains ADD COLUMN shape float8[];
ALTER TABLE dpsynth.domains ADD CONSTRAINT domains_shape_check CHECK (shape IS NULL OR (kind = 'edges' AND source = 'dp'
		AND pg_catalog.cardinality(shape) % 3 = 0));

CREATE OR REPLACE FUNCTION dpsynth._declare_domain(invoker oid, tbl regclass, col name, categories text[],
										lower float8, upper float8, bins int4, points float8[],
										binning text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	n int2;
	typ oid;
	nbins int4 := bins;
	is_integer boolean;
	is_real boolean;
BEGIN
	IF tbl IS NULL OR col IS NULL THEN
		RAISE EXCEPTION 'table and column must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	PERFORM dpsynth._check_owner(invoker, tbl, 'declare domains of');
	PERFORM dpsynth._check_protected(tbl);
	PERFORM dpsynth._lock_domains(tbl);
	n := dpsynth._column_attnum(tbl, col);
	SELECT dpsynth._base_type(atttypid) INTO typ FROM pg_catalog.pg_attribute WHERE attrelid = tbl AND attnum = n;
	is_integer := typ IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'date'::regtype,
						  'timestamp'::regtype, 'timestamptz'::regtype);
	is_real := typ IN ('float4'::regtype, 'float8'::regtype, 'numeric'::regtype);

	IF coalesce(binning, 'equal') NOT IN ('equal', 'quantile', 'auto') THEN
		RAISE EXCEPTION 'binning must be equal, quantile or auto, not %', binning USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF categories IS NOT NULL THEN
		IF lower IS NOT NULL OR upper IS NOT NULL OR bins IS NOT NULL OR points IS NOT NULL
			OR coalesce(binning, 'equal') <> 'equal' THEN
			RAISE EXCEPTION 'declare either categories or lower/upper/bins for column "%", not both', col
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF cardinality(categories) = 0 OR cardinality(categories) > 65535 THEN
			RAISE EXCEPTION 'column "%" needs between 1 and 65535 categories, not %', col, cardinality(categories)
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF array_position(categories, NULL) IS NOT NULL THEN
			RAISE EXCEPTION 'categories of column "%" must not contain NULL', col
				USING ERRCODE = 'null_value_not_allowed',
					  HINT = 'NULL always has a cell of its own when the column is nullable.';
		END IF;
		IF (SELECT count(DISTINCT c) FROM unnest(categories) c) <> cardinality(categories) THEN
			RAISE EXCEPTION 'categories of column "%" contain duplicates', col
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF typ = 'bool'::regtype
			AND EXISTS (SELECT 1 FROM unnest(categories) c WHERE c NOT IN ('true', 'false')) THEN
			RAISE EXCEPTION 'categories of boolean column "%" must be ''true'' or ''false''', col
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		INSERT INTO dpsynth.domains AS d (relid, attnum, kind, categories, declared_by)
			VALUES (tbl, n, 'categories', categories, invoker)
			ON CONFLICT (relid, attnum) DO UPDATE SET kind = 'categories', categories = EXCLUDED.categories,
				lower = NULL, upper = NULL, bins = NULL, edges = NULL, points = NULL, shape = NULL, source = 'declared',
				ledger_id = NULL, binning = 'equal',
				declared_by = EXCLUDED.declared_by, declared_at = pg_catalog.now();
		RETURN;
	END IF;

	IF lower IS NULL OR upper IS NULL THEN
		RAISE EXCEPTION 'column "%" needs categories, or both lower and upper bounds', col
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF NOT (is_integer OR is_real) THEN
		RAISE EXCEPTION 'column "%" of type % cannot be declared with numeric bounds', col, typ::regtype
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'Bounds and bins apply to smallint, integer, bigint, real, double precision, numeric, date and timestamp columns; declare categories instead.';
	END IF;
	IF points IS NOT NULL AND (array_position(points, NULL) IS NOT NULL
		OR EXISTS (SELECT 1 FROM unnest(points) p WHERE NOT (p >= lower AND p <= upper)
					OR (is_integer AND p <> trunc(p)))) THEN
		RAISE EXCEPTION 'points of column "%" must be % values within [%, %]', col,
			CASE WHEN is_integer THEN 'integer' ELSE 'finite' END, lower, upper
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF NOT (lower > '-Infinity' AND upper < 'Infinity' AND lower < upper) THEN  -- also rejects NaN
		RAISE EXCEPTION 'bounds of column "%" must be finite with lower < upper, not [%, %]', col, lower, upper
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF is_integer THEN
		IF lower <> trunc(lower) OR upper <> trunc(upper) THEN
			RAISE EXCEPTION 'bounds of integer column "%" must be integers, not [%, %]', col, lower, upper
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF abs(lower) > 2^53 OR abs(upper) > 2^53 THEN	-- exact in float8
			RAISE EXCEPTION 'bounds of column "%" must lie within +/-2^53', col
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		nbins := coalesce(nbins, least(32, upper - lower + 1)::int4);
		-- 'auto' only where equal-width bins would merge values: with one bin per value there is
		-- nothing to learn
		IF coalesce(binning, CASE WHEN bins IS NULL THEN 'auto' END) = 'auto' AND nbins >= upper - lower + 1 THEN
			binning := 'equal';
		END IF;
		IF nbins > upper - lower + 1 THEN
			RAISE EXCEPTION 'integer column "%" has only % values in [%, %], fewer than % bins', col,
				upper - lower + 1, lower, upper, nbins
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
	END IF;
	nbins := coalesce(nbins, 32);
	-- the default: neither bins nor binning given
	IF binning IS NULL AND bins IS NULL THEN
		binning := 'auto';
	END IF;
	IF nbins < 1 OR nbins > 65535 THEN
		RAISE EXCEPTION 'bins of column "%" must be between 1 and 65535, not %', col, nbins
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	INSERT INTO dpsynth.domains AS d (relid, attnum, kind, lower, upper, bins, points, binning, declared_by)
		VALUES (tbl, n, 'bins', lower, upper, nbins,
				(SELECT array_agg(DISTINCT p ORDER BY p) FROM unnest(points) p), coalesce(binning, 'equal'), invoker)
		ON CONFLICT (relid, attnum) DO UPDATE SET kind = 'bins', categories = NULL, edges = NULL, shape = NULL,
			lower = EXCLUDED.lower, upper = EXCLUDED.upper, bins = EXCLUDED.bins, points = EXCLUDED.points,
			binning = EXCLUDED.binning, source = 'declared', ledger_id = NULL,
			declared_by = EXCLUDED.declared_by, declared_at = pg_catalog.now();
END
$$;

CREATE OR REPLACE FUNCTION dpsynth._on_detach(child oid, parent oid) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	donor dpsynth.budgets;
	new_id bigint;
BEGIN
	SELECT b.* INTO donor FROM dpsynth.budgets b
		WHERE (b.relid = parent OR b.relid IN (SELECT r FROM dpsynth._protected_relatives(parent) r))
		  AND dpsynth._identifies(b.relid, b.relname)
		LIMIT 1;
	IF NOT FOUND OR donor.relid = child THEN
		RETURN;
	END IF;
	INSERT INTO dpsynth.budgets (relid, relname, epsilon, delta, rho_allowance, rho_spent, delta_spent,
								 selection_delta, discovery, protected_by)
		VALUES (child, dpsynth._qualified_name(child), donor.epsilon, donor.delta, donor.rho_allowance,
				donor.rho_spent, donor.delta_spent, donor.selection_delta, donor.discovery, donor.protected_by)
		RETURNING id INTO new_id;
	INSERT INTO dpsynth.domains (relid, attnum, kind, categories, lower, upper, bins, edges, points, binning,
								 source, ledger_id, declared_by, declared_at, shape)
		SELECT child, ca.attnum, d.kind, d.categories, d.lower, d.upper, d.bins, d.edges, d.points, d.binning,
			   d.source, d.ledger_id, d.declared_by, d.declared_at, d.shape
		FROM dpsynth.domains d
		JOIN pg_catalog.pg_attribute pa ON pa.attrelid = donor.relid AND pa.attnum = d.attnum
		JOIN pg_catalog.pg_attribute ca ON ca.attrelid = child AND ca.attname = pa.attname AND NOT ca.attisdropped
		WHERE d.relid = donor.relid;
	INSERT INTO dpsynth.column_policies (relid, attnum, treatment, discovery, other, set_by, set_at)
		SELECT child, ca.attnum, p.treatment, p.discovery, p.other, p.set_by, p.set_at
		FROM dpsynth.column_policies p
		JOIN pg_catalog.pg_attribute pa ON pa.attrelid = donor.relid AND pa.attnum = p.attnum
		JOIN pg_catalog.pg_attribute ca ON ca.attrelid = child AND ca.attname = pa.attname AND NOT ca.attisdropped
		WHERE p.relid = donor.relid;
	INSERT INTO dpsynth.role_limits (relid, role, epsilon, rho_limit, set_by, set_at)
		SELECT child, role, epsilon, rho_limit, set_by, set_at FROM dpsynth.role_limits WHERE relid = donor.relid;
	INSERT INTO dpsynth.ledger (budget_id, relid, relname, role, rolname, session_role, charged_to, function,
								epsilon, delta, rho, delta_add, details, status, completed_at)
		SELECT new_id, child, dpsynth._qualified_name(child), min(l.role), min(l.rolname), min(l.session_role),
			   l.charged_to, 'detached', donor.epsilon, donor.delta, sum(l.rho), sum(l.delta_add),
			   jsonb_build_object('from_table', donor.relname, 'from_budget', donor.id, 'charges', count(*)),
			   'completed', pg_catalog.clock_timestamp()
		FROM dpsynth.ledger l WHERE l.budget_id = donor.id AND l.status <> 'refused'
		GROUP BY l.charged_to;
	RAISE NOTICE 'table % leaves protected table % and keeps its protection: epsilon %, delta %, rho spent % of %',
		child::regclass, donor.relid, donor.epsilon, donor.delta, donor.rho_spent, donor.rho_allowance;
END
$$;
