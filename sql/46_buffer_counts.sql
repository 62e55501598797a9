-- A release hides its buffer counts from EXPLAIN (ANALYZE, BUFFERS) and pg_stat_statements
-- (src/release_guard.h: pgBufferUsage is put back after the work that follows the charge): the
-- scan's counts would give the table's pages, and its "dirtied" ones the pages on which rows were
-- inserted or deleted since the last reader (the hint bits its scan sets).
CREATE TABLE pages AS SELECT i, i % 10 AS g FROM generate_series(1, 200000) i;
SELECT dp_protect('pages', epsilon => 1000);
SELECT dp_declare('pages', 'g', lower => 0, upper => 9, bins => 10);
SELECT pg_relation_size('pages') / 8192 > 800 AS over_800_pages;
CREATE FUNCTION buffers_of(q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	p json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON, TIMING OFF, SUMMARY OFF) ' || q INTO p;
	RETURN (p->0->'Plan')::jsonb;
END
$$;
-- a table of one page, else the same
CREATE TABLE page (i int4, g int4);
INSERT INTO page SELECT i, i % 10 FROM generate_series(1, 100) i;
SELECT dp_protect('page', epsilon => 1000);
SELECT dp_declare('page', 'g', lower => 0, upper => 9, bins => 10);
SELECT count(*) AS cells FROM dp_marginal('pages', ARRAY['g'], 1);	-- the session's caches warm
SELECT count(*) AS cells FROM dp_marginal('page', ARRAY['g'], 1);
-- the two releases count about the same blocks (the scan's 800 and more are not counted)
SELECT abs((b->>'Shared Hit Blocks')::int + (b->>'Shared Read Blocks')::int
		   - (s->>'Shared Hit Blocks')::int - (s->>'Shared Read Blocks')::int) < 300 AS pages_not_counted
FROM buffers_of($$SELECT count(*) FROM dp_marginal('pages', ARRAY['g'], 1)$$) b,
	 buffers_of($$SELECT count(*) FROM dp_marginal('page', ARRAY['g'], 1)$$) s;
-- a row deleted on nearly every page, the owner's own dirty pages written out
DELETE FROM pages WHERE i % 200 = 0;
CHECKPOINT;
SELECT (b->>'Shared Dirtied Blocks')::int < 10 AS not_the_pages_that_changed
FROM buffers_of($$SELECT count(*) FROM dp_marginal('pages', ARRAY['g'], 1)$$) b;
DROP TABLE pages, page;
DROP FUNCTION buffers_of(text);
