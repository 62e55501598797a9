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

-- 0.7.0: declared and learned domains keep their column's name, and follow it through a restore
-- (pg_restore renumbers the columns after a dropped one) and renames.  The names of existing
-- rows are their columns' names now; a row at a dropped column's attnum keeps none.
ALTER TABLE dpsynth.domains ADD COLUMN attname name;
UPDATE dpsynth.domains d SET attname = a.attname
	FROM pg_catalog.pg_attribute a
	WHERE a.attrelid = d.relid AND a.attnum = d.attnum AND NOT a.attisdropped;

-- 0.7.0: column policies keep their column's name too, and follow it alike.
ALTER TABLE dpsynth.column_policies ADD COLUMN attname name;
UPDATE dpsynth.column_policies p SET attname = a.attname
	FROM pg_catalog.pg_attribute a
	WHERE a.attrelid = p.relid AND a.attnum = p.attnum AND NOT a.attisdropped;

-- The attnums of a table's rows in one of the per-column catalogs (dpsynth.domains,
-- dpsynth.column_policies) brought back to their columns' names: pg_restore renumbers the columns
-- after a dropped one.  A row at the attnum of a dropped column stays (the column was dropped
-- here: a column later given its name does not take its row), as does a row whose name is no
-- longer in the table: a release refuses the column at its attnum (src/domain.c), so an 'exclude'
-- that lost its column never lets the column now at its attnum out.  A row in the way of a moved
-- one names a column the table no longer has, and goes.  Learned domains move with their
-- ledger_id.  Writes only when a row moved, under the table's domain lock, having read again.
CREATE FUNCTION dpsynth._rows_by_name(tbl oid, cat regclass) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	moved jsonb;
BEGIN
	IF cat NOT IN ('dpsynth.domains'::regclass, 'dpsynth.column_policies'::regclass) THEN
		RAISE EXCEPTION 'dpsynth._rows_by_name: % is not a per-column catalog of dpsynth', cat;
	END IF;
	FOR i IN 1..2 LOOP
		EXECUTE format($q$
			SELECT jsonb_agg(to_jsonb(r) || jsonb_build_object('attnum', a.attnum, 'from', r.attnum))
			FROM %s r
			JOIN pg_catalog.pg_attribute a ON a.attrelid = r.relid AND a.attname = r.attname
				AND NOT a.attisdropped AND a.attnum > 0
			WHERE r.relid = $1 AND a.attnum <> r.attnum
			  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute o
							  WHERE o.attrelid = r.relid AND o.attnum = r.attnum AND o.attisdropped)$q$, cat)
			INTO moved USING tbl;
		IF moved IS NULL THEN
			RETURN;
		END IF;
		-- moved under the table's domain lock, then read again: a concurrent call may have moved them
		EXIT WHEN i = 2;
		PERFORM dpsynth._lock_domains(tbl);
	END LOOP;
	EXECUTE format($q$
		DELETE FROM %s r WHERE r.relid = $1
		  AND r.attnum IN (SELECT (m->>k)::int2 FROM jsonb_array_elements($2) m, unnest(ARRAY['attnum', 'from']) k)$q$,
		cat) USING tbl, moved;
	EXECUTE format('INSERT INTO %s SELECT * FROM jsonb_populate_recordset(NULL::%s, $1)', cat, cat) USING moved;
END
$$;
REVOKE ALL ON FUNCTION dpsynth._rows_by_name(oid, regclass) FROM PUBLIC;

-- A table's column policies, then its domains, brought back to their columns' names
-- (dpsynth._rows_by_name).  Called where domains or policies are read or changed.
CREATE FUNCTION dpsynth._domains_by_name(tbl oid) RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
	SELECT dpsynth._rows_by_name(tbl, 'dpsynth.column_policies');
	SELECT dpsynth._rows_by_name(tbl, 'dpsynth.domains');
$$;
REVOKE ALL ON FUNCTION dpsynth._domains_by_name(oid) FROM PUBLIC;

-- A domain's or column policy's column name, from the catalog where the row does not bring one
-- (a declaration, a discovery, a detached partition's copy); a restored row brings its own.
CREATE FUNCTION dpsynth._domains_name() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	IF NEW.attname IS NULL THEN
		NEW.attname := (SELECT a.attname FROM pg_catalog.pg_attribute a
						WHERE a.attrelid = NEW.relid AND a.attnum = NEW.attnum AND NOT a.attisdropped);
	END IF;
	RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION dpsynth._domains_name() FROM PUBLIC;
CREATE TRIGGER domains_name BEFORE INSERT ON dpsynth.domains
	FOR EACH ROW EXECUTE FUNCTION dpsynth._domains_name();
CREATE TRIGGER column_policies_name BEFORE INSERT ON dpsynth.column_policies
	FOR EACH ROW EXECUTE FUNCTION dpsynth._domains_name();

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
	PERFORM dpsynth._domains_by_name(tbl);
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
		INSERT INTO dpsynth.domains AS d (relid, attnum, kind, categories, declared_by, attname)
			VALUES (tbl, n, 'categories', categories, invoker, col)
			ON CONFLICT (relid, attnum) DO UPDATE SET kind = 'categories', categories = EXCLUDED.categories,
				attname = EXCLUDED.attname,
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
	INSERT INTO dpsynth.domains AS d (relid, attnum, kind, lower, upper, bins, points, binning, declared_by, attname)
		VALUES (tbl, n, 'bins', lower, upper, nbins,
				(SELECT array_agg(DISTINCT p ORDER BY p) FROM unnest(points) p), coalesce(binning, 'equal'), invoker, col)
		ON CONFLICT (relid, attnum) DO UPDATE SET kind = 'bins', categories = NULL, edges = NULL, shape = NULL,
			attname = EXCLUDED.attname,
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
	PERFORM dpsynth._domains_by_name(tbl);
	DELETE FROM dpsynth.domains WHERE relid = tbl AND attnum = dpsynth._column_attnum(tbl, col);
END
$$;

CREATE OR REPLACE VIEW dp_domains AS
SELECT d.relid AS table_name, a.attname AS column_name, a.atttypid::regtype AS type,
	   d.kind, d.categories, d.lower, d.upper, d.bins, d.edges, d.points, d.binning, d.source, d.ledger_id,
	   d.declared_by::regrole AS declared_by, d.declared_at,
	   CASE WHEN d.lower IS NOT NULL THEN format('[%s, %s]', dpsynth._show_value(a.atttypid, d.lower),
												 dpsynth._show_value(a.atttypid, d.upper)) END AS bounds
FROM dpsynth.domains d
-- a row whose name another column's attnum holds (a restored table, until its next call brings
-- the attnums back to the names) is shown under no column
JOIN pg_catalog.pg_attribute a ON a.attrelid = d.relid AND a.attnum = d.attnum AND NOT a.attisdropped
	AND a.attname = coalesce(d.attname, a.attname);

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
			-- a renamed column's domain: the same, its attnum first brought back to the names
			PERFORM dpsynth._domains_by_name(cmd.objid);
			UPDATE dpsynth.domains d SET attname = a.attname
				FROM pg_catalog.pg_attribute a
				WHERE d.relid = cmd.objid AND d.attnum = cmd.objsubid AND a.attrelid = d.relid
				  AND a.attnum = d.attnum AND NOT a.attisdropped AND a.attname <> d.attname
				  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute o
								  WHERE o.attrelid = d.relid AND o.attname = d.attname AND NOT o.attisdropped);
			UPDATE dpsynth.column_policies p SET attname = a.attname
				FROM pg_catalog.pg_attribute a
				WHERE p.relid = cmd.objid AND p.attnum = cmd.objsubid AND a.attrelid = p.relid
				  AND a.attnum = p.attnum AND NOT a.attisdropped AND a.attname <> p.attname
				  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute o
								  WHERE o.attrelid = p.relid AND o.attname = p.attname AND NOT o.attisdropped);
		END IF;
		PERFORM dpsynth._unit_constant_by_name(cmd.objid);
		PERFORM dpsynth._domains_by_name(cmd.objid);
	END LOOP;
END
$$;

-- 0.7.0: column policies are matched by their names where a restored table's attnums may be old
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
	PERFORM dpsynth._domains_by_name(tbl);
	n := dpsynth._column_attnum(tbl, col);
	IF coalesce(treatment, 'synthesize') NOT IN ('synthesize', 'exclude', 'identifier') THEN
		RAISE EXCEPTION 'treatment must be synthesize, exclude or identifier, not %', treatment
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	INSERT INTO dpsynth.column_policies (relid, attnum, treatment, discovery, other, set_by, attname)
		VALUES (tbl, n, coalesce(treatment, 'synthesize'), discovery, other, invoker, col)
		ON CONFLICT (relid, attnum) DO UPDATE SET treatment = EXCLUDED.treatment, attname = EXCLUDED.attname,
			discovery = EXCLUDED.discovery, other = EXCLUDED.other, set_by = EXCLUDED.set_by,
			set_at = pg_catalog.now();
END
$$;

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
									   -- a policy counts for the column of its name (its attnum may
									   -- be a restored table's old one) and, fail closed, for none other
									   AND NOT EXISTS (SELECT 1 FROM dpsynth.column_policies p
													   WHERE p.relid = t AND p.attname = a.attname AND p.treatment <> 'synthesize')))
						 -- a hair less, so that float8 round trips can never push the sum past the allowance
						 * 0.999999999)
						END AS share) s
		  WHERE b.relid = t $$;

CREATE OR REPLACE FUNCTION dpsynth._on_detach(child oid, parent oid) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	donor dpsynth.budgets;
	new_id bigint;
	stays text;
BEGIN
	SELECT b.* INTO donor FROM dpsynth.budgets b
		WHERE (b.relid = parent OR b.relid IN (SELECT r FROM dpsynth._protected_relatives(parent) r))
		  AND dpsynth._identifies(b.relid, b.relname)
		LIMIT 1;
	IF NOT FOUND OR donor.relid = child THEN
		RETURN;
	END IF;
	-- a child of several parents that stays under the donor through another one keeps
	-- being read with it: a budget of its own would count its rows twice
	IF EXISTS (WITH RECURSIVE up(a) AS (
				   SELECT inhparent FROM pg_catalog.pg_inherits WHERE inhrelid = child AND inhparent <> parent
				   UNION SELECT i.inhparent FROM pg_catalog.pg_inherits i JOIN up ON i.inhrelid = up.a)
			   SELECT 1 FROM up WHERE a = donor.relid) THEN
		RETURN;
	END IF;
	-- the budget it gets would also count the tables below it that stay under the donor
	-- through another path: refused, as any change that puts a row under two budgets
	stays := (WITH RECURSIVE down(t) AS (
				  SELECT inhrelid FROM pg_catalog.pg_inherits WHERE inhparent = child
				  UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN down ON i.inhparent = down.t),
			  up(t, a) AS (
				  SELECT t, t FROM down
				  UNION SELECT up.t, i.inhparent FROM up JOIN pg_catalog.pg_inherits i ON i.inhrelid = up.a
				  WHERE up.a <> child)
			  SELECT min(t::regclass::text) FROM up WHERE a = donor.relid);
	IF stays IS NOT NULL THEN
		RAISE EXCEPTION 'cannot detach % from %: rows of % would be protected by dpsynth twice (% and %)',
			child::regclass, parent::regclass, stays, donor.relid, child::regclass
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('%s would keep its protection, and %s stays under %s through another parent.',
								  child::regclass, stays, donor.relid),
				  HINT = format('Detach %s from %s, or from its other parent, first.', stays, child::regclass);
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
	-- policies by their own names (the donor's attnums may be a restored table's old ones)
	INSERT INTO dpsynth.column_policies (relid, attnum, treatment, discovery, other, set_by, set_at, attname)
		SELECT child, ca.attnum, p.treatment, p.discovery, p.other, p.set_by, p.set_at, ca.attname
		FROM dpsynth.column_policies p
		LEFT JOIN pg_catalog.pg_attribute pa ON pa.attrelid = donor.relid AND pa.attnum = p.attnum
		JOIN pg_catalog.pg_attribute ca ON ca.attrelid = child AND ca.attname = coalesce(p.attname, pa.attname)
			AND NOT ca.attisdropped
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

CREATE OR REPLACE VIEW dp_column_policies AS
SELECT p.relid AS table_name, a.attname AS column_name, p.treatment, p.discovery, p.other,
	   p.set_by::regrole AS set_by, p.set_at
FROM dpsynth.column_policies p
-- a policy whose name another column's attnum holds is shown under no column (as dp_domains)
JOIN pg_catalog.pg_attribute a ON a.attrelid = p.relid AND a.attnum = p.attnum AND NOT a.attisdropped
	AND a.attname = coalesce(p.attname, a.attname);
