-- dpsynth 0.6.0 -> 0.7.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.7.0'" to load this file. \quit

-- Columns constant within a privacy unit (dp_unit_constant)
ALTER TABLE dpsynth.budgets ADD COLUMN unit_constant int2[];
ALTER TABLE dpsynth.budgets ADD COLUMN unit_constant_names name[];

-- dp_privacy_unit: name the column whose value is the person a row belongs to, and bound what
-- one person contributes to a release (docs/PRIVACY.md, "Privacy per unit").  A NULL column
-- removes the unit; a NULL max_rows_per_unit has each release learn it under DP, up to 32 (docs/PRIVACY.md,
-- "Learning the rows-per-unit bound").  Refused (55000) once the table has spent budget: every charge in the ledger
-- is the privacy of one unit under the bounds in force when it ran.
CREATE OR REPLACE FUNCTION dpsynth._dp_privacy_unit(invoker oid, tbl regclass, col name, max_rows_per_unit int4,
										 max_rows_per_cell int4)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	b dpsynth.budgets;
	unit int2;
	rows_bound int4 := max_rows_per_unit;
	cell_bound int4 := coalesce(max_rows_per_cell, max_rows_per_unit);	-- NULL: the learned bound
BEGIN
	IF tbl IS NULL THEN
		RAISE EXCEPTION 'table must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	PERFORM dpsynth._check_owner(invoker, tbl, 'protect');
	IF col IS NOT NULL THEN
		IF NOT (rows_bound BETWEEN 1 AND 1000) THEN
			RAISE EXCEPTION 'max_rows_per_unit must be between 1 and 1000, not %', rows_bound
				USING ERRCODE = 'invalid_parameter_value',
					  HINT = 'It is the number of rows one unit keeps in a release; the noise grows with it. NULL learns it under DP, up to 32.';
		END IF;
		IF rows_bound IS NULL AND NOT (cell_bound BETWEEN 1 AND 32) THEN
			RAISE EXCEPTION 'max_rows_per_cell must be between 1 and 32 when max_rows_per_unit is learned, not %', cell_bound
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF rows_bound IS NOT NULL AND NOT (cell_bound BETWEEN 1 AND rows_bound) THEN
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
		PERFORM dpsynth._unit_constant_by_name(tbl);
		RETURN;
	END IF;
	-- the same column by name and the same bounds at another attnum (a restored table's columns
	-- are renumbered; renames keep privacy_unit_name): the unit is the same, spent or not
	IF unit IS NOT NULL AND b.privacy_unit_name = col AND b.max_rows_per_unit IS NOT DISTINCT FROM rows_bound
		AND b.max_rows_per_cell IS NOT DISTINCT FROM cell_bound THEN
		UPDATE dpsynth.budgets x SET privacy_unit = unit WHERE x.relid = tbl;
		PERFORM dpsynth._unit_constant_by_name(tbl);
		RETURN;
	END IF;
	IF b.rho_spent > 0 OR b.delta_spent > 0 THEN
		RAISE EXCEPTION 'the privacy unit of table % cannot change after budget was spent', tbl
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('Spent rho %s under privacy unit %s.', b.rho_spent,
								  coalesce((SELECT format('%I, %s rows per unit, %s per cell', attname,
														  coalesce(b.max_rows_per_unit::text, 'learned'),
														  coalesce(b.max_rows_per_cell::text, 'learned'))
											FROM pg_catalog.pg_attribute WHERE attrelid = tbl AND attnum = b.privacy_unit),
										   'none (one row)')),
				  HINT = 'Every charge in the ledger is per unit as it was then; protect a copy of the table to start a new budget.';
	END IF;
	UPDATE dpsynth.budgets x SET privacy_unit = unit, max_rows_per_unit = rows_bound, max_rows_per_cell = cell_bound,
		privacy_unit_name = CASE WHEN unit IS NOT NULL THEN col END,
		-- the columns constant within a unit are constant within that unit: another unit drops them
		unit_constant = CASE WHEN unit IS NOT DISTINCT FROM b.privacy_unit THEN b.unit_constant END,
		unit_constant_names = CASE WHEN unit IS NOT DISTINCT FROM b.privacy_unit THEN b.unit_constant_names END
		WHERE x.relid = tbl;
	IF unit IS NULL THEN
		RAISE NOTICE 'table % has no privacy unit: each row is protected on its own', tbl;
	ELSE
		RAISE NOTICE 'privacy unit of table %: column %, at most % rows per unit, % per cell', tbl, col,
			coalesce(rows_bound::text, 'a learned number (up to 32) of'), coalesce(cell_bound::text, 'all');
	END IF;
END
$$;

-- The attnums of a table's columns constant within a unit, brought back to their names (a
-- restored table's columns are renumbered after a dropped one, and the restored table has no
-- dropped column): an attnum that names a dropped column stays (the column was dropped here, and
-- a column later given its name does not take its place), as does a name no longer in the table.
-- A synthesis reads them the same way (src/units.c).
CREATE FUNCTION dpsynth._unit_constant_by_name(tbl oid) RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
	UPDATE dpsynth.budgets b SET unit_constant =
		ARRAY(SELECT coalesce(a.attnum, u.num)
			  FROM unnest(b.unit_constant, b.unit_constant_names) WITH ORDINALITY u(num, nm, i)
			  LEFT JOIN pg_catalog.pg_attribute a
				ON a.attrelid = b.relid AND a.attname = u.nm AND NOT a.attisdropped AND a.attnum > 0
				   AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute d
								   WHERE d.attrelid = b.relid AND d.attnum = u.num AND d.attisdropped)
			  ORDER BY u.i)
	WHERE b.relid = tbl AND b.unit_constant_names IS NOT NULL
$$;
REVOKE ALL ON FUNCTION dpsynth._unit_constant_by_name(oid) FROM PUBLIC;

-- dp_unit_constant: the columns the owner declares constant within a unit (a patient's sex, birth
-- year): a synthetic unit draws their values once, from the synthetic rows of one combination of
-- them (docs/PRIVACY.md, "Columns constant within a unit").  Public, and checked against no row
-- (that would be a release): nothing is charged, and it may change at any time.  NULL or an empty
-- array removes it.  Refused: a table that is not protected or has no unit (55000), an unknown
-- column (42703), the unit column itself (22023), a NULL name (22004).
CREATE FUNCTION dpsynth._dp_unit_constant(invoker oid, tbl regclass, columns name[])
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	b dpsynth.budgets;
	c name;
	n int2;
	attnums int2[] := '{}';
BEGIN
	IF tbl IS NULL THEN
		RAISE EXCEPTION 'table must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	PERFORM dpsynth._check_owner(invoker, tbl, 'protect');
	SELECT * INTO b FROM dpsynth.budgets x WHERE x.relid = tbl AND dpsynth._identifies(x.relid, x.relname) FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'table % is not protected by dpsynth', tbl
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  HINT = 'Call dp_protect(table, epsilon => ...) and dp_privacy_unit first.';
	END IF;
	IF coalesce(cardinality(columns), 0) > 0 AND b.privacy_unit IS NULL THEN
		RAISE EXCEPTION 'table % has no privacy unit', tbl
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'Columns are constant within a unit; each row of this table is its own.',
				  HINT = 'Call dp_privacy_unit(table, column) first.';
	END IF;
	FOREACH c IN ARRAY coalesce(columns, '{}') LOOP
		IF c IS NULL THEN
			RAISE EXCEPTION 'column names must not be NULL' USING ERRCODE = 'null_value_not_allowed';
		END IF;
		n := dpsynth._column_attnum(tbl, c);
		IF n = b.privacy_unit THEN
			RAISE EXCEPTION 'column "%" is the privacy unit of table %', c, tbl
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = 'A synthetic unit''s rows share its synthetic id already.',
					  HINT = 'Name the columns whose value is the same on every row of a unit, such as a patient''s sex.';
		END IF;
		attnums := attnums || n;
	END LOOP;
	attnums := ARRAY(SELECT DISTINCT x FROM unnest(attnums) x ORDER BY x);
	UPDATE dpsynth.budgets x SET unit_constant = CASE WHEN cardinality(attnums) > 0 THEN attnums END,
		unit_constant_names = CASE WHEN cardinality(attnums) > 0 THEN
			ARRAY(SELECT a.attname FROM pg_catalog.pg_attribute a
				  WHERE a.attrelid = tbl AND a.attnum = ANY(attnums) ORDER BY a.attnum) END
		WHERE x.relid = tbl;
	IF cardinality(attnums) = 0 THEN
		RAISE NOTICE 'table % has no column constant within a unit', tbl;
	ELSE
		RAISE NOTICE 'columns of table % constant within a unit: %', tbl,
			(SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_catalog.pg_attribute
			 WHERE attrelid = tbl AND attnum = ANY(attnums));
	END IF;
END
$$;
REVOKE ALL ON FUNCTION dpsynth._dp_unit_constant(oid, regclass, name[]) FROM PUBLIC;

CREATE FUNCTION dp_unit_constant(tbl regclass, columns name[]) RETURNS void
	AS 'MODULE_PATHNAME', 'dpsynth_admin_call' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_unit_constant(regclass, name[]) IS
	'name the columns constant within a privacy unit (a patient''s sex): each synthetic unit then holds one value of each, with its rows drawn given them; public, charges nothing, checks no row; NULL or empty removes it';
REVOKE ALL ON FUNCTION dp_unit_constant(regclass, name[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION dp_unit_constant(regclass, name[]) TO PUBLIC;

-- 0.7.0: the names of the columns constant within a unit follow renames, their attnums a restore.
-- A renamed table (or schema) keeps its protection: the qualified name of the altered table, or
-- of the tables of the altered schema, is brought up to date.  Only rows that identified their
-- table before the change are followed (the name part that the command did not change must
-- still match), so a row left behind by a vanished table is never re-attached by a rename.
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
		-- a renamed column constant within a unit: its name follows when the renamed column is at
		-- its attnum and the old name is gone; then the attnums follow the names (after a restore)
		IF cmd.objsubid > 0 THEN
			UPDATE dpsynth.budgets b SET unit_constant_names =
				ARRAY(SELECT CASE WHEN u.num = cmd.objsubid AND a.attname IS NOT NULL
								   AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute o
												   WHERE o.attrelid = b.relid AND o.attname = u.nm
													 AND NOT o.attisdropped) THEN a.attname ELSE u.nm END
					  FROM unnest(b.unit_constant, b.unit_constant_names) WITH ORDINALITY u(num, nm, i)
					  LEFT JOIN pg_catalog.pg_attribute a
						ON a.attrelid = b.relid AND a.attnum = u.num AND NOT a.attisdropped
					  ORDER BY u.i)
				WHERE b.relid = cmd.objid AND b.unit_constant_names IS NOT NULL;
		END IF;
		PERFORM dpsynth._unit_constant_by_name(cmd.objid);
	END LOOP;
END
$$;
