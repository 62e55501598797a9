#!/usr/bin/env bash
# The columns constant within a unit (dp_unit_constant) follow their columns through pg_dump /
# pg_restore and renames (review of issue 39, finding 6).  dpsynth.budgets keeps their attnums,
# and pg_restore renumbers the columns that follow a dropped one: a unit column before the dropped
# one keeps its attnum, so nothing refuses the release, and the stale attnums named other columns
# that the synthesis then held constant.  Their names are kept too: a synthesis reads the names,
# re-pointing the unit re-points them, a rename is followed, and a dropped column's name given to
# another column does not make that one constant.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
SRC=dpsynth_const_restore_src
DST=dpsynth_const_restore_dst
fresh_db $SRC
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DST" 2>/dev/null
psql -X -q -d $SRC >/dev/null 2>&1 <<'SQL'
CREATE TABLE v (pid int4 NOT NULL, junk int4, sex text NOT NULL, grp text NOT NULL);
ALTER TABLE v DROP COLUMN junk;
INSERT INTO v SELECT u, NULL, CASE WHEN u % 2 = 0 THEN 'f' ELSE 'm' END, CASE WHEN (u + r) % 3 = 0 THEN 'a' ELSE 'b' END
FROM generate_series(1, 400) u, generate_series(1, 2) r;
SELECT dp_protect('v', epsilon => 1e3);
SELECT dp_privacy_unit('v', 'pid', max_rows_per_unit => 2);
SELECT dp_declare('v', 'sex', categories => ARRAY['f', 'm']), dp_declare('v', 'grp', categories => ARRAY['a', 'b']);
SELECT dp_unit_constant('v', ARRAY['sex']);
SQL
# the columns a synthesis holds constant, as its stored model names them
held() {
	q $1 "SELECT 1 FROM dp_synthesize('v', 5, target => 'v_syn$2')" 2>&1 | grep -v "^1$"
	q $1 "SELECT coalesce(model->>'constant_per_unit', 'none') FROM dpsynth.models ORDER BY id DESC LIMIT 1" 2>&1
}
is "$(held $SRC 1)" '["sex"]' "before the dump, sex is held constant"
is "$(q $SRC "SELECT unit_constant FROM dpsynth.budgets")" '{3}' "at attnum 3 (after the dropped column)"

createdb $DST && pg_dump -Fc $SRC | pg_restore -d $DST 2>&1 | grep -v '^$' | sed 's/^/# restore: /'
# (the declared domains are keyed by attnum too: declared again here, by name)
q $DST "SELECT dp_declare('v', 'sex', categories => ARRAY['f', 'm']), dp_declare('v', 'grp', categories => ARRAY['a', 'b'])" >/dev/null
is "$(q $DST "SELECT attnum FROM pg_attribute WHERE attrelid = 'v'::regclass AND attname = 'grp'")" 3 \
	"after the restore, attnum 3 is grp"
is "$(held $DST 2)" '["sex"]' "a synthesis still holds sex constant, not grp (the name, not the stale attnum)"
q $DST "SELECT dp_privacy_unit('v', 'pid', max_rows_per_unit => 2)" >/dev/null 2>&1
is "$(q $DST "SELECT unit_constant::text || unit_constant_names::text FROM dpsynth.budgets")" '{2}{sex}' \
	"re-pointing the unit by name re-points the constant columns to their attnums"

# a rename is followed; a column given the old name does not take its place
q $DST "ALTER TABLE v RENAME COLUMN sex TO gender" >/dev/null
is "$(q $DST "SELECT unit_constant_names FROM dpsynth.budgets")" '{gender}' "the name follows a rename"
q $DST "ALTER TABLE v RENAME COLUMN grp TO sex" >/dev/null
is "$(held $DST 3)" '["gender"]' "and the synthesis holds the renamed column constant, not the one now named sex"

# a dropped constant column is held by no synthesis, even when another column takes its name
q $SRC "ALTER TABLE v DROP COLUMN sex" >/dev/null
q $SRC "ALTER TABLE v RENAME COLUMN grp TO sex" >/dev/null
is "$(held $SRC 4)" 'none' "a dropped constant column's name given to another column does not make it constant"
psql -X -q -d postgres -c "DROP DATABASE $DST" -c "DROP DATABASE $SRC" >/dev/null 2>&1
done_testing
