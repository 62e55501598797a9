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
		AND b.max_rows_per_cell IS NOT DISTINCT FROM cell_bound THEN
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
	UPDATE dpsynth.budgets x SET privacy_unit = unit, max_rows_per_unit = rows_bound, max_rows_per_cell = cell_bound
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
