#!/usr/bin/env bash
# OpenBLAS is opened by the quality report only (src/core/dp_eval_ml.c), not linked into
# dpsynth.so: a linked library is loaded, and its constructor run (threads, buffers), by every
# backend and every charging worker that loads dpsynth, on the path of every release.  The
# installed dpsynth.so needs no OpenBLAS; a session that released a synthetic table has none
# mapped; dp_evaluate in that session opens it and still scores the logistic regression (AUC)
# and the distances to the closest record.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_blas
fresh_db $DB >/dev/null
dp_load_adult $DB
dp_protect_adult $DB 100

so="$("$PGBIN/pg_config" --pkglibdir)/dpsynth.so"
needed=$(readelf -d "$so" | grep NEEDED)
[ -n "$needed" ]
ok $? "readelf lists the libraries dpsynth.so needs"
! grep -qi openblas <<<"$needed"
ok $? "dpsynth.so does not need OpenBLAS"

out=$(psql -X -qAt -v ON_ERROR_STOP=1 -d $DB 2>&1 <<'SQL'
SET client_min_messages = warning;
SELECT pg_backend_pid() AS pid \gset
SELECT rows_written > 0 AS wrote FROM dp_synthesize('adult', epsilon => 1, target => 's_adult');
\set before `grep -c openblas /proc/:pid/maps`
SELECT 'before=' || :before;
SELECT 'auc=' || (value BETWEEN 0 AND 1) FROM dp_evaluate('adult', 's_adult', 's_adult', 'income')
 WHERE scope = 'table' AND metric = 'tstr_auc';
SELECT 'dcr=' || (value >= 0) FROM dp_evaluate('adult', 's_adult') WHERE scope = 'table' AND metric = 'dcr_p5';
\set after `grep -c openblas /proc/:pid/maps`
SELECT 'after=' || (:after > 0);
SQL
)
grep -qx t <<<"$out"
ok $? "dp_synthesize wrote rows ($(head -n 3 <<<"$out" | tr '\n' ' '))"
is "$(echo "$out" | grep '^before=')" "before=0" "no OpenBLAS mapped in the backend after the release"
is "$(echo "$out" | grep '^auc=')" "auc=true" "dp_evaluate's logistic regression scores an AUC"
is "$(echo "$out" | grep '^dcr=')" "dcr=true" "dp_evaluate's distances give a closest-record distance"
is "$(echo "$out" | grep '^after=')" "after=true" "OpenBLAS mapped after dp_evaluate"

psql -X -q -d postgres -c "DROP DATABASE $DB" >/dev/null
done_testing
