-- dpsynth 0.1.0: differentially private releases of PostgreSQL tables.
-- See README.md for the user's guide and ../shared/design/PRIVACY.md for the privacy contract.
\echo Use "CREATE EXTENSION dpsynth" to load this file. \quit

-------------------------------------------------------------------------------
-- Roles.  Roles are cluster-wide, so they may already exist from another database.
-------------------------------------------------------------------------------
DO $roles$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'dpsynth_analyst') THEN
		CREATE ROLE dpsynth_analyst NOLOGIN;
	END IF;
	IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'dpsynth_admin') THEN
		CREATE ROLE dpsynth_admin NOLOGIN;
	END IF;
END
$roles$;
COMMENT ON ROLE dpsynth_analyst IS 'may call dpsynth release functions (dp_marginal, ...) on protected tables';
COMMENT ON ROLE dpsynth_admin IS 'may protect any table, change its budget, declare domains and set role limits';

-------------------------------------------------------------------------------
-- Catalog.  Only the extension owner writes these tables; nobody else has any privilege
-- on them.  Users read them through the views further down.
-------------------------------------------------------------------------------
CREATE SCHEMA dpsynth;

-- One row per protected table.  Accounting is in rho-zCDP: the budget (epsilon, delta) is
-- converted once to rho_allowance = rho(epsilon, delta) (Canonne-Kamath-Steinke 2020, Cor. 13),
-- rounded down to 1e-12.  Every charge is rounded up to 1e-12 before it is added to rho_spent.
-- delta_spent is the additive delta of approximate-DP mechanisms (none in this version; DP
-- partition selection will charge it).  The table's guarantee is
-- (epsilon(rho_spent, delta), delta + delta_spent)-DP.
CREATE TABLE dpsynth.budgets (
	relid			oid PRIMARY KEY,
	relname			text NOT NULL,
	epsilon			float8 NOT NULL CHECK (epsilon > 0 AND epsilon < 'Infinity'),
	delta			float8 NOT NULL CHECK (delta > 0 AND delta < 1),
	rho_allowance	numeric NOT NULL CHECK (rho_allowance >= 0),
	rho_spent		numeric NOT NULL DEFAULT 0,
	delta_spent		numeric NOT NULL DEFAULT 0 CHECK (delta_spent >= 0),
	protected_by	oid NOT NULL,
	protected_at	timestamptz NOT NULL DEFAULT pg_catalog.now(),
	-- the last line of defence: whatever the code does, spent never exceeds the allowance
	CONSTRAINT spent_within_allowance CHECK (rho_spent >= 0 AND rho_spent <= rho_allowance)
);

-- Public domain of a column, declared by the owner (or, later, released by a charged DP
-- mechanism).  Keyed by attnum so that a column rename keeps its declaration.
CREATE TABLE dpsynth.domains (
	relid			oid NOT NULL REFERENCES dpsynth.budgets ON DELETE CASCADE,
	attnum			int2 NOT NULL CHECK (attnum > 0),
	kind			text NOT NULL CHECK (kind IN ('categories', 'bins')),
	categories		text[],
	lower			float8,
	upper			float8,
	bins			int4,
	source			text NOT NULL DEFAULT 'declared' CHECK (source IN ('declared')),
	declared_by		oid NOT NULL,
	declared_at		timestamptz NOT NULL DEFAULT pg_catalog.now(),
	PRIMARY KEY (relid, attnum),
	CHECK ((kind = 'categories' AND categories IS NOT NULL AND lower IS NULL AND upper IS NULL AND bins IS NULL)
		OR (kind = 'bins' AND categories IS NULL AND lower < upper AND bins BETWEEN 1 AND 65535))
);

-- Per-role cap inside a table's budget.  A limit set on role R caps the total rho charged by
-- all roles that are members of R (R itself included), so a limit on a group covers its users.
CREATE TABLE dpsynth.role_limits (
	relid			oid NOT NULL REFERENCES dpsynth.budgets ON DELETE CASCADE,
	role			oid NOT NULL,
	epsilon			float8 NOT NULL CHECK (epsilon > 0 AND epsilon < 'Infinity'),
	rho_limit		numeric NOT NULL CHECK (rho_limit >= 0),
	set_by			oid NOT NULL,
	set_at			timestamptz NOT NULL DEFAULT pg_catalog.now(),
	PRIMARY KEY (relid, role)
);

-- Append-only record of every charge and every refused attempt.  Rows are written by the
-- charging background worker in their own committed transaction (see src/charge.c).
-- status: 'charged'   budget spent, release under way or its transaction did not commit;
--         'completed' the release was computed and its transaction committed;
--         'refused'   nothing was charged or released (over budget or over the role limit).
CREATE TABLE dpsynth.ledger (
	id				bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	relid			oid NOT NULL,
	relname			text NOT NULL,
	role			oid NOT NULL,
	rolname			name NOT NULL,
	charged_at		timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
	function		text NOT NULL,
	columns			text[],
	epsilon			float8 NOT NULL,
	delta			float8 NOT NULL,
	rho				numeric NOT NULL CHECK (rho >= 0),
	delta_add		numeric NOT NULL DEFAULT 0 CHECK (delta_add >= 0),
	details			jsonb,
	status			text NOT NULL CHECK (status IN ('charged', 'completed', 'refused')),
	reason			text,
	completed_at	timestamptz
);
CREATE INDEX ledger_relid_idx ON dpsynth.ledger (relid);

-- The ledger is append-only: the only change allowed is charged -> completed.  The extension
-- owner can still disable this trigger (that is what "append-only for everyone but its owner"
-- means); nobody else has any privilege on the table.
CREATE FUNCTION dpsynth._ledger_append_only() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	IF TG_OP = 'UPDATE' AND OLD.status = 'charged' AND NEW.status = 'completed'
		AND (to_jsonb(OLD) - 'status' - 'completed_at') = (to_jsonb(NEW) - 'status' - 'completed_at') THEN
		RETURN NEW;
	END IF;
	RAISE EXCEPTION 'the dpsynth ledger is append-only'
		USING ERRCODE = 'insufficient_privilege',
			  HINT = 'Ledger rows can only move from status charged to completed.';
END
$$;
CREATE TRIGGER ledger_append_only BEFORE UPDATE OR DELETE ON dpsynth.ledger
	FOR EACH ROW EXECUTE FUNCTION dpsynth._ledger_append_only();
CREATE TRIGGER ledger_no_truncate BEFORE TRUNCATE ON dpsynth.ledger
	FOR EACH STATEMENT EXECUTE FUNCTION dpsynth._ledger_append_only();

SELECT pg_catalog.pg_extension_config_dump('dpsynth.budgets', '');
SELECT pg_catalog.pg_extension_config_dump('dpsynth.domains', '');
SELECT pg_catalog.pg_extension_config_dump('dpsynth.role_limits', '');
SELECT pg_catalog.pg_extension_config_dump('dpsynth.ledger', '');

-------------------------------------------------------------------------------
-- Accounting helpers (pure functions, src/core/dp_accounting.c)
-------------------------------------------------------------------------------
CREATE FUNCTION dp_rho(epsilon float8, delta float8) RETURNS float8
	AS 'MODULE_PATHNAME', 'dpsynth_rho' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_rho(float8, float8) IS
	'largest rho such that rho-zCDP implies (epsilon, delta)-DP (Canonne-Kamath-Steinke 2020, Cor. 13)';
CREATE FUNCTION dp_epsilon(rho float8, delta float8) RETURNS float8
	AS 'MODULE_PATHNAME', 'dpsynth_epsilon' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dp_epsilon(float8, float8) IS
	'smallest epsilon such that rho-zCDP implies (epsilon, delta)-DP';

-- Charges round up to this quantum, what remains rounds down (PRIVACY.md, "Accounting").
CREATE FUNCTION dpsynth._quantum() RETURNS numeric LANGUAGE sql IMMUTABLE
	AS $$ SELECT 0.000000000001::numeric $$;
CREATE FUNCTION dpsynth._round_up(x float8) RETURNS numeric LANGUAGE sql IMMUTABLE
	SET search_path = pg_catalog, pg_temp
	AS $$ SELECT ceil(x::numeric / dpsynth._quantum()) * dpsynth._quantum() $$;
CREATE FUNCTION dpsynth._round_down(x float8) RETURNS numeric LANGUAGE sql IMMUTABLE
	SET search_path = pg_catalog, pg_temp
	AS $$ SELECT floor(x::numeric / dpsynth._quantum()) * dpsynth._quantum() $$;

-------------------------------------------------------------------------------
-- Privilege checks.  The public functions are C entry points that capture the invoking role
-- and call the matching dpsynth._* implementation as the extension owner, passing the invoker
-- first (src/dpsynth.c, dpsynth_admin_call).  The implementations are not executable by
-- anyone else, so the invoker oid they receive cannot be forged.
-------------------------------------------------------------------------------
CREATE FUNCTION dpsynth._role_exists(r oid) RETURNS boolean LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp
	AS $$ SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE oid = r) $$;

CREATE FUNCTION dpsynth._is_admin(invoker oid) RETURNS boolean LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp
	AS $$ SELECT pg_catalog.pg_has_role(invoker, 'dpsynth_admin', 'USAGE')
			 OR (SELECT rolsuper FROM pg_catalog.pg_roles WHERE oid = invoker) $$;

-- Raises unless the invoker owns the table or is an admin.
CREATE FUNCTION dpsynth._check_owner(invoker oid, rel oid, action text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	owner oid;
BEGIN
	SELECT relowner INTO owner FROM pg_catalog.pg_class WHERE oid = rel;
	IF owner IS NULL THEN
		RAISE EXCEPTION 'relation with OID % does not exist', rel USING ERRCODE = 'undefined_table';
	END IF;
	IF NOT (pg_catalog.pg_has_role(invoker, owner, 'USAGE') OR dpsynth._is_admin(invoker)) THEN
		RAISE EXCEPTION 'permission denied to % table %', action, rel::regclass
			USING ERRCODE = 'insufficient_privilege',
				  HINT = 'Only the table''s owner or a member of dpsynth_admin may do this.';
	END IF;
END
$$;

CREATE FUNCTION dpsynth._check_protected(rel oid) RETURNS dpsynth.budgets
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	b dpsynth.budgets;
BEGIN
	SELECT * INTO b FROM dpsynth.budgets WHERE relid = rel;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'table % is not protected by dpsynth', rel::regclass
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  HINT = 'The table''s owner must first call dp_protect(table, epsilon => ..., delta => ...).';
	END IF;
	RETURN b;
END
$$;

-------------------------------------------------------------------------------
-- dp_protect: register a table and set (or change) its budget.
-------------------------------------------------------------------------------
CREATE FUNCTION dpsynth._dp_protect(invoker oid, tbl regclass, epsilon float8, delta float8)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	kind "char";
	allowance numeric;
	spent numeric;
BEGIN
	IF tbl IS NULL THEN
		RAISE EXCEPTION 'table must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF epsilon IS NULL OR delta IS NULL THEN
		RAISE EXCEPTION 'epsilon and delta must not be NULL' USING ERRCODE = 'null_value_not_allowed';
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
	SELECT relkind INTO kind FROM pg_catalog.pg_class WHERE oid = tbl;
	IF kind <> 'r' THEN
		RAISE EXCEPTION '% is not an ordinary table', tbl
			USING ERRCODE = 'wrong_object_type',
				  HINT = 'dpsynth protects ordinary tables; views, partitioned and foreign tables are not supported yet.';
	END IF;

	allowance := dpsynth._round_down(@extschema@.dp_rho(epsilon, delta));
	SELECT rho_spent INTO spent FROM dpsynth.budgets WHERE relid = tbl FOR UPDATE;
	IF NOT FOUND THEN
		INSERT INTO dpsynth.budgets (relid, relname, epsilon, delta, rho_allowance, protected_by)
			VALUES (tbl, tbl::text, epsilon, delta, allowance, invoker);
		RAISE NOTICE 'table % is protected with a budget of epsilon %, delta % (rho %)', tbl, epsilon, delta, allowance;
	ELSE
		IF allowance < spent THEN
			RAISE EXCEPTION 'new budget of table % is below what has already been spent', tbl
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('Spent rho %s; epsilon %s at delta %s allows only rho %s.', spent, epsilon, delta, allowance),
					  HINT = 'A budget can be raised or lowered, but never below what was spent.';
		END IF;
		UPDATE dpsynth.budgets b SET epsilon = _dp_protect.epsilon, delta = _dp_protect.delta,
			rho_allowance = allowance, relname = tbl::text
			WHERE relid = tbl;
		RAISE NOTICE 'budget of table % changed to epsilon %, delta % (rho %)', tbl, epsilon, delta, allowance;
	END IF;
END
$$;

-------------------------------------------------------------------------------
-- dp_declare: declare the public domain of a column.
-------------------------------------------------------------------------------
CREATE FUNCTION dpsynth._column_attnum(tbl regclass, col name) RETURNS int2
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	n int2;
BEGIN
	SELECT attnum INTO n FROM pg_catalog.pg_attribute
		WHERE attrelid = tbl AND attname = col AND attnum > 0 AND NOT attisdropped;
	IF n IS NULL THEN
		RAISE EXCEPTION 'column "%" of table % does not exist', col, tbl USING ERRCODE = 'undefined_column';
	END IF;
	RETURN n;
END
$$;

-- The base type of a column (domains unwrapped).
CREATE FUNCTION dpsynth._base_type(typ oid) RETURNS oid
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	t oid := typ;
	b oid;
BEGIN
	LOOP
		SELECT CASE WHEN typtype = 'd' THEN typbasetype END INTO b FROM pg_catalog.pg_type WHERE oid = t;
		EXIT WHEN b IS NULL;
		t := b;
	END LOOP;
	RETURN t;
END
$$;

CREATE FUNCTION dpsynth._dp_declare(invoker oid, tbl regclass, col name, categories text[],
									lower float8, upper float8, bins int4)
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
	n := dpsynth._column_attnum(tbl, col);
	SELECT dpsynth._base_type(atttypid) INTO typ FROM pg_catalog.pg_attribute WHERE attrelid = tbl AND attnum = n;
	is_integer := typ IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype);
	is_real := typ IN ('float4'::regtype, 'float8'::regtype, 'numeric'::regtype);

	IF categories IS NOT NULL THEN
		IF lower IS NOT NULL OR upper IS NOT NULL OR bins IS NOT NULL THEN
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
				lower = NULL, upper = NULL, bins = NULL, source = 'declared',
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
				  HINT = 'Bounds and bins apply to smallint, integer, bigint, real, double precision and numeric columns; declare categories instead.';
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
		IF abs(lower) > 2^53 OR abs(upper) > 2^53 THEN
			RAISE EXCEPTION 'bounds of column "%" must lie within +/-2^53', col
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		nbins := coalesce(nbins, least(32, upper - lower + 1)::int4);
		IF nbins > upper - lower + 1 THEN
			RAISE EXCEPTION 'integer column "%" has only % values in [%, %], fewer than % bins', col,
				upper - lower + 1, lower, upper, nbins
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
	END IF;
	nbins := coalesce(nbins, 32);
	IF nbins < 1 OR nbins > 65535 THEN
		RAISE EXCEPTION 'bins of column "%" must be between 1 and 65535, not %', col, nbins
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	INSERT INTO dpsynth.domains AS d (relid, attnum, kind, lower, upper, bins, declared_by)
		VALUES (tbl, n, 'bins', lower, upper, nbins, invoker)
		ON CONFLICT (relid, attnum) DO UPDATE SET kind = 'bins', categories = NULL,
			lower = EXCLUDED.lower, upper = EXCLUDED.upper, bins = EXCLUDED.bins, source = 'declared',
			declared_by = EXCLUDED.declared_by, declared_at = pg_catalog.now();
END
$$;

-- Declare many columns from one JSON document, in the format of ../shared/datasets/adult/domain.json:
-- {"col": {"type": "categorical", "values": [...]}, "col2": {"type": "integer", "lower": 0,
-- "upper": 100, "bins": 20}}.  Keys starting with "_" are comments.  "nullable" is ignored: whether
-- a column holds NULLs is the table's NOT NULL constraint.  Returns the number of columns declared.
CREATE FUNCTION dpsynth._dp_declare(invoker oid, tbl regclass, domains jsonb)
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
		IF v ? 'values' THEN
			PERFORM dpsynth._dp_declare(invoker, tbl, k::name,
				ARRAY(SELECT jsonb_array_elements_text(v -> 'values')), NULL, NULL, NULL);
		ELSE
			PERFORM dpsynth._dp_declare(invoker, tbl, k::name, NULL,
				(v ->> 'lower')::float8, (v ->> 'upper')::float8, (v ->> 'bins')::int4);
		END IF;
		n := n + 1;
	END LOOP;
	RETURN n;
END
$$;

-------------------------------------------------------------------------------
-- dp_limit_role: cap what members of a role may spend on a table (NULL epsilon removes the cap).
-------------------------------------------------------------------------------
CREATE FUNCTION dpsynth._dp_limit_role(invoker oid, tbl regclass, grantee regrole, epsilon float8)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	b dpsynth.budgets;
BEGIN
	IF tbl IS NULL OR grantee IS NULL THEN
		RAISE EXCEPTION 'table and role must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	PERFORM dpsynth._check_owner(invoker, tbl, 'set role limits on');
	b := dpsynth._check_protected(tbl);
	IF epsilon IS NULL THEN
		DELETE FROM dpsynth.role_limits WHERE relid = tbl AND role = grantee;
		RETURN;
	END IF;
	IF NOT (epsilon > 0 AND epsilon < 'Infinity') THEN
		RAISE EXCEPTION 'epsilon must be a positive finite number, not %', epsilon
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	INSERT INTO dpsynth.role_limits (relid, role, epsilon, rho_limit, set_by)
		VALUES (tbl, grantee, epsilon, dpsynth._round_down(@extschema@.dp_rho(epsilon, b.delta)), invoker)
		ON CONFLICT (relid, role) DO UPDATE SET epsilon = EXCLUDED.epsilon, rho_limit = EXCLUDED.rho_limit,
			set_by = EXCLUDED.set_by, set_at = pg_catalog.now();
END
$$;

-------------------------------------------------------------------------------
-- Charging.  Called only by the charging background worker (src/charge.c), in a transaction
-- of its own that it commits before the caller draws any noise.  Concurrent charges on one
-- table serialize on the budget row (FOR UPDATE).
-------------------------------------------------------------------------------
-- rho spent by members of role r on table t (charged or completed rows).
CREATE FUNCTION dpsynth._rho_spent_by_members(t oid, r oid) RETURNS numeric LANGUAGE sql STABLE
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp
	AS $$ SELECT coalesce(sum(l.rho), 0) FROM dpsynth.ledger l
		  WHERE l.relid = t AND l.status <> 'refused'
			AND CASE WHEN dpsynth._role_exists(l.role) THEN pg_catalog.pg_has_role(l.role, r, 'MEMBER') END $$;

CREATE FUNCTION dpsynth._charge(p_relid oid, p_role oid, p_function text, p_columns text[],
								p_epsilon float8, p_delta float8, p_rho float8, p_details jsonb,
								OUT status text, OUT ledger_id bigint, OUT rho_charged numeric,
								OUT rho_remaining numeric, OUT limit_role oid)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	b dpsynth.budgets;
	lim record;
BEGIN
	SELECT * INTO b FROM dpsynth.budgets WHERE relid = p_relid FOR UPDATE;
	IF NOT FOUND THEN
		status := 'unprotected';
		RETURN;
	END IF;
	rho_charged := dpsynth._round_up(p_rho);
	rho_remaining := b.rho_allowance - b.rho_spent;
	status := 'charged';
	IF rho_charged > rho_remaining THEN
		status := 'over_budget';
	ELSE
		FOR lim IN SELECT * FROM dpsynth.role_limits rl
				   WHERE rl.relid = p_relid
					 AND CASE WHEN dpsynth._role_exists(rl.role) THEN pg_catalog.pg_has_role(p_role, rl.role, 'MEMBER') END
				   ORDER BY rl.role LOOP
			IF dpsynth._rho_spent_by_members(p_relid, lim.role) + rho_charged > lim.rho_limit THEN
				status := 'over_role_limit';
				limit_role := lim.role;
				EXIT;
			END IF;
		END LOOP;
	END IF;
	INSERT INTO dpsynth.ledger (relid, relname, role, rolname, function, columns, epsilon, delta, rho,
								details, status, reason)
		VALUES (p_relid, b.relname, p_role,
				coalesce((SELECT rolname FROM pg_catalog.pg_roles WHERE oid = p_role), p_role::text),
				p_function, p_columns, p_epsilon, p_delta, rho_charged, p_details,
				CASE WHEN status = 'charged' THEN 'charged' ELSE 'refused' END,
				CASE WHEN status = 'charged' THEN NULL ELSE status END)
		RETURNING id INTO ledger_id;
	IF status = 'charged' THEN
		UPDATE dpsynth.budgets SET rho_spent = rho_spent + rho_charged WHERE relid = p_relid;
		rho_remaining := rho_remaining - rho_charged;
	END IF;
END
$$;

-- Marks a ledger row completed; runs in the caller's transaction at the end of a release.
CREATE FUNCTION dpsynth._complete(p_id bigint) RETURNS void LANGUAGE sql
	SET search_path = pg_catalog, pg_temp
	AS $$ UPDATE dpsynth.ledger SET status = 'completed', completed_at = pg_catalog.clock_timestamp()
		  WHERE id = p_id AND status = 'charged' $$;

-- Budget facts a caller needs before charging (read in the caller's snapshot; the
-- authoritative check is _charge's, under the row lock).
CREATE FUNCTION dpsynth._precheck(p_relid oid, p_role oid, p_rho float8,
								  OUT rho_remaining numeric, OUT limit_role oid, OUT limit_remaining numeric)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	b dpsynth.budgets;
	lim record;
	rem numeric;
BEGIN
	b := dpsynth._check_protected(p_relid);
	rho_remaining := b.rho_allowance - b.rho_spent;
	FOR lim IN SELECT * FROM dpsynth.role_limits rl
			   WHERE rl.relid = p_relid
				 AND CASE WHEN dpsynth._role_exists(rl.role) THEN pg_catalog.pg_has_role(p_role, rl.role, 'MEMBER') END LOOP
		rem := lim.rho_limit - dpsynth._rho_spent_by_members(p_relid, lim.role);
		IF limit_remaining IS NULL OR rem < limit_remaining THEN
			limit_remaining := rem;
			limit_role := lim.role;
		END IF;
	END LOOP;
END
$$;

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA dpsynth FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA dpsynth FROM PUBLIC;

-------------------------------------------------------------------------------
-- Public functions (C entry points, src/*.c)
-------------------------------------------------------------------------------
CREATE FUNCTION dp_protect(tbl regclass, epsilon float8, delta float8 DEFAULT 1e-6) RETURNS void
	AS 'MODULE_PATHNAME', 'dpsynth_admin_call' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_protect(regclass, float8, float8) IS
	'register a table with a privacy budget (epsilon, delta), or change its budget';

CREATE FUNCTION dp_declare(tbl regclass, "column" name, categories text[] DEFAULT NULL,
						   lower float8 DEFAULT NULL, upper float8 DEFAULT NULL, bins int4 DEFAULT NULL)
	RETURNS void AS 'MODULE_PATHNAME', 'dpsynth_admin_call' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_declare(regclass, name, text[], float8, float8, int4) IS
	'declare the public domain of a column: categories, or numeric bounds and a number of equal-width bins';

CREATE FUNCTION dp_declare(tbl regclass, domains jsonb) RETURNS int4
	AS 'MODULE_PATHNAME', 'dpsynth_admin_call' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_declare(regclass, jsonb) IS
	'declare the public domains of several columns from a JSON object keyed by column name';

CREATE FUNCTION dp_limit_role(tbl regclass, role regrole, epsilon float8) RETURNS void
	AS 'MODULE_PATHNAME', 'dpsynth_admin_call' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_limit_role(regclass, regrole, float8) IS
	'cap what members of a role may spend on a table (epsilon at the table''s delta); NULL removes the cap';

CREATE FUNCTION dp_marginal(tbl regclass, columns text[], epsilon float8,
							OUT cell text[], OUT noisy_count int8)
	RETURNS SETOF record AS 'MODULE_PATHNAME', 'dpsynth_marginal' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_marginal(regclass, text[], float8) IS
	'noisy counts of every cell of the declared domain of some columns (discrete Gaussian, charged to the table''s budget)';

REVOKE ALL ON FUNCTION dp_protect(regclass, float8, float8) FROM PUBLIC;
REVOKE ALL ON FUNCTION dp_declare(regclass, name, text[], float8, float8, int4) FROM PUBLIC;
REVOKE ALL ON FUNCTION dp_declare(regclass, jsonb) FROM PUBLIC;
REVOKE ALL ON FUNCTION dp_limit_role(regclass, regrole, float8) FROM PUBLIC;
REVOKE ALL ON FUNCTION dp_marginal(regclass, text[], float8) FROM PUBLIC;
-- The owner functions are executable by everyone: their implementations admit only the
-- table's owner or a member of dpsynth_admin (dpsynth._check_owner).
GRANT EXECUTE ON FUNCTION dp_protect(regclass, float8, float8) TO PUBLIC;
GRANT EXECUTE ON FUNCTION dp_declare(regclass, name, text[], float8, float8, int4) TO PUBLIC;
GRANT EXECUTE ON FUNCTION dp_declare(regclass, jsonb) TO PUBLIC;
GRANT EXECUTE ON FUNCTION dp_limit_role(regclass, regrole, float8) TO PUBLIC;
GRANT EXECUTE ON FUNCTION dp_marginal(regclass, text[], float8) TO dpsynth_analyst, dpsynth_admin;

-------------------------------------------------------------------------------
-- Views
-------------------------------------------------------------------------------
-- Budgets of every protected table, in rho and in epsilon at the table's delta, with what the
-- current role may still spend under its role limits.
CREATE VIEW dp_budget WITH (security_barrier) AS
SELECT b.relid::regclass AS table_name,
	   b.epsilon,
	   b.delta,
	   b.rho_allowance,
	   b.rho_spent,
	   b.rho_allowance - b.rho_spent AS rho_remaining,
	   @extschema@.dp_epsilon(b.rho_spent::float8, b.delta) AS epsilon_spent,
	   -- rounded down to 1e-6, so that a call with this epsilon fits in what remains
	   floor(@extschema@.dp_epsilon((b.rho_allowance - b.rho_spent)::float8, b.delta) * 1e6) / 1e6 AS epsilon_remaining,
	   b.delta_spent,
	   p.limit_remaining AS my_rho_remaining,
	   p.limit_role::regrole AS my_limit_role
FROM dpsynth.budgets b
LEFT JOIN LATERAL dpsynth._precheck(b.relid, (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = current_user), 0) p ON true
WHERE pg_catalog.pg_has_role(current_user, 'dpsynth_analyst', 'USAGE')
   OR pg_catalog.pg_has_role(current_user, 'dpsynth_admin', 'USAGE')
   OR EXISTS (SELECT 1 FROM pg_catalog.pg_class c
			  WHERE c.oid = b.relid AND pg_catalog.pg_has_role(current_user, c.relowner, 'USAGE'));

-- The ledger: admins see every row; a table's owner sees its table's rows; others see their own.
CREATE VIEW dp_ledger WITH (security_barrier) AS
SELECT l.id, l.relid::regclass AS table_name, l.relname, l.rolname AS role, l.charged_at, l.function,
	   l.columns, l.epsilon, l.delta, l.rho, l.delta_add, l.details, l.status, l.reason, l.completed_at
FROM dpsynth.ledger l
WHERE dpsynth._is_admin((SELECT oid FROM pg_catalog.pg_roles WHERE rolname = current_user))
   OR CASE WHEN dpsynth._role_exists(l.role) THEN pg_catalog.pg_has_role(current_user, l.role, 'MEMBER') END
   OR EXISTS (SELECT 1 FROM pg_catalog.pg_class c
			  WHERE c.oid = l.relid AND pg_catalog.pg_has_role(current_user, c.relowner, 'USAGE'));

-- Declared domains are public by definition.
CREATE VIEW dp_domains AS
SELECT d.relid::regclass AS table_name, a.attname AS column_name, a.atttypid::regtype AS type,
	   d.kind, d.categories, d.lower, d.upper, d.bins, d.source, d.declared_by::regrole AS declared_by,
	   d.declared_at
FROM dpsynth.domains d
JOIN pg_catalog.pg_attribute a ON a.attrelid = d.relid AND a.attnum = d.attnum AND NOT a.attisdropped;

CREATE VIEW dp_role_limits AS
SELECT r.relid::regclass AS table_name, r.role::regrole AS role, r.epsilon, r.rho_limit,
	   dpsynth._rho_spent_by_members(r.relid, r.role) AS rho_spent,
	   r.set_by::regrole AS set_by, r.set_at
FROM dpsynth.role_limits r
WHERE dpsynth._role_exists(r.role);

-- Every view filters or shows only public facts, so every role may read it.
GRANT SELECT ON dp_budget, dp_ledger, dp_domains, dp_role_limits TO PUBLIC;
-- Functions the views call (they run with the reader's rights, SECURITY DEFINER where they
-- read the catalog).
GRANT USAGE ON SCHEMA dpsynth TO PUBLIC;
GRANT EXECUTE ON FUNCTION dpsynth._role_exists(oid), dpsynth._is_admin(oid),
	dpsynth._rho_spent_by_members(oid, oid), dpsynth._precheck(oid, oid, float8) TO PUBLIC;

-------------------------------------------------------------------------------
-- A dropped table's budget and domains go with it (its ledger rows stay), so that a new
-- table can never inherit them through a recycled OID.
-------------------------------------------------------------------------------
CREATE FUNCTION dpsynth._on_drop() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	DELETE FROM dpsynth.budgets b
		USING pg_catalog.pg_event_trigger_dropped_objects() o
		WHERE o.classid = 'pg_catalog.pg_class'::regclass AND o.objsubid = 0 AND b.relid = o.objid;
END
$$;
REVOKE ALL ON FUNCTION dpsynth._on_drop() FROM PUBLIC;
CREATE EVENT TRIGGER dpsynth_on_drop ON sql_drop EXECUTE FUNCTION dpsynth._on_drop();
