-- dpsynth 0.3.4 -> 0.4.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.4.0'" to load this file. \quit

-- Privacy per unit (issue 39): a table's privacy unit column and the bounds on what one unit
-- contributes to a release (docs/PRIVACY.md, "Privacy per unit").
ALTER TABLE dpsynth.budgets
	ADD COLUMN privacy_unit int2,
	ADD COLUMN max_rows_per_unit int4 CHECK (max_rows_per_unit BETWEEN 1 AND 1000),
	ADD COLUMN max_rows_per_cell int4 CHECK (max_rows_per_cell >= 1 AND max_rows_per_cell <= max_rows_per_unit),
	ADD CONSTRAINT unit_bounds CHECK ((privacy_unit IS NULL) = (max_rows_per_unit IS NULL)
									  AND (privacy_unit IS NULL) = (max_rows_per_cell IS NULL));

DROP FUNCTION dp_protect(regclass, float8, float8, float8, boolean);
DROP FUNCTION dpsynth._dp_protect(oid, regclass, float8, float8, float8, boolean);

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

CREATE FUNCTION dpsynth._dp_protect(invoker oid, tbl regclass, epsilon float8, delta float8,
									selection_delta float8, discovery boolean, privacy_unit name,
									max_rows_per_unit int4, max_rows_per_cell int4)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	kind "char";
	persistence "char";
	allowance numeric;
	spent numeric;
	dspent numeric;
	old_unit int2;
	old_rows int4;
	old_cell int4;
	unit int2;
	rows_bound int4;
	cell_bound int4;
	is_new boolean;
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
	-- a Citus table is a shell here, its rows in shards that no release would read
	PERFORM dpsynth._check_visible(tbl);
	-- a partitioned or inherited table is protected as one table: its partitions and children
	-- are read with it, and none of them, nor any table above it, nor any other table above one
	-- of them, may have a budget of its own
	PERFORM dpsynth._guard_tree(tbl, '{}', true, NULL);
	-- a foreign partition (postgres_fdw) is protected with the others: dp_marginal and
	-- dp_synthesize's adaptive method count it on its server (src/foreign.c); dp_discover, which
	-- reads values, and the PrivSyn method refuse it before any charge
	IF EXISTS (WITH RECURSIVE down(r) AS (
				   SELECT inhrelid FROM pg_catalog.pg_inherits WHERE inhparent = tbl
				   UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN down ON i.inhparent = down.r)
			   SELECT 1 FROM down JOIN pg_catalog.pg_class c ON c.oid = down.r
			   WHERE c.relpersistence = 't') THEN
		RAISE EXCEPTION 'table % has a temporary partition or child', tbl
			USING ERRCODE = 'feature_not_supported',
				  HINT = 'dpsynth protects only permanent and unlogged tables.';
	END IF;
	IF privacy_unit IS NULL AND (max_rows_per_unit IS NOT NULL OR max_rows_per_cell IS NOT NULL)
		AND NOT EXISTS (SELECT 1 FROM dpsynth.budgets b WHERE b.relid = tbl AND b.privacy_unit IS NOT NULL) THEN
		RAISE EXCEPTION 'max_rows_per_unit and max_rows_per_cell need a privacy unit'
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'Name the column that identifies a person: privacy_unit => ''patient_id''.';
	END IF;
	IF privacy_unit IS NOT NULL THEN
		unit := dpsynth._unit_column(tbl, privacy_unit);
	END IF;
	PERFORM dpsynth._lock_domains(tbl);
	-- Protections that no longer identify their table (see dpsynth.budgets) go now, with their
	-- domains, policies and limits; their ledger rows stay.
	DELETE FROM dpsynth.budgets b WHERE NOT dpsynth._identifies(b.relid, b.relname);

	allowance := dpsynth._units_rho(dpsynth._rho_units(epsilon, delta));
	SELECT rho_spent, delta_spent, b.privacy_unit, b.max_rows_per_unit, b.max_rows_per_cell
		INTO spent, dspent, old_unit, old_rows, old_cell FROM dpsynth.budgets b WHERE relid = tbl FOR UPDATE;
	is_new := NOT FOUND;
	-- the unit and its bounds: NULL arguments keep what is set; a new unit gets the default
	-- bound (10 rows per unit) and no cell bound beyond it
	unit := coalesce(unit, old_unit);
	IF unit IS NOT NULL THEN
		rows_bound := coalesce(max_rows_per_unit, CASE WHEN unit IS NOT DISTINCT FROM old_unit THEN old_rows END, 10);
		cell_bound := coalesce(max_rows_per_cell,
							   CASE WHEN unit IS NOT DISTINCT FROM old_unit AND max_rows_per_unit IS NULL THEN old_cell END,
							   rows_bound);
		IF NOT (rows_bound BETWEEN 1 AND 1000) THEN
			RAISE EXCEPTION 'max_rows_per_unit must be between 1 and 1000, not %', rows_bound
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF NOT (cell_bound BETWEEN 1 AND rows_bound) THEN
			RAISE EXCEPTION 'max_rows_per_cell must be between 1 and max_rows_per_unit (%), not %', rows_bound, cell_bound
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
	END IF;
	-- A release's charge is the privacy of one unit under the bounds in force when it ran:
	-- another unit or bound would make the ledger's sum mean something else.  Refused once
	-- anything is spent (docs/PRIVACY.md, "Privacy per unit").
	IF NOT is_new AND (spent > 0 OR dspent > 0) AND (unit IS DISTINCT FROM old_unit OR rows_bound IS DISTINCT FROM old_rows
												  OR cell_bound IS DISTINCT FROM old_cell) THEN
		RAISE EXCEPTION 'the privacy unit or its bounds of table % cannot change after budget was spent', tbl
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('Spent rho %s under privacy unit %s, %s rows per unit, %s per cell.', spent,
								  coalesce((SELECT quote_ident(attname) FROM pg_catalog.pg_attribute
											WHERE attrelid = tbl AND attnum = old_unit), 'none (one row)'),
								  coalesce(old_rows::text, '-'), coalesce(old_cell::text, '-')),
				  HINT = 'Every charge in the ledger is per unit as it was then; protect a copy of the table to start a new budget.';
	END IF;
	IF is_new THEN
		INSERT INTO dpsynth.budgets (relid, relname, epsilon, delta, rho_allowance, selection_delta, discovery,
									 protected_by, privacy_unit, max_rows_per_unit, max_rows_per_cell)
			VALUES (tbl, dpsynth._qualified_name(tbl), epsilon, delta, allowance, selection_delta, discovery, invoker,
					unit, rows_bound, cell_bound);
		RAISE NOTICE 'table % is protected with a budget of epsilon %, delta % (rho %)', tbl, epsilon, delta, allowance;
		IF unit IS NOT NULL THEN
			RAISE NOTICE 'privacy unit of table %: column %, at most % rows per unit, % per cell', tbl, privacy_unit,
				rows_bound, cell_bound;
		END IF;
	ELSE
		IF unit IS DISTINCT FROM old_unit OR rows_bound IS DISTINCT FROM old_rows OR cell_bound IS DISTINCT FROM old_cell THEN
			UPDATE dpsynth.budgets b SET privacy_unit = unit, max_rows_per_unit = rows_bound, max_rows_per_cell = cell_bound
				WHERE relid = tbl;
			RAISE NOTICE 'privacy unit of table %: column %, at most % rows per unit, % per cell', tbl,
				(SELECT attname FROM pg_catalog.pg_attribute WHERE attrelid = tbl AND attnum = unit), rows_bound, cell_bound;
		END IF;
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

REVOKE ALL ON FUNCTION dpsynth._unit_column(regclass, name) FROM PUBLIC;
REVOKE ALL ON FUNCTION dpsynth._dp_protect(oid, regclass, float8, float8, float8, boolean, name, int4, int4) FROM PUBLIC;

CREATE FUNCTION dp_protect(tbl regclass, epsilon float8, delta float8 DEFAULT 1e-6,
						   selection_delta float8 DEFAULT 0, discovery boolean DEFAULT true,
						   privacy_unit name DEFAULT NULL, max_rows_per_unit int4 DEFAULT NULL,
						   max_rows_per_cell int4 DEFAULT NULL) RETURNS void
	AS 'MODULE_PATHNAME', 'dpsynth_admin_call' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_protect(regclass, float8, float8, float8, boolean, name, int4, int4) IS
	'register a table with a privacy budget (epsilon, delta), or change its budget; privacy_unit: the column naming the person each row belongs to, whose rows a release bounds (max_rows_per_unit, default 10; max_rows_per_cell)';

REVOKE ALL ON FUNCTION dp_protect(regclass, float8, float8, float8, boolean, name, int4, int4) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION dp_protect(regclass, float8, float8, float8, boolean, name, int4, int4) TO PUBLIC;
