-- A table owner's code never runs with the rights of whoever synthesizes or samples: not a
-- constraint name spliced into SQL, not a CHECK calling the owner's function, not a domain's
-- constraint.  Built-in-only CHECKs are still copied.  And synthetic values fit their column's
-- type: identifiers, numeric(p,s), domains over numeric.
\i test/regress_helpers.sql
CREATE ROLE regress_oc_owner;
CREATE SCHEMA oc AUTHORIZATION regress_oc_owner;
CREATE TABLE public.oc_calls (who name, what text);
GRANT INSERT, SELECT ON public.oc_calls TO PUBLIC;
SET ROLE regress_oc_owner;
-- the owner's spy: records who runs it
CREATE FUNCTION oc.spy(x int) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO public.oc_calls VALUES (current_user, 'spy');
	RETURN true;
END $$;
CREATE DOMAIN oc.spied_int AS integer CHECK (oc.spy(VALUE));
CREATE DOMAIN oc.short_code AS varchar(4) CHECK (VALUE <> 'zz');	-- built-in only: kept
CREATE DOMAIN oc.money2 AS numeric(5,2);
CREATE DOMAIN oc.even AS integer CHECK (VALUE % 2 = 0);		-- built-in only: kept, and enforced
CREATE DOMAIN oc.small_even AS oc.even CHECK (VALUE < 8);
CREATE DOMAIN oc.even_under_100 AS oc.even CHECK (VALUE < 100);
CREATE TABLE oc.t (
	a		integer NOT NULL CHECK (a BETWEEN 0 AND 9),
	b		oc.spied_int,
	c		oc.short_code,
	amount	oc.money2,
	small	numeric(4,2),
	e		oc.small_even,
	CONSTRAINT spying CHECK (oc.spy(a)),
	CONSTRAINT volatile_one CHECK (random() >= 0),
	CONSTRAINT queries CHECK (table_to_xml('pg_catalog.pg_am', true, false, '') IS NOT NULL)
);
-- a constraint name with a newline and SQL after it (once spliced into DELETE ... OR (%s) IS FALSE)
ALTER TABLE oc.t ADD CONSTRAINT "n
0) IS FALSE OR oc.spy(1) OR (false AND " CHECK (a >= 0);
INSERT INTO oc.t SELECT i % 10, i % 7, (ARRAY['ab', 'cd'])[1 + i % 2], (i % 900) / 10.0, (i % 99) + 0.5, (i % 4) * 2
FROM generate_series(1, 600) i;
SELECT dp_protect('oc.t', epsilon => 50);
SELECT dp_declare('oc.t', 'b', lower => 0, upper => 6);
SELECT dp_declare('oc.t', 'c', categories => ARRAY['ab', 'cd']);
SELECT dp_declare('oc.t', 'amount', lower => 0, upper => 500, bins => 10);
SELECT dp_declare('oc.t', 'small', lower => 0, upper => 500, bins => 10);
SELECT dp_declare('oc.t', 'e', lower => 0, upper => 11);	-- wider than the domain allows
-- every value of e is clamped into [9, 10]: 9 the outer domain accepts and the inner one does not
CREATE TABLE oc.dom (k integer NOT NULL, e oc.even_under_100);
INSERT INTO oc.dom SELECT i % 3, CASE WHEN i % 2 = 0 THEN 2 END FROM generate_series(1, 300) i;
SELECT dp_protect('oc.dom', epsilon => 50);
SELECT dp_declare('oc.dom', 'k', lower => 0, upper => 2);
SELECT dp_declare('oc.dom', 'e', lower => 9, upper => 10, bins => 1);
RESET ROLE;
TRUNCATE public.oc_calls;

-- A superuser synthesizes: NOTICEs (before the charge) name what is not copied and why.
SELECT model_id AS oc_model, rows_written > 0 AS wrote
FROM dp_synthesize('oc.t', epsilon => 2, rows => 300, target => 'public.oc_copy') \gset
SELECT count(*) AS spy_calls FROM public.oc_calls;
-- the safe CHECKs are copied (the odd name intact), the others are not
SELECT replace(conname, E'\n', '\n') AS conname, pg_get_constraintdef(oid) FROM pg_constraint
WHERE conrelid = 'public.oc_copy'::regclass AND contype = 'c' ORDER BY 1;
-- every column over a domain gets its base type (the copy must not depend on the owner's types);
-- the built-in CHECKs of the domains c and e become the columns' own constraints
SELECT attname, format_type(atttypid, atttypmod) AS type FROM pg_attribute
WHERE attrelid = 'public.oc_copy'::regclass AND attnum > 0 ORDER BY attnum;
SELECT obj_description('public.oc_copy'::regclass) LIKE '%; CHECK spying not copied (not built-in only)%; column b has the base type of domain oc.spied_int (not built-in only)' AS provenance;
-- numeric(4,2) declared up to 500: clamped to 99.99; a domain over numeric(5,2): 2 decimals
SELECT bool_and(small BETWEEN 0 AND 99.99) AS small_fits, bool_and(amount = round(amount, 2)) AS amount_scale,
	   bool_and(c IN ('ab', 'cd')) AS c_ok, bool_and(b BETWEEN 0 AND 6) AS b_ok,
	   bool_and(e IS NULL OR (e % 2 = 0 AND e < 8)) AS nested_domains_hold, count(e) > 0 AS has_e
FROM public.oc_copy;
SELECT c->>'name' AS name, c->>'type' AS type, c->>'source_type' AS source_type
FROM jsonb_array_elements(dp_model_json(:oc_model)->'columns') c;
-- heap_insert does not check domains: rows whose value a domain (nested ones too) rejects are dropped
SELECT rows_written < 200 AS some_deleted FROM dp_synthesize('oc.dom', epsilon => 5, rows => 200, target => 'public.oc_dom');
SELECT count(*) FILTER (WHERE e % 2 = 1) AS values_the_inner_domain_rejects, count(*) FILTER (WHERE e = 10) > 0 AS tens_kept
FROM public.oc_dom;
SELECT dp_model_json(:oc_model)->'skipped_checks' AS skipped_checks,
	   jsonb_array_length(dp_model_json(:oc_model)->'checks') AS checks;

-- dp_sample: the same; the stored text is validated again, never pasted.  (Its NOTICEs name
-- the model's id, which depends on the tests before: not shown.)
SET client_min_messages = warning;
SELECT rows_written > 0 AS sampled FROM dp_sample(:oc_model, "rows" => 200, seed => 1, target => 'public.oc_sample');
SELECT count(*) AS spy_calls FROM public.oc_calls;
SELECT count(*) AS sample_checks FROM pg_constraint WHERE conrelid = 'public.oc_sample'::regclass AND contype = 'c';
-- a stored model whose checks call the owner's code (a model stored before this check existed)
UPDATE dpsynth.models SET model = jsonb_set(model, '{checks}', model->'checks' ||
	'[{"name": "planted", "expression": "oc.spy(a)"}, {"name": "planted2", "expression": "a > 0) OR oc.spy(1"}, {"name": "planted3", "expression": "(a)::oc.spied_int > 0"}]'::jsonb)
WHERE id = :oc_model;
SELECT rows_written > 0 AS sampled FROM dp_sample(:oc_model, "rows" => 200, seed => 1, target => 'public.oc_sample2');
SELECT count(*) AS spy_calls FROM public.oc_calls;
SELECT count(*) AS sample2_checks FROM pg_constraint WHERE conrelid = 'public.oc_sample2'::regclass AND contype = 'c';
-- the owner turns a kept domain into a spying one: samples get its base type
SET ROLE regress_oc_owner;
ALTER DOMAIN oc.short_code ADD CONSTRAINT spy_too CHECK (oc.spy(length(VALUE)));
RESET ROLE;
TRUNCATE public.oc_calls;
SELECT rows_written > 0 AS sampled FROM dp_sample(:oc_model, "rows" => 200, seed => 1, target => 'public.oc_sample3');
SELECT count(*) AS spy_calls FROM public.oc_calls;
SELECT format_type(atttypid, atttypmod) AS c_type FROM pg_attribute
WHERE attrelid = 'public.oc_sample3'::regclass AND attname = 'c';
-- the copy made before the owner changed the domain does not depend on it: writing into the copy
-- runs nothing of the owner's (issue 9, finding 3)
TRUNCATE public.oc_calls;
INSERT INTO public.oc_copy (a, c, e) VALUES (1, 'ab', 2);
SELECT count(*) AS spy_calls_on_insert FROM public.oc_calls;
RESET client_min_messages;

-- Identifiers fit their type.
CREATE TABLE ids (n smallint NOT NULL, s varchar(4), t varchar(2) NOT NULL, w smallint, x int NOT NULL);
INSERT INTO ids SELECT i, i::text, (i % 10)::text, i, i % 5 FROM generate_series(1, 300) i;
SELECT dp_protect('ids', epsilon => 50);
SELECT dp_column_policy('ids', 'n', treatment => 'identifier');
SELECT dp_column_policy('ids', 's', treatment => 'identifier');
SELECT dp_column_policy('ids', 't', treatment => 'identifier');
SELECT dp_column_policy('ids', 'w', treatment => 'identifier');
SELECT dp_declare('ids', 'x', lower => 0, upper => 4);
SELECT count(*) AS ledger_before FROM dpsynth.ledger \gset
-- NOT NULL varchar(2): 99 values at most; NOT NULL smallint: 32,767; refused before the charge
SELECT try_sql($$SELECT * FROM dp_synthesize('ids', epsilon => 1, rows => 100, target => 'ids_a')$$) AS varchar2_too_short;
ALTER TABLE ids ALTER COLUMN t DROP NOT NULL;
SELECT try_sql($$SELECT * FROM dp_synthesize('ids', epsilon => 1, rows => 40000, target => 'ids_a')$$) AS smallint_too_small;
SELECT try_sql($$SELECT * FROM dp_synthesize('ids', epsilon => 1, target => 'ids_a')$$) AS default_rows_too_many;
SELECT count(*) = :ledger_before AS nothing_charged FROM dpsynth.ledger;
ALTER TABLE ids ALTER COLUMN n DROP NOT NULL;
SELECT model_id AS ids_model FROM dp_synthesize('ids', epsilon => 1, rows => 150, target => 'ids_a') \gset
SELECT count(DISTINCT n) = count(*) AS n_distinct, count(DISTINCT s) = count(*) AS s_distinct,
	   max(length(s)) <= 4 AS s_fits, count(t) AS t_values, max(length(t)) <= 2 AS t_fits
FROM ids_a;
-- a nullable smallint identifier past 32,767 rows: NULL
SELECT rows_written AS ids_rows FROM dp_sample(:ids_model, "rows" => 33000, seed => 3, target => 'ids_b') \gset
SELECT :ids_rows AS ids_rows, count(n) AS n_values, count(w) AS w_values, max(w) AS w_max,
	   count(DISTINCT s) AS s_values, max(length(s)) AS s_length FROM ids_b;
SELECT try_sql(format('SELECT * FROM dp_sample(%s, target => %L)', :ids_model, 'ids_c')) = 'no error' AS default_fits;
-- dpsynth.max_sample_rows bounds rows => and the default count, before any work
SET dpsynth.max_sample_rows = 100;
SELECT try_sql(format('SELECT * FROM dp_sample(%s, "rows" => 101, target => %L)', :ids_model, 'ids_d')) AS over_max;
SELECT regexp_replace(replace(try_sql(format('SELECT * FROM dp_sample(%s, target => %L)', :ids_model, 'ids_d')),
					   'model ' || :ids_model, 'model N'), 'make \d+ rows', 'make K rows') AS default_over_max;
SELECT try_sql($$SELECT * FROM dp_synthesize('ids', epsilon => 1, rows => 101, target => 'ids_d')$$) AS synth_over_max;
RESET dpsynth.max_sample_rows;
SET ROLE regress_oc_owner;
SELECT try_sql('SET dpsynth.max_sample_rows = 1000000000') AS not_superuser;
RESET ROLE;

-- A NOT NULL domain is a NOT NULL column: the copy says so and holds no NULL.  A placeholder for
-- the "other" cell that does not fit the type is refused before the charge, also for a column whose
-- categories are still to be discovered.
CREATE DOMAIN nn_code AS varchar(3) NOT NULL;
CREATE TABLE nn (k integer NOT NULL, c nn_code, d varchar(3) NOT NULL, idn numeric(6,2));
INSERT INTO nn SELECT i % 3, (ARRAY['ab', 'cd'])[1 + i % 2], (ARRAY['x', 'y'])[1 + i % 2], i FROM generate_series(1, 400) i;
SELECT dp_protect('nn', epsilon => 50, selection_delta => 1e-7);
SELECT dp_declare('nn', 'k', lower => 0, upper => 2);
SELECT dp_declare('nn', 'c', categories => ARRAY['ab']);	-- 'cd' goes to the "other" cell
SELECT dp_column_policy('nn', 'idn', treatment => 'identifier');	-- fresh values with the type's scale
-- d's categories are still to be discovered
SELECT dp_column_policy('nn', 'd', other => 'toolong');
SELECT count(*) AS ledger_before FROM dpsynth.ledger \gset
SELECT try_sql($$SELECT * FROM dp_synthesize('nn', epsilon => 2, target => 'nn_b')$$) AS placeholder_too_long;
SELECT count(*) = :ledger_before AS nothing_charged FROM dpsynth.ledger;
SELECT dp_column_policy('nn', 'd');
SELECT rows_written > 0 AS wrote FROM dp_synthesize('nn', epsilon => 2, target => 'nn_a');
SELECT attname, attnotnull FROM pg_attribute WHERE attrelid = 'nn_a'::regclass AND attnum > 0 ORDER BY attnum;
SELECT count(*) FILTER (WHERE c IS NULL) AS null_c FROM nn_a;
SELECT min(idn)::text AS first_id, min(scale(idn)) = 2 AND max(scale(idn)) = 2 AS ids_have_scale_2 FROM nn_a;

DROP TABLE ids, ids_a, ids_b, ids_c, nn, nn_a;
DROP DOMAIN nn_code;
DROP TABLE public.oc_dom, public.oc_sample, public.oc_sample2, public.oc_sample3, public.oc_calls;
DROP SCHEMA oc CASCADE;
-- ... and dropping the owner's types leaves every column of the copy
SELECT count(*) AS copy_columns_left FROM pg_attribute
WHERE attrelid = 'public.oc_copy'::regclass AND attnum > 0 AND NOT attisdropped;
DROP TABLE public.oc_copy;
DROP ROLE regress_oc_owner;
