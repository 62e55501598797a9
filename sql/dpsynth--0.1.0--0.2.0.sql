-- dpsynth 0.1.0 -> 0.2.0 (issue 9: the holes an outside audit found).
--  * a protection applies only to the table it was made for: its OID and its qualified name
--    (renames followed by an event trigger); temporary tables and dpsynth's own tables are refused;
--    protections of vanished tables are neither dumped nor used, and go at the next dp_protect;
--  * one lock serializes DP discovery with every change of a table's domains and policies;
--  * a table's discovery => false forbids discovery whatever a column's policy says (src/domain.c);
--  * repeated refusals are counted in dpsynth.refusals instead of one ledger row each;
--  * DROP EXTENSION dpsynth is refused unless a superuser sets dpsynth.allow_drop_extension;
--  * partitioned and inherited tables are protected as one table (one budget for the tree;
--    ATTACH refused where rows would get two budgets, DETACH hands the protection along);
--  * dp_discover learns every undeclared domain once, as a charged release of its own.
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.2.0'" to load this file. \quit

CREATE FUNCTION dpsynth._qualified_name(rel oid) RETURNS text LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp
	AS $$ SELECT pg_catalog.format('%I.%I', n.nspname, c.relname)
		  FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		  WHERE c.oid = rel $$;

CREATE FUNCTION dpsynth._identifies(rel oid, name text) RETURNS boolean LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp
	AS $$ SELECT coalesce(dpsynth._qualified_name(rel) = name, false) $$;

CREATE FUNCTION dpsynth._lock_domains(rel oid) RETURNS void
	AS 'MODULE_PATHNAME', 'dpsynth_lock_domains_sql' LANGUAGE C VOLATILE STRICT;


-- Protections of tables that are gone, temporary, or dpsynth's own are dropped (their ledger rows
-- stay); the others get their schema-qualified name, which from now on must match.
DELETE FROM dpsynth.budgets b
	WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid = b.relid AND c.relpersistence <> 't'
					  AND c.relnamespace <> 'dpsynth'::regnamespace);
UPDATE dpsynth.budgets SET relname = dpsynth._qualified_name(relid);

-- Refused attempts, counted: one row per protection, role, function and reason, with the first
-- and the last attempt and how many there were.  The first attempt of each kind also gets a
-- ledger row (status 'refused'); the others only add to attempts here, in a transaction
-- committed without waiting for its WAL flush (nothing was released), so that a loop of refused
-- calls costs bounded disk and no synchronous I/O.  Written only by the charging worker.
CREATE TABLE dpsynth.refusals (
	budget_id		bigint NOT NULL,
	role			oid NOT NULL,
	rolname			name NOT NULL,
	function		text NOT NULL,
	reason			text NOT NULL,
	first_at		timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
	last_at			timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
	attempts		bigint NOT NULL DEFAULT 1 CHECK (attempts >= 1),
	first_ledger_id	bigint NOT NULL,	-- the ledger row of the first attempt
	last_rho		numeric NOT NULL,	-- what the last attempt asked for
	PRIMARY KEY (budget_id, role, function, reason)
) WITH (fillfactor = 50);	-- room for HOT updates of the counters

SELECT pg_catalog.pg_extension_config_dump('dpsynth.budgets', 'WHERE dpsynth._identifies(relid, relname)');
SELECT pg_catalog.pg_extension_config_dump('dpsynth.domains',
	'WHERE relid IN (SELECT b.relid FROM dpsynth.budgets b WHERE dpsynth._identifies(b.relid, b.relname))');
SELECT pg_catalog.pg_extension_config_dump('dpsynth.role_limits',
	'WHERE relid IN (SELECT b.relid FROM dpsynth.budgets b WHERE dpsynth._identifies(b.relid, b.relname))');
SELECT pg_catalog.pg_extension_config_dump('dpsynth.column_policies',
	'WHERE relid IN (SELECT b.relid FROM dpsynth.budgets b WHERE dpsynth._identifies(b.relid, b.relname))');
SELECT pg_catalog.pg_extension_config_dump('dpsynth.refusals', '');

REVOKE ALL ON dpsynth.refusals FROM PUBLIC;

-- The protected tables that share rows with rel: its ancestors and descendants through
-- partitioning or inheritance.  A tree holds one protection at most (dp_protect, and
-- dpsynth._on_attach for ATTACH PARTITION and INHERIT), so that no row has two budgets.
CREATE OR REPLACE FUNCTION dpsynth._protected_relatives(rel oid) RETURNS SETOF regclass LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp
	AS $$ WITH RECURSIVE up(r) AS (
			  SELECT inhparent FROM pg_catalog.pg_inherits WHERE inhrelid = rel
			  UNION SELECT i.inhparent FROM pg_catalog.pg_inherits i JOIN up ON i.inhrelid = up.r),
		  down(r) AS (
			  SELECT inhrelid FROM pg_catalog.pg_inherits WHERE inhparent = rel
			  UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN down ON i.inhparent = down.r)
		  SELECT b.relid FROM dpsynth.budgets b
		  WHERE b.relid IN (SELECT r FROM up UNION ALL SELECT r FROM down)
			AND dpsynth._identifies(b.relid, b.relname)
		  ORDER BY 1 $$;


CREATE OR REPLACE FUNCTION dpsynth._dp_declare(invoker oid, tbl regclass, domains jsonb)
RETURNS int4 LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	k text;
	v jsonb;
	n int4 := 0;
BEGIN
	IF tbl IS NULL OR domains IS NULL THEN
		RAISE EXCEPTION 'table and domains must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF jsonb_typeof(domains) <> 'object' THEN
		RAISE EXCEPTION 'domains must be a JSON object keyed by column name' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	FOR k, v IN SELECT key, value FROM jsonb_each(domains) WHERE key NOT LIKE '\_%' ORDER BY key LOOP
		IF jsonb_typeof(v) <> 'object' THEN
			RAISE EXCEPTION 'domain of column "%" must be a JSON object', k USING ERRCODE = 'invalid_parameter_value';
		END IF;
		-- a misspelt key (say "point_masses" for "points") must not be ignored silently
		IF EXISTS (SELECT 1 FROM jsonb_object_keys(v) x
				   WHERE x NOT IN ('type', 'values', 'lower', 'upper', 'bins', 'points', 'binning', 'nullable')
					 AND x NOT LIKE '\_%') THEN
			RAISE EXCEPTION 'domain of column "%" has an unknown key "%"', k,
				(SELECT x FROM jsonb_object_keys(v) x
				 WHERE x NOT IN ('type', 'values', 'lower', 'upper', 'bins', 'points', 'binning', 'nullable')
				   AND x NOT LIKE '\_%' ORDER BY 1 LIMIT 1)
				USING ERRCODE = 'invalid_parameter_value',
					  HINT = 'The keys are type, values, lower, upper, bins, points, binning and nullable; keys starting with "_" are comments.';
		END IF;
		IF v ? 'values' THEN
			PERFORM dpsynth._dp_declare(invoker, tbl, k::name,
				ARRAY(SELECT jsonb_array_elements_text(v -> 'values')), NULL, NULL, NULL, NULL, NULL);
		ELSE
			PERFORM dpsynth._dp_declare(invoker, tbl, k::name, NULL,
				(v ->> 'lower')::float8, (v ->> 'upper')::float8, (v ->> 'bins')::int4,
				CASE WHEN v ? 'points' THEN ARRAY(SELECT jsonb_array_elements_text(v -> 'points'))::float8[] END,
				v ->> 'binning');
		END IF;
		n := n + 1;
	END LOOP;
	RETURN n;
END
$$;

CREATE OR REPLACE FUNCTION dpsynth._show_value(typ oid, v float8) RETURNS text LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp
	-- each arm guarded by a range test on v alone: PostgreSQL 18 plans SQL functions with their
	-- arguments as constants and folds every arm whose guard is not constant-false, so an arm
	-- meant for another type must not be able to fail on this v
	AS $$ SELECT CASE dpsynth._base_type(typ)
		WHEN 'date'::regtype THEN CASE WHEN abs(v) < 1e8 THEN (date '2000-01-01' + v::int4)::text END
		WHEN 'timestamp'::regtype THEN
			CASE WHEN abs(v) < 1e17 THEN (timestamp '2000-01-01' + v * interval '1 microsecond')::text END
		WHEN 'timestamptz'::regtype THEN
			CASE WHEN abs(v) < 1e17 THEN (timestamptz '2000-01-01 00:00:00+00' + v * interval '1 microsecond')::text END
		ELSE v::text END $$;

CREATE OR REPLACE FUNCTION dpsynth._check_protected(rel oid) RETURNS dpsynth.budgets
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	b dpsynth.budgets;
	other regclass;
BEGIN
	SELECT * INTO b FROM dpsynth.budgets WHERE relid = rel AND dpsynth._identifies(relid, relname);
	other := (SELECT r FROM dpsynth._protected_relatives(rel) r LIMIT 1);
	IF NOT FOUND AND other IS NOT NULL THEN
		RAISE EXCEPTION 'table % is not protected by dpsynth', rel::regclass
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('Its rows are protected as part of table %s.', other),
				  HINT = format('Release from %s.', other);
	ELSIF NOT FOUND THEN
		RAISE EXCEPTION 'table % is not protected by dpsynth', rel::regclass
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  HINT = 'The table''s owner must first call dp_protect(table, epsilon => ..., delta => ...).';
	ELSIF other IS NOT NULL THEN	-- not reachable through dpsynth's own DDL checks: defence in depth
		RAISE EXCEPTION 'table % shares rows with protected table %', rel::regclass, other
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'A row may be protected by one budget only; nothing was charged.',
				  HINT = 'Detach one of them (ALTER TABLE ... DETACH PARTITION or NO INHERIT).';
	END IF;
	RETURN b;
END
$$;

CREATE OR REPLACE FUNCTION dpsynth._dp_protect(invoker oid, tbl regclass, epsilon float8, delta float8,
									selection_delta float8, discovery boolean)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	kind "char";
	persistence "char";
	other regclass;
	allowance numeric;
	spent numeric;
	dspent numeric;
BEGIN
	IF tbl IS NULL THEN
		RAISE EXCEPTION 'table must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF epsilon IS NULL OR delta IS NULL OR selection_delta IS NULL OR discovery IS NULL THEN
		RAISE EXCEPTION 'epsilon, delta, selection_delta and discovery must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF NOT (selection_delta >= 0 AND selection_delta < 1) THEN
		RAISE EXCEPTION 'selection_delta must be in [0, 1), not %', selection_delta
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'It is the extra delta set aside for discovering category values; 0 forbids that.';
	END IF;
	IF NOT (epsilon > 0 AND epsilon < 'Infinity') THEN	-- also rejects NaN
		RAISE EXCEPTION 'epsilon must be a positive finite number, not %', epsilon
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF NOT (delta > 0 AND delta < 1) THEN
		RAISE EXCEPTION 'delta must be in the open interval (0, 1), not %', delta
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'Use a delta well below 1/number of rows, for example 1e-6.';
	END IF;
	PERFORM dpsynth._check_owner(invoker, tbl, 'protect');
	SELECT relkind, relpersistence INTO kind, persistence FROM pg_catalog.pg_class WHERE oid = tbl;
	IF (SELECT relnamespace IN ('pg_catalog'::regnamespace, 'pg_toast'::regnamespace,
								'information_schema'::regnamespace)
		FROM pg_catalog.pg_class WHERE oid = tbl) THEN
		RAISE EXCEPTION 'system table % cannot be protected', tbl USING ERRCODE = 'insufficient_privilege';
	END IF;
	-- dpsynth's own tables (its catalog) are not data to release
	IF (SELECT relnamespace = 'dpsynth'::regnamespace FROM pg_catalog.pg_class WHERE oid = tbl)
		OR EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
				   WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = tbl AND d.deptype = 'e'
					 AND d.refclassid = 'pg_catalog.pg_extension'::regclass
					 AND d.refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = 'dpsynth')) THEN
		RAISE EXCEPTION 'table % belongs to dpsynth and cannot be protected', tbl
			USING ERRCODE = 'insufficient_privilege';
	END IF;
	-- A temporary table vanishes at the end of its session without any event that could take
	-- its protection with it, and its OID may later name another table.
	IF persistence = 't' THEN
		RAISE EXCEPTION 'temporary table % cannot be protected', tbl
			USING ERRCODE = 'wrong_object_type',
				  HINT = 'Protect an ordinary (permanent or unlogged) table.';
	END IF;
	IF kind NOT IN ('r', 'p') THEN
		RAISE EXCEPTION '% is not a table', tbl
			USING ERRCODE = 'wrong_object_type',
				  HINT = 'dpsynth protects ordinary and partitioned tables; views and foreign tables are not supported.';
	END IF;
	-- a partitioned or inherited table is protected as one table: its partitions and children
	-- are read with it, and none of them, nor any table above it, may have a budget of its own
	other := (SELECT r FROM dpsynth._protected_relatives(tbl) r LIMIT 1);
	IF other IS NOT NULL THEN
		RAISE EXCEPTION 'table % shares rows with protected table %', tbl, other
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'A partitioned or inherited table is protected as one table, with its partitions and children; a row may have one budget only.',
				  HINT = format('Release from %s, or detach the table from it first.', other);
	END IF;
	IF EXISTS (WITH RECURSIVE down(r) AS (
				   SELECT inhrelid FROM pg_catalog.pg_inherits WHERE inhparent = tbl
				   UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN down ON i.inhparent = down.r)
			   SELECT 1 FROM down JOIN pg_catalog.pg_class c ON c.oid = down.r
			   WHERE c.relkind = 'f' OR c.relpersistence = 't') THEN
		RAISE EXCEPTION 'table % has a foreign or temporary partition or child', tbl
			USING ERRCODE = 'feature_not_supported',
				  HINT = 'dpsynth reads only permanent and unlogged tables stored in this server.';
	END IF;
	PERFORM dpsynth._lock_domains(tbl);
	-- Protections that no longer identify their table (see dpsynth.budgets) go now, with their
	-- domains, policies and limits; their ledger rows stay.
	DELETE FROM dpsynth.budgets b WHERE NOT dpsynth._identifies(b.relid, b.relname);

	allowance := dpsynth._units_rho(dpsynth._rho_units(epsilon, delta));
	SELECT rho_spent, delta_spent INTO spent, dspent FROM dpsynth.budgets WHERE relid = tbl FOR UPDATE;
	IF NOT FOUND THEN
		INSERT INTO dpsynth.budgets (relid, relname, epsilon, delta, rho_allowance, selection_delta, discovery,
									 protected_by)
			VALUES (tbl, dpsynth._qualified_name(tbl), epsilon, delta, allowance, selection_delta, discovery, invoker);
		RAISE NOTICE 'table % is protected with a budget of epsilon %, delta % (rho %)', tbl, epsilon, delta, allowance;
	ELSE
		IF allowance < spent THEN
			RAISE EXCEPTION 'new budget of table % is below what has already been spent', tbl
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('Spent rho %s; epsilon %s at delta %s allows only rho %s.', spent, epsilon, delta, allowance),
					  HINT = 'A budget can be raised or lowered, but never below what was spent.';
		END IF;
		IF dspent > 0 AND (epsilon >= 1000 OR selection_delta::numeric < exp(epsilon::numeric) * dspent) THEN
			RAISE EXCEPTION 'new selection_delta of table % is below what has already been spent', tbl
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('Partition selection has spent delta %s, which counts exp(epsilon) times: %s.',
									  dspent, exp(epsilon::numeric) * dspent);
		END IF;
		UPDATE dpsynth.budgets b SET epsilon = _dp_protect.epsilon, delta = _dp_protect.delta,
			rho_allowance = allowance,
			selection_delta = _dp_protect.selection_delta, discovery = _dp_protect.discovery
			WHERE relid = tbl;
		RAISE NOTICE 'budget of table % changed to epsilon %, delta % (rho %)', tbl, epsilon, delta, allowance;
	END IF;
END
$$;

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
				lower = NULL, upper = NULL, bins = NULL, edges = NULL, points = NULL, source = 'declared',
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
		ON CONFLICT (relid, attnum) DO UPDATE SET kind = 'bins', categories = NULL, edges = NULL,
			lower = EXCLUDED.lower, upper = EXCLUDED.upper, bins = EXCLUDED.bins, points = EXCLUDED.points,
			binning = EXCLUDED.binning, source = 'declared', ledger_id = NULL,
			declared_by = EXCLUDED.declared_by, declared_at = pg_catalog.now();
END
$$;

CREATE OR REPLACE FUNCTION dpsynth._dp_undeclare(invoker oid, tbl regclass, col name) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	IF tbl IS NULL OR col IS NULL THEN
		RAISE EXCEPTION 'table and column must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	PERFORM dpsynth._check_owner(invoker, tbl, 'declare domains of');
	PERFORM dpsynth._lock_domains(tbl);
	DELETE FROM dpsynth.domains WHERE relid = tbl AND attnum = dpsynth._column_attnum(tbl, col);
END
$$;

CREATE OR REPLACE FUNCTION dpsynth._dp_column_policy(invoker oid, tbl regclass, col name, treatment text,
										  discovery boolean, other text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	n int2;
BEGIN
	IF tbl IS NULL OR col IS NULL THEN
		RAISE EXCEPTION 'table and column must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	PERFORM dpsynth._check_owner(invoker, tbl, 'set column policies of');
	PERFORM dpsynth._check_protected(tbl);
	PERFORM dpsynth._lock_domains(tbl);
	n := dpsynth._column_attnum(tbl, col);
	IF coalesce(treatment, 'synthesize') NOT IN ('synthesize', 'exclude', 'identifier') THEN
		RAISE EXCEPTION 'treatment must be synthesize, exclude or identifier, not %', treatment
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	INSERT INTO dpsynth.column_policies (relid, attnum, treatment, discovery, other, set_by)
		VALUES (tbl, n, coalesce(treatment, 'synthesize'), discovery, other, invoker)
		ON CONFLICT (relid, attnum) DO UPDATE SET treatment = EXCLUDED.treatment,
			discovery = EXCLUDED.discovery, other = EXCLUDED.other, set_by = EXCLUDED.set_by,
			set_at = pg_catalog.now();
END
$$;

CREATE OR REPLACE FUNCTION dpsynth._charge(p_relid oid, p_role oid, p_session oid, p_function text,
								p_columns text[], p_epsilon float8, p_delta float8, p_units int8,
								p_delta_add float8, p_details jsonb,
								OUT status text, OUT ledger_id bigint, OUT rho_charged numeric,
								OUT rho_remaining numeric, OUT limit_role oid)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	b dpsynth.budgets;
	lim record;
	roles oid[];
BEGIN
	SELECT * INTO b FROM dpsynth.budgets WHERE relid = p_relid AND dpsynth._identifies(relid, relname) FOR UPDATE;
	IF NOT FOUND THEN
		status := 'unprotected';
		RETURN;
	END IF;
	rho_charged := dpsynth._units_rho(p_units);
	rho_remaining := b.rho_allowance - b.rho_spent;
	roles := ARRAY(SELECT r.oid FROM pg_catalog.pg_roles r
				   WHERE pg_catalog.pg_has_role(p_role, r.oid, 'MEMBER')
					  OR pg_catalog.pg_has_role(p_session, r.oid, 'MEMBER') ORDER BY 1);
	status := 'charged';
	IF rho_charged > rho_remaining
		OR (b.delta_spent + p_delta_add::numeric > 0
			AND (b.epsilon >= 1000
				 OR exp(b.epsilon::numeric) * (b.delta_spent + p_delta_add::numeric) > b.selection_delta::numeric)) THEN
		status := 'over_budget';
	ELSE
		FOR lim IN SELECT * FROM dpsynth.role_limits rl
				   WHERE rl.relid = p_relid AND rl.role = ANY (roles) ORDER BY rl.role LOOP
			IF (SELECT coalesce(sum(l.rho), 0) FROM dpsynth.ledger l
				WHERE l.budget_id = b.id AND l.status <> 'refused' AND lim.role = ANY (l.charged_to))
			   + rho_charged > lim.rho_limit THEN
				status := 'over_role_limit';
				limit_role := lim.role;
				EXIT;
			END IF;
		END LOOP;
	END IF;
	IF status <> 'charged' THEN
		-- a refusal repeated: counted, no new ledger row (see dpsynth.refusals)
		UPDATE dpsynth.refusals r SET attempts = r.attempts + 1, last_at = pg_catalog.clock_timestamp(),
			last_rho = rho_charged
			WHERE r.budget_id = b.id AND r.role = p_role AND r.function = p_function AND r.reason = status
			RETURNING r.first_ledger_id INTO ledger_id;
		IF FOUND THEN
			RETURN;
		END IF;
	END IF;
	INSERT INTO dpsynth.ledger (budget_id, relid, relname, role, rolname, session_role, charged_to, function,
								columns, epsilon, delta, rho, delta_add, details, status, reason)
		VALUES (b.id, p_relid, b.relname, p_role,
				coalesce((SELECT rolname FROM pg_catalog.pg_roles WHERE oid = p_role), p_role::text),
				p_session, roles, p_function, p_columns, p_epsilon, p_delta, rho_charged,
				p_delta_add::numeric, p_details,
				CASE WHEN status = 'charged' THEN 'charged' ELSE 'refused' END,
				CASE WHEN status = 'charged' THEN NULL ELSE status END)
		RETURNING id INTO ledger_id;
	IF status <> 'charged' THEN
		INSERT INTO dpsynth.refusals (budget_id, role, rolname, function, reason, first_ledger_id, last_rho)
			VALUES (b.id, p_role, coalesce((SELECT rolname FROM pg_catalog.pg_roles WHERE oid = p_role), p_role::text),
					p_function, status, ledger_id, rho_charged);
	END IF;
	IF status = 'charged' THEN
		UPDATE dpsynth.budgets SET rho_spent = rho_spent + rho_charged,
			delta_spent = delta_spent + p_delta_add::numeric WHERE relid = p_relid;
		rho_remaining := rho_remaining - rho_charged;
	END IF;
END
$$;

REVOKE ALL ON FUNCTION dpsynth._qualified_name(oid), dpsynth._identifies(oid, text), dpsynth._lock_domains(oid),
	dpsynth._protected_relatives(oid) FROM PUBLIC;

CREATE OR REPLACE VIEW dp_budget WITH (security_barrier) AS
SELECT b.relid AS table_name,
	   b.epsilon,
	   b.delta,
	   b.rho_allowance,
	   b.rho_spent,
	   b.rho_allowance - b.rho_spent AS rho_remaining,
	   @extschema@.dp_epsilon(b.rho_spent::float8, b.delta) AS epsilon_spent,
	   -- rounded down to 1e-6, so that a call with this epsilon fits in what remains
	   floor(@extschema@.dp_epsilon((b.rho_allowance - b.rho_spent)::float8, b.delta) * 1e6) / 1e6 AS epsilon_remaining,
	   b.selection_delta,
	   b.delta_spent,
	   CASE WHEN b.delta_spent = 0 THEN b.delta
			ELSE (b.delta + exp(b.epsilon::numeric) * b.delta_spent)::float8 END AS delta_total,
	   b.discovery,
	   p.limit_remaining AS my_rho_remaining,
	   p.limit_role AS my_limit_role
FROM dpsynth.budgets b
LEFT JOIN LATERAL (
	SELECT rl.role AS limit_role,
		   rl.rho_limit - (SELECT coalesce(sum(l.rho), 0) FROM dpsynth.ledger l
						   WHERE l.budget_id = b.id AND l.status <> 'refused' AND rl.role = ANY (l.charged_to))
			   AS limit_remaining
	FROM dpsynth.role_limits rl
	WHERE rl.relid = b.relid AND pg_catalog.pg_has_role(current_user, rl.role, 'MEMBER')
	ORDER BY 2 LIMIT 1) p ON true
WHERE dpsynth._identifies(b.relid, b.relname)
  AND (pg_catalog.pg_has_role(current_user, 'dpsynth_analyst', 'USAGE')
	   OR pg_catalog.pg_has_role(current_user, 'dpsynth_admin', 'USAGE')
	   OR EXISTS (SELECT 1 FROM pg_catalog.pg_class c
				  WHERE c.oid = b.relid AND pg_catalog.pg_has_role(current_user, c.relowner, 'USAGE')));

CREATE OR REPLACE VIEW dp_ledger WITH (security_barrier) AS
SELECT l.id,
	   -- the table of the protection charged, while it is protected (never by the bare OID,
	   -- which a later table may reuse)
	   (SELECT b.relid FROM dpsynth.budgets b WHERE b.id = l.budget_id AND dpsynth._identifies(b.relid, b.relname))
		   AS table_name,
	   l.relname, l.rolname AS role, l.charged_at, l.function,
	   l.columns, l.epsilon, l.delta, l.rho, l.delta_add, l.details, l.status, l.reason, l.completed_at
FROM dpsynth.ledger l
WHERE dpsynth._is_admin((SELECT oid FROM pg_catalog.pg_roles WHERE rolname = current_user))
   -- the caller by oid AND name, as for models: a restore into another cluster may give the oid
   -- to another role
   OR CASE WHEN dpsynth._role_exists(l.role) AND pg_catalog.pg_get_userbyid(l.role) = l.rolname
		   THEN pg_catalog.pg_has_role(current_user, l.role, 'MEMBER') END
   OR EXISTS (SELECT 1 FROM dpsynth.budgets b JOIN pg_catalog.pg_class c ON c.oid = b.relid
			  WHERE b.id = l.budget_id AND pg_catalog.pg_has_role(current_user, c.relowner, 'USAGE'));

-- Refused attempts, counted (dpsynth.refusals), for the ledger's readers.
CREATE VIEW dp_refusals WITH (security_barrier) AS
SELECT r.budget_id,
	   (SELECT b.relid FROM dpsynth.budgets b WHERE b.id = r.budget_id AND dpsynth._identifies(b.relid, b.relname))
		   AS table_name,
	   r.rolname AS role, r.function, r.reason, r.attempts, r.first_at, r.last_at, r.first_ledger_id, r.last_rho
FROM dpsynth.refusals r
WHERE dpsynth._is_admin((SELECT oid FROM pg_catalog.pg_roles WHERE rolname = current_user))
   OR CASE WHEN dpsynth._role_exists(r.role) AND pg_catalog.pg_get_userbyid(r.role) = r.rolname
		   THEN pg_catalog.pg_has_role(current_user, r.role, 'MEMBER') END
   OR EXISTS (SELECT 1 FROM dpsynth.budgets b JOIN pg_catalog.pg_class c ON c.oid = b.relid
			  WHERE b.id = r.budget_id AND pg_catalog.pg_has_role(current_user, c.relowner, 'USAGE'));


GRANT SELECT ON dp_refusals TO PUBLIC;
GRANT EXECUTE ON FUNCTION dpsynth._qualified_name(oid), dpsynth._identifies(oid, text) TO PUBLIC;

-- dp_discover: learn every undeclared domain once, as a charged release of its own (discover.c).
CREATE FUNCTION dp_discover(tbl regclass, epsilon float8, columns text[] DEFAULT NULL,
							OUT column_name text, OUT kind text, OUT cells int4)
	RETURNS SETOF record AS 'MODULE_PATHNAME', 'dpsynth_discover_sql' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_discover(regclass, float8, text[]) IS
	'learn the domains of columns that have none (categories, bounds) by DP, charged once to the table''s budget, and keep them for every later call';
REVOKE ALL ON FUNCTION dp_discover(regclass, float8, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION dp_discover(regclass, float8, text[]) TO dpsynth_analyst, dpsynth_admin;


-- ATTACH PARTITION and INHERIT (called by dpsynth_guard_ddl before the command runs): a table
-- whose rows already have a budget cannot join a tree whose rows have another.
CREATE FUNCTION dpsynth._on_attach(child oid, parent oid) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	mine regclass;
	theirs regclass;
BEGIN
	mine := (SELECT b.relid FROM dpsynth.budgets b
			 WHERE (b.relid = child OR b.relid IN (SELECT r FROM dpsynth._protected_relatives(child) r))
			   AND dpsynth._identifies(b.relid, b.relname) LIMIT 1);
	theirs := (SELECT b.relid FROM dpsynth.budgets b
			   WHERE (b.relid = parent OR b.relid IN (SELECT r FROM dpsynth._protected_relatives(parent) r))
				 AND dpsynth._identifies(b.relid, b.relname) LIMIT 1);
	IF mine IS NOT NULL AND theirs IS NOT NULL AND mine <> theirs THEN
		RAISE EXCEPTION 'cannot attach % to %: both hold rows protected by dpsynth (% and %)',
			child::regclass, parent::regclass, mine, theirs
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'A row may have one budget only, and two budgets cannot be merged.';
	END IF;
END
$$;

-- DETACH PARTITION and NO INHERIT (called by dpsynth_guard_ddl before the command runs): the
-- table leaving a protected tree keeps the protection its rows had.  It gets a budget of its
-- own with the tree's epsilon, delta and what was spent (every release of the tree read its
-- rows), the same domains, policies and role limits (columns matched by name), and ledger
-- rows carrying what each role spent, so that spent equals its ledger's sum and role limits
-- go on counting.
CREATE FUNCTION dpsynth._on_detach(child oid, parent oid) RETURNS void
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
								 source, ledger_id, declared_by, declared_at)
		SELECT child, ca.attnum, d.kind, d.categories, d.lower, d.upper, d.bins, d.edges, d.points, d.binning,
			   d.source, d.ledger_id, d.declared_by, d.declared_at
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

REVOKE ALL ON FUNCTION dpsynth._on_attach(oid, oid), dpsynth._on_detach(oid, oid) FROM PUBLIC;

-- A renamed table (or schema) keeps its protection: the qualified name of the altered table, or
-- of the tables of the altered schema, is brought up to date.  Only rows that identified their
-- table before the change are followed (the name part that the command did not change must
-- still match), so a row left behind by a vanished table is never re-attached by a rename.
CREATE FUNCTION dpsynth._on_alter() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	cmd record;
BEGIN
	FOR cmd IN SELECT * FROM pg_catalog.pg_event_trigger_ddl_commands()
			   WHERE classid IN ('pg_catalog.pg_class'::regclass, 'pg_catalog.pg_namespace'::regclass) LOOP
		UPDATE dpsynth.budgets b SET relname = dpsynth._qualified_name(b.relid)
			FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
			WHERE c.oid = b.relid
			  AND (b.relid = cmd.objid OR c.relnamespace = cmd.objid)
			  AND b.relname <> dpsynth._qualified_name(b.relid)
			  -- a rename changes one part: the other must be what the row says
			  AND (pg_catalog.starts_with(b.relname, pg_catalog.format('%I.', n.nspname))
				   OR pg_catalog.right(b.relname, pg_catalog.length(pg_catalog.format('.%I', c.relname)))
					  = pg_catalog.format('.%I', c.relname));
	END LOOP;
END
$$;
REVOKE ALL ON FUNCTION dpsynth._on_alter() FROM PUBLIC;
CREATE EVENT TRIGGER dpsynth_on_alter ON ddl_command_end
	WHEN TAG IN ('ALTER TABLE', 'ALTER SCHEMA') EXECUTE FUNCTION dpsynth._on_alter();

-- Before DDL that would break a promise (src/dpsynth.c, dpsynth_guard_ddl):
--  * DROP EXTENSION dpsynth (or DROP SCHEMA ... CASCADE of its schema, DROP OWNED BY its owner)
--    would delete every budget and the whole ledger: refused unless a superuser confirms it for
--    the session with SET dpsynth.allow_drop_extension = on;
--  * ALTER TABLE ... ATTACH PARTITION / INHERIT: dpsynth._on_attach;
--  * ALTER TABLE ... DETACH PARTITION / NO INHERIT: dpsynth._on_detach.
CREATE FUNCTION dpsynth._guard_ddl() RETURNS event_trigger
	AS 'MODULE_PATHNAME', 'dpsynth_guard_ddl' LANGUAGE C;
REVOKE ALL ON FUNCTION dpsynth._guard_ddl() FROM PUBLIC;
CREATE EVENT TRIGGER dpsynth_guard_ddl ON ddl_command_start
	WHEN TAG IN ('DROP EXTENSION', 'DROP OWNED', 'DROP SCHEMA', 'ALTER TABLE') EXECUTE FUNCTION dpsynth._guard_ddl();

-- dp_synthesize gains a method argument ('adaptive', the default, or 'privsyn') and focus (columns whose every pair the adaptive method measures)
DROP FUNCTION dp_synthesize(regclass, float8, float8, name, int8, text[], boolean);
CREATE FUNCTION dp_synthesize(source regclass, epsilon float8, delta float8 DEFAULT NULL,
							  target name DEFAULT NULL, "rows" int8 DEFAULT NULL, columns text[] DEFAULT NULL,
							  verbose boolean DEFAULT false, method text DEFAULT NULL, focus text[] DEFAULT NULL,
							  OUT target_table regclass, OUT rows_written int8, OUT epsilon_charged float8,
							  OUT delta_charged float8, OUT rho_charged numeric, OUT one_way_marginals int4,
							  OUT k_way_marginals int4, OUT seconds jsonb, OUT model_id int8)
	RETURNS record AS 'MODULE_PATHNAME', 'dpsynth_synthesize' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_synthesize(regclass, float8, float8, name, int8, text[], boolean, text, text[]) IS
	'create a differentially private synthetic copy of a protected table (method: adaptive, the default, or privsyn; focus: columns whose every pair the adaptive method measures), charged once to its budget';
REVOKE ALL ON FUNCTION dp_synthesize(regclass, float8, float8, name, int8, text[], boolean, text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION dp_synthesize(regclass, float8, float8, name, int8, text[], boolean, text, text[]) TO dpsynth_analyst, dpsynth_admin;

-------------------------------------------------------------------------------
-- Error bars for the analyst, from the released model alone (src/uncertainty.c,
-- src/core/dp_uncertainty.h): post-processing of a stored model, no charge, the source table
-- never read.  Who may call them on a model: as dp_sample (dpsynth._model_access).
-------------------------------------------------------------------------------
CREATE FUNCTION dp_model_marginals(model int8,
								   OUT marginal int4, OUT columns text[], OUT cells int8, OUT rho float8,
								   OUT sigma float8, OUT merged_cells int4)
	RETURNS SETOF record AS 'MODULE_PATHNAME', 'dpsynth_model_marginals' LANGUAGE C STABLE;
COMMENT ON FUNCTION dp_model_marginals(int8) IS
	'the marginals a released model measured: columns, cells, the rho they were measured with and the noise of a cell (sigma; a merged cell of m values in a one-way marginal: sqrt(m) sigma at most)';
REVOKE ALL ON FUNCTION dp_model_marginals(int8) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION dp_model_marginals(int8) TO dpsynth_analyst, dpsynth_admin;

CREATE FUNCTION dp_marginal_intervals(model int8, columns text[], confidence float8 DEFAULT 0.95,
									  OUT cell text[], OUT members int8, OUT estimate float8,
									  OUT lower float8, OUT upper float8, OUT share float8,
									  OUT share_lower float8, OUT share_upper float8, OUT sigma float8,
									  OUT basis text, OUT measured_columns text[])
	RETURNS SETOF record AS 'MODULE_PATHNAME', 'dpsynth_marginal_intervals' LANGUAGE C STABLE;
COMMENT ON FUNCTION dp_marginal_intervals(int8, text[], float8) IS
	'a marginal of a released model with confidence intervals on its counts and shares, from the noise it was measured with (measured, projected from a measured superset, or not measured)';
REVOKE ALL ON FUNCTION dp_marginal_intervals(int8, text[], float8) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION dp_marginal_intervals(int8, text[], float8) TO dpsynth_analyst, dpsynth_admin;

-- BEGIN dp_evaluate / dp_report (issue 13 items 1 and 3; src/evaluate.c, src/report.c,
-- src/core/dp_eval.h for the definitions).  The data owner's quality report of a synthetic
-- table.  NOT a differentially private release: it reads every row of the real table (and of
-- the holdout) with the caller's rights (SECURITY INVOKER, through SPI; SELECT on every table is
-- checked before a row is read: 42501), returns exact statistics of them and charges nothing.
-- So it is granted to PUBLIC: what decides who may run it is the SELECT privilege on the tables.
-------------------------------------------------------------------------------
CREATE FUNCTION dp_evaluate("real" regclass, synthetic regclass, holdout regclass DEFAULT NULL,
							target name DEFAULT NULL,
							OUT scope text, OUT column_name text, OUT metric text, OUT value float8,
							OUT reference float8, OUT note text)
	RETURNS SETOF record AS 'MODULE_PATHNAME', 'dpsynth_evaluate' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_evaluate(regclass, regclass, regclass, name) IS
	'the owner''s quality report of a synthetic table against the real one (TVDs, range queries, correlation, train-on-synthetic, copies and distances); reads the real table with your rights: NOT differentially private';
CREATE FUNCTION dp_report("real" regclass, synthetic regclass, holdout regclass DEFAULT NULL,
						  target name DEFAULT NULL) RETURNS text
	AS 'MODULE_PATHNAME', 'dpsynth_report' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_report(regclass, regclass, regclass, name) IS
	'dp_evaluate as one self-contained HTML page (histograms, 2-way TVD heat map, headline numbers, privacy parameters); NOT differentially private';
GRANT EXECUTE ON FUNCTION dp_evaluate(regclass, regclass, regclass, name), dp_report(regclass, regclass, regclass, name) TO PUBLIC;
-- END dp_evaluate / dp_report

-- BEGIN partial counts (issue 12 item 4; src/partial.c, src/core/dp_partial.h,
-- docs/DISTRIBUTED.md).  Aggregates of EXACT counts over the joint cells of one marginal, with a
-- combine function and a byte form of their state, so that parallel workers and shards (a
-- postgres_fdw server, a Citus worker) count their own rows and only counts travel.  They are
-- not releases: no EXECUTE for PUBLIC or dpsynth_analyst; only the extension owner's code uses
-- them, and anything released from their result goes through the charged noise path.
-------------------------------------------------------------------------------
CREATE FUNCTION dpsynth._partial_counts_add(internal, int4[], int4[]) RETURNS internal
	AS 'MODULE_PATHNAME', 'dpsynth_partial_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpsynth._partial_merge_add(internal, bytea) RETURNS internal
	AS 'MODULE_PATHNAME', 'dpsynth_partial_merge_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpsynth._partial_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME', 'dpsynth_partial_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpsynth._partial_serialize(internal) RETURNS bytea
	AS 'MODULE_PATHNAME', 'dpsynth_partial_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dpsynth._partial_deserialize(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME', 'dpsynth_partial_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dpsynth._partial_final(internal) RETURNS bytea
	AS 'MODULE_PATHNAME', 'dpsynth_partial_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpsynth._partial_vector(state bytea, sizes int4[]) RETURNS int8[]
	AS 'MODULE_PATHNAME', 'dpsynth_partial_vector' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dpsynth._partial_vector(bytea, int4[]) IS
	'the exact counts of a partial-count state of the given shape, cell by cell (first column slowest); NULL state: zeros';

CREATE AGGREGATE dpsynth._partial_counts(codes int4[], sizes int4[]) (
	SFUNC = dpsynth._partial_counts_add, STYPE = internal,
	COMBINEFUNC = dpsynth._partial_combine,
	SERIALFUNC = dpsynth._partial_serialize, DESERIALFUNC = dpsynth._partial_deserialize,
	FINALFUNC = dpsynth._partial_final, PARALLEL = SAFE);
COMMENT ON AGGREGATE dpsynth._partial_counts(int4[], int4[]) IS
	'exact counts of the rows over the joint cells of one marginal (a code per column, the columns'' domain sizes), as a mergeable state; not a release';
CREATE AGGREGATE dpsynth._partial_merge(state bytea) (
	SFUNC = dpsynth._partial_merge_add, STYPE = internal,
	COMBINEFUNC = dpsynth._partial_combine,
	SERIALFUNC = dpsynth._partial_serialize, DESERIALFUNC = dpsynth._partial_deserialize,
	FINALFUNC = dpsynth._partial_final, PARALLEL = SAFE);
COMMENT ON AGGREGATE dpsynth._partial_merge(bytea) IS
	'the sum of partial-count states counted elsewhere (workers, partitions, shards); not a release';

REVOKE ALL ON FUNCTION dpsynth._partial_counts_add(internal, int4[], int4[]),
	dpsynth._partial_merge_add(internal, bytea), dpsynth._partial_combine(internal, internal),
	dpsynth._partial_serialize(internal), dpsynth._partial_deserialize(bytea, internal),
	dpsynth._partial_final(internal), dpsynth._partial_vector(bytea, int4[]),
	dpsynth._partial_counts(int4[], int4[]), dpsynth._partial_merge(bytea) FROM PUBLIC;
-- END partial counts
