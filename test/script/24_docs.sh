#!/usr/bin/env bash
# The README is the manual, and this keeps it true (test/script/docs_check.py says how):
# - every function, view, role and setting that the installed extension defines has an entry in
#   README.md's reference (the internal dpsynth._* functions and the catalog tables a line in its
#   list for auditors), every entry names an object that exists, and every function's documented
#   signature is one of its overloads in pg_proc;
# - every SQLSTATE that src/ and sql/dpsynth.sql raise is in the troubleshooting table, and the
#   layout names every module of src/ and src/core/;
# - every ```sql example of README.md (in order, one database) and of docs/*.md (one database per
#   file) runs, and where a ```text block follows it, prints exactly that.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_docs
cleanup() {
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" 2>/dev/null
	psql -X -q -d postgres -c "DROP ROLE IF EXISTS research_team" 2>/dev/null
}
cleanup
psql -X -q -d postgres -c "CREATE DATABASE $DB"

ERRCODES_H="$("$PG_CONFIG" --includedir-server)/utils/errcodes.h"
ok $([ -f "$ERRCODES_H" ]; echo $?) "PostgreSQL's errcodes.h is at $ERRCODES_H"

while IFS= read -r line; do
	case "$line" in
		"ok "*) ok 0 "${line#ok }" ;;
		"not ok "*) ok 1 "${line#not ok }" ;;
		*) echo "$line" ;;
	esac
done < <(/usr/bin/python3 "$TOP/test/script/docs_check.py" "$TOP" "$DB" "$ERRCODES_H" 2>&1)

cleanup
done_testing
