-- Columns constant within a unit and NOT NULL identifiers: the grouped units fill up a group's
-- last unit with up to k - 1 rows, so a synthetic table may get more rows than asked; a NOT NULL
-- identifier column was checked (before the charge) only for the rows asked, and an identifier
-- past its type's capacity is NULL.  The units past what such a column holds are left out (whole
-- units, the last ones of a random order), so the call never fails after the charge.
\i test/regress_helpers.sql
-- 300 patients of 3 visits each; sex and birth year are the patient's (20 groups of synthetic
-- units); ref is a NOT NULL identifier that holds 99 values
CREATE TABLE patid (patient_id int4, sex text, birth int4, dept text, ref numeric(2, 0) NOT NULL DEFAULT 0);
INSERT INTO patid (patient_id, sex, birth, dept)
SELECT p, CASE WHEN p % 3 = 0 THEN 'm' ELSE 'f' END, 1920 + (p * 7) % 80, CASE WHEN v = 1 THEN 'a' ELSE 'b' END
FROM generate_series(1, 300) p, generate_series(1, 3) v;
SELECT dp_protect('patid', epsilon => 1e6);
SELECT dp_privacy_unit('patid', 'patient_id', 3);
SELECT dp_column_policy('patid', 'ref', 'identifier');
SELECT dp_declare('patid', 'sex', categories => ARRAY['f', 'm']), dp_declare('patid', 'dept', categories => ARRAY['a', 'b']),
	   dp_declare('patid', 'birth', lower => 1900, upper => 2000, bins => 10, binning => 'equal');
SELECT dp_unit_constant('patid', ARRAY['sex', 'birth']);
-- more rows than ref holds: refused before the charge, as before
SELECT try_sql($$SELECT dp_synthesize('patid', 1000, "rows" => 100, target => 'patid_big')$$);
-- 99 rows: the table has at most 99, every ref set and distinct, no unit mixing sexes
SELECT rows_written BETWEEN 60 AND 99 AS wrote FROM dp_synthesize('patid', 1000, "rows" => 99, target => 'patid_syn');
SELECT count(*) <= 99 AS fits, count(ref) = count(*) AS refs_set, count(DISTINCT ref) = count(*) AS refs_distinct
FROM patid_syn;
-- dp_sample of its model, 12 seeds (the fill-ups of 20 groups pass 99 rows in some of them)
CREATE TABLE patid_runs (seed int, rows_written int8, n int8, refs int8, mixed int8);
DO $$
DECLARE
	m int8 := (SELECT max(id) FROM dpsynth.models WHERE relid = 'patid'::regclass);
	w int8;
BEGIN
	FOR s IN 1..12 LOOP
		SELECT rows_written INTO w FROM dp_sample(m, "rows" => 99, seed => s, target => 'patid_sam');
		INSERT INTO patid_runs SELECT s, w, count(*), count(DISTINCT ref),
			(SELECT count(*) FROM (SELECT patient_id FROM patid_sam GROUP BY 1 HAVING count(DISTINCT sex) > 1) u)
		FROM patid_sam;
		DROP TABLE patid_sam;
	END LOOP;
END
$$;
SELECT count(*) AS runs, bool_and(n <= 99) AS all_fit, bool_and(rows_written = n) AS counted,
	   bool_and(refs = n) AS refs_distinct, sum(mixed) AS mixed_units, bool_and(n >= 60) AS most_rows
FROM patid_runs;
-- dpsynth.max_sample_rows bounds the rows a call writes, grouped units included
SET dpsynth.max_sample_rows = 90;
TRUNCATE patid_runs;
DO $$
DECLARE
	m int8 := (SELECT max(id) FROM dpsynth.models WHERE relid = 'patid'::regclass);
	w int8;
BEGIN
	FOR s IN 1..12 LOOP
		SELECT rows_written INTO w FROM dp_sample(m, "rows" => 90, seed => s, target => 'patid_sam');
		INSERT INTO patid_runs SELECT s, w, count(*), count(DISTINCT ref), 0 FROM patid_sam;
		DROP TABLE patid_sam;
	END LOOP;
END
$$;
SELECT count(*) AS runs, bool_and(n <= 90) AS all_within_max, bool_and(rows_written = n) AS counted,
	   bool_and(n >= 50) AS most_rows
FROM patid_runs;
RESET dpsynth.max_sample_rows;
