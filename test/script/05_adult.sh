#!/usr/bin/env bash
# The real Adult table (data/adult, 32,561 rows): every column gets a domain, with the owner's
# domain.json declared, and with nothing declared at all (DP discovery, charged).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_adult
fresh_db $DB
dp_load_adult $DB
cols="age workclass fnlwgt education education_num marital_status occupation relationship race sex capital_gain capital_loss hours_per_week native_country income"

# 1. Declared: the owner's domain.json.
psql -X -q -d $DB -v domain="$(cat "$TOP/data/adult/domain.json")" >/dev/null 2>&1 <<'SQL'
SELECT dp_protect('adult', epsilon => 100);
SELECT dp_declare('adult', :'domain'::jsonb);
SQL
is "$(q $DB "SELECT count(*) FROM dp_domains WHERE source = 'declared'")" 15 "domain.json declares all 15 columns"
bad=0
for c in $cols; do
	t=$(q $DB "SELECT abs(sum(noisy_count) - 32561) < 400 FROM dp_marginal('adult', ARRAY['$c'], epsilon => 2)")
	[ "$t" = t ] || { bad=$((bad + 1)); echo "# $c: total off"; }
done
# each marginal's total noise has sd sqrt(cells * sigma^2) <= sqrt(42 * 0.9) < 7: 400 is > 50 sd
is "$bad" 0 "every declared 1-way marginal adds up to the row count (within 50 sd of noise)"
is "$(q $DB "SELECT noisy_count > 5000 FROM dp_marginal('adult', ARRAY['workclass'], epsilon => 2) WHERE cell[1] IS NULL")" f \
	"'?' loaded as NULL: workclass's NULL cell holds the 1,836 missing values, not thousands more"

# 2. Nothing declared: DP discovery on every column, charged to the calls.
psql -X -q -d $DB -c "DROP TABLE adult" >/dev/null
dp_load_adult $DB
psql -X -q -d $DB -c "SELECT dp_protect('adult', epsilon => 100, selection_delta => 1e-6)" >/dev/null 2>&1
for c in $cols; do
	q $DB "SELECT count(*) FROM dp_marginal('adult', ARRAY['$c'], epsilon => 2)" >/dev/null || echo "# $c failed"
done
is "$(q $DB "SELECT count(*) FROM dp_domains WHERE source = 'dp' AND ledger_id IS NOT NULL")" 15 "all 15 columns discovered, each with the ledger row that paid"
is "$(q $DB "SELECT count(*) FROM dp_domains WHERE kind = 'categories'")" 9 "9 text columns by partition selection"
# The big categories are certainly released (counts in the thousands vs a threshold in the hundreds)
is "$(q $DB "SELECT categories @> ARRAY['HS-grad','Some-college','Bachelors'] FROM dp_domains WHERE column_name = 'education'")" t "education's frequent values are released"
is "$(q $DB "SELECT categories @> ARRAY['Male','Female'] FROM dp_domains WHERE column_name = 'sex'")" t "both sexes are released"
# age is 17..90: the discovered bounds cover the bulk (its 0.1% and 99.9% points are 17 and 90 or so)
is "$(q $DB "SELECT lower BETWEEN 10 AND 20 AND upper BETWEEN 64 AND 100 FROM dp_domains WHERE column_name = 'age'")" t "age bounds are sensible"
is "$(q $DB "SELECT bool_and(rho > 0) AND count(*) = 15 FROM dpsynth.ledger WHERE relid = 'adult'::regclass")" t "15 charged calls on the new table"
is "$(q $DB "SELECT delta_total <= delta + selection_delta FROM dp_budget")" t "the selection delta stays within what the owner set aside"
psql -X -q -d postgres -c "DROP DATABASE $DB"
done_testing
