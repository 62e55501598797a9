-- A column's encoder as an SQL expression (dpsynth._encoder, docs/DISTRIBUTED.md "Next step",
-- item 1): on every domain kind and on odd values it gives the code the C encoder gives
-- (dpsynth._encode), and it counts through the partial-count aggregate, in parallel workers too.
\i test/regress_helpers.sql
CREATE TYPE enc_mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN enc_grade AS text CHECK (VALUE <> 'forbidden');
CREATE TABLE enc (
	flag		boolean,
	yes			boolean,
	small		smallint,
	medium		integer NOT NULL,
	big			bigint,
	exact		numeric(12,2),
	approx		real,
	dbl			double precision,
	label		text,
	code		varchar(10) CHECK (code IN ('x', 'y', 'z')),
	fixed		char(4),
	feeling		enc_mood,
	mark		enc_grade,
	day			date,
	at			timestamp,
	attz		timestamptz,
	amount		numeric,
	ratio		double precision,
	birthday	date,
	huge		numeric,
	"Odd ""col"""	text,
	mood_nn		enc_mood NOT NULL DEFAULT 'ok',
	flag_nn		boolean NOT NULL DEFAULT false
);
-- odd values first: NULLs, NaN, infinities, values on and past the edges, labels that need
-- quoting, trailing spaces, a numeric too large for float8
INSERT INTO enc VALUES
	(NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
	(true, true, -32768, -2147483648, -9223372036854775808, 'NaN', 'NaN', 'NaN', '', 'x', 'ab  ', 'sad', 'A',
	 '-infinity', '-infinity', '-infinity', 'NaN', 'NaN', '-infinity'),
	(false, false, 32767, 2147483647, 9223372036854775807, 9999999999.99, 'Infinity', 'Infinity', 'a,b', 'y', 'ab', 'happy',
	 'forbidden?', 'infinity', 'infinity', 'infinity', 'Infinity', 'Infinity', 'infinity'),
	(true, false, -5, 999, 1000000000000, -0.01, '-Infinity', '-Infinity', '{"q"}', 'z', 'cde ', 'ok', 'B',
	 '2019-12-31', '2019-12-31 23:59:59.999999', '2019-12-31 23:59:59.999999+00', 1e400, 1e308, '2020-01-01'),
	(false, true, 5, 1000, 999999999999, 100, 1e-45, 5e-324, 'back\slash', 'y', 'zzzz', 'sad', 'C',
	 '2022-01-01', '2022-01-01 00:00', '2022-01-01 00:00+00', -1e400, 0.1, '2021-06-30'),
	(NULL, NULL, 0, 250, 200000000000, 25, 2.5, 25, 'żółw', NULL, NULL, NULL, NULL,
	 '2020-07-01', '2020-07-01 12:00', '2020-07-01 12:00+02', 1.50, 0.30000000000000004, '2020-02-29');
-- numerics past the double range and under it (2^-1075 and less round to zero, which the
-- cast to float8 refuses; a hair more rounds to the smallest double: the sign then matters at
-- the edge 0), within half an ulp of an edge (rounded to it first, as the C encoder does), the
-- last and first legal timestamps, a tab kept in a char(n), labels that need quoting
INSERT INTO enc (medium, huge, at, attz, fixed, "Odd ""col""", mood_nn, flag_nn) VALUES
	(1, 1e400, '294276-12-31 23:59:59.999999', '294276-12-31 23:59:59.999999+00', E'ab\t', 'NULL', 'sad', true),
	(2, -1e400, '4713-11-24 00:00 BC', '4713-11-24 00:00+00 BC', 'ab', ' ', 'happy', false),
	(3, 'Infinity', NULL, NULL, NULL, 'it''s', 'ok', true),
	(4, '-Infinity', NULL, NULL, NULL, 'it''s not', 'sad', false),
	(5, 1e-400, NULL, NULL, NULL, NULL, 'ok', false),
	(6, -1e-400, NULL, NULL, NULL, '', 'ok', false),
	(7, 2.4703282292062327e-324, NULL, NULL, NULL, NULL, 'ok', false),
	(8, -2.4703282292062327e-324, NULL, NULL, NULL, NULL, 'ok', false),
	(9, 2.4703282292062328e-324, NULL, NULL, NULL, NULL, 'ok', false),
	(10, -2.4703282292062328e-324, NULL, NULL, NULL, NULL, 'ok', false),
	(11, 5.0000000000000000001, NULL, NULL, NULL, NULL, 'ok', false),
	(12, 4.99999999999999999999, NULL, NULL, NULL, NULL, 'ok', false),
	(13, -5.00000000000000000001, NULL, NULL, NULL, NULL, 'ok', false),
	(14, 0, NULL, NULL, NULL, NULL, 'ok', false),
	(15, 'NaN', NULL, NULL, NULL, NULL, 'ok', false);
INSERT INTO enc
SELECT i % 3 = 0, i % 2 = 0, i % 13 - 6, i * 7 % 1200 - 100, i::bigint * 987654321 % 1200000000000,
	   (i % 130) - 15.25, (i % 17) * 0.75, i / 7.0,
	   (ARRAY['', 'żółw', 'plain', 'a,b', NULL, 'unknown'])[1 + i % 6],
	   (ARRAY['x', 'y', 'z', NULL])[1 + i % 4],
	   (ARRAY['ab', 'cde', 'zzzz', NULL])[1 + i % 4],
	   (ARRAY['sad', 'ok', 'happy', NULL])[1 + i % 4]::enc_mood,
	   (ARRAY['A', 'B', 'C', 'D'])[1 + i % 4],
	   date '2019-12-15' + i % 800,
	   timestamp '2019-12-31 20:00' + i * interval '7 hours 13 minutes',
	   timestamptz '2019-12-31 20:00+00' + i * interval '8 hours 7 minutes',
	   (ARRAY[1.5, 2, 2.50, 3, 7])[1 + i % 5],
	   (ARRAY[0.1, 0.30000000000000004, 1e308, 2.5])[1 + i % 4],
	   (ARRAY[date '2020-01-01', date '2020-02-29', date '2021-06-30', date '2022-02-02'])[1 + i % 4],
	   (i % 29) - 14.5,
	   (ARRAY['NULL', ' ', 'it''s', 'other', NULL])[1 + i % 5],
	   (ARRAY['sad', 'ok', 'happy'])[1 + i % 3]::enc_mood,
	   i % 2 = 0
FROM generate_series(1, 3000) i;
SELECT dp_protect('enc', epsilon => 100, discovery => false);
SELECT dp_declare('enc', 'yes', categories => ARRAY['false', 'true']);
SELECT dp_declare('enc', 'small', lower => -5, upper => 5, bins => 3);
SELECT dp_declare('enc', 'medium', lower => 0, upper => 999, bins => 4, points => ARRAY[0, 250]);
SELECT dp_declare('enc', 'big', lower => 0, upper => 1e12, bins => 5);
SELECT dp_declare('enc', 'exact', lower => 0, upper => 100, bins => 4, points => ARRAY[25]);
SELECT dp_declare('enc', 'approx', lower => 0, upper => 10, bins => 3);
SELECT dp_declare('enc', 'dbl', lower => 0, upper => 200, bins => 7);
SELECT dp_declare('enc', 'label', categories => ARRAY['', 'żółw', 'plain', 'a,b', '{"q"}', 'back\slash']);
SELECT dp_declare('enc', 'fixed', categories => ARRAY['ab', 'cde']);
SELECT dp_declare('enc', 'mark', categories => ARRAY['A', 'B', 'C']);
SELECT dp_declare('enc', 'day', lower => '2020-01-01'::date, upper => '2021-12-31'::date, bins => 5);
SELECT dp_declare('enc', 'at', lower => '2020-01-01'::timestamptz, upper => '2021-12-31'::timestamptz, bins => 4);
SELECT dp_declare('enc', 'attz', lower => '2020-01-01 00:00+00'::timestamptz, upper => '2022-01-01 00:00+00'::timestamptz, bins => 6);
SELECT dp_declare('enc', 'amount', categories => ARRAY['1.5', '2', '2.50', 'Infinity']);
SELECT dp_declare('enc', 'ratio', categories => ARRAY['0.1', '0.30000000000000004', '1e+308', 'NaN']);
SELECT dp_declare('enc', 'birthday', categories => ARRAY['2020-01-01', '2020-02-29', '2021-06-30']);
SELECT dp_declare('enc', 'huge', lower => -10, upper => 10, bins => 4);
SELECT dp_declare('enc', 'Odd "col"', categories => ARRAY['NULL', ' ', 'it''s']);

-- Every column, its expression against the C encoder on every row; distinct codes show the
-- rows reach every kind of cell.  The expression runs under the output settings dpsynth pins
-- for its scans, as a postgres_fdw remote session's are.
CREATE FUNCTION enc_check() RETURNS TABLE (col name, codes int4, distinct_codes bigint, mismatches bigint)
LANGUAGE plpgsql AS $$
DECLARE
	c name;
	e record;
BEGIN
	FOR c IN SELECT attname FROM pg_attribute WHERE attrelid = 'enc'::regclass AND attnum > 0 ORDER BY attnum LOOP
		e := dpsynth._encoder('enc', c);
		col := c;
		codes := e.codes;
		EXECUTE format('SELECT count(DISTINCT dpsynth._encode(%L, %L, %I)), count(*) FILTER (WHERE dpsynth._encode(%L, %L, %I) IS DISTINCT FROM (%s)) FROM enc',
					   'enc', c, c, 'enc', c, c, e.expression)
			INTO distinct_codes, mismatches;
		RETURN NEXT;
	END LOOP;
END $$;
SET DateStyle = 'ISO, MDY';
SET TimeZone = 'UTC';
SET IntervalStyle = 'postgres';
SET extra_float_digits = 3;
SELECT * FROM enc_check();
-- the literals of the expressions do not depend on standard_conforming_strings
SET standard_conforming_strings = off;
SELECT count(*) AS columns, sum(mismatches) AS mismatches FROM enc_check();
RESET standard_conforming_strings;

-- Under other output settings, categories of dates and floats are matched by other texts: the
-- expression then disagrees on exactly those columns (why it must run under the pinned ones).
SET DateStyle = 'SQL, DMY';
SET extra_float_digits = 0;
SELECT col, mismatches > 0 AS disagrees FROM enc_check() WHERE mismatches > 0;
RESET DateStyle;
RESET extra_float_digits;
SET TimeZone = 'UTC';

-- The expressions, as a shard would run them: one statement, every marginal through the
-- partial-count aggregate; the counts are the C encoder's histogram, with and without parallel
-- workers.
CREATE FUNCTION enc_counts(c name) RETURNS TABLE (aggregate_equals_histogram boolean)
LANGUAGE plpgsql AS $$
DECLARE
	e record;
	agg int8[];
	hist int8[];
BEGIN
	e := dpsynth._encoder('enc', c);
	EXECUTE format('SELECT dpsynth._partial_vector(dpsynth._partial_counts(ARRAY[(%s)], ARRAY[%s]), ARRAY[%s]) FROM enc',
				   e.expression, e.codes, e.codes) INTO agg;
	EXECUTE format('SELECT array_agg(coalesce(n, 0) ORDER BY k) FROM generate_series(0, %s - 1) k
					LEFT JOIN (SELECT dpsynth._encode(%L, %L, %I) AS code, count(*) AS n FROM enc GROUP BY 1) h ON h.code = k',
				   e.codes, 'enc', c, c) INTO hist;
	aggregate_equals_histogram := agg = hist;
	RETURN NEXT;
END $$;
SELECT c AS col, (SELECT * FROM enc_counts(c)) AS serial
FROM unnest(ARRAY['medium', 'dbl', 'label', 'attz', 'ratio']::name[]) c;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT c AS col, (SELECT * FROM enc_counts(c)) AS parallel
FROM unnest(ARRAY['medium', 'dbl', 'label', 'attz', 'ratio']::name[]) c;
-- the plan of such a count: the encoder and the aggregate run in the workers
EXPLAIN (COSTS OFF)
SELECT dpsynth._partial_counts(ARRAY[CASE WHEN medium IS NULL THEN 0 ELSE medium END], ARRAY[1200]) FROM enc;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- One expression in full: what a shard receives
SELECT expression, codes FROM dpsynth._encoder('enc', 'medium');

-- Errors
SELECT try_sql($$SELECT dpsynth._encoder('enc', 'nosuch')$$) AS no_column;
SELECT try_sql($$SELECT dpsynth._encode('enc', 'medium', 'x'::text)$$) AS wrong_type;
CREATE TABLE enc_open (g text);
SELECT try_sql($$SELECT dpsynth._encoder('enc_open', 'g')$$) AS unprotected;
SELECT dp_protect('enc_open', epsilon => 1, selection_delta => 1e-7);
SELECT try_sql($$SELECT dpsynth._encoder('enc_open', 'g')$$) AS not_yet_known;
-- categories matched by a text that may differ between servers
CREATE TABLE enc_local (price money, kind regtype);
SELECT dp_protect('enc_local', epsilon => 1, discovery => false);
SELECT dp_declare('enc_local', 'price', categories => ARRAY['1.00', '2.00']);
SELECT dp_declare('enc_local', 'kind', categories => ARRAY['integer', 'text']);
SELECT try_sql($$SELECT dpsynth._encoder('enc_local', 'price')$$) AS money;
SELECT try_sql($$SELECT dpsynth._encoder('enc_local', 'kind')$$) AS regtype;
CREATE ROLE regress_enc_analyst IN ROLE dpsynth_analyst;
SET ROLE regress_enc_analyst;
SELECT try_sql($$SELECT dpsynth._encoder('enc', 'medium')$$) AS analyst;
SELECT try_sql($$SELECT dpsynth._encode('enc', 'medium', 1)$$) AS analyst_value;
RESET ROLE;
DROP ROLE regress_enc_analyst;
