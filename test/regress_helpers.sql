\set ECHO none
-- Included by every pg_regress file (sql/NN_*.sql): each can run alone,
-- make installcheck REGRESS=NN_name; pg_regress creates the extension (--load-extension).
-- Prints SQLSTATE, message and hint of a failing statement.
CREATE OR REPLACE FUNCTION try_sql(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	st text; msg text; hint text;
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
	RETURN st || ': ' || msg || CASE WHEN hint <> '' THEN ' (hint: ' || hint || ')' ELSE '' END;
END
$$;
\set ECHO all
