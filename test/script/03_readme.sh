#!/usr/bin/env bash
# Keeps the README true: its SQL blocks run as written, in order, in a fresh database, and the
# demo command of its first code block runs to the end on a cluster of its own.
# (The test command is the one running this.)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_readme
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
psql -X -q -d postgres -c "DROP ROLE IF EXISTS research_team" 2>/dev/null

# The first code block holds exactly the two commands.
cmds=$(awk '/^```/{n++; next} n==1' "$TOP/README.md")
is "$(echo "$cmds" | grep -c .)" 2 "the README's first code block holds two commands"
is "$(echo "$cmds" | sed -n 1p | awk '{print $1}')" "./scripts/demo" "first is the demo"
is "$(echo "$cmds" | sed -n 2p | awk '{print $1}')" "./scripts/test" "second is the test command"

# Every ```sql block, in order, with ON_ERROR_STOP.
blocks=$(awk '/^```sql/{f=1; n++; print "-- block " n; next} /^```/{f=0} f' "$TOP/README.md")
nblocks=$(echo "$blocks" | grep -c '^-- block')
out=$(echo "$blocks" | psql -X -v ON_ERROR_STOP=1 -d $DB 2>&1)
rc=$?
[ $rc -eq 0 ] || echo "$out" | tail -n 20 | sed 's/^/# /'
ok $rc "the README's $nblocks SQL blocks run without error"
is "$(echo "$out" | grep -cE '^\s*\{(F|M)')" 48 "the getting-started marginal lists the 24 age bins for F and for M"
psql -X -q -d postgres -c "DROP DATABASE $DB"
psql -X -q -d postgres -c "DROP ROLE IF EXISTS research_team" 2>/dev/null

# The demo, on a cluster of its own (another socket directory and port).
demo_out=$(DPSYNTH_CLUSTER_DIR="$TOP/tmp_cluster_demo" DPSYNTH_PORT=$((PGPORT + 1)) "$TOP/scripts/demo" 2>&1)
rc=$?
[ $rc -eq 0 ] || echo "$demo_out" | tail -n 30 | sed 's/^/# /'
ok $rc "./scripts/demo exits 0"
ok $(grep -q 'permission denied for table adult' <<<"$demo_out"; echo $?) "demo: the analyst cannot read the table"
ok $(grep -q 'more calls at epsilon 1 were released; the next was refused' <<<"$demo_out"; echo $?) "demo: the budget runs out"
ok $(grep -qE '^ +0\.185070 \| +0\.18[0-9]+ \| t' <<<"$demo_out"; echo $?) "demo: spent equals the ledger's sum"
ok $(grep -qE '^ *adult_synthetic *\| +[0-9]{5} ' <<<"$demo_out"; echo $?) "demo: the analyst makes a synthetic copy"
ok $(grep -q 'total_variation_distance' <<<"$demo_out"; echo $?) "demo: it prints a fidelity summary"
ok $([ ! -e "$TOP/tmp_cluster_demo" ]; echo $?) "demo removes its cluster"
done_testing
