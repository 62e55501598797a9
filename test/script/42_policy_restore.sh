#!/usr/bin/env bash
# Column policies (dpsynth.column_policies) follow their columns through pg_dump / pg_restore and
# renames.  They were keyed by attnum alone, and pg_restore renumbers the columns that follow a
# dropped one: after a restore, the 'exclude' of a column the owner never wants released landed
# on the next column, and the excluded column was synthesized and released.  They keep their
# column's name now; a policy whose column name is gone is refused where another column holds its
# attnum (fail closed: the column there is released neither under it nor without it).  A
# partition detached from a restored table copies the policies by name.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
SRC=dpsynth_policy_restore_src
DST=dpsynth_policy_restore_dst
fresh_db $SRC
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DST" 2>/dev/null
psql -X -q -d $SRC >/dev/null 2>&1 <<'SQL'
CREATE TABLE w (id int4 NOT NULL, junk int4, region text NOT NULL, secret text, code text);
ALTER TABLE w DROP COLUMN junk;
INSERT INTO w SELECT u, CASE WHEN u % 2 = 0 THEN 'n' ELSE 's' END, CASE WHEN u % 3 = 0 THEN 'x' ELSE 'y' END,
	CASE WHEN u % 5 = 0 THEN 'c1' ELSE 'c2' END
FROM generate_series(1, 600) u;
SELECT dp_protect('w', epsilon => 1e3);
SELECT dp_declare('w', 'region', categories => ARRAY['n', 's']), dp_declare('w', 'secret', categories => ARRAY['x', 'y']),
	   dp_declare('w', 'code', categories => ARRAY['c1', 'c2']);
SELECT dp_column_policy('w', 'id', treatment => 'identifier');
SELECT dp_column_policy('w', 'secret', treatment => 'exclude');
CREATE TABLE pt (id int4 NOT NULL, junk int4, secret text, code text) PARTITION BY RANGE (id);
CREATE TABLE pt1 PARTITION OF pt FOR VALUES FROM (0) TO (1000);
ALTER TABLE pt DROP COLUMN junk;
INSERT INTO pt SELECT u, 'x', 'c1' FROM generate_series(1, 10) u;
SELECT dp_protect('pt', epsilon => 1);
SELECT dp_column_policy('pt', 'secret', treatment => 'exclude');
SQL
policies() { q $1 "SELECT string_agg(column_name || '=' || treatment, ' ' ORDER BY column_name) FROM dp_column_policies WHERE table_name = 'w'::regclass"; }
is "$(policies $SRC)" 'id=identifier secret=exclude' "before the dump, secret is excluded"
is "$(q $SRC "SELECT attnum FROM dpsynth.column_policies WHERE relid = 'w'::regclass AND treatment = 'exclude'")" 4 "at attnum 4 (after the dropped column)"

createdb $DST && pg_dump -Fc $SRC | pg_restore -d $DST 2>&1 | grep -v '^$' | sed 's/^/# restore: /'
is "$(q $DST "SELECT attnum FROM pg_attribute WHERE attrelid = 'w'::regclass AND attname = 'code'")" 4 \
	"after the restore, attnum 4 is code"
is "$(policies $DST)" 'id=identifier' "before any call, dp_column_policies shows no policy under another column"
# a partition detached before any call takes the policy of the parent's column of that name
q $DST "ALTER TABLE pt DETACH PARTITION pt1" 2>&1 | grep -v '^NOTICE:  table public.pt1 leaves'
is "$(q $DST "SELECT string_agg(column_name || '=' || treatment, ' ') FROM dp_column_policies WHERE table_name = 'pt1'::regclass")" \
	'secret=exclude' "a detached partition's copy of the policies follows the names"
q $DST "DROP TABLE pt, pt1" >/dev/null
out=$(psql -X -qAt -v VERBOSITY=verbose -d $DST -c "SELECT * FROM dp_marginal('w', ARRAY['secret'], 1)" 2>&1)
is "$(echo "$out" | grep -c 'column "secret" of table "w" is excluded from releases')" 1 \
	"a marginal of the excluded column is refused after the restore"
is "$(q $DST "SELECT string_agg(cell[1], ',' ORDER BY cell[1]) FROM dp_marginal('w', ARRAY['code'], 1)")" \
	'c1,c2' "the column after it (at its old attnum) is released as before"
is "$(policies $DST)" 'id=identifier secret=exclude' "the release brought the policy back to its column"
is "$(q $DST "SELECT string_agg(p.attnum || p.attname, ' ' ORDER BY p.attnum) FROM dpsynth.column_policies p")" \
	'1id 3secret' "at the restored attnums"
q $DST "SELECT 1 FROM dp_synthesize('w', 5, target => 'w_syn')" 2>&1 | grep -v '^1$'
is "$(q $DST "SELECT count(*) > 0 AND count(secret) = 0 AND count(code) > 0 AND count(region) = count(*) FROM w_syn")" \
	t "a synthetic copy leaves secret NULL and synthesizes code and region"

# renames are followed; a column given the old name is not excluded
q $DST "ALTER TABLE w RENAME COLUMN secret TO hidden" >/dev/null
q $DST "ALTER TABLE w RENAME COLUMN code TO secret" >/dev/null
is "$(policies $DST)" 'hidden=exclude id=identifier' "the policy follows a rename, not the old name"
out=$(psql -X -qAt -d $DST -c "SELECT * FROM dp_marginal('w', ARRAY['hidden'], 1)" 2>&1)
is "$(echo "$out" | grep -c 'column "hidden" of table "w" is excluded from releases')" 1 "the renamed column stays excluded"

# a policy whose column name is gone is refused where another column holds its attnum, before
# anything is charged: an 'exclude' that lost its column lets no other column out in its place
q $DST "UPDATE dpsynth.column_policies SET attname = 'gone' WHERE attname = 'hidden'" >/dev/null
spent=$(q $DST "SELECT rho_spent FROM dpsynth.budgets")
out=$(psql -X -qAt -v VERBOSITY=verbose -d $DST -c "SELECT * FROM dp_marginal('w', ARRAY['hidden'], 1)" 2>&1)
is "$(echo "$out" | grep -o 'ERROR:  55000: the column policy stored for column "hidden" of table "w" was set for column "gone"')" \
	'ERROR:  55000: the column policy stored for column "hidden" of table "w" was set for column "gone"' \
	"a stale policy is refused (55000)"
is "$(echo "$out" | grep -c 'HINT:  Set the policy of column "hidden" again')" 1 "with a hint to set it again"
out=$(psql -X -qAt -d $DST -c "SELECT 1 FROM dp_synthesize('w', 5, target => 'w_syn2')" 2>&1)
is "$(echo "$out" | grep -c 'the column policy stored for column "hidden"')" 1 "a synthesis is refused alike"
is "$(q $DST "SELECT rho_spent FROM dpsynth.budgets")" "$spent" "and nothing was charged"
q $DST "SELECT dp_column_policy('w', 'hidden', treatment => 'exclude')" >/dev/null
is "$(policies $DST)" 'hidden=exclude id=identifier' "set again, the policy is the column's"
psql -X -q -d postgres -c "DROP DATABASE $DST" -c "DROP DATABASE $SRC" >/dev/null 2>&1
done_testing
