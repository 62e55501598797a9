# bench/units_lib.sh - shared by bench/units.sh and bench/lowsignal/rowk.sh (sourced): the
# group-privacy baseline's input table.
#
# units_make_table DB DATASET TABLE DROP K RUN UNIT: creates TABLE (dropped first) from DATASET_raw
# without the columns in DROP (comma-separated), keeping at most K rows per UNIT chosen at random
# (setseed from RUN), and NOT NULL as on DATASET_raw.
units_make_table() {
	local db=$1 d=$2 t=$3 drop=$4 k=$5 run=$6 u=$7 cols
	cols=$(psql -X -qAt -d "$db" -c "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute
		WHERE attrelid = '${d}_raw'::regclass AND attnum > 0 AND NOT attisdropped
		AND attname <> ALL (string_to_array('$drop', ','))")
	psql -X -q -d "$db" -v ON_ERROR_STOP=1 >/dev/null <<SQL
DROP TABLE IF EXISTS $t CASCADE;
CREATE TABLE $t AS SELECT $cols FROM ${d}_raw WITH NO DATA;
DO \$\$ DECLARE c name; BEGIN
	FOR c IN SELECT attname FROM pg_attribute WHERE attrelid = '${d}_raw'::regclass AND attnotnull
			AND attnum > 0 AND NOT attisdropped AND attname <> ALL (string_to_array('$drop', ',')) LOOP
		EXECUTE format('ALTER TABLE $t ALTER COLUMN %I SET NOT NULL', c);
	END LOOP;
END \$\$;
SELECT setseed($run / 1000.0);
INSERT INTO $t SELECT $cols FROM (SELECT *, row_number() OVER (PARTITION BY $u ORDER BY random()) AS rn_
	FROM ${d}_raw) s WHERE rn_ <= $k;
VACUUM ANALYZE $t;
SQL
}
