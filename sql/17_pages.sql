-- How a synthetic table's rows are written (src/synth_pagewrite.c).  On PostgreSQL 15 the rows
-- of the new table are built into heap pages in private memory and written a megabyte at a
-- time; a temporary target goes through table_multi_insert (local buffers), as every target
-- does on 16 and later.  The same seed gives the same rows either way, long values go through
-- the toaster, and the rows are visible in the calling transaction and gone with its rollback.
-- (test/script/02_durability.sh checks the pages with amcheck and pageinspect, over two
-- segments, and across a crash right after the commit.)
\i test/regress_helpers.sql
CREATE TABLE pg_src (
	id		integer NOT NULL,
	kind	text NOT NULL,
	note	text,
	n		integer CHECK (n BETWEEN 0 AND 99)
);
-- four long labels: 2,600 hex digits each, compressed or stored out of line by the toaster
CREATE TEMP TABLE pg_labels AS
SELECT l, (SELECT string_agg(md5(l || ':' || i), '') FROM generate_series(1, 80) i) AS label
FROM generate_series(1, 4) l;
INSERT INTO pg_src
SELECT i, (ARRAY['alpha', 'beta', 'gamma'])[1 + i % 3],
	   (SELECT label FROM pg_labels WHERE l = 1 + i % 4), i % 100
FROM generate_series(1, 3000) i;
SELECT dp_protect('pg_src', epsilon => 50);
SELECT dp_declare('pg_src', 'kind', categories => ARRAY['alpha', 'beta', 'gamma']);
SELECT dp_declare('pg_src', 'note', categories => (SELECT array_agg(label ORDER BY l) FROM pg_labels));
SELECT dp_declare('pg_src', 'n', lower => 0, upper => 99, bins => 10);
SELECT dp_column_policy('pg_src', 'id', treatment => 'identifier');
CREATE ROLE regress_pg_analyst;

SELECT model_id AS model, rows_written AS synth_rows
FROM dp_synthesize('pg_src', epsilon => 5, "rows" => 4000, target => 'pg_synth') \gset
SELECT :synth_rows AS synth_rows, count(*) = :synth_rows AS all_rows,
	   pg_relation_size('pg_synth') / current_setting('block_size')::int > 1 AS several_pages,
	   count(DISTINCT note) AS notes, bool_and(length(note) = 2560) AS notes_whole,
	   bool_and(note IN (SELECT label FROM pg_labels)) AS notes_are_labels,
	   count(DISTINCT id) = count(*) AS distinct_ids, bool_and(n BETWEEN 0 AND 99) AS n_ok
FROM pg_synth;
SELECT pg_relation_size(reltoastrelid) > 0 AS toasted FROM pg_class WHERE oid = 'pg_synth'::regclass;

-- The same seed into a new table (pages), into one with dpsynth.write_pages off, and into a
-- temporary one (both table_multi_insert): the same rows, and the same rows at the same places.
SELECT rows_written AS p_rows FROM dp_sample(:model, seed => 11, target => 'pg_paged') \gset
SELECT rows_written AS t_rows FROM dp_sample(:model, seed => 11, target => 'pg_temp.pg_buffered') \gset
SET dpsynth.write_pages = off;
SELECT rows_written AS o_rows FROM dp_sample(:model, seed => 11, target => 'pg_unpaged') \gset
RESET dpsynth.write_pages;
SELECT :p_rows = :t_rows AND :p_rows = :o_rows AS same_count,
	   (SELECT count(*) FROM (TABLE pg_paged EXCEPT ALL TABLE pg_temp.pg_buffered) x) +
	   (SELECT count(*) FROM (TABLE pg_temp.pg_buffered EXCEPT ALL TABLE pg_paged) x) AS differences,
	   (SELECT count(*) FROM (SELECT ctid, * FROM pg_paged EXCEPT ALL SELECT ctid, * FROM pg_unpaged) x) +
	   (SELECT count(*) FROM (SELECT ctid, * FROM pg_unpaged EXCEPT ALL SELECT ctid, * FROM pg_paged) x) AS placed_differently,
	   pg_relation_size('pg_paged') = pg_relation_size('pg_unpaged') AS same_size,
	   (SELECT count(*) FROM pg_paged) = :p_rows AS paged_rows;
SET ROLE regress_pg_analyst;
SELECT try_sql('SET dpsynth.write_pages = off') AS analyst_cannot_turn_off;
RESET ROLE;

-- Inside a transaction: the rows are there for the next statement, and a rollback removes them.
BEGIN;
SELECT rows_written AS x_rows FROM dp_sample(:model, seed => 12, target => 'pg_in_tx') \gset
SELECT count(*) = :x_rows AS visible_in_tx, count(*) FILTER (WHERE xmin::text = txid_current()::text) = :x_rows AS own_xmin
FROM pg_in_tx;
UPDATE pg_in_tx SET n = 0 WHERE n IS NOT NULL;
SELECT count(*) FILTER (WHERE n = 0) = count(n) AS updatable FROM pg_in_tx;
ROLLBACK;
SELECT to_regclass('pg_in_tx') IS NULL AS rolled_back;

-- Rolled back to a savepoint: gone too, and the rest of the transaction goes on.
BEGIN;
SAVEPOINT s;
SELECT rows_written > 0 AS sampled FROM dp_sample(:model, seed => 13, target => 'pg_in_sp');
ROLLBACK TO SAVEPOINT s;
SELECT to_regclass('pg_in_sp') IS NULL AS rolled_back_to_savepoint;
SELECT rows_written > 0 AS sampled_again FROM dp_sample(:model, seed => 13, target => 'pg_in_sp');
COMMIT;
SELECT count(*) > 0 AS committed FROM pg_in_sp;

-- An event trigger that adds an index to every new table: the rows would go in without index
-- entries, so the call refuses (55000) rather than leave an index that misses them.
CREATE FUNCTION pg_index_everything() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE obj record;
BEGIN
	FOR obj IN SELECT * FROM pg_event_trigger_ddl_commands() WHERE command_tag = 'CREATE TABLE' LOOP
		EXECUTE format('CREATE INDEX ON %s (id)', obj.object_identity);
	END LOOP;
END $$;
CREATE EVENT TRIGGER pg_index_everything ON ddl_command_end WHEN TAG IN ('CREATE TABLE')
	EXECUTE FUNCTION pg_index_everything();
SELECT try_sql($$SELECT * FROM dp_sample($$ || :model || $$, seed => 14, target => 'pg_indexed')$$) AS indexed_target;
DROP EVENT TRIGGER pg_index_everything;
SELECT to_regclass('pg_indexed') IS NULL AS not_created;

-- After the commit, other sessions' rules apply as to any table: an index, a vacuum, an update.
CREATE INDEX ON pg_paged (id);
VACUUM ANALYZE pg_paged;
SELECT reltuples = :p_rows AS analyzed FROM pg_class WHERE oid = 'pg_paged'::regclass;
SET enable_seqscan = off;
SELECT count(*) = 1 AS index_finds FROM pg_paged WHERE id = (SELECT min(id) FROM pg_paged);
RESET enable_seqscan;
DELETE FROM pg_paged WHERE id % 2 = 0;
INSERT INTO pg_paged SELECT * FROM pg_synth LIMIT 10;
SELECT count(*) = :p_rows - (:p_rows / 2) + 10 AS after_changes FROM pg_paged;
DROP ROLE regress_pg_analyst;
