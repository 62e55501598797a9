#!/usr/bin/env bash
# dpsynth.column_policies and dpsynth.domains fail closed where a row cannot be matched to its
# column for certain.
# - A dump of dpsynth 0.6.0 carries no column names in these catalogs, only attnums, and
#   pg_restore renumbers the columns after a dropped one: the rows are kept without a name (the
#   insert trigger used to name each after the column now at its old attnum, so the 'exclude' of
#   one column landed on its neighbour and the excluded column was released).  Every release is
#   refused (55000, before any charge) until the owner sets the policies and declares the domains
#   again, which replaces the unnamed row at the column's attnum, and dp_forget_unnamed removes
#   the rows left.
# - The rows of a dropped column go with it: a column later added under its name gets none of
#   them, and a restored table's rows cannot collide on the primary key (two rows moving to one
#   attnum failed every release).  Rows that a 0.7.0 dump brings for a column dropped and added
#   again are refused clearly until the owner sets the column's policy again; updating 0.7.0 in
#   place deletes them.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
SRC=dpsynth_failclosed_src
DST=dpsynth_failclosed_dst
OLD=dpsynth_failclosed_old
OLDR=dpsynth_failclosed_oldr
NOW=dpsynth_failclosed_now
NOWR=dpsynth_failclosed_nowr
REN=dpsynth_failclosed_ren
RENR=dpsynth_failclosed_renr
SIX=dpsynth_failclosed_six
SIXR=dpsynth_failclosed_sixr
ALL="$SRC $DST $OLD $OLDR $NOW $NOWR $REN $RENR $SIX $SIXR"
for d in $ALL; do psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $d" 2>/dev/null; done
current=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$TOP/dpsynth.control")
# run SQL, keep the error's lines (VERBOSITY verbose: the SQLSTATE)
err() { psql -X -qAt -v VERBOSITY=verbose -d "$1" -c "$2" 2>&1; }
spent() { q $1 "SELECT rho_spent || '/' || (SELECT count(*) FROM dpsynth.ledger WHERE status <> 'refused') FROM dpsynth.budgets WHERE relid = '$2'::regclass"; }

# ---- 1. a table of dpsynth 0.6.0 with a dropped column, dumped and restored into this version
psql -X -q -d postgres -c "CREATE DATABASE $SRC"
q $SRC "CREATE EXTENSION dpsynth VERSION '0.6.0'" >/dev/null
psql -X -q -d $SRC >/dev/null 2>&1 <<'SQL'
CREATE TABLE w (id int4 NOT NULL, junk int4, region text NOT NULL, secret text, code text);
ALTER TABLE w DROP COLUMN junk;
INSERT INTO w SELECT u, CASE WHEN u % 2 = 0 THEN 'n' ELSE 's' END, CASE WHEN u % 3 = 0 THEN 'x' ELSE 'y' END,
	CASE WHEN u % 5 = 0 THEN 'c1' ELSE 'c2' END
FROM generate_series(1, 600) u;
SELECT dp_protect('w', epsilon => 1e3);
SELECT dp_declare('w', 'region', categories => ARRAY['n', 's']), dp_declare('w', 'code', categories => ARRAY['c1', 'c2']);
SELECT dp_column_policy('w', 'secret', treatment => 'exclude');
CREATE TABLE pt (id int4 NOT NULL, junk int4, secret text, code text) PARTITION BY RANGE (id);
CREATE TABLE pt1 PARTITION OF pt FOR VALUES FROM (0) TO (1000);
ALTER TABLE pt DROP COLUMN junk;
SELECT dp_protect('pt', epsilon => 1);
SELECT dp_column_policy('pt', 'secret', treatment => 'exclude');
SQL
is "$(q $SRC "SELECT extversion || ' ' || (SELECT count(*) FROM pg_attribute WHERE attrelid = 'dpsynth.column_policies'::regclass AND attname = 'attname')
	|| ' ' || (SELECT attnum FROM dpsynth.column_policies WHERE relid = 'w'::regclass) FROM pg_extension WHERE extname = 'dpsynth'")" \
	"0.6.0 0 4" "0.6.0 keeps secret's exclude by attnum alone (4, after the dropped column)"
createdb $DST && pg_dump -Fc $SRC | pg_restore -d $DST 2>&1 | grep -v '^$' | sed 's/^/# restore: /'
is "$(q $DST "SELECT extversion FROM pg_extension WHERE extname = 'dpsynth'")" "$current" "the dump restores into $current"
is "$(q $DST "SELECT attnum FROM pg_attribute WHERE attrelid = 'w'::regclass AND attname = 'code'")" 4 \
	"after the restore, attnum 4 is code"
is "$(q $DST "SELECT (SELECT string_agg(attnum || coalesce(attname, '?'), ' ' ORDER BY attnum) FROM dpsynth.column_policies WHERE relid = 'w'::regclass)
	|| ' / ' || (SELECT string_agg(attnum || coalesce(attname, '?'), ' ' ORDER BY attnum) FROM dpsynth.domains WHERE relid = 'w'::regclass)")" \
	"4? / 3? 5?" "the restored rows are kept without a name, not named after the column now at their attnum"
is "$(q $DST "SELECT count(*) FROM dp_column_policies WHERE table_name = 'w'::regclass")" 0 \
	"dp_column_policies shows an unnamed policy under no column"

out=$(err $DST "SELECT * FROM dp_marginal('w', ARRAY['secret'], 1)")
is "$(echo "$out" | grep -o '^ERROR:  55000: table public.w has column policies or domains restored without their column names')" \
	"ERROR:  55000: table public.w has column policies or domains restored without their column names" \
	"a marginal of secret (whose exclude was at attnum 4) is refused (55000)"
is "$(echo "$out" | grep -c '^DETAIL:  .*policies at attnums 4 (exclude); domains at attnums 3 (categories), 5 (categories)).*Nothing was charged')" 1 \
	"the detail names the attnums and what their rows hold, and says nothing was charged"
is "$(echo "$out" | grep -c "^HINT:  Set the policy (dp_column_policy) and declare the domain (dp_declare) of each column again.*dp_forget_unnamed('public.w')")" 1 \
	"the hint says how to repair"
is "$(err $DST "SELECT * FROM dp_marginal('w', ARRAY['region'], 1)" | grep -c '^ERROR:  55000: table public.w has column policies or domains restored')" 1 \
	"a marginal of any other column is refused alike"
is "$(err $DST "SELECT 1 FROM dp_synthesize('w', 5, target => 'w_syn')" | grep -c '^ERROR:  55000: table public.w has column policies or domains restored')" 1 \
	"a synthesis is refused"
is "$(err $DST "SELECT * FROM dp_discover('w', 1)" | grep -c '^ERROR:  55000: table public.w has column policies or domains restored')" 1 \
	"a discovery is refused"
is "$(spent $DST w)" "0/0" "nothing was charged"

is "$(err $DST "ALTER TABLE pt DETACH PARTITION pt1" | grep -c '^ERROR:  55000: table public.pt has column policies or domains restored without their column names')" 1 \
	"a partition is not detached from such a table (its copy of the policies would guess their columns)"
q $DST "SELECT dp_column_policy('pt', 'secret', treatment => 'exclude')" >/dev/null 2>&1
q $DST "SELECT dp_forget_unnamed('pt')" >/dev/null 2>&1
q $DST "ALTER TABLE pt DETACH PARTITION pt1" >/dev/null 2>&1
is "$(q $DST "SELECT string_agg(column_name || '=' || treatment, ' ') FROM dp_column_policies WHERE table_name = 'pt1'::regclass")" \
	'secret=exclude' "declared again, the detached partition takes the policy of its column"
q $DST "DROP TABLE pt, pt1" >/dev/null

# the repair: declare again; the unnamed row at a declared column's attnum is replaced
q $DST "SELECT dp_column_policy('w', 'secret', treatment => 'exclude')" >/dev/null
q $DST "SELECT dp_declare('w', 'region', categories => ARRAY['n', 's'])" >/dev/null
q $DST "SELECT dp_declare('w', 'code', categories => ARRAY['c1', 'c2'])" >/dev/null
out=$(err $DST "SELECT dp_declare('w', 'secret', categories => ARRAY['x', 'y'])")
is "$(echo "$out" | grep -o '^WARNING:  01000: the domain of column "secret" of table public.w replaces one restored without its column.s name (categories)')" \
	'WARNING:  01000: the domain of column "secret" of table public.w replaces one restored without its column'"'"'s name (categories)' \
	"a declaration that replaces an unnamed row warns that it may have been another column's"
is "$(q $DST "SELECT (SELECT string_agg(attnum || coalesce(attname, '?'), ' ' ORDER BY attnum) FROM dpsynth.column_policies)
	|| ' / ' || (SELECT string_agg(attnum || coalesce(attname, '?'), ' ' ORDER BY attnum) FROM dpsynth.domains)")" \
	"3secret 4? / 2region 3secret 4code 5?" "a declaration replaces the unnamed row at its column's attnum, and only that one"
is "$(err $DST "SELECT * FROM dp_marginal('w', ARRAY['region'], 1)" | grep -c 'DETAIL:  .*(policies at attnums 4 (exclude); domains at attnums 5 (categories))')" 1 \
	"releases stay refused while an unnamed row is left"
out=$(psql -X -qAt -v VERBOSITY=verbose -d $DST -c "SELECT dp_forget_unnamed('w')" 2>&1)
is "$(echo "$out" | tail -n 1)" 2 "the owner forgets the two unnamed rows left"
is "$(echo "$out" | grep -c '^WARNING:  01000: removed 1 column policies and 1 domains restored without their column names from table public.w')" 1 \
	"with a warning"
is "$(echo "$out" | grep -c '^DETAIL:  policies at attnums 4 (exclude); domains at attnums 5 (categories)\.$')" 1 \
	"that lists the attnums and what each row held"
is "$(q $DST "SELECT (SELECT count(*) FROM dpsynth.column_policies) || ' ' || (SELECT count(*) FROM dpsynth.domains)")" \
	"1 3" "the declared ones stay"
out=$(err $DST "SELECT * FROM dp_marginal('w', ARRAY['secret'], 1)")
is "$(echo "$out" | grep -c 'column "secret" of table "w" is excluded from releases')" 1 "secret is excluded again"
is "$(q $DST "SELECT string_agg(cell[1], ',' ORDER BY cell[1]) FROM dp_marginal('w', ARRAY['code'], 1)")" \
	'c1,c2' "code is released"
q $DST "SELECT 1 FROM dp_synthesize('w', 5, target => 'w_syn')" >/dev/null 2>&1
is "$(q $DST "SELECT count(*) > 0 AND count(secret) = 0 AND count(code) > 0 FROM w_syn")" t \
	"a synthetic copy leaves secret NULL"
ensure_analyst $DST regress_failclosed_analyst
q $DST "INSERT INTO dpsynth.column_policies (relid, attnum, treatment, set_by) VALUES ('w', 2, 'exclude', 10)" >/dev/null
is "$(psql -X -qAt -v VERBOSITY=verbose -U regress_failclosed_analyst -d $DST -c "SELECT dp_forget_unnamed('w')" 2>&1 | grep -c '^ERROR:  42501')" 1 \
	"another role may not forget them (42501)"
is "$(err $DST "SELECT dpsynth._rows_by_name('w'::regclass, 'dpsynth.budgets')" | grep -c '^ERROR:  XX000: dpsynth._rows_by_name: dpsynth.budgets is not a per-column catalog')$(
	err $DST "SELECT dpsynth._row_for_column('w'::regclass, 'dpsynth.budgets', 1::int2, 'id')" | grep -c '^ERROR:  XX000: dpsynth._row_for_column: dpsynth.budgets is not')" \
	11 "an internal call on another catalog is an internal error (XX000)"

# ---- 2. a column dropped here: its rows go with it
psql -X -q -d postgres -c "CREATE DATABASE $NOW"
q $NOW "CREATE EXTENSION dpsynth" >/dev/null
psql -X -q -d $NOW >/dev/null 2>&1 <<'SQL'
CREATE TABLE d (id int4 NOT NULL, x int4, y text NOT NULL, b text);
ALTER TABLE d DROP COLUMN x;
INSERT INTO d SELECT u, CASE WHEN u % 2 = 0 THEN 'p' ELSE 'q' END, 'b' || u % 3 FROM generate_series(1, 400) u;
SELECT dp_protect('d', epsilon => 1e3);
SELECT dp_column_policy('d', 'b', treatment => 'exclude');
SELECT dp_declare('d', 'b', categories => ARRAY['b0', 'b1', 'b2']);
SELECT dp_declare('d', 'y', categories => ARRAY['p', 'q']);
CREATE TABLE kid (id int4 NOT NULL, b text);
CREATE TABLE kid1 (extra int4) INHERITS (kid);
SELECT dp_protect('kid1', epsilon => 1);
SELECT dp_column_policy('kid1', 'b', treatment => 'exclude');
SQL
q $NOW "ALTER TABLE d DROP COLUMN b" >/dev/null
is "$(q $NOW "SELECT (SELECT count(*) FROM dpsynth.column_policies WHERE relid = 'd'::regclass) || ' ' ||
	(SELECT count(*) FROM dpsynth.domains WHERE relid = 'd'::regclass)")" "0 1" "a dropped column's policy and domain go with it"
q $NOW "ALTER TABLE kid DROP COLUMN b" >/dev/null
is "$(q $NOW "SELECT count(*) FROM dpsynth.column_policies WHERE relid = 'kid1'::regclass")" 0 \
	"so do those of a column dropped through its parent"
q $NOW "ALTER TABLE d ADD COLUMN b text" >/dev/null
q $NOW "UPDATE d SET b = 'n' || id % 2" >/dev/null
# a row the drop left (event triggers disabled, or restored data-only into this table): at the
# dropped column's attnum, named after the column added since; it is not moved onto it
q $NOW "INSERT INTO dpsynth.column_policies (relid, attnum, treatment, set_by, attname) VALUES ('d', 4, 'exclude', 10, 'b')" >/dev/null
is "$(err $NOW "SELECT * FROM dp_marginal('d', ARRAY['y'], 1)" | grep -o '^ERROR:  55000: table public.d has a column policy for column "b" at another attnum')" \
	'ERROR:  55000: table public.d has a column policy for column "b" at another attnum' \
	"a row at a dropped column's attnum named after a live column is refused, not given to it"
q $NOW "SELECT dp_column_policy('d', 'b', treatment => 'identifier')" >/dev/null
is "$(q $NOW "SELECT string_agg(attnum || attname || '=' || treatment, ' ') FROM dpsynth.column_policies WHERE relid = 'd'::regclass")" \
	'5b=identifier' "setting the column's policy replaces it"
createdb $NOWR && pg_dump -Fc $NOW | pg_restore -d $NOWR 2>&1 | grep -v '^$' | sed 's/^/# restore: /'
is "$(q $NOWR "SELECT string_agg(cell[1], ',' ORDER BY cell[1]) FROM dp_marginal('d', ARRAY['y'], 1)")" 'p,q' \
	"after a restore, a release works (no two rows move to one attnum)"
is "$(q $NOWR "SELECT string_agg(column_name || '=' || treatment, ' ') FROM dp_column_policies WHERE table_name = 'd'::regclass")" \
	'b=identifier' "the column added again keeps its own policy"

# ---- 3. rows of a column dropped and added again under 0.7.0: refused after a restore, deleted by the update
psql -X -q -d postgres -c "CREATE DATABASE $OLD"
q $OLD "CREATE EXTENSION dpsynth VERSION '0.7.0'" >/dev/null
psql -X -q -d $OLD >/dev/null 2>&1 <<'SQL'
CREATE TABLE d (id int4 NOT NULL, x int4, y text NOT NULL, b text);
ALTER TABLE d DROP COLUMN x;
INSERT INTO d SELECT u, CASE WHEN u % 2 = 0 THEN 'p' ELSE 'q' END, 'b' || u % 3 FROM generate_series(1, 400) u;
SELECT dp_protect('d', epsilon => 1e3);
SELECT dp_declare('d', 'y', categories => ARRAY['p', 'q']);
SELECT dp_column_policy('d', 'b', treatment => 'exclude');
ALTER TABLE d DROP COLUMN b;
ALTER TABLE d ADD COLUMN b text;
SELECT dp_column_policy('d', 'b', treatment => 'identifier');
SQL
is "$(q $OLD "SELECT string_agg(attnum || attname, ' ' ORDER BY attnum) FROM dpsynth.column_policies")" "4b 5b" \
	"0.7.0 keeps the dropped column's row"
createdb $OLDR && pg_dump -Fc $OLD | pg_restore -d $OLDR 2>&1 | grep -v '^$' | sed 's/^/# restore: /'
out=$(err $OLDR "SELECT * FROM dp_marginal('d', ARRAY['y'], 1)")
is "$(echo "$out" | grep -o '^ERROR:  55000: table public.d has 2 column policies for column "b"')" \
	'ERROR:  55000: table public.d has 2 column policies for column "b"' "two rows for one column are refused (55000), not a key violation"
is "$(echo "$out" | grep -c "^HINT:  Set the policy of column \"b\" again (dp_column_policy)")" 1 "with a hint"
is "$(spent $OLDR d)" "0/0" "nothing was charged"
q $OLDR "SELECT dp_column_policy('d', 'b', treatment => 'identifier')" >/dev/null
is "$(q $OLDR "SELECT string_agg(cell[1], ',' ORDER BY cell[1]) FROM dp_marginal('d', ARRAY['y'], 1)")" 'p,q' \
	"set again, the column has one policy and releases work"
is "$(q $OLDR "SELECT string_agg(attnum || attname || '=' || treatment, ' ') FROM dpsynth.column_policies")" '3b=identifier' \
	"at its attnum"
q $OLD "ALTER EXTENSION dpsynth UPDATE" >/dev/null
is "$(q $OLD "SELECT string_agg(attnum || attname, ' ' ORDER BY attnum) FROM dpsynth.column_policies")" "5b" \
	"the update deletes the row of the column dropped in place"
is "$(q $OLD "SELECT string_agg(cell[1], ',' ORDER BY cell[1]) FROM dp_marginal('d', ARRAY['y'], 1)")" 'p,q' \
	"and releases work after the update"

# ---- 4. DDL on a restored table before anything brought its rows back to their names (no
# post-data ALTER TABLE: no primary key), the rows still at their old attnums
psql -X -q -d postgres -c "CREATE DATABASE $REN"
q $REN "CREATE EXTENSION dpsynth" >/dev/null
psql -X -q -d $REN >/dev/null 2>&1 <<'SQL'
CREATE TABLE a (id int4 NOT NULL, junk int4, c text, d text);
CREATE TABLE r (id int4 NOT NULL, junk int4, c text, d text);
ALTER TABLE a DROP COLUMN junk;
ALTER TABLE r DROP COLUMN junk;
INSERT INTO a SELECT u, 'c' || u % 2, 'd' || u % 2 FROM generate_series(1, 400) u;
INSERT INTO r SELECT u, 'c' || u % 2, 'd' || u % 2 FROM generate_series(1, 400) u;
SELECT dp_protect('a', epsilon => 5, selection_delta => 1e-7), dp_protect('r', epsilon => 5, selection_delta => 1e-7);
SELECT dp_column_policy('a', 'c', treatment => 'exclude'), dp_column_policy('r', 'c', treatment => 'exclude');
CREATE TABLE p (id int4 NOT NULL, junk int4, c text);
CREATE TABLE k (extra text) INHERITS (p);
ALTER TABLE p DROP COLUMN junk;
INSERT INTO k SELECT u, 'c' || u % 2, 'x' || u % 2 FROM generate_series(1, 400) u;
SELECT dp_protect('k', epsilon => 5, selection_delta => 1e-7);
SELECT dp_column_policy('k', 'c', treatment => 'exclude');
SQL
createdb $RENR && pg_dump -Fc $REN | pg_restore -d $RENR 2>&1 | grep -v '^$' | sed 's/^/# restore: /'
is "$(q $RENR "SELECT string_agg(p.relid::regclass || ':' || p.attnum || p.attname || '/' || a.attname, ' ' ORDER BY p.relid::regclass::text)
	FROM dpsynth.column_policies p JOIN pg_attribute a ON a.attrelid = p.relid AND a.attnum = p.attnum")" \
	"a:3c/d k:3c/extra r:3c/d" "restored, c's exclude is still at its old attnum, now another column's"
# 1a: DROP COLUMN d (at c's old attnum) leaves c's exclude
q $RENR "ALTER TABLE a DROP COLUMN d" >/dev/null
is "$(q $RENR "SELECT string_agg(attname || '=' || treatment, ' ') FROM dpsynth.column_policies WHERE relid = 'a'::regclass")" \
	"c=exclude" "dropping the column at c's old attnum leaves c's exclude"
is "$(err $RENR "SELECT * FROM dp_marginal('a', ARRAY['c'], 1)" | grep -c '^ERROR:  .*\(excluded from releases\|at another attnum\)')" 1 \
	"a marginal of c is refused after DROP COLUMN d"
is "$(spent $RENR a)" "0/0" "nothing was charged"
# 2: RENAME c (a restored table, and through a parent to a restored child)
q $RENR "ALTER TABLE r RENAME c TO e" >/dev/null
is "$(err $RENR "SELECT * FROM dp_marginal('r', ARRAY['e'], 1)" | grep -c '^ERROR:  .*column "e" of table "r" is excluded from releases')" 1 \
	"a marginal of c renamed to e is refused: its exclude followed the rename"
q $RENR "ALTER TABLE p RENAME c TO e" >/dev/null
is "$(err $RENR "SELECT * FROM dp_marginal('k', ARRAY['e'], 1)" | grep -c '^ERROR:  .*column "e" of table "k" is excluded from releases')" 1 \
	"so does that of a child's column renamed through its parent"
q $RENR "ALTER TABLE r DROP COLUMN d" >/dev/null
is "$(q $RENR "SELECT string_agg(relid::regclass || ':' || attnum || attname || '=' || treatment, ' ' ORDER BY relid::regclass::text)
	FROM dpsynth.column_policies WHERE relid IN ('r'::regclass, 'k'::regclass)")" \
	"k:2e=exclude r:2e=exclude" "both at their columns' attnums, named after them"
is "$(spent $RENR r)/$(spent $RENR k)" "0/0/0/0" "nothing was charged"

# 1b: a dump of 0.6.0 (unnamed rows): DROP COLUMN of the column now at the exclude's attnum
psql -X -q -d postgres -c "CREATE DATABASE $SIX"
q $SIX "CREATE EXTENSION dpsynth VERSION '0.6.0'" >/dev/null
psql -X -q -d $SIX >/dev/null 2>&1 <<'SQL'
CREATE TABLE w (id int4 NOT NULL, junk int4, secret text, code text);
ALTER TABLE w DROP COLUMN junk;
INSERT INTO w SELECT u, 's' || u % 2, 'k' || u % 2 FROM generate_series(1, 400) u;
SELECT dp_protect('w', epsilon => 5, selection_delta => 1e-7);
SELECT dp_column_policy('w', 'secret', treatment => 'exclude');
SQL
createdb $SIXR && pg_dump -Fc $SIX | pg_restore -d $SIXR 2>&1 | grep -v '^$' | sed 's/^/# restore: /'
q $SIXR "ALTER TABLE w DROP COLUMN code" >/dev/null
is "$(q $SIXR "SELECT string_agg(attnum || coalesce(attname, '?') || '=' || treatment, ' ') FROM dpsynth.column_policies")" \
	"3?=exclude" "dropping the column at the unnamed exclude's attnum leaves the exclude"
is "$(err $SIXR "SELECT * FROM dp_marginal('w', ARRAY['secret'], 1)" | grep -c '^ERROR:  55000: table public.w has column policies or domains restored without their column names')" 1 \
	"a marginal of secret is still refused (55000)"
is "$(spent $SIXR w)" "0/0" "nothing was charged"

[ -n "${KEEP:-}" ] || for d in $ALL; do psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $d" >/dev/null 2>&1; done
done_testing
