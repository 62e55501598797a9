#!/usr/bin/env bash
# ALTER EXTENSION dpsynth UPDATE from 0.1.0: budgets, spent, the ledger, domains, policies, role
# limits and models are intact and working afterwards, what 0.1.0 let in and 0.2.0 refuses (a
# temporary table's orphaned protection) is cleaned up, and the updated extension is the same,
# object for object, as a fresh install of the current version.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_upgrade
FRESH=dpsynth_upgrade_fresh
for d in $DB $FRESH; do psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $d" 2>/dev/null; done
psql -X -q -d postgres -c "CREATE DATABASE $DB" -c "CREATE DATABASE $FRESH"
q $FRESH "CREATE EXTENSION dpsynth" >/dev/null
current=$(q $FRESH "SELECT extversion FROM pg_extension WHERE extname = 'dpsynth'")
q $DB "CREATE EXTENSION dpsynth VERSION '0.1.0'" >/dev/null
is "$(q $DB "SELECT extversion FROM pg_extension WHERE extname = 'dpsynth'")" 0.1.0 "0.1.0 installs"

# Fill 0.1.0's catalog through its own functions.
ensure_analyst $DB regress_upgrade_analyst
psql -X -q -d $DB >/dev/null 2>&1 <<'SQL'
CREATE TABLE t (g text NOT NULL, n int NOT NULL, secret text);
INSERT INTO t SELECT (ARRAY['a', 'b', 'c'])[1 + i % 3], i % 40, 'x' || i FROM generate_series(1, 2000) i;
SELECT dp_protect('t', epsilon => 5, selection_delta => 1e-5);
SELECT dp_declare('t', 'n', lower => 0, upper => 39, bins => 4);
SELECT dp_column_policy('t', 'secret', treatment => 'exclude');
SELECT dp_limit_role('t', 'regress_upgrade_analyst', epsilon => 4);
SELECT model_id FROM dp_synthesize('t', epsilon => 1, target => 'copy1');
SQL
psql -X -qAt -U regress_upgrade_analyst -d $DB >/dev/null 2>&1 <<'SQL'
SELECT count(*) FROM dp_marginal('t', ARRAY['g'], epsilon => 0.5);
SELECT count(*) FROM dp_marginal('t', ARRAY['n'], epsilon => 50);
-- 0.1.0 let an analyst protect a temporary table; its row outlived the session
CREATE TEMP TABLE bait (x int);
SELECT dp_protect('bait', epsilon => 1000);
SQL
before=$(q $DB "SELECT rho_spent || ' ' || delta_spent || ' ' || (SELECT count(*) FROM dpsynth.ledger) || ' '
		|| (SELECT count(*) FROM dpsynth.domains) || ' ' || (SELECT count(*) FROM dpsynth.column_policies) || ' '
		|| (SELECT count(*) FROM dpsynth.role_limits) || ' ' || (SELECT count(*) FROM dpsynth.models)
		FROM dpsynth.budgets WHERE relid = 't'::regclass")
model=$(q $DB "SELECT max(id) FROM dpsynth.models")
q $DB "SELECT rows_written FROM dp_sample($model, seed => 7, target => 'sample_before')" >/dev/null
sample_before=$(q $DB "SELECT md5(string_agg(s::text, ';' ORDER BY s::text)) FROM sample_before s")
echo "# before: spent, delta spent, ledger, domains, policies, limits, models: $before"
is "$(q $DB "SELECT count(*) FROM dpsynth.budgets")" 2 "0.1.0 kept the temporary table's protection (the hole)"
ok "$([ -n "$model" ] && [ "$(q $DB "SELECT count(*) FROM dpsynth.domains WHERE source = 'dp'")" = 1 ]; echo $?)" \
	"0.1.0 released a model and discovered a domain"

q $DB "ALTER EXTENSION dpsynth UPDATE" >/dev/null
is "$(q $DB "SELECT extversion FROM pg_extension WHERE extname = 'dpsynth'")" "$current" "ALTER EXTENSION UPDATE reaches $current"
after=$(q $DB "SELECT rho_spent || ' ' || delta_spent || ' ' || (SELECT count(*) FROM dpsynth.ledger) || ' '
		|| (SELECT count(*) FROM dpsynth.domains) || ' ' || (SELECT count(*) FROM dpsynth.column_policies) || ' '
		|| (SELECT count(*) FROM dpsynth.role_limits) || ' ' || (SELECT count(*) FROM dpsynth.models)
		FROM dpsynth.budgets WHERE relid = 't'::regclass")
is "$after" "$before" "budget, spent, ledger, domains, policies, limits and models are intact"
is "$(q $DB "SELECT string_agg(relname, ',') FROM dpsynth.budgets")" "public.t" \
	"the temporary table's orphaned protection is gone; t's row names its table"
q $DB "SELECT rows_written FROM dp_sample($model, seed => 7, target => 'sample_after')" >/dev/null
is "$(q $DB "SELECT md5(string_agg(s::text, ';' ORDER BY s::text)) FROM sample_after s")" "$sample_before" \
	"the stored model samples the same rows"
spent=$(q $DB "SELECT rho_spent FROM dpsynth.budgets")
is "$(psql -X -qAt -U regress_upgrade_analyst -d $DB -c "SELECT count(*) FROM dp_marginal('t', ARRAY['g', 'n'], epsilon => 0.5)")" 16 \
	"releases work after the update (4 x 4 cells)"
is "$(q $DB "SELECT rho_spent > $spent AND rho_spent = (SELECT sum(rho) FROM dpsynth.ledger WHERE status <> 'refused') FROM dpsynth.budgets")" t \
	"and are charged; spent equals the ledger's sum"
psql -X -qAt -U regress_upgrade_analyst -d $DB -c "SELECT count(*) FROM dp_marginal('t', ARRAY['n'], epsilon => 50)" >/dev/null 2>&1
is "$(q $DB "SELECT attempts FROM dpsynth.refusals")" 1 "refusals are counted after the update"
is "$(q $DB "SELECT count(*) FROM (SELECT dp_limit_role('t', 'regress_upgrade_analyst', NULL)) s")" 1 "owner functions work"
drop_msg=$(q $DB "DROP EXTENSION dpsynth" 2>&1)
ok "$(grep -q 'would delete every privacy budget' <<<"$drop_msg"; echo $?)" "the updated extension refuses to be dropped"

# The updated extension is, object for object, a fresh install of the current version
# (catalog and same_catalog: test/script/common.sh).
ok "$([ "$(catalog $FRESH | grep -c '^fn ')" -gt 0 ]; echo $?)" "the catalog lists the extension's functions"
same_catalog $DB $FRESH "the updated catalog equals a fresh install's"

q $DB "SET dpsynth.allow_drop_extension = on; DROP EXTENSION dpsynth" >/dev/null
psql -X -q -d postgres -c "DROP DATABASE $DB" -c "DROP DATABASE $FRESH"
done_testing
