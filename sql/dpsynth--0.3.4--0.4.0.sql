-- dpsynth 0.3.4 -> 0.4.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.4.0'" to load this file. \quit

-- CREATE SCHEMA ... CREATE TABLE ... INHERITS / PARTITION OF: the schema's elements are guarded
-- too (their subcommands fire no event trigger of their own).
DROP EVENT TRIGGER dpsynth_guard_ddl;
CREATE EVENT TRIGGER dpsynth_guard_ddl ON ddl_command_start
	WHEN TAG IN ('DROP EXTENSION', 'DROP OWNED', 'DROP SCHEMA', 'ALTER TABLE', 'ALTER FOREIGN TABLE',
				 'CREATE TABLE', 'CREATE FOREIGN TABLE', 'CREATE SCHEMA') EXECUTE FUNCTION dpsynth._guard_ddl();
-- Privacy per unit (issue 39): a table's privacy unit column and the bounds on what one unit
-- contributes to a release (docs/PRIVACY.md, "Privacy per unit").
ALTER TABLE dpsynth.budgets
	ADD COLUMN privacy_unit int2,
	ADD COLUMN max_rows_per_unit int4 CHECK (max_rows_per_unit BETWEEN 1 AND 1000),
	ADD COLUMN max_rows_per_cell int4 CHECK (max_rows_per_cell >= 1 AND max_rows_per_cell <= max_rows_per_unit),
	ADD COLUMN privacy_unit_name name,
	ADD CONSTRAINT unit_bounds CHECK ((privacy_unit IS NULL) = (max_rows_per_unit IS NULL)
									  AND (privacy_unit IS NULL) = (max_rows_per_cell IS NULL));

-- The privacy unit column of a table: its attnum, if its type compares equal values as equal
-- bytes (the bounding groups rows by the bytes of the value, src/units.c); raises otherwise.
CREATE FUNCTION dpsynth._unit_column(tbl regclass, col name) RETURNS int2
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	n int2;
	typ oid;
	coll oid;
BEGIN
	SELECT attnum, dpsynth._base_type(atttypid), attcollation INTO n, typ, coll FROM pg_catalog.pg_attribute
		WHERE attrelid = tbl AND attname = col AND attnum > 0 AND NOT attisdropped;
	IF n IS NULL THEN
		RAISE EXCEPTION 'column "%" of table % does not exist', col, tbl USING ERRCODE = 'undefined_column';
	END IF;
	IF typ NOT IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'text'::regtype, 'varchar'::regtype,
				   'uuid'::regtype) THEN
		RAISE EXCEPTION 'privacy unit column "%" of table % has type %, which is not supported', col, tbl,
				format_type(typ, NULL)
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'A privacy unit is an integer (smallint, integer, bigint), text, varchar or uuid column.';
	END IF;
	IF coll <> 0 AND NOT (SELECT collisdeterministic FROM pg_catalog.pg_collation WHERE oid = coll) THEN
		RAISE EXCEPTION 'privacy unit column "%" of table % has a nondeterministic collation', col, tbl
			USING ERRCODE = 'datatype_mismatch',
				  DETAIL = 'Values that compare equal must be the same unit; dpsynth groups rows by their bytes.';
	END IF;
	RETURN n;
END
$$;

-- dp_privacy_unit: name the column whose value is the person a row belongs to, and bound what
-- one person contributes to a release (docs/PRIVACY.md, "Privacy per unit").  A NULL column
-- removes the unit.  Refused (55000) once the table has spent budget: every charge in the ledger
-- is the privacy of one unit under the bounds in force when it ran.
CREATE FUNCTION dpsynth._dp_privacy_unit(invoker oid, tbl regclass, col name, max_rows_per_unit int4,
										 max_rows_per_cell int4)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	b dpsynth.budgets;
	unit int2;
	rows_bound int4 := max_rows_per_unit;
	cell_bound int4 := coalesce(max_rows_per_cell, max_rows_per_unit);
BEGIN
	IF tbl IS NULL THEN
		RAISE EXCEPTION 'table must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	PERFORM dpsynth._check_owner(invoker, tbl, 'protect');
	IF col IS NOT NULL THEN
		IF rows_bound IS NULL OR NOT (rows_bound BETWEEN 1 AND 1000) THEN
			RAISE EXCEPTION 'max_rows_per_unit must be between 1 and 1000, not %', coalesce(rows_bound::text, 'NULL')
				USING ERRCODE = 'invalid_parameter_value',
					  HINT = 'It is the number of rows one unit keeps in a release; the noise grows with it.';
		END IF;
		IF NOT (cell_bound BETWEEN 1 AND rows_bound) THEN
			RAISE EXCEPTION 'max_rows_per_cell must be between 1 and max_rows_per_unit (%), not %', rows_bound, cell_bound
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		unit := dpsynth._unit_column(tbl, col);
	ELSE
		rows_bound := NULL;
		cell_bound := NULL;
	END IF;
	SELECT * INTO b FROM dpsynth.budgets x WHERE x.relid = tbl AND dpsynth._identifies(x.relid, x.relname) FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'table % is not protected by dpsynth', tbl
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  HINT = 'Call dp_protect(table, epsilon => ...) first, then dp_privacy_unit before any release.';
	END IF;
	IF b.privacy_unit IS NOT DISTINCT FROM unit AND b.max_rows_per_unit IS NOT DISTINCT FROM rows_bound
		AND b.max_rows_per_cell IS NOT DISTINCT FROM cell_bound AND b.privacy_unit_name IS NOT DISTINCT FROM col THEN
		RETURN;
	END IF;
	-- the same column by name and the same bounds at another attnum (a restored table's columns
	-- are renumbered; renames keep privacy_unit_name): the unit is the same, spent or not
	IF unit IS NOT NULL AND b.privacy_unit_name = col AND b.max_rows_per_unit = rows_bound
		AND b.max_rows_per_cell = cell_bound THEN
		UPDATE dpsynth.budgets x SET privacy_unit = unit WHERE x.relid = tbl;
		RETURN;
	END IF;
	IF b.rho_spent > 0 OR b.delta_spent > 0 THEN
		RAISE EXCEPTION 'the privacy unit of table % cannot change after budget was spent', tbl
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('Spent rho %s under privacy unit %s.', b.rho_spent,
								  coalesce((SELECT format('%I, %s rows per unit, %s per cell', attname, b.max_rows_per_unit,
														  b.max_rows_per_cell)
											FROM pg_catalog.pg_attribute WHERE attrelid = tbl AND attnum = b.privacy_unit),
										   'none (one row)')),
				  HINT = 'Every charge in the ledger is per unit as it was then; protect a copy of the table to start a new budget.';
	END IF;
	UPDATE dpsynth.budgets x SET privacy_unit = unit, max_rows_per_unit = rows_bound, max_rows_per_cell = cell_bound,
		privacy_unit_name = CASE WHEN unit IS NOT NULL THEN col END
		WHERE x.relid = tbl;
	IF unit IS NULL THEN
		RAISE NOTICE 'table % has no privacy unit: each row is protected on its own', tbl;
	ELSE
		RAISE NOTICE 'privacy unit of table %: column %, at most % rows per unit, % per cell', tbl, col,
			rows_bound, cell_bound;
	END IF;
END
$$;

REVOKE ALL ON FUNCTION dpsynth._unit_column(regclass, name) FROM PUBLIC;
REVOKE ALL ON FUNCTION dpsynth._dp_privacy_unit(oid, regclass, name, int4, int4) FROM PUBLIC;

CREATE FUNCTION dp_privacy_unit(tbl regclass, "column" name, max_rows_per_unit int4 DEFAULT 10,
								max_rows_per_cell int4 DEFAULT NULL) RETURNS void
	AS 'MODULE_PATHNAME', 'dpsynth_admin_call' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_privacy_unit(regclass, name, int4, int4) IS
	'name the column that identifies the person each row belongs to: every release then protects persons, keeping at most max_rows_per_unit rows of each (max_rows_per_cell in one cell of dp_marginal); NULL removes it; only before any budget is spent';

REVOKE ALL ON FUNCTION dp_privacy_unit(regclass, name, int4, int4) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION dp_privacy_unit(regclass, name, int4, int4) TO PUBLIC;

-- dp_declare(table, jsonb): a column's "privacy_unit": true names the table's privacy unit.
CREATE OR REPLACE FUNCTION dpsynth._dp_declare(invoker oid, tbl regclass, domains jsonb)
RETURNS int4 LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	k text;
	v jsonb;
	n int4 := 0;
	unit int2;
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
				   WHERE x NOT IN ('type', 'values', 'lower', 'upper', 'bins', 'points', 'binning', 'nullable', 'privacy_unit')
					 AND x NOT LIKE '\_%') THEN
			RAISE EXCEPTION 'domain of column "%" has an unknown key "%"', k,
				(SELECT x FROM jsonb_object_keys(v) x
				 WHERE x NOT IN ('type', 'values', 'lower', 'upper', 'bins', 'points', 'binning', 'nullable', 'privacy_unit')
				   AND x NOT LIKE '\_%' ORDER BY 1 LIMIT 1)
				USING ERRCODE = 'invalid_parameter_value',
					  HINT = 'The keys are type, values, lower, upper, bins, points, binning and nullable; keys starting with "_" are comments.';
		END IF;
		-- "privacy_unit": true names the table's privacy unit (dp_privacy_unit, default bound) unless
		-- that column already is it; another unit is refused
		IF jsonb_typeof(v -> 'privacy_unit') = 'boolean' AND (v ->> 'privacy_unit')::boolean THEN
			SELECT b.privacy_unit INTO unit FROM dpsynth.budgets b WHERE b.relid = tbl;
			IF unit IS NULL THEN
				PERFORM dpsynth._dp_privacy_unit(invoker, tbl, k::name, 10, NULL);
			ELSIF unit IS DISTINCT FROM dpsynth._column_attnum(tbl, k::name) THEN
				RAISE EXCEPTION 'domain of column "%" names it the privacy unit, but table % has another', k, tbl
					USING ERRCODE = 'object_not_in_prerequisite_state';
			END IF;
		ELSIF v ? 'privacy_unit' AND (jsonb_typeof(v -> 'privacy_unit') <> 'boolean') THEN
			RAISE EXCEPTION 'privacy_unit of column "%" must be true or false', k USING ERRCODE = 'invalid_parameter_value';
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
-- Partial counts that Citus pushes down to its shards (src/citus_state.c, src/citus.c,
-- docs/DISTRIBUTED.md "Citus"): Citus computes an aggregate on the shards only when its state type
-- is not a pseudo-type, so this one's state is a type of its own, shipped from a shard to the
-- coordinator as its text (the byte form of the partial counts, in base64), read back as
-- untrusted.  Exact counts: no EXECUTE for PUBLIC, as above.
CREATE TYPE dpsynth.partial_state;
CREATE FUNCTION dpsynth._state_in(cstring) RETURNS dpsynth.partial_state
	AS 'MODULE_PATHNAME', 'dpsynth_state_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dpsynth._state_out(dpsynth.partial_state) RETURNS cstring
	AS 'MODULE_PATHNAME', 'dpsynth_state_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE dpsynth.partial_state (INPUT = dpsynth._state_in, OUTPUT = dpsynth._state_out,
	INTERNALLENGTH = VARIABLE, ALIGNMENT = double, STORAGE = plain);
COMMENT ON TYPE dpsynth.partial_state IS
	'exact partial counts of one marginal (the state of dpsynth._shard_counts); its text is the portable byte form in base64; not a release';
CREATE FUNCTION dpsynth._state_add(dpsynth.partial_state, int4[], int4[]) RETURNS dpsynth.partial_state
	AS 'MODULE_PATHNAME', 'dpsynth_state_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpsynth._state_combine(dpsynth.partial_state, dpsynth.partial_state) RETURNS dpsynth.partial_state
	AS 'MODULE_PATHNAME', 'dpsynth_state_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpsynth._state_vector(state dpsynth.partial_state, sizes int4[]) RETURNS int8[]
	AS 'MODULE_PATHNAME', 'dpsynth_state_vector' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dpsynth._state_vector(dpsynth.partial_state, int4[]) IS
	'the exact counts of a partial_state of the given shape, cell by cell (first column slowest); NULL state: zeros';
CREATE AGGREGATE dpsynth._shard_counts(codes int4[], sizes int4[]) (
	SFUNC = dpsynth._state_add, STYPE = dpsynth.partial_state,
	COMBINEFUNC = dpsynth._state_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE dpsynth._shard_counts(int4[], int4[]) IS
	'exact counts of the rows over the joint cells of one marginal, as a partial_state that Citus computes on each shard and combines on the coordinator; not a release';
REVOKE ALL ON FUNCTION dpsynth._state_in(cstring), dpsynth._state_out(dpsynth.partial_state),
	dpsynth._state_add(dpsynth.partial_state, int4[], int4[]),
	dpsynth._state_combine(dpsynth.partial_state, dpsynth.partial_state),
	dpsynth._state_vector(dpsynth.partial_state, int4[]), dpsynth._shard_counts(int4[], int4[]) FROM PUBLIC;
CREATE FUNCTION dpsynth._state_add_pairs(dpsynth.partial_state, int4[], int4[]) RETURNS dpsynth.partial_state
	AS 'MODULE_PATHNAME', 'dpsynth_state_add_pairs' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpsynth._shard_pairs(codes int4[], sizes int4[]) (
	SFUNC = dpsynth._state_add_pairs, STYPE = dpsynth.partial_state,
	COMBINEFUNC = dpsynth._state_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE dpsynth._shard_pairs(int4[], int4[]) IS
	'exact counts of the rows over every pair of the columns (a code per column), one vector of the pairs one after another, as a partial_state; not a release';
REVOKE ALL ON FUNCTION dpsynth._state_add_pairs(dpsynth.partial_state, int4[], int4[]),
	dpsynth._shard_pairs(int4[], int4[]) FROM PUBLIC;

-- The charge refuses a release that read another privacy unit than the one in force (a change
-- committed while it ran): issue 39, review R1.
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
	SELECT * INTO b FROM dpsynth.budgets WHERE relid = p_relid AND dpsynth._identifies(relid, relname) FOR NO KEY UPDATE;
	IF NOT FOUND THEN
		status := 'unprotected';
		RETURN;
	END IF;
	-- The release read the table's privacy unit before this charge (details.privacy_unit, absent
	-- for a release per row); under the budget row's lock it must still be the unit in force, or
	-- a release bounded by another unit (or by none) would be charged as one per unit: refused,
	-- nothing charged (dp_privacy_unit changes it only while nothing is spent).
	IF b.privacy_unit IS DISTINCT FROM (SELECT a.attnum FROM pg_catalog.pg_attribute a
										WHERE a.attrelid = p_relid AND NOT a.attisdropped
										  AND a.attname = p_details->'privacy_unit'->>'column')
	   OR b.max_rows_per_unit IS DISTINCT FROM (p_details->'privacy_unit'->>'max_rows_per_unit')::int4 THEN
		RAISE EXCEPTION 'the privacy unit of table % changed while this call ran', b.relname
			USING ERRCODE = '40001',	-- serialization_failure
				  DETAIL = 'The release read it before the owner''s change committed. Nothing was charged.',
				  HINT = 'Call again.';
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

-- The privacy unit column's name follows its renames (a release refuses an attnum that names
-- another column, as after a restore that renumbered them): review R1.
CREATE OR REPLACE FUNCTION dpsynth._on_alter() RETURNS event_trigger
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
		-- a renamed privacy unit column: its name follows, once the old name is gone from the table
		-- (a restored table whose attnum names another column keeps the old name, and is refused)
		UPDATE dpsynth.budgets b SET privacy_unit_name = a.attname
			FROM pg_catalog.pg_attribute a
			WHERE b.relid = cmd.objid AND a.attrelid = b.relid AND a.attnum = b.privacy_unit
			  AND NOT a.attisdropped AND a.attname <> b.privacy_unit_name
			  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute o
							  WHERE o.attrelid = b.relid AND o.attname = b.privacy_unit_name AND NOT o.attisdropped);
	END LOOP;
END
$$;
