-- A synthetic copy depends on nothing the source's owner controls (issue 36, finding 7): an enum
-- column gets an enum of the copy's own (owned by the caller, in the target's schema, named after
-- the source's type, with the same labels in the same order), and so do composites and arrays
-- of them; a domain gives way to its base type, a range that is not built in to text; defaults,
-- sequences and collations are not copied.  The owner's DROP ... CASCADE of any of them leaves
-- the analyst's copy whole.
\i test/regress_helpers.sql
SET client_min_messages = warning;
CREATE ROLE regress_ct_owner;
CREATE ROLE regress_ct_analyst IN ROLE dpsynth_analyst;
CREATE SCHEMA ct_src AUTHORIZATION regress_ct_owner;
CREATE SCHEMA ct_space AUTHORIZATION regress_ct_analyst;
GRANT USAGE ON SCHEMA ct_src TO regress_ct_analyst;
SET ROLE regress_ct_owner;
CREATE TYPE ct_src.ct_mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN ct_src.ct_mood_dom AS ct_src.ct_mood;
CREATE DOMAIN ct_src.ct_pos AS integer CHECK (VALUE > 0);
CREATE TYPE ct_src.ct_pair AS (m ct_src.ct_mood, n integer);
CREATE TYPE ct_src.ct_range AS RANGE (subtype = integer);
CREATE COLLATION ct_src.ct_coll (locale = 'C');
CREATE FUNCTION ct_src.ct_default() RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT 7';
CREATE TABLE ct_src.t (
	id		serial,
	mood	ct_src.ct_mood NOT NULL,
	mood2	ct_src.ct_mood_dom,
	moods	ct_src.ct_mood[],
	pos		ct_src.ct_pos[],
	pair	ct_src.ct_pair,
	r		ct_src.ct_range,
	d		integer DEFAULT ct_src.ct_default(),
	c		text COLLATE ct_src.ct_coll
);
INSERT INTO ct_src.t (mood, mood2, d)
SELECT (ARRAY['sad', 'ok', 'happy'])[1 + i % 3]::ct_src.ct_mood, (ARRAY['happy', 'sad'])[1 + i % 2]::ct_src.ct_mood, i % 5
FROM generate_series(1, 600) i;
SELECT dp_protect('ct_src.t', epsilon => 50);
SELECT dp_declare('ct_src.t', 'd', lower => 0, upper => 4);
RESET ROLE;

SET ROLE regress_ct_analyst;
SELECT rows_written > 0 AS written, model_id AS ct_model
FROM dp_synthesize('ct_src.t', epsilon => 10, columns => ARRAY['mood', 'mood2', 'd'], target => 'ct_space.t_copy') \gset
SELECT :'written' AS written;
-- a sample of the model in the same schema shares the copy's types: the two compare
SELECT rows_written > 0 AS sampled FROM dp_sample(:ct_model, "rows" => 50, seed => 1, target => 'ct_space.t_sample');
RESET ROLE;
-- the copy's column types: the caller's own for the enum, the composite and the enum array
SELECT attname, format_type(atttypid, atttypmod) AS type, attnotnull FROM pg_attribute
WHERE attrelid = 'ct_space.t_copy'::regclass AND attnum > 0 ORDER BY attnum;
SELECT format_type(atttypid, atttypmod) AS sample_mood_type FROM pg_attribute
WHERE attrelid = 'ct_space.t_sample'::regclass AND attname = 'mood';
SELECT t.typname, t.typtype, pg_get_userbyid(t.typowner) AS owner
FROM pg_type t LEFT JOIN pg_class c ON c.oid = t.typrelid
WHERE t.typnamespace = 'ct_space'::regnamespace AND (t.typtype = 'e' OR c.relkind = 'c') ORDER BY 1;
SELECT enum_range(NULL::ct_space.ct_mood) AS labels, 'sad'::ct_space.ct_mood < 'happy'::ct_space.ct_mood AS ordered;
SELECT attname, format_type(atttypid, atttypmod) AS type FROM pg_attribute
WHERE attrelid = (SELECT typrelid FROM pg_type WHERE oid = 'ct_space.ct_pair'::regtype) AND attnum > 0 ORDER BY attnum;
-- nothing of the owner's: no type, collation, function or sequence the copy depends on
SELECT count(*) AS owner_objects FROM pg_depend d
WHERE d.classid = 'pg_class'::regclass AND d.objid IN ('ct_space.t_copy'::regclass, 'ct_space.t_sample'::regclass)
  AND ((d.refclassid = 'pg_type'::regclass AND (SELECT typowner FROM pg_type WHERE oid = d.refobjid) = 'regress_ct_owner'::regrole)
	   OR (d.refclassid = 'pg_collation'::regclass AND d.refobjid >= 16384)
	   OR d.refclassid = 'pg_proc'::regclass);
SELECT count(*) AS defaults FROM pg_attrdef WHERE adrelid = 'ct_space.t_copy'::regclass;
SELECT bool_and(mood::text IN ('sad', 'ok', 'happy')) AS labels_ok, count(*) > 0 AS has_rows,
	   bool_and(mood2 IS NULL OR mood2::text IN ('sad', 'ok', 'happy')) AS domain_labels_ok
FROM ct_space.t_copy;
SELECT count(*) > 0 AS comparable FROM (SELECT mood FROM ct_space.t_copy UNION SELECT mood FROM ct_space.t_sample) u;

-- The owner drops every type, the collation and the function with CASCADE: the copy keeps every column.
SELECT count(*) AS columns_before FROM pg_attribute WHERE attrelid = 'ct_space.t_copy'::regclass AND attnum > 0 AND NOT attisdropped \gset
SET ROLE regress_ct_owner;
DROP TYPE ct_src.ct_mood CASCADE;
DROP TYPE ct_src.ct_pos CASCADE;
DROP TYPE ct_src.ct_pair CASCADE;
DROP TYPE ct_src.ct_range CASCADE;
DROP COLLATION ct_src.ct_coll CASCADE;
DROP FUNCTION ct_src.ct_default() CASCADE;
RESET ROLE;
SELECT count(*) = :columns_before AS every_column_kept, count(*) AS columns
FROM pg_attribute WHERE attrelid = 'ct_space.t_copy'::regclass AND attnum > 0 AND NOT attisdropped;
SELECT enum_range(NULL::ct_space.ct_mood) AS labels_after;
SELECT count(*) AS rows_with_mood FROM ct_space.t_copy WHERE mood IS NOT NULL \gset
SELECT :rows_with_mood > 0 AS values_kept;

RESET client_min_messages;
DROP SCHEMA ct_src CASCADE;
DROP SCHEMA ct_space CASCADE;
DROP OWNED BY regress_ct_owner, regress_ct_analyst;
DROP ROLE regress_ct_owner;
DROP ROLE regress_ct_analyst;
