-- Every column kind: its domain source, its cells, and where odd values go.
\i test/regress_helpers.sql
CREATE ROLE regress_dp_analyst IN ROLE dpsynth_analyst;
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN percent AS numeric(5,2) CHECK (VALUE >= 0 AND VALUE <= 100);
CREATE DOMAIN grade AS text CHECK (VALUE IN ('A', 'B', 'C'));
CREATE TABLE everything (
	id			serial PRIMARY KEY,
	ident		bigint GENERATED ALWAYS AS IDENTITY,
	token		uuid,
	flag		boolean NOT NULL,
	small		smallint CHECK (small BETWEEN -5 AND 5),
	medium		integer,
	big			bigint,
	exact		numeric(10,2),
	approx		real,
	dbl			double precision,
	label		text,
	code		varchar(10) CHECK (code IN ('x', 'y', 'z')),
	fixed		char(3),
	feeling		mood,
	day			date,
	at			timestamp,
	attz		timestamptz,
	pct			percent,
	mark		grade,
	level		integer CHECK (level > 0 AND level < 4),
	color		text CHECK (color = 'red' OR color = 'blue'),
	note		text,
	doc			jsonb
);
INSERT INTO everything (flag, small, medium, big, exact, approx, dbl, label, code, fixed, feeling, day, at, attz,
						pct, mark, level, color, note, doc)
SELECT i % 2 = 0,
	   i % 11 - 5,
	   CASE WHEN i % 13 = 0 THEN NULL ELSE i * 7 % 1000 END,
	   (i::bigint * 123456789) % 1000000000000,
	   (i % 100) * 1.25,
	   CASE i WHEN 1 THEN 'NaN' WHEN 2 THEN 'Infinity' WHEN 3 THEN '-Infinity' ELSE (i % 10)::real END,
	   CASE i WHEN 4 THEN 'NaN' ELSE i / 3.0 END,
	   CASE i % 5 WHEN 0 THEN '' WHEN 1 THEN 'żółw' WHEN 2 THEN repeat('long', 1000) WHEN 3 THEN NULL ELSE 'plain' END,
	   (ARRAY['x', 'y', 'z'])[1 + i % 3],
	   (ARRAY['ab', 'cde', NULL])[1 + i % 3],
	   (ARRAY['sad', 'ok', 'happy', NULL])[1 + i % 4]::mood,
	   CASE i WHEN 5 THEN 'infinity'::date WHEN 6 THEN '-infinity'::date ELSE date '2020-01-01' + i END,
	   timestamp '2020-01-01 00:00' + i * interval '1 hour',
	   timestamptz '2020-01-01 00:00+00' + i * interval '1 day',
	   (i % 101)::numeric,
	   (ARRAY['A', 'B', 'C'])[1 + i % 3],
	   1 + i % 3,
	   (ARRAY['red', 'blue'])[1 + i % 2],
	   'free text ' || i,
	   '{}'
FROM generate_series(1, 600) i;
SELECT dp_protect('everything', epsilon => 5000, discovery => false);
SELECT dp_declare('everything', 'medium', lower => 0, upper => 999, bins => 4);
SELECT dp_declare('everything', 'big', lower => 0, upper => 1e12, bins => 2);
SELECT dp_declare('everything', 'exact', lower => 0, upper => 125, bins => 5, points => ARRAY[0]);
SELECT dp_declare('everything', 'approx', lower => 0, upper => 10, bins => 2);
SELECT dp_declare('everything', 'dbl', lower => 0, upper => 200, bins => 2);
SELECT dp_declare('everything', 'label', categories => ARRAY['', 'żółw', 'plain']);
SELECT dp_declare('everything', 'fixed', categories => ARRAY['ab', 'cde']);
SELECT dp_declare('everything', 'day', lower => '2020-01-01'::date, upper => '2021-12-31'::date, bins => 2);
SELECT dp_declare('everything', 'at', lower => '2020-01-01'::timestamptz, upper => '2020-02-01'::timestamptz, bins => 3);
SELECT dp_declare('everything', 'attz', lower => '2020-01-01 00:00+00'::timestamptz, upper => '2022-01-01 00:00+00'::timestamptz, bins => 2);
-- without a cast, a string literal could be a number or a timestamp
SELECT try_sql($$SELECT dp_declare('everything', 'attz', lower => '2020-01-01', upper => '2022-01-01')$$) AS ambiguous;
SELECT column_name, kind, bins, bounds, points FROM dp_domains
WHERE column_name IN ('day', 'at', 'attz', 'exact') ORDER BY 1;
SELECT try_sql($$SELECT dp_declare('everything', 'day', lower => 0, upper => 10)$$) AS day_as_number;
SELECT try_sql($$SELECT dp_declare('everything', 'medium', lower => '2020-01-01'::date, upper => '2021-01-01'::date)$$) AS medium_as_date;
SELECT try_sql($$SELECT dp_declare('everything', 'exact', lower => 0, upper => 10, points => ARRAY[11])$$) AS point_out_of_range;
SELECT dp_column_policy('everything', 'note', treatment => 'exclude');
SELECT dp_column_policy('everything', 'big', treatment => 'identifier');
SELECT table_name, column_name, treatment, discovery, other FROM dp_column_policies ORDER BY 2;
GRANT SELECT ON everything TO regress_dp_analyst;	-- only to compare with the truth below; releases need no privilege

SET ROLE regress_dp_analyst;
-- A helper: the cells of a 1-way marginal with near-exact counts (epsilon 300: sigma^2 < 0.002).
CREATE FUNCTION pg_temp.cells(c text) RETURNS TABLE (cell text, n bigint) LANGUAGE sql AS
	$$ SELECT m.cell[1], m.noisy_count FROM dp_marginal('everything', ARRAY[c], 300) m $$;

-- boolean and enum: domains from the type (NOT NULL boolean has no NULL cell)
SELECT * FROM pg_temp.cells('flag');
SELECT * FROM pg_temp.cells('feeling');
-- CHECK (small BETWEEN -5 AND 5): 11 values, one bin each
SELECT count(*) AS cells, sum(n) AS total, min(cell) FILTER (WHERE cell = '-5') AS first FROM pg_temp.cells('small');
-- CHECK (code IN (...)) on a varchar, CHECK (color = 'red' OR color = 'blue'), CHECK (level > 0 AND level < 4)
SELECT * FROM pg_temp.cells('code');
SELECT * FROM pg_temp.cells('color');
SELECT * FROM pg_temp.cells('level');
-- domain types: percent (numeric 0..100, 32 bins, + NULL cell), grade (text IN (...))
SELECT count(*) AS cells, sum(n) AS total FROM pg_temp.cells('pct');
SELECT * FROM pg_temp.cells('mark');
-- declared: integer bins with NULLs
SELECT * FROM pg_temp.cells('medium');
-- numeric with a point mass at 0: 0 has a bin of its own
SELECT * FROM pg_temp.cells('exact');
-- real: NaN -> NULL cell, +Infinity -> last bin, -Infinity -> first bin
SELECT * FROM pg_temp.cells('approx');
SELECT * FROM pg_temp.cells('dbl');
-- text: empty string, non-ASCII, a 4000-byte value (undeclared -> NULL cell), NULL
SELECT * FROM pg_temp.cells('label');
-- char(3): compared without the padding
SELECT * FROM pg_temp.cells('fixed');
-- dates and times: +/-infinity clamp to the end bins
SELECT * FROM pg_temp.cells('day');
SELECT * FROM pg_temp.cells('at');
SELECT * FROM pg_temp.cells('attz');
-- never released
SELECT try_sql($$SELECT * FROM dp_marginal('everything', ARRAY['id'], 1)$$) AS serial;
SELECT try_sql($$SELECT * FROM dp_marginal('everything', ARRAY['ident'], 1)$$) AS identity;
SELECT try_sql($$SELECT * FROM dp_marginal('everything', ARRAY['token'], 1)$$) AS uuid;
SELECT try_sql($$SELECT * FROM dp_marginal('everything', ARRAY['big'], 1)$$) AS marked_identifier;
SELECT try_sql($$SELECT * FROM dp_marginal('everything', ARRAY['note'], 1)$$) AS excluded;
SELECT try_sql($$SELECT * FROM dp_marginal('everything', ARRAY['doc'], 1)$$) AS jsonb;
-- no domain, and the table forbids discovery
SELECT try_sql($$SELECT * FROM dp_marginal('everything', ARRAY['label', 'medium', 'flag'], 1)$$) AS fine;
RESET ROLE;
SELECT dp_undeclare('everything', 'medium');
SET ROLE regress_dp_analyst;
SELECT try_sql($$SELECT * FROM dp_marginal('everything', ARRAY['medium'], 1)$$) AS no_discovery;
RESET ROLE;

-- The truth, for the record: every count above agrees with it.
SELECT count(*) FILTER (WHERE label = '') AS empty, count(*) FILTER (WHERE label = 'żółw') AS turtle,
	   count(*) FILTER (WHERE label = 'plain') AS plain,
	   count(*) FILTER (WHERE label IS NULL OR label NOT IN ('', 'żółw', 'plain')) AS null_or_other
FROM everything;

DROP TABLE everything;
DROP DOMAIN percent;
DROP DOMAIN grade;
DROP TYPE mood;
DROP OWNED BY regress_dp_analyst;
DROP ROLE regress_dp_analyst;
