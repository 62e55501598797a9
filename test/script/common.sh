#!/usr/bin/env bash
# Shared by the script tests: TAP helpers and a fresh database with dpsynth.  Expects PGHOST,
# PGPORT and PGUSER of a running throwaway cluster (scripts/test exports them).
set -uo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$TOP/scripts/lib.sh"
set +e
: "${PGHOST:?run through scripts/test, or export PGHOST/PGPORT of a running cluster}"
export DATADIR=${DATADIR:-$PGHOST/data}

tap_n=0
tap_failed=0
ok() {
	tap_n=$((tap_n + 1))
	if [ "$1" = 0 ]; then echo "ok $tap_n - $2"; else echo "not ok $tap_n - $2"; tap_failed=$((tap_failed + 1)); fi
}
is() { [ "$1" = "$2" ]; ok $? "$3 (got '$1', want '$2')"; }
done_testing() { echo "1..$tap_n"; [ $tap_failed -eq 0 ]; }

# q DB SQL: one value, no decoration
q() { psql -X -qAt -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }

fresh_db() {
	local db=$1
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" 2>/dev/null
	psql -X -q -d postgres -c "CREATE DATABASE $db"
	psql -X -q -d "$db" -c "CREATE EXTENSION dpsynth"
}

# ensure_analyst DB ROLE: a login role in dpsynth_analyst (roles are cluster-wide: kept if it exists)
ensure_analyst() {
	psql -X -q -d "$1" -c "DO \$\$ BEGIN
		IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$2') THEN
			CREATE ROLE $2 LOGIN IN ROLE dpsynth_analyst;
		END IF;
	END \$\$" >/dev/null 2>&1
}
