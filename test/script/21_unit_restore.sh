#!/usr/bin/env bash
# The privacy unit follows its column through pg_dump / pg_restore and renames (issue 39, review
# R1).  dpsynth.budgets keeps the unit's attnum, and pg_restore renumbers the columns that follow
# a dropped one: the restored unit attnum then names another column, by which every release would
# be bounded.  A release must refuse such an attnum (55000, nothing charged); the owner points the
# unit back at its column by name (same bounds, allowed after spending); a rename is followed.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
SRC=dpsynth_unit_restore_src
DST=dpsynth_unit_restore_dst
fresh_db $SRC
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DST" 2>/dev/null
psql -X -q -d $SRC >/dev/null 2>&1 <<'SQL'
CREATE TABLE v (dept int4 NOT NULL, junk int4, pid int4, other int4);
ALTER TABLE v DROP COLUMN junk;
INSERT INTO v SELECT 1, 1, 0 FROM generate_series(1, 50);
INSERT INTO v SELECT 2, g, 0 FROM generate_series(2, 20) g;
SELECT dp_protect('v', epsilon => 1e6);
SELECT dp_privacy_unit('v', 'pid', max_rows_per_unit => 1);
SELECT dp_declare('v', 'dept', lower => 1, upper => 2, bins => 2);
SQL
marg() { psql -X -qAt -d $1 -c "SELECT string_agg(coalesce(cell[1], 'null') || '=' || noisy_count, ',' ORDER BY cell[1]) FROM dp_marginal('v', ARRAY['dept'], epsilon => 1e5)" 2>&1; }
is "$(marg $SRC)" "1=1,2=19" "before the dump, unit pid: 1 row of pid 1, 19 of the others"

createdb $DST && pg_dump -Fc $SRC | pg_restore -d $DST 2>&1 | grep -v '^$' | sed 's/^/# restore: /'
spent=$(q $DST "SELECT rho_spent FROM dpsynth.budgets")
res=$(marg $DST)
ok "$([ "$res" = "1=1,2=19" ] || grep -q 'was declared on column "pid", not on "other"' <<<"$res"; echo $?)" \
	"after the restore, no release is bounded by the column the stale attnum names (got: $res)"
is "$(q $DST "SELECT rho_spent = $spent FROM dpsynth.budgets")" t "and a refused release charged nothing"
q $DST "SELECT dp_privacy_unit('v', 'pid', max_rows_per_unit => 1)" >/dev/null 2>&1
is "$(marg $DST)" "1=1,2=19" "the owner points the unit back at pid (same name and bounds, after spending)"
ok "$(q $DST "SELECT dp_privacy_unit('v', 'other', max_rows_per_unit => 1)" >/dev/null 2>&1; [ $? -ne 0 ]; echo $?)" \
	"but cannot move it to another column"

# a rename keeps the unit; a column later given the old name does not become it
q $DST "ALTER TABLE v RENAME COLUMN pid TO person" >/dev/null
q $DST "ALTER TABLE v RENAME COLUMN other TO pid" >/dev/null
is "$(q $DST "SELECT privacy_unit_name FROM dpsynth.budgets")" person "the unit's name follows a rename"
is "$(marg $DST)" "1=1,2=19" "and releases are still bounded by it"
ok "$(q $DST "SELECT dp_privacy_unit('v', 'pid', max_rows_per_unit => 1)" >/dev/null 2>&1; [ $? -ne 0 ]; echo $?)" \
	"the column now named like the old unit cannot take its place"
# a rename through a parent reaches the unit and the unit-constant columns of the tables below it
# (the child inherits the rename; the second child has the columns at other attnums)
psql -X -q -d $SRC >/dev/null 2>&1 <<'SQL'
CREATE TABLE par (dept int4 NOT NULL, pid int4, sex int4);
CREATE TABLE kid (extra int4) INHERITS (par);
CREATE TABLE kid2 (extra int4, pid int4, dept int4 NOT NULL, sex int4);
ALTER TABLE kid2 INHERIT par;
INSERT INTO kid SELECT 1, 1, 0, 0 FROM generate_series(1, 50);
INSERT INTO kid SELECT 2, g, 0, 0 FROM generate_series(2, 20) g;
SELECT dp_protect('kid', epsilon => 1e6);
SELECT dp_privacy_unit('kid', 'pid', max_rows_per_unit => 1);
SELECT dp_unit_constant('kid', ARRAY['sex']);
SELECT dp_declare('kid', 'dept', lower => 1, upper => 2, bins => 2);
SELECT dp_protect('kid2', epsilon => 1e6);
SELECT dp_privacy_unit('kid2', 'pid', max_rows_per_unit => 1);
SELECT dp_unit_constant('kid2', ARRAY['extra', 'sex']);
ALTER TABLE par RENAME pid TO person;
ALTER TABLE par RENAME sex TO gender;
SQL
is "$(q $SRC "SELECT string_agg(relid::regclass || ':' || privacy_unit || privacy_unit_name || '/' || unit_constant::text || unit_constant_names::text, ' ' ORDER BY relid::regclass::text) FROM dpsynth.budgets WHERE relid IN ('kid'::regclass, 'kid2'::regclass)")" \
	"kid:2person/{3}{gender} kid2:2person/{1,4}{extra,gender}" \
	"a rename through a parent: the children's unit and unit-constant names follow it"
is "$(psql -X -qAt -d $SRC -c "SELECT string_agg(coalesce(cell[1], 'null') || '=' || noisy_count, ',' ORDER BY cell[1]) FROM dp_marginal('kid', ARRAY['dept'], epsilon => 1e5)" 2>&1)" \
	"1=1,2=19" "and the child's releases are bounded by the renamed unit"
# a restored table whose unit attnum names another column: dropping the unit column, then
# altering the table or renaming the column at that attnum, never makes that column the unit
DST3=${DST}_3
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DST3" >/dev/null 2>&1
createdb $DST3 && pg_dump -Fc $SRC | pg_restore -d $DST3 2>&1 | grep -v '^$' | sed 's/^/# restore: /'
q $DST3 "ALTER TABLE v DROP COLUMN pid" >/dev/null
q $DST3 "ALTER TABLE v ADD COLUMN z int4" >/dev/null
q $DST3 "ALTER TABLE v RENAME COLUMN other TO x" >/dev/null
is "$(q $DST3 "SELECT coalesce(privacy_unit_name, '(none)') FROM dpsynth.budgets WHERE relid = 'v'::regclass")" "(none)" \
	"the dropped unit column's name is forgotten (not replaced by that of the column at the restored attnum)"
spent3=$(q $DST3 "SELECT rho_spent FROM dpsynth.budgets WHERE relid = 'v'::regclass")
res=$(marg $DST3)
ok "$(grep -q 'privacy unit column of table "v" is gone' <<<"$res"; echo $?)" \
	"and its releases are refused, not bounded by that column (got: $res)"
# the dropped unit's name given to the column at the restored attnum does not make it the unit
q $DST3 "ALTER TABLE v RENAME COLUMN x TO pid" >/dev/null
res=$(marg $DST3)
ok "$(grep -q 'privacy unit column of table "v" is gone' <<<"$res"; echo $?)" \
	"nor does giving that column the unit's old name (got: $res)"
ok "$(q $DST3 "SELECT dp_privacy_unit('v', 'pid', max_rows_per_unit => 1)" >/dev/null 2>&1; [ $? -ne 0 ]; echo $?)" \
	"nor may the owner point the unit at it after spending"
is "$(q $DST3 "SELECT rho_spent = $spent3 FROM dpsynth.budgets WHERE relid = 'v'::regclass")" t "nothing was charged"
psql -X -q -d postgres -c "DROP DATABASE $DST3" >/dev/null 2>&1

# ALTER TYPE ... RENAME ATTRIBUTE ... CASCADE renames a typed table's unit and unit-constant columns
psql -X -q -d $SRC >/dev/null 2>&1 <<'SQL'
CREATE TYPE vt AS (dept int4, pid int4, sex int4);
CREATE TABLE typed OF vt;
INSERT INTO typed SELECT 1, 1, 0 FROM generate_series(1, 50);
INSERT INTO typed SELECT 2, g, 0 FROM generate_series(2, 20) g;
SELECT dp_protect('typed', epsilon => 1e6);
SELECT dp_privacy_unit('typed', 'pid', max_rows_per_unit => 1);
SELECT dp_unit_constant('typed', ARRAY['sex']);
SELECT dp_declare('typed', 'dept', lower => 1, upper => 2, bins => 2);
ALTER TYPE vt RENAME ATTRIBUTE pid TO person CASCADE;
ALTER TYPE vt RENAME ATTRIBUTE sex TO gender CASCADE;
SQL
is "$(q $SRC "SELECT privacy_unit_name || '/' || unit_constant_names::text FROM dpsynth.budgets WHERE relid = 'typed'::regclass")" \
	"person/{gender}" "ALTER TYPE ... RENAME ATTRIBUTE ... CASCADE: the typed table's unit and unit-constant names follow"
is "$(psql -X -qAt -d $SRC -c "SELECT string_agg(coalesce(cell[1], 'null') || '=' || noisy_count, ',' ORDER BY cell[1]) FROM dp_marginal('typed', ARRAY['dept'], epsilon => 1e5)" 2>&1)" \
	"1=1,2=19,null=0" "and its releases are bounded by the renamed unit (dept of a typed table is nullable)"
# ... and its declared domains follow such a rename too (before: the release was refused, the
# domain "declared for column dept", as after a renumbering restore)
q $SRC "ALTER TYPE vt RENAME ATTRIBUTE dept TO ward CASCADE" >/dev/null
is "$(q $SRC "SELECT string_agg(attnum || ':' || attname, ' ') FROM dpsynth.domains WHERE relid = 'typed'::regclass")" \
	"1:ward" "ALTER TYPE ... RENAME ATTRIBUTE ... CASCADE: the typed table's declared domain follows"
is "$(psql -X -qAt -d $SRC -c "SELECT string_agg(coalesce(cell[1], 'null') || '=' || noisy_count, ',' ORDER BY cell[1]) FROM dp_marginal('typed', ARRAY['ward'], epsilon => 1e5)" 2>&1)" \
	"1=1,2=19,null=0" "and the renamed column is released with its declared domain"
# ... by name, not by attnum: a typed table restored after a dropped attribute has other attnums
# than its policy rows; renaming two attributes must not hand one column's 'exclude' to another
# (a first version matched rows by attnum once their name was gone: b's exclude moved to w)
psql -X -q -d $SRC >/dev/null 2>&1 <<'SQL'
CREATE TYPE vt2 AS (a int4, x int4, b int4, c int4);
CREATE TABLE typed2 OF vt2;
ALTER TYPE vt2 DROP ATTRIBUTE x CASCADE;
INSERT INTO typed2 SELECT g % 2 + 1, g % 3, g % 5 FROM generate_series(1, 100) g;
SELECT dp_protect('typed2', epsilon => 1e6);
SELECT dp_column_policy('typed2', 'b', 'exclude');
SQL
DST4=${DST}_4
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DST4" >/dev/null 2>&1
createdb $DST4 && pg_dump -Fc $SRC | pg_restore -d $DST4 2>&1 | grep -v '^$' | sed 's/^/# restore: /'
is "$(q $DST4 "SELECT string_agg(attnum || ':' || attname, ' ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'typed2'::regclass AND attnum > 0 AND NOT attisdropped")/$(q $DST4 "SELECT attnum || ':' || attname || '=' || treatment FROM dpsynth.column_policies WHERE relid = 'typed2'::regclass")" \
	"1:a 2:b 3:c/3:b=exclude" "the restored typed table's columns are renumbered, its policy row keeps its old attnum"
q $DST4 "ALTER TYPE vt2 RENAME ATTRIBUTE b TO z CASCADE" >/dev/null
q $DST4 "ALTER TYPE vt2 RENAME ATTRIBUTE c TO w CASCADE" >/dev/null
is "$(q $DST4 "SELECT string_agg(attname || '=' || treatment, ' ') FROM dpsynth.column_policies WHERE relid = 'typed2'::regclass")" \
	"z=exclude" "ALTER TYPE ... RENAME ATTRIBUTE ... CASCADE after such a restore: the exclude follows its column (z), not the attnum (w)"
res=$(psql -X -qAt -d $DST4 -c "SELECT dp_synthesize('typed2', epsilon => 1, target => 'typed2_syn')" -c "SELECT count(z) || '/' || (count(w) > 0) FROM typed2_syn" 2>&1 | tail -n 1)
is "$res" "0/true" "and the synthetic copy leaves z NULL (excluded), w synthesized (non-NULL z / any w: $res)"
psql -X -q -d postgres -c "DROP DATABASE $DST4" >/dev/null 2>&1
# a rename of the unit column waits for a release's transaction that holds the table, and the
# release is not held up by the rename (the unit's name follows at the command's end, after the
# rename's own lock: before it, the budget row would be locked first and the charge would wait
# for it until dpsynth.charge_timeout)
psql -X -q -d $SRC >/dev/null 2>&1 <<'SQL'
CREATE TABLE lk (dept int4 NOT NULL, pid int4);
INSERT INTO lk SELECT 1 + g % 2, g FROM generate_series(1, 100) g;
SELECT dp_protect('lk', epsilon => 1e6);
SELECT dp_privacy_unit('lk', 'pid', max_rows_per_unit => 1);
SELECT dp_declare('lk', 'dept', lower => 1, upper => 2, bins => 2);
SQL
LKOUT=$(mktemp)
psql -X -qAt -d $SRC -c "BEGIN" -c "SELECT count(*) FROM lk" -c "SELECT pg_sleep(2)" \
	-c "SELECT count(*) FROM dp_marginal('lk', ARRAY['dept'], epsilon => 1)" -c "COMMIT" >"$LKOUT" 2>&1 &
LKPID=$!
sleep 0.7
t0=$(date +%s%N)
q $SRC "ALTER TABLE lk RENAME COLUMN pid TO person" >/dev/null
t1=$(date +%s%N)
wait $LKPID
lkrc=$?
is "$lkrc/$(grep -v '^$' "$LKOUT" | tr '\n' ' ')" "0/100 2 " "a release in a transaction that read the table before the rename commits"
ok "$([ $(( (t1 - t0) / 1000000 )) -lt 15000 ]; echo $?)" \
	"the rename waits only for that transaction ($(( (t1 - t0) / 1000000 )) ms; the charge timeout is 30 s)"
is "$(q $SRC "SELECT privacy_unit_name FROM dpsynth.budgets WHERE relid = 'lk'::regclass")" person "and the unit's name follows"
rm -f "$LKOUT"
psql -X -q -d postgres -c "DROP DATABASE $DST" -c "DROP DATABASE $SRC" >/dev/null 2>&1
done_testing
