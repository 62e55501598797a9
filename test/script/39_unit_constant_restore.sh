#!/usr/bin/env bash
# The columns constant within a unit (dp_unit_constant) follow their columns through pg_dump /
# pg_restore and renames (review of issue 39, finding 6).  dpsynth.budgets keeps their attnums,
# and pg_restore renumbers the columns that follow a dropped one: a unit column before the dropped
# one keeps its attnum, so nothing refuses the release, and the stale attnums named other columns
# that the synthesis then held constant.  Their names are kept too: a synthesis reads the names,
# re-pointing the unit re-points them, a rename is followed, and a dropped column's name given to
# another column does not make that one constant.  The declared and learned domains
# (dpsynth.domains) were keyed by attnum alone too: after the restore grp had sex's categories.
# They keep their names now, are not declared again here, and must reach their own columns.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
SRC=dpsynth_const_restore_src
DST=dpsynth_const_restore_dst
fresh_db $SRC
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DST" 2>/dev/null
psql -X -q -d $SRC >/dev/null 2>&1 <<'SQL'
CREATE TABLE v (pid int4 NOT NULL, junk int4, sex text NOT NULL, grp text NOT NULL, age int4 NOT NULL);
ALTER TABLE v DROP COLUMN junk;
INSERT INTO v SELECT u, CASE WHEN u % 2 = 0 THEN 'f' ELSE 'm' END, CASE WHEN (u + r) % 3 = 0 THEN 'a' ELSE 'b' END, u % 90
FROM generate_series(1, 400) u, generate_series(1, 2) r;
SELECT dp_protect('v', epsilon => 1e3);
SELECT dp_privacy_unit('v', 'pid', max_rows_per_unit => 2);
SELECT dp_declare('v', 'sex', categories => ARRAY['f', 'm']), dp_declare('v', 'grp', categories => ARRAY['a', 'b']);
SELECT dp_declare('v', 'age', lower => 0, upper => 99, bins => 4, binning => 'quantile');
SELECT dp_unit_constant('v', ARRAY['sex']);
SQL
# the columns a synthesis holds constant, as its stored model names them
held() {
	q $1 "SELECT 1 FROM dp_synthesize('v', 5, target => 'v_syn$2')" 2>&1 | grep -v "^1$"
	q $1 "SELECT coalesce(model->>'constant_per_unit', 'none') FROM dpsynth.models ORDER BY id DESC LIMIT 1" 2>&1
}
is "$(held $SRC 1)" '["sex"]' "before the dump, sex is held constant"
is "$(q $SRC "SELECT unit_constant FROM dpsynth.budgets")" '{3}' "at attnum 3 (after the dropped column)"
# the first synthesis learned age's quantile bins: a 'dp' domain, with the ledger row that paid
learned() { q $1 "SELECT d.attnum || ':' || d.source || ':' || d.ledger_id || ':' || (d.edges IS NOT NULL) FROM dpsynth.domains d WHERE d.attname = 'age'"; }
src_age=$(learned $SRC)
is "${src_age#5:}" "dp:$(q $SRC "SELECT min(id) FROM dpsynth.ledger"):true" "age's learned bins are kept with their ledger row"

createdb $DST && pg_dump -Fc $SRC | pg_restore -d $DST 2>&1 | grep -v '^$' | sed 's/^/# restore: /'
# the declared domains are not declared again: they follow their columns by name
is "$(q $DST "SELECT attnum FROM pg_attribute WHERE attrelid = 'v'::regclass AND attname = 'grp'")" 3 \
	"after the restore, attnum 3 is grp"
is "$(q $DST "SELECT string_agg(column_name || '=' || categories::text, ' ' ORDER BY column_name) FROM dp_domains")" \
	'' "before any call, dp_domains shows no domain under a column it was not declared for"
is "$(q $DST "SELECT string_agg(cell[1], ',' ORDER BY cell[1]) FROM dp_marginal('v', ARRAY['grp'], 1)")" \
	'a,b' "a marginal of grp counts grp's categories, not sex's"
is "$(held $DST 2)" '["sex"]' "a synthesis still holds sex constant, not grp (the name, not the stale attnum)"
is "$(q $DST "SELECT string_agg(column_name || '=' || categories::text, ' ' ORDER BY column_name) FROM dp_domains")" \
	'grp={a,b} sex={f,m}' "the release brought each declared domain back to its own column"
is "$(q $DST "SELECT string_agg(d.attnum || d.attname, ' ' ORDER BY d.attnum) FROM dpsynth.domains d")" \
	'2sex 3grp 4age' "at the restored attnums"
is "$(learned $DST)" "4:${src_age#5:}" "age's learned bins moved to its attnum with their ledger row"
is "$(q $DST "SELECT count(*) > 0 AND bool_and(grp IN ('a', 'b') AND sex IN ('f', 'm')) FROM v_syn2")" \
	t "the synthetic table draws grp from grp's categories and sex from sex's"
q $DST "SELECT dp_privacy_unit('v', 'pid', max_rows_per_unit => 2)" >/dev/null 2>&1
is "$(q $DST "SELECT unit_constant::text || unit_constant_names::text FROM dpsynth.budgets")" '{2}{sex}' \
	"re-pointing the unit by name re-points the constant columns to their attnums"

# a rename is followed; a column given the old name does not take its place
q $DST "ALTER TABLE v RENAME COLUMN sex TO gender" >/dev/null
is "$(q $DST "SELECT unit_constant_names FROM dpsynth.budgets")" '{gender}' "the name follows a rename"
q $DST "ALTER TABLE v RENAME COLUMN grp TO sex" >/dev/null
is "$(q $DST "SELECT string_agg(column_name || '=' || categories::text, ' ' ORDER BY column_name) FROM dp_domains")" \
	'gender={f,m} sex={a,b}' "declared domains follow renames, and the column given an old name keeps its own"

# a domain whose column name is gone from the table (no column to bring it back to) is refused
# where another column holds its attnum, before anything is charged
q $DST "UPDATE dpsynth.domains SET attname = 'gone' WHERE attname = 'sex'" >/dev/null
spent=$(q $DST "SELECT rho_spent FROM dpsynth.budgets")
out=$(psql -X -qAt -v VERBOSITY=verbose -d $DST -c "SELECT * FROM dp_marginal('v', ARRAY['sex'], 1)" 2>&1)
is "$(echo "$out" | grep -o 'ERROR:  55000: the domain stored for column "sex" of table "v" was declared for column "gone"')" \
	'ERROR:  55000: the domain stored for column "sex" of table "v" was declared for column "gone"' "a stale domain is refused (55000)"
is "$(echo "$out" | grep -c 'HINT:  Declare the domain of column "sex" again')" 1 "with a hint to declare it again"
is "$(q $DST "SELECT rho_spent FROM dpsynth.budgets")" "$spent" "and nothing was charged"
q $DST "SELECT dp_declare('v', 'sex', categories => ARRAY['a', 'b'])" >/dev/null
is "$(q $DST "SELECT string_agg(cell[1], ',' ORDER BY cell[1]) FROM dp_marginal('v', ARRAY['sex'], 1)")" \
	'a,b' "declared again, the column is released"
is "$(held $DST 3)" '["gender"]' "and the synthesis holds the renamed column constant, not the one now named sex"

# a dropped constant column is held by no synthesis, even when another column takes its name
q $SRC "ALTER TABLE v DROP COLUMN sex" >/dev/null
q $SRC "ALTER TABLE v RENAME COLUMN grp TO sex" >/dev/null
is "$(held $SRC 4)" 'none' "a dropped constant column's name given to another column does not make it constant"
psql -X -q -d postgres -c "DROP DATABASE $DST" -c "DROP DATABASE $SRC" >/dev/null 2>&1
done_testing
