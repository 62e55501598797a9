-- dpsynth 0.7.0 -> 0.8.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.8.0'" to load this file. \quit

-- 0.8.0: the rows of a dropped column go with it (dpsynth._on_drop).  Updated in place, a row at
-- a dropped column's attnum is the row of a column dropped here: a column later added under its
-- name does not take it, and a restore would bring two rows of one name.  Every such row goes,
-- also one that names a live column and is its only row (a column dropped and added again under
-- its name, never set again), which a fresh 0.8.0 would keep and refuse as ambiguous
-- (dpsynth._domains_for_release): in place the attnum is certain, 0.7.0 already left the row
-- unused (it released the column added again as having no policy), and under 0.8.0 the drop
-- would have taken the row with it; the column added again has no policy or domain until set.
DELETE FROM dpsynth.column_policies p USING pg_catalog.pg_attribute a
	WHERE a.attrelid = p.relid AND a.attnum = p.attnum AND a.attisdropped;
DELETE FROM dpsynth.domains d USING pg_catalog.pg_attribute a
	WHERE a.attrelid = d.relid AND a.attnum = d.attnum AND a.attisdropped;

-- 0.8.0: an inserted row without a name keeps none (a dump of 0.6.0 or older, whose attnums may
-- name other columns after pg_restore): the trigger no longer names it after the column now at
-- its attnum; every insert of dpsynth's names its row.
DROP TRIGGER domains_name ON dpsynth.domains;
DROP TRIGGER column_policies_name ON dpsynth.column_policies;
DROP FUNCTION dpsynth._domains_name();

-- The attnums of a table's rows in one of the per-column catalogs (dpsynth.domains,
-- dpsynth.column_policies) brought back to their columns' names: pg_restore renumbers the columns
-- after a dropped one.  Only what is certain moves or goes:
--  * a row at the attnum of a dropped column whose name no column of the table has goes (the
--    column was dropped: dpsynth._on_drop deletes its rows, and a dump cannot bring it back);
--  * a row moves to the attnum of the column it names, unless another row names that column too
--    or an unnamed row (a dump of 0.6.0 or older) or a row that cannot move holds the attnum;
--    a row in the way that names a column the table no longer has goes.
-- What stays ambiguous stays where it is: an unnamed row, two rows of one column, a row at a
-- dropped column's attnum that names a live column.  A release refuses the table while one is
-- left (dpsynth._domains_for_release); the owner's declarations resolve them
-- (dpsynth._row_for_column).  A row whose name is no longer in the table stays at its attnum: a
-- release refuses the column there (src/domain.c).  Learned domains move with their ledger_id.
-- Writes only when something changes, under the table's domain lock, having read again.
CREATE OR REPLACE FUNCTION dpsynth._rows_by_name(tbl oid, cat regclass) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	moved jsonb;
	stale int2[];
	cand int2[];
	keep int2[];
BEGIN
	IF cat NOT IN ('dpsynth.domains'::regclass, 'dpsynth.column_policies'::regclass) THEN
		RAISE EXCEPTION 'dpsynth._rows_by_name: % is not a per-column catalog of dpsynth', cat
			USING ERRCODE = 'internal_error';
	END IF;
	FOR i IN 1..2 LOOP
		EXECUTE format($q$
			SELECT array_agg(r.attnum) FROM %s r
			JOIN pg_catalog.pg_attribute d ON d.attrelid = r.relid AND d.attnum = r.attnum AND d.attisdropped
			WHERE r.relid = $1 AND r.attname IS NOT NULL
			  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a WHERE a.attrelid = r.relid
							  AND a.attname = r.attname AND NOT a.attisdropped AND a.attnum > 0)$q$, cat)
			INTO stale USING tbl;
		-- the rows that could move: named after a live column at another attnum, the only row of
		-- that name, not at a dropped column's attnum
		EXECUTE format($q$
			SELECT coalesce(array_agg(r.attnum), '{}') FROM %s r
			JOIN pg_catalog.pg_attribute a ON a.attrelid = r.relid AND a.attname = r.attname
				AND NOT a.attisdropped AND a.attnum > 0
			WHERE r.relid = $1 AND a.attnum <> r.attnum
			  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute o
							  WHERE o.attrelid = r.relid AND o.attnum = r.attnum AND o.attisdropped)
			  AND NOT EXISTS (SELECT 1 FROM %s t WHERE t.relid = r.relid AND t.attname = r.attname
							  AND t.attnum <> r.attnum)$q$, cat, cat)
			INTO cand USING tbl;
		-- those whose attnum holds no row that stays there, until none is left out (a row that
		-- stays: unnamed, or named after a live column and not moving)
		LOOP
			EXECUTE format($q$
				SELECT coalesce(array_agg(r.attnum), '{}') FROM %s r
				JOIN pg_catalog.pg_attribute a ON a.attrelid = r.relid AND a.attname = r.attname
					AND NOT a.attisdropped AND a.attnum > 0
				WHERE r.relid = $1 AND r.attnum = ANY ($2)
				  AND NOT EXISTS (SELECT 1 FROM %s t WHERE t.relid = r.relid AND t.attnum = a.attnum
								  AND NOT t.attnum = ANY ($2)
								  AND (t.attname IS NULL
									   OR EXISTS (SELECT 1 FROM pg_catalog.pg_attribute l
												  WHERE l.attrelid = t.relid AND l.attname = t.attname
													AND NOT l.attisdropped AND l.attnum > 0)))$q$, cat, cat)
				INTO keep USING tbl, cand;
			EXIT WHEN cardinality(keep) = cardinality(cand);
			cand := keep;
		END LOOP;
		EXECUTE format($q$
			SELECT jsonb_agg(to_jsonb(r) || jsonb_build_object('attnum', a.attnum, 'from', r.attnum))
			FROM %s r
			JOIN pg_catalog.pg_attribute a ON a.attrelid = r.relid AND a.attname = r.attname
				AND NOT a.attisdropped AND a.attnum > 0
			WHERE r.relid = $1 AND r.attnum = ANY ($2)$q$, cat)
			INTO moved USING tbl, cand;
		IF moved IS NULL AND stale IS NULL THEN
			RETURN;
		END IF;
		-- moved under the table's domain lock, then read again: a concurrent call may have moved them
		EXIT WHEN i = 2;
		PERFORM dpsynth._lock_domains(tbl);
	END LOOP;
	EXECUTE format('DELETE FROM %s r WHERE r.relid = $1 AND r.attnum = ANY ($2)', cat) USING tbl, stale;
	IF moved IS NULL THEN
		RETURN;
	END IF;
	EXECUTE format($q$
		DELETE FROM %s r WHERE r.relid = $1
		  AND r.attnum IN (SELECT (m->>k)::int2 FROM jsonb_array_elements($2) m, unnest(ARRAY['attnum', 'from']) k)$q$,
		cat) USING tbl, moved;
	EXECUTE format('INSERT INTO %s SELECT * FROM jsonb_populate_recordset(NULL::%s, $1)', cat, cat) USING moved;
END
$$;

-- A table's column policies, then its domains, brought back to their columns' names
-- (dpsynth._rows_by_name).  Called where domains or policies are changed (declarations, DDL:
-- every ALTER TABLE in the database, so a catalog without rows for the table is not searched).
CREATE OR REPLACE FUNCTION dpsynth._domains_by_name(tbl oid) RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
	SELECT dpsynth._rows_by_name(tbl, 'dpsynth.column_policies')
		WHERE EXISTS (SELECT 1 FROM dpsynth.column_policies p WHERE p.relid = tbl);
	SELECT dpsynth._rows_by_name(tbl, 'dpsynth.domains')
		WHERE EXISTS (SELECT 1 FROM dpsynth.domains d WHERE d.relid = tbl);
$$;

-- Before a release reads a table's policies and domains (src/domain.c, dpsynth_domains_by_name):
-- brought back to their names, then refused (55000, before anything is charged) where a row
-- cannot be matched to its column for certain, since an 'exclude' among them may belong to any
-- column: an unnamed row (restored from a dump of dpsynth 0.6.0 or older, which keeps attnums
-- alone), or a row named after a live column at another attnum (two rows of one column).
-- Column names and attnums are schema, not data.
CREATE FUNCTION dpsynth._domains_for_release(tbl oid) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	pols text;
	doms text;
	dup record;
BEGIN
	PERFORM dpsynth._domains_by_name(tbl);
	pols := (SELECT string_agg(format('%s (%s)', p.attnum, p.treatment), ', ' ORDER BY p.attnum)
			 FROM dpsynth.column_policies p WHERE p.relid = tbl AND p.attname IS NULL);
	doms := (SELECT string_agg(format('%s (%s)', d.attnum, d.kind), ', ' ORDER BY d.attnum)
			 FROM dpsynth.domains d WHERE d.relid = tbl AND d.attname IS NULL);
	IF pols IS NOT NULL OR doms IS NOT NULL THEN
		RAISE EXCEPTION 'table % has column policies or domains restored without their column names', tbl::regclass
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('A dump of dpsynth 0.6.0 or older keeps only attribute numbers (%s), and pg_restore renumbers the columns after a dropped one: each may belong to another column. Nothing was charged.',
								  concat_ws('; ', 'policies at attnums ' || pols, 'domains at attnums ' || doms)),
				  HINT = format('Set the policy (dp_column_policy) and declare the domain (dp_declare) of each column again, which replaces the unnamed row at its attnum; then SELECT dp_forget_unnamed(%L) removes those left.',
								tbl::regclass::text);
	END IF;
	FOR dup IN SELECT x.what, x.attname, count(*) AS n, string_agg(x.attnum::text, ', ' ORDER BY x.attnum) AS nums,
					  min(a.attnum) AS at
			   FROM (SELECT 'column policies' AS what, p.attnum, p.attname FROM dpsynth.column_policies p WHERE p.relid = tbl
					 UNION ALL
					 SELECT 'domains', d.attnum, d.attname FROM dpsynth.domains d WHERE d.relid = tbl) x
			   JOIN pg_catalog.pg_attribute a ON a.attrelid = tbl AND a.attname = x.attname
				   AND NOT a.attisdropped AND a.attnum > 0
			   GROUP BY x.what, x.attname
			   HAVING bool_or(a.attnum <> x.attnum)
			   ORDER BY 1, 2 LIMIT 1 LOOP
		RAISE EXCEPTION '%', CASE WHEN dup.n > 1
								  THEN format('table %s has %s %s for column "%s"', tbl::regclass, dup.n, dup.what, dup.attname)
								  ELSE format('table %s has %s for column "%s" at another attnum', tbl::regclass,
											  CASE dup.what WHEN 'domains' THEN 'a domain' ELSE 'a column policy' END, dup.attname) END
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('Rows at attnums %s name it, and it is at attnum %s: a column dropped and added again under its name before dpsynth 0.8.0, or rows restored into a table with other columns. Nothing was charged.',
								  dup.nums, dup.at),
				  HINT = CASE dup.what WHEN 'domains'
							  THEN format('Declare the domain of column "%s" again (dp_declare), or remove it (dp_undeclare): that keeps one.', dup.attname)
							  ELSE format('Set the policy of column "%s" again (dp_column_policy): that keeps one.', dup.attname) END;
	END LOOP;
END
$$;
REVOKE ALL ON FUNCTION dpsynth._domains_for_release(oid) FROM PUBLIC;

-- Before a declaration of column col (at attnum n) writes its row to cat: the rows it replaces go
-- (an unnamed row at n, rows of col at other attnums), then the table's rows are brought back to
-- their names.  A row left at n that names another live column (it could not move) is refused
-- rather than overwritten: it may be that column's 'exclude'.
CREATE FUNCTION dpsynth._row_for_column(tbl oid, cat regclass, n int2, col name) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	other name;
	unnamed jsonb;
BEGIN
	IF cat NOT IN ('dpsynth.domains'::regclass, 'dpsynth.column_policies'::regclass) THEN
		RAISE EXCEPTION 'dpsynth._row_for_column: % is not a per-column catalog of dpsynth', cat
			USING ERRCODE = 'internal_error';
	END IF;
	EXECUTE format('SELECT to_jsonb(r) FROM %s r WHERE r.relid = $1 AND r.attnum = $2 AND r.attname IS NULL', cat)
		INTO unnamed USING tbl, n;
	IF unnamed IS NOT NULL THEN
		RAISE WARNING 'the % of column "%" of table % replaces one restored without its column''s name (%)',
			CASE cat WHEN 'dpsynth.domains'::regclass THEN 'domain' ELSE 'policy' END, col, tbl::regclass,
			coalesce(unnamed->>'treatment', unnamed->>'kind')
			USING HINT = 'That row may have been another column''s (pg_restore renumbers the columns after a dropped one): declare every column of the table again.';
	END IF;
	EXECUTE format('DELETE FROM %s r WHERE r.relid = $1 AND ((r.attnum = $2 AND r.attname IS NULL) OR (r.attnum <> $2 AND r.attname = $3))',
				   cat) USING tbl, n, col;
	PERFORM dpsynth._domains_by_name(tbl);
	EXECUTE format($q$
		SELECT r.attname FROM %s r JOIN pg_catalog.pg_attribute a ON a.attrelid = r.relid AND a.attname = r.attname
			AND NOT a.attisdropped AND a.attnum > 0
		WHERE r.relid = $1 AND r.attnum = $2 AND r.attname <> $3$q$, cat) INTO other USING tbl, n, col;
	IF other IS NOT NULL THEN
		RAISE EXCEPTION 'the row of column "%" of table % in % is at the attnum of column "%"', other, tbl::regclass, cat, col
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  HINT = format('Declare column "%s" again first.', other);
	END IF;
END
$$;
REVOKE ALL ON FUNCTION dpsynth._row_for_column(oid, regclass, int2, name) FROM PUBLIC;

-- dp_forget_unnamed: the owner removes a table's column policies and domains that carry no
-- column name (restored from a dump of dpsynth 0.6.0 or older, refused by every release: see
-- dpsynth._domains_for_release), having declared again the ones to keep.  Returns how many went.
CREATE FUNCTION dpsynth._dp_forget_unnamed(invoker oid, tbl regclass) RETURNS int4
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	np int4;
	nd int4;
	pols text;
	doms text;
BEGIN
	IF tbl IS NULL THEN
		RAISE EXCEPTION 'table must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	PERFORM dpsynth._check_owner(invoker, tbl, 'set column policies of');
	PERFORM dpsynth._lock_domains(tbl);
	-- what goes is said (a WARNING: an unnamed 'exclude' may have been a column's that the owner
	-- has not set again); attnums and treatments are schema, not data
	pols := (SELECT string_agg(format('%s (%s)', p.attnum, p.treatment), ', ' ORDER BY p.attnum)
			 FROM dpsynth.column_policies p WHERE p.relid = tbl AND p.attname IS NULL);
	doms := (SELECT string_agg(format('%s (%s)', d.attnum, d.kind), ', ' ORDER BY d.attnum)
			 FROM dpsynth.domains d WHERE d.relid = tbl AND d.attname IS NULL);
	DELETE FROM dpsynth.column_policies p WHERE p.relid = tbl AND p.attname IS NULL;
	GET DIAGNOSTICS np = ROW_COUNT;
	DELETE FROM dpsynth.domains d WHERE d.relid = tbl AND d.attname IS NULL;
	GET DIAGNOSTICS nd = ROW_COUNT;
	IF np + nd > 0 THEN
		RAISE WARNING 'removed % column policies and % domains restored without their column names from table %',
			np, nd, tbl
			USING DETAIL = concat_ws('; ', 'policies at attnums ' || pols, 'domains at attnums ' || doms) || '.',
				  HINT = 'A column whose policy or domain was among them and was not set again has none now.';
	END IF;
	RETURN np + nd;
END
$$;
REVOKE ALL ON FUNCTION dpsynth._dp_forget_unnamed(oid, regclass) FROM PUBLIC;

CREATE FUNCTION dp_forget_unnamed(tbl regclass) RETURNS int4
	AS 'MODULE_PATHNAME', 'dpsynth_admin_call' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_forget_unnamed(regclass) IS
	'remove the column policies and domains of a table that name no column (restored from a dump of dpsynth 0.6.0 or older; releases refuse the table while one is left), once the ones to keep are declared again; returns how many went';
GRANT EXECUTE ON FUNCTION dp_forget_unnamed(regclass) TO PUBLIC;

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
	PERFORM dpsynth._row_for_column(tbl, 'dpsynth.domains', n, col);
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
DECLARE
	n int2;
BEGIN
	IF tbl IS NULL OR col IS NULL THEN
		RAISE EXCEPTION 'table and column must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	PERFORM dpsynth._check_owner(invoker, tbl, 'declare domains of');
	PERFORM dpsynth._lock_domains(tbl);
	n := dpsynth._column_attnum(tbl, col);
	PERFORM dpsynth._row_for_column(tbl, 'dpsynth.domains', n, col);
	DELETE FROM dpsynth.domains WHERE relid = tbl AND attnum = n;
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
	PERFORM dpsynth._row_for_column(tbl, 'dpsynth.column_policies', n, col);
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

-------------------------------------------------------------------------------
-- A dropped table's budget and domains go with it (its ledger rows stay), so that a new
-- table can never inherit them through a recycled OID; a dropped column's policy and domain too
-- (a learned domain's charge stays in the ledger and the budget's spent).
-------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION dpsynth._on_drop() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	DELETE FROM dpsynth.budgets b
		USING pg_catalog.pg_event_trigger_dropped_objects() o
		WHERE o.classid = 'pg_catalog.pg_class'::regclass AND o.objsubid = 0 AND b.relid = o.objid;
	-- a dropped column's policy and domain go with it (also where a parent's DROP COLUMN
	-- recursed into the table): a column later added under its name starts without them, and a
	-- restore cannot bring two rows of one name.  Only the rows at its attnum that carry its
	-- name: a restored table's rows may still sit at their old attnums (another column's row at
	-- the dropped one's attnum), and an unnamed row (a dump of 0.6.0 or older) may be any
	-- column's; those stay, and a release refuses them (dpsynth._domains_for_release)
	DELETE FROM dpsynth.column_policies p
		USING pg_catalog.pg_event_trigger_dropped_objects() o
		WHERE o.classid = 'pg_catalog.pg_class'::regclass AND o.objsubid > 0 AND p.relid = o.objid
		  AND p.attnum = o.objsubid AND p.attname = o.address_names[pg_catalog.array_upper(o.address_names, 1)];
	DELETE FROM dpsynth.domains d
		USING pg_catalog.pg_event_trigger_dropped_objects() o
		WHERE o.classid = 'pg_catalog.pg_class'::regclass AND o.objsubid > 0 AND d.relid = o.objid
		  AND d.attnum = o.objsubid AND d.attname = o.address_names[pg_catalog.array_upper(o.address_names, 1)];
END
$$;

-- DETACH PARTITION and NO INHERIT (called by dpsynth_guard_ddl before the command runs): the
-- table leaving a protected tree keeps the protection its rows had.  It gets a budget of its
-- own with the tree's epsilon, delta and what was spent (every release of the tree read its
-- rows), the same domains, policies and role limits (columns matched by name), and ledger
-- rows carrying what each role spent, so that spent equals its ledger's sum and role limits
-- go on counting.
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
	-- domains and policies by their own names (the donor's attnums may be a restored table's old
	-- ones); an unnamed row (a dump of 0.6.0 or older) could be any column's, and two rows of one
	-- column are one too many: refused as a release refuses them
	PERFORM dpsynth._domains_for_release(donor.relid);
	INSERT INTO dpsynth.domains (relid, attnum, kind, categories, lower, upper, bins, edges, points, binning,
								 source, ledger_id, declared_by, declared_at, shape, attname)
		SELECT child, ca.attnum, d.kind, d.categories, d.lower, d.upper, d.bins, d.edges, d.points, d.binning,
			   d.source, d.ledger_id, d.declared_by, d.declared_at, d.shape, ca.attname
		FROM dpsynth.domains d
		JOIN pg_catalog.pg_attribute ca ON ca.attrelid = child AND ca.attname = d.attname AND NOT ca.attisdropped
		WHERE d.relid = donor.relid;
	INSERT INTO dpsynth.column_policies (relid, attnum, treatment, discovery, other, set_by, set_at, attname)
		SELECT child, ca.attnum, p.treatment, p.discovery, p.other, p.set_by, p.set_at, ca.attname
		FROM dpsynth.column_policies p
		JOIN pg_catalog.pg_attribute ca ON ca.attrelid = child AND ca.attname = p.attname AND NOT ca.attisdropped
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

-- Declared domains are public by definition.
CREATE OR REPLACE VIEW dp_domains AS
SELECT d.relid AS table_name, a.attname AS column_name, a.atttypid::regtype AS type,
	   d.kind, d.categories, d.lower, d.upper, d.bins, d.edges, d.points, d.binning, d.source, d.ledger_id,
	   d.declared_by::regrole AS declared_by, d.declared_at,
	   CASE WHEN d.lower IS NOT NULL THEN format('[%s, %s]', dpsynth._show_value(a.atttypid, d.lower),
												 dpsynth._show_value(a.atttypid, d.upper)) END AS bounds
FROM dpsynth.domains d
-- a row whose name another column's attnum holds (a restored table, until its next call brings
-- the attnums back to the names), or without a name (a dump of 0.6.0), is shown under no column
JOIN pg_catalog.pg_attribute a ON a.attrelid = d.relid AND a.attnum = d.attnum AND NOT a.attisdropped
	AND a.attname = d.attname;

-- Column policies (public: they say how columns are treated, nothing about the rows).
CREATE OR REPLACE VIEW dp_column_policies AS
SELECT p.relid AS table_name, a.attname AS column_name, p.treatment, p.discovery, p.other,
	   p.set_by::regrole AS set_by, p.set_at
FROM dpsynth.column_policies p
-- a policy whose name another column's attnum holds is shown under no column (as dp_domains)
JOIN pg_catalog.pg_attribute a ON a.attrelid = p.relid AND a.attnum = p.attnum AND NOT a.attisdropped
	AND a.attname = p.attname;

-- A table's columns constant within a unit (stored as attnums, nums, and names) matched to its
-- columns by name: per entry, in order (i), its stored attnum (num) and the live column of that
-- name (attnum, attname), NULL
-- where the table has none, or where the stored attnum is a dropped column's (the column was
-- dropped here, and a column later given its name does not take its place).  A restored table's
-- columns are renumbered after a dropped one, and the restored table has no dropped column.  The
-- one match of dpsynth._unit_constant_by_name and of a synthesis (src/units.c).
CREATE FUNCTION dpsynth._unit_constant_columns(tbl oid, nums int2[], names name[],
											   OUT i int8, OUT num int2, OUT attnum int2, OUT attname name)
RETURNS SETOF record LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
	SELECT u.i, u.num, a.attnum, a.attname
	FROM unnest(nums, names) WITH ORDINALITY u(num, nm, i)
	LEFT JOIN pg_catalog.pg_attribute a
		ON a.attrelid = tbl AND a.attname = u.nm AND NOT a.attisdropped AND a.attnum > 0
		   AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute d
						   WHERE d.attrelid = tbl AND d.attnum = u.num AND d.attisdropped)
$$;
REVOKE ALL ON FUNCTION dpsynth._unit_constant_columns(oid, int2[], name[]) FROM PUBLIC;

-- The attnums of a table's columns constant within a unit, brought back to their names
-- (dpsynth._unit_constant_columns); an entry without a live column keeps its attnum.
CREATE OR REPLACE FUNCTION dpsynth._unit_constant_by_name(tbl oid) RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
	UPDATE dpsynth.budgets b SET unit_constant =
		ARRAY(SELECT coalesce(c.attnum, c.num)
			  FROM dpsynth._unit_constant_columns(b.relid, b.unit_constant, b.unit_constant_names) c
			  ORDER BY c.i)
	WHERE b.relid = tbl AND b.unit_constant_names IS NOT NULL
$$;

-- 0.8.0: a column renamed through a parent is followed in the tables below it too.
-- A renamed table (or schema) keeps its protection: the qualified name of the altered table, or
-- of the tables of the altered schema, is brought up to date.  Only rows that identified their
-- table before the change are followed (the name part that the command did not change must
-- still match), so a row left behind by a vanished table is never re-attached by a rename.
CREATE OR REPLACE FUNCTION dpsynth._on_alter() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	cmd record;
	tree oid[];
	cat regclass;
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
			-- its rows and those of the tables below it, into which the rename recursed (their rows
			-- were brought back to their columns before it ran, dpsynth_guard_ddl): in each table,
			-- the row at the attnum of its column of the new name follows, once its own name is gone
			-- from that table
			tree := ARRAY[cmd.objid] || ARRAY(WITH RECURSIVE down(t) AS (
								SELECT inhrelid FROM pg_catalog.pg_inherits WHERE inhparent = cmd.objid
								UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN down ON i.inhparent = down.t)
							SELECT t FROM down);
			FOREACH cat IN ARRAY ARRAY['dpsynth.domains'::regclass, 'dpsynth.column_policies'::regclass] LOOP
				EXECUTE pg_catalog.format($q$
					UPDATE %s r SET attname = a.attname
					FROM pg_catalog.pg_attribute pa, pg_catalog.pg_attribute a
					WHERE r.relid = ANY ($1) AND pa.attrelid = $2 AND pa.attnum = $3
					  AND a.attrelid = r.relid AND a.attname = pa.attname AND NOT a.attisdropped
					  AND r.attnum = a.attnum AND r.attname <> a.attname
					  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute o
									  WHERE o.attrelid = r.relid AND o.attname = r.attname AND NOT o.attisdropped)$q$, cat)
					USING tree, cmd.objid, cmd.objsubid;
			END LOOP;
		END IF;
		PERFORM dpsynth._unit_constant_by_name(cmd.objid);
		PERFORM dpsynth._domains_by_name(cmd.objid);
	END LOOP;
END
$$;
