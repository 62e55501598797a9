-- dpsynth 0.4.0 -> 0.5.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.5.0'" to load this file. \quit

-- dp_synthesize_plan: the privacy schedule of a dp_synthesize call, charged nothing.
CREATE FUNCTION dp_synthesize_plan(source regclass, epsilon float8, delta float8 DEFAULT NULL, columns text[] DEFAULT NULL,
								   method text DEFAULT NULL, focus text[] DEFAULT NULL,
								   OUT release text, OUT mechanism text, OUT rho_units int8, OUT count int4,
								   OUT rho float8, OUT rho_min float8, OUT rho_max float8)
	RETURNS SETOF record AS 'MODULE_PATHNAME', 'dpsynth_synthesize_plan' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_synthesize_plan(regclass, float8, float8, text[], text, text[]) IS
	'the privacy schedule dp_synthesize would follow with these arguments, one row per release (rho_units sum to its charge); charges nothing and reads no row';
REVOKE ALL ON FUNCTION dp_synthesize_plan(regclass, float8, float8, text[], text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION dp_synthesize_plan(regclass, float8, float8, text[], text, text[]) TO dpsynth_analyst, dpsynth_admin;
-- issue 39: max_rows_per_unit => NULL learns the rows-per-unit bound under DP in each release
ALTER TABLE dpsynth.budgets DROP CONSTRAINT unit_bounds,
	ADD CONSTRAINT unit_bounds CHECK ((privacy_unit IS NOT NULL OR (max_rows_per_unit IS NULL AND max_rows_per_cell IS NULL))
								  AND (max_rows_per_unit IS NULL OR max_rows_per_cell IS NOT NULL)
								  AND (max_rows_per_unit IS NOT NULL OR max_rows_per_cell <= 32));
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
		RETURN;
	END IF;
	-- the same column by name and the same bounds at another attnum (a restored table's columns
	-- are renumbered; renames keep privacy_unit_name): the unit is the same, spent or not
	IF unit IS NOT NULL AND b.privacy_unit_name = col AND b.max_rows_per_unit IS NOT DISTINCT FROM rows_bound
		AND b.max_rows_per_cell IS NOT DISTINCT FROM cell_bound THEN
		UPDATE dpsynth.budgets x SET privacy_unit = unit WHERE x.relid = tbl;
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
		privacy_unit_name = CASE WHEN unit IS NOT NULL THEN col END
		WHERE x.relid = tbl;
	IF unit IS NULL THEN
		RAISE NOTICE 'table % has no privacy unit: each row is protected on its own', tbl;
	ELSE
		RAISE NOTICE 'privacy unit of table %: column %, at most % rows per unit, % per cell', tbl, col,
			coalesce(rows_bound::text, 'a learned number (up to 32) of'), coalesce(cell_bound::text, 'all');
	END IF;
END
$$;

COMMENT ON FUNCTION dp_privacy_unit(regclass, name, int4, int4) IS
	'name the column that identifies the person each row belongs to: every release then protects persons, keeping at most max_rows_per_unit rows of each (NULL: learned by each release under DP, up to 32; max_rows_per_cell in one cell of dp_marginal); a NULL column removes it; only before any budget is spent';

-- The catalog walks of the one-protection-per-tree guard run without JIT: their recursive
-- unions are estimated far above what they read, and compiling the plan cost far more than
-- running it once pg_inherits held a row.
ALTER FUNCTION dpsynth._protected_relatives(oid) SET jit = off;
ALTER FUNCTION dpsynth._tree_conflict(oid, oid[], boolean) SET jit = off;
