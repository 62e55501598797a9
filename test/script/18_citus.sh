#!/usr/bin/env bash
# Tables whose rows dpsynth's scan cannot see are refused before the charge (src/visibility.c):
#   1. on the main cluster: a partition on a foreign-data wrapper other than postgres_fdw (which
#      foreign.c refuses; every other release refuses a foreign table in scan.c);
#   2. on a Citus cluster of its own (a coordinator and two workers on ports PGPORT+60..62, Citus
#      built once and cached by scripts/citusbuild, installed into the PostgreSQL of $PG_CONFIG),
#      Citus tables counted on the workers (src/citus.c, docs/DISTRIBUTED.md "Citus"):
#      - dp_protect refuses append- and range-distributed, Citus-local and distributed
#        partitioned tables; it accepts hash-distributed and reference tables;
#      - an analyst's dp_marginal on Adult distributed (its coordinator's copy truncated) and as a
#        reference table equals the local copy's, cell by cell (epsilon 300: the exact counts),
#        one ledger row each, spent == the ledger's sum; the workers receive worker_partial_agg
#        of dpsynth's aggregate and no statement that reads a shard's rows (log_remote_commands,
#        EXPLAIN VERBOSE); dp_synthesize's copies are as faithful as the local table's;
#      - dp_discover on a distributed and a reference table (integer, numeric and text columns)
#        learns the local copy's domains, one ledger row each, the workers receiving only
#        statements grouped and counted there (GROUP BY pushed down); a float or date column is
#        refused before the charge;
#      - the privsyn method and a column to discover inside dp_synthesize or dp_marginal stay
#        refused before the charge (before 0.4.0 the releases charged and read the coordinator's
#        empty shell);
#      - hostile workers: a RAISE with a planted value on the rows (after the charge: YD004, the
#        value in nothing the analyst receives, in the coordinator's log), a cancel's SQLSTATE, a
#        worker without dpsynth, another library or extension version, a shard column of another
#        type (refused before the charge); dp_discover with a shard that raises on its rows
#        (YD004 after the charge) and with a shard column of another type (refused before it);
#      - 1,000,000 rows generated on the cluster: dp_marginal equals the local copy's;
#   3. a local Citus columnar table (another table access method) is read, also where parallel
#      workers would be used (columnar has no parallel scan: scan_parallel.c reads it serially).
# Without the vendored Citus source (../shared/vendor/citus) parts 2 and 3 report a skip.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_citus
ANALYST=regress_citus_analyst

# refused WHAT DB SQL [psql options...]: the call fails with SQLSTATE 0A000 (feature_not_supported)
# and an error that says WHAT, and (a release) that nothing was charged
refused() {
	local what=$1 db=$2 sql=$3 out
	shift 3
	out=$(psql -X -qAt -v VERBOSITY=verbose "$@" -d "$db" -c "$sql" 2>&1)
	# string matches, not `echo | grep -q` pipes: under pipefail, grep -q leaving after its first
	# line's match can kill echo's next line's write (SIGPIPE), and the pipe then reports failure
	if [[ $out == *"ERROR:  0A000: "* && $out == *"$what"* ]] &&
		{ [[ $sql == *dp_protect* ]] || [[ $out == *"Nothing was charged"* ]]; }; then
		return 0
	fi
	head -n 4 <<<"$out" | sed 's/^/# /'
	return 1
}

# ---- 1. the main cluster: a partition on another wrapper
fresh_db $DB >/dev/null
ensure_analyst $DB $ANALYST
psql -X -q -v ON_ERROR_STOP=1 -d $DB >/dev/null 2>&1 <<SQL
GRANT CREATE ON SCHEMA public TO $ANALYST;
CREATE FOREIGN DATA WRAPPER regress_other_fdw;
CREATE SERVER regress_other FOREIGN DATA WRAPPER regress_other_fdw;
CREATE TABLE f (id int NOT NULL, a int NOT NULL) PARTITION BY RANGE (id);
CREATE TABLE f_local PARTITION OF f FOR VALUES FROM (1) TO (1001);
CREATE FOREIGN TABLE f_other PARTITION OF f FOR VALUES FROM (1001) TO (MAXVALUE) SERVER regress_other;
INSERT INTO f_local SELECT i, i % 10 FROM generate_series(1, 1000) i;
SELECT dp_protect('f', epsilon => 10, selection_delta => 1e-6);
SELECT dp_declare('f', 'id', lower => 1, upper => 2000, bins => 10);
SELECT dp_declare('f', 'a', lower => 0, upper => 10, bins => 10);
SQL
ok $? "a partitioned table with a partition on wrapper regress_other_fdw is protected"
spent_f() { q $DB "SELECT b.rho_spent || ' ' || (SELECT count(*) FROM dpsynth.ledger l WHERE l.relid = b.relid)
	FROM dpsynth.budgets b WHERE b.relid = 'f'::regclass"; }
before=$(spent_f)
refused 'foreign-data wrapper "regress_other_fdw"' $DB "SELECT * FROM dp_marginal('f', ARRAY['a'], 1)" -U $ANALYST
ok $? "dp_marginal refuses the other wrapper's partition"
refused 'foreign-data wrapper "regress_other_fdw"' $DB "SELECT * FROM dp_synthesize('f', 1)" -U $ANALYST
ok $? "dp_synthesize (adaptive) refuses the other wrapper's partition"
refused 'privsyn' $DB "SELECT * FROM dp_synthesize('f', 1, method => 'privsyn')" -U $ANALYST
ok $? "dp_synthesize (privsyn) refuses the foreign partition"
q $DB "SELECT dp_undeclare('f', 'a')" >/dev/null
refused '"f_other"' $DB "SELECT * FROM dp_discover('f', 1)" -U $ANALYST
ok $? "dp_discover refuses the foreign partition"
is "$(spent_f)" "$before" "the budget spent and the ledger rows of f are unchanged"
is "$(q $DB "SELECT to_regclass('f_synthetic') IS NULL")" t "no synthetic copy of f"
psql -X -q -d postgres -c "DROP DATABASE $DB" >/dev/null

# ---- 2. Citus: build (cached) and install into this PostgreSQL
t0=$(date +%s)
# compiled at -O0 (scripts/citusbuild, DPSYNTH_CITUS_COPT): what is tested here is not Citus' speed
citus=$(DPSYNTH_CITUS_COPT=-O0 "$TOP/scripts/citusbuild" "$PG_CONFIG" 2>"$TOP/tmp_citusbuild.log")
rc=$?
if [ $rc = 2 ]; then
	ok 0 "Citus # skip: its source is not there ($(tail -n 1 "$TOP/tmp_citusbuild.log"))"
	rm -f "$TOP/tmp_citusbuild.log"
	done_testing
	exit
fi
ok $rc "Citus $citus built (or taken from the cache) and installed for $($PG_CONFIG --version) in $(($(date +%s) - t0)) s"
[ $rc = 0 ] || { sed 's/^/# /' "$TOP/tmp_citusbuild.log"; done_testing; exit; }
rm -f "$TOP/tmp_citusbuild.log"

NODES=(c w1 w2)
node_dir() { echo "$TOP/tmp_citus_$1"; }
node_port() { case $1 in c) echo $((PGPORT + 60)) ;; w1) echo $((PGPORT + 61)) ;; w2) echo $((PGPORT + 62)) ;; esac; }
citus_stop() {
	local n d
	for n in "${NODES[@]}"; do
		d=$(node_dir $n)
		[ -f "$d/data/postmaster.pid" ] && as_pg "$PGBIN/pg_ctl" -D "$d/data" -m immediate -w stop >/dev/null 2>&1
		rm -rf "$d"
	done
}
trap citus_stop EXIT
citus_stop
started=0
for n in "${NODES[@]}"; do
	d=$(node_dir $n)
	mkdir -p "$d" && { [ "$(id -u)" != 0 ] || chown postgres: "$d"; }
	as_pg "$PGBIN/initdb" -D "$d/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null || continue
	cat >> "$d/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$d'
port = $(node_port $n)
shared_preload_libraries = 'citus'
max_connections = 40
shared_buffers = 32MB
log_min_messages = warning
CONF
	as_pg "$PGBIN/pg_ctl" -D "$d/data" -l "$d/server.log" -w start >/dev/null && started=$((started + 1))
done
is "$started" 3 "a Citus coordinator and two workers start"
# c SQL [psql options]: on the coordinator, one value
c() { local sql=$1; shift; psql -X -qAt -v ON_ERROR_STOP=1 -h "$(node_dir c)" -p "$(node_port c)" "$@" -d $DB -c "$sql"; }
for n in "${NODES[@]}"; do
	psql -X -q -h "$(node_dir $n)" -p "$(node_port $n)" -d postgres -c "CREATE DATABASE $DB" >/dev/null &&
		psql -X -q -h "$(node_dir $n)" -p "$(node_port $n)" -d $DB -c "CREATE EXTENSION citus" >/dev/null 2>&1
done
c "SELECT citus_set_coordinator_host('$(node_dir c)', $(node_port c));
   SELECT citus_add_node('$(node_dir w1)', $(node_port w1));
   SELECT citus_add_node('$(node_dir w2)', $(node_port w2));" >/dev/null
is "$(c "SELECT count(*) FROM citus_get_active_worker_nodes()")" 2 "the coordinator has two active workers"
c "CREATE EXTENSION dpsynth" >/dev/null
ok $? "dpsynth is created on the coordinator (and propagated to the workers)"
# the analyst may create the synthetic tables (so that only dpsynth's own check refuses a call)
c "CREATE ROLE $ANALYST LOGIN IN ROLE dpsynth_analyst; GRANT CREATE ON SCHEMA public TO $ANALYST" >/dev/null

# Adult: distributed by fnlwgt (the coordinator's copy truncated), a reference table, and a local
# copy, each protected with the same public domains (every integer column in declared bins: a
# release that would discover a domain inside its call is refused on a Citus table); and the kinds
# dpsynth refuses
load() {
	sed "s/CREATE TABLE adult /CREATE TABLE $1 /" "$TOP/data/adult/adult.sql" |
		psql -X -q -v ON_ERROR_STOP=1 -h "$(node_dir c)" -p "$(node_port c)" -d $DB >/dev/null &&
		psql -X -q -v ON_ERROR_STOP=1 -h "$(node_dir c)" -p "$(node_port c)" -d $DB \
			-c "\\copy $1 FROM '$TOP/data/adult/adult_train.csv' WITH (FORMAT csv, HEADER true, NULL '?')" >/dev/null
}
for t in adult adult_ref adult_local; do load $t; done
c "SELECT create_distributed_table('adult', 'fnlwgt'); SELECT create_reference_table('adult_ref');
   SELECT truncate_local_data_after_distributing_table('adult');
   SELECT truncate_local_data_after_distributing_table('adult_ref')" >/dev/null 2>&1
ok $? "Adult distributed by fnlwgt, and as a reference table"
is "$(c "SELECT count(*) FROM adult") $(c "SELECT count(*) FROM adult_ref")" "32561 32561" "Citus counts Adult's 32,561 rows on the workers"
# the coordinator keeps the rows it had until the owner truncates them: a scan of the shell would
# read either nothing or a stale copy, so dpsynth never scans it
is "$(c "SELECT pg_relation_size('adult') + pg_relation_size('adult_ref')")" 0 "the coordinator's tables are empty shells"
c "CREATE TABLE adult_append (id int, a int); SELECT create_distributed_table('adult_append', 'id', 'append');
   CREATE TABLE adult_range (id int, a int); SELECT create_distributed_table('adult_range', 'id', 'range');
   CREATE TABLE adult_citus_local (id int, a int); SELECT citus_add_local_table_to_metadata('adult_citus_local');
   CREATE TABLE adult_parted (id int, a int) PARTITION BY RANGE (id);
   CREATE TABLE adult_parted_1 PARTITION OF adult_parted FOR VALUES FROM (0) TO (100);
   SELECT create_distributed_table('adult_parted', 'id')" >/dev/null 2>&1
ok $? "append- and range-distributed, Citus-local and a distributed partitioned table"
for t in adult_append:append-distributed adult_range:range-distributed adult_citus_local:Citus-local; do
	refused "table \"${t%%:*}\" is a Citus ${t##*:} table" $DB "SELECT dp_protect('${t%%:*}', epsilon => 10)" \
		-h "$(node_dir c)" -p "$(node_port c)"
	ok $? "dp_protect refuses the ${t##*:} table"
done
refused 'table "adult_parted" is a Citus distributed table' $DB \
	"SELECT dp_protect('adult_parted', epsilon => 10)" -h "$(node_dir c)" -p "$(node_port c)"
ok $? "dp_protect refuses a distributed partitioned table"

domain=$(cat "$TOP/data/adult/domain.json")
for t in adult adult_ref adult_local; do
	psql -X -q -v ON_ERROR_STOP=1 -h "$(node_dir c)" -p "$(node_port c)" -d $DB -v t=$t -v domain="$domain" >/dev/null 2>&1 <<'SQL'
SELECT dp_protect(:'t', epsilon => 1000, selection_delta => 1e-6);
SELECT dp_declare(:'t', :'domain'::jsonb);
SELECT dp_declare(:'t', 'age', lower => 16, upper => 100, bins => 21);
SELECT dp_declare(:'t', 'fnlwgt', lower => 10000, upper => 1500000, bins => 30);
SELECT dp_declare(:'t', 'education_num', lower => 1, upper => 17, bins => 16);
SELECT dp_declare(:'t', 'capital_gain', lower => 0, upper => 100000, bins => 20);
SELECT dp_declare(:'t', 'capital_loss', lower => 0, upper => 5000, bins => 20);
SELECT dp_declare(:'t', 'hours_per_week', lower => 0, upper => 100, bins => 20);
SQL
	ok $? "$t protected, its domains declared"
done

as_analyst=(-h "$(node_dir c)" -p "$(node_port c)" -U $ANALYST)
spent() { c "SELECT b.rho_spent || ' ' || (SELECT count(*) FROM dpsynth.ledger l WHERE l.relid = b.relid)
	FROM dpsynth.budgets b WHERE b.relid = '$1'::regclass"; }
# the spent budget equals the ledger's sum, for every table
balanced() { c "SELECT bool_and(b.rho_spent = (SELECT coalesce(sum(l.rho), 0) FROM dpsynth.ledger l WHERE l.relid = b.relid AND l.status <> 'refused'))
	FROM dpsynth.budgets b"; }
# a marginal at epsilon 300 (sigma about 0.05: the rounded noisy counts are the exact counts)
marg() { psql -X -qAt "${as_analyst[@]}" -d $DB -c "SELECT string_agg(noisy_count::text, ' ' ORDER BY i)
	FROM dp_marginal('$1', ARRAY[$2], 300) WITH ORDINALITY m(cell, noisy_count, i)" 2>&1; }
cols="'sex', 'income', 'education', 'age'"
local_counts=$(marg adult_local "$cols")
is "$(echo "$local_counts" | tr ' ' '\n' | awk '{ s += $1; if ($1 > 0) n++ } END { print s, (n > 50) }')" "32561 1" \
	"the local table's marginal at epsilon 300 adds up to its 32,561 rows, over more than 50 cells"
for t in adult adult_ref; do
	before=$(spent $t)
	is "$(marg $t "$cols")" "$local_counts" "dp_marginal on $t (counted on the workers) equals the local table's, cell by cell"
	is "$(spent $t | cut -d' ' -f2)" "$(($(echo $before | cut -d' ' -f2) + 1))" "one ledger row for the call on $t"
done
is "$(c "SELECT string_agg(DISTINCT status, ',') || ' ' || bool_and(details->>'foreign_partitions' = '1')
	FROM dpsynth.ledger WHERE relid IN ('adult'::regclass, 'adult_ref'::regclass)")" "completed true" \
	"the ledger rows of the Citus tables are completed, and say the table was counted elsewhere"
is "$(balanced)" t "spent equals the ledger's sum"

# a distributed table whose coordinator copy was not truncated: the shell still holds Adult's rows
# (Citus hides them), and the release must count the workers' rows once, never the shell's
load adult_stale
c "SELECT create_distributed_table('adult_stale', 'fnlwgt')" >/dev/null 2>&1
ok "$([ "$(c "SELECT pg_relation_size('adult_stale')")" -gt 0 ]; echo $?)" "adult_stale distributed, its stale rows left in the coordinator's shell"
psql -X -q -v ON_ERROR_STOP=1 -h "$(node_dir c)" -p "$(node_port c)" -d $DB -v domain="$domain" >/dev/null 2>&1 <<'SQL'
SELECT dp_protect('adult_stale', epsilon => 1000, selection_delta => 1e-6);
SELECT dp_declare('adult_stale', :'domain'::jsonb);
SQL
is "$(marg adult_stale "'sex', 'income'")" "$(marg adult_local "'sex', 'income'")" \
	"dp_marginal on adult_stale counts the workers' rows once, not the shell's stale copy"

# the statements Citus sends to the workers (citus.log_remote_commands, as the owner): the partial
# aggregate over encoded cells, never a statement that reads the table's rows
remote=$(PGOPTIONS="-c citus.log_remote_commands=on -c citus.log_local_commands=on" psql -X -qAt -h "$(node_dir c)" -p "$(node_port c)" -d $DB \
	-c "SELECT count(*) FROM dp_marginal('adult', ARRAY['sex', 'income'], 1)" 2>&1)
pushed=$(echo "$remote" | grep -cE "worker_partial_agg\('dpsynth._shard_(counts|pairs)\(integer\[\],integer\[\]\)'::regprocedure")
[ "$pushed" -gt 0 ] || echo "$remote" | grep -v "^NOTICE:  issuing.*WHERE false" | sed -n 1,8p | cut -c1-200 | sed 's/^/# /'
ok "$([ "$pushed" -gt 0 ]; echo $?)" "the count is sent to the workers as worker_partial_agg of dpsynth's aggregate"
rowsel=$(echo "$remote" | grep "issuing" | grep -E "FROM public\.adult_[0-9]+" | grep -v "worker_partial_agg\|_shard_identity\|WHERE false" | sed -n 1,3p)
is "$rowsel" "" "no statement sent to a worker reads the shard's rows outside the aggregate"
plan=$(c "EXPLAIN (VERBOSE, COSTS OFF) SELECT dpsynth._state_vector(dpsynth._shard_counts(ARRAY[$(c "SELECT expression FROM dpsynth._encoder('adult', 'sex')")], '{3}'), '{3}') FROM adult")
echo "$plan" | grep -E "Aggregate|Task Count|worker_partial_agg|Seq Scan" | sed 's/^/# /' | cut -c1-160
ok "$(grep -q "Query: SELECT pg_catalog.worker_partial_agg(" <<<"$plan" && grep -q "coord_combine_agg(" <<<"$plan"; echo $?)" \
	"EXPLAIN: each shard computes the partial aggregate (worker_partial_agg), the coordinator combines (coord_combine_agg)"

# dp_synthesize (adaptive) on the Citus tables: every pair counted on the workers in one
# aggregate; the synthetic copy's fidelity is that of the local table's
for t in adult adult_ref adult_local; do
	res=$(psql -X -qAt "${as_analyst[@]}" -d $DB -c "SELECT rows_written FROM dp_synthesize('$t', 1, target => '${t}_syn')" 2>&1)
	ok "$([ "$res" -gt 32161 ] 2>/dev/null && [ "$res" -lt 32961 ]; echo $?)" "dp_synthesize on $t writes about 32,561 rows ($res)"
	tvd2=$(c "SELECT round(value::numeric, 4) FROM dp_evaluate('adult_local', '${t}_syn') WHERE metric = 'tvd2' AND scope = 'table'" 2>/dev/null)
	echo "# $t: tvd2 against the local table $tvd2"
	eval "tvd2_$t=$tvd2"
done
# False alarms: over 78 earlier runs of this test (three tables each), the tvd2 of a copy against
# the local table lay in .0832-.0874 (mean .0852, sd .00097); two independent copies differ with
# sd .00137, so the bar of .03 is 22 sd: under a normal approximation a correct build fails it
# with probability about 1e-106 (well under 1e-4 even if the spread were five times wider).
for t in adult adult_ref; do
	eval "x=\$tvd2_$t"
	ok "$(awk -v a="$x" -v b="$tvd2_adult_local" 'BEGIN { exit !(a != "" && a < b + 0.03 && a > b - 0.03) }'; echo $?)" \
		"the synthetic copy of $t is as faithful as the local table's (tvd2 $x vs $tvd2_adult_local)"
done
is "$(balanced)" t "spent equals the ledger's sum after the syntheses"

# dp_discover on Citus tables: each column's values grouped and counted on the shards (GROUP BY
# pushed down: one row a value and shard, never a row of the table).  12,000 generated rows,
# distributed, as a reference table and local, each with an integer, a numeric and a text column
# to discover (n's lowest and highest values hold 30 rows more than the 0.1% the bounds leave
# out, so that the noise cannot move them); the domains learned at epsilon 150 (noise far below
# the counts) equal the local table's, one ledger row each
c "CREATE TABLE dsc_local (id int, n int, m numeric, w text);
   INSERT INTO dsc_local SELECT i, CASE WHEN i <= 30 THEN 0 WHEN i <= 60 THEN 999 ELSE (i * 7919) % 1000 END, ((i * 31) % 500) / 4.0,
	(ARRAY['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa', 'lambda', 'mu'])[1 + (i * 13) % 12]
	FROM generate_series(1, 12000) i;
   CREATE TABLE dsc (LIKE dsc_local); INSERT INTO dsc SELECT * FROM dsc_local; SELECT create_distributed_table('dsc', 'id');
   CREATE TABLE dsc_ref (LIKE dsc_local); INSERT INTO dsc_ref SELECT * FROM dsc_local; SELECT create_reference_table('dsc_ref');
   SELECT truncate_local_data_after_distributing_table('dsc'); SELECT truncate_local_data_after_distributing_table('dsc_ref');
   SELECT dp_protect(t, epsilon => 200, selection_delta => 1e-3) FROM unnest(ARRAY['dsc', 'dsc_ref', 'dsc_local']) t;
   SELECT dp_declare(t, 'id', lower => 0, upper => 12000, bins => 10) FROM unnest(ARRAY['dsc', 'dsc_ref', 'dsc_local']) t" >/dev/null 2>&1
ok $? "dsc: 12,000 rows distributed, as a reference table and local, protected"
# (m's bounds are real numbers drawn inside a grid cell: compared rounded; the inner edges are
# quantiles of the noisy histogram, which the noise may move by a value: compared apart)
domains() { c "SELECT string_agg(concat_ws(' ', d.attnum, d.kind, d.categories, round(d.lower::numeric), round(d.upper::numeric),
	d.bins, pg_catalog.array_length(d.edges, 1), d.source), '; ' ORDER BY d.attnum)
	FROM dpsynth.domains d WHERE d.relid = '$1'::regclass AND d.attnum > 1"; }
# the largest distance between an edge of n on $1 and the local table's
edge_gap() { c "SELECT max(abs(a.e - b.e)) FROM dpsynth.domains x, dpsynth.domains y,
	unnest(x.edges) WITH ORDINALITY a(e, i) JOIN unnest(y.edges) WITH ORDINALITY b(e, i) USING (i)
	WHERE x.relid = '$1'::regclass AND y.relid = 'dsc_local'::regclass AND x.attnum = 2 AND y.attnum = 2"; }
disc() { psql -X -qAt "$@" -d $DB -c "SELECT string_agg(column_name || ':' || kind || ':' || cells, ' ' ORDER BY column_name)
	FROM dp_discover('$t', 150)" 2>&1; }
t=dsc_local; local_disc=$(disc "${as_analyst[@]}")
ok "$([[ $local_disc =~ ^m:bins:[0-9]+\ n:bins:[0-9]+\ w:categories:13$ ]]; echo $?)" \
	"dp_discover on the local table learns m's and n's bins and w's 12 categories, 13 codes ($local_disc)"
local_domains=$(domains dsc_local)
for t in dsc dsc_ref; do
	before=$(spent $t)
	if [ $t = dsc ]; then
		# as the owner, with the statements Citus sends to the workers in the output
		out=$(PGOPTIONS="-c citus.log_remote_commands=on -c citus.log_local_commands=on" disc -h "$(node_dir c)" -p "$(node_port c)")
		got=$(echo "$out" | grep -v "^NOTICE:\|^DETAIL:")
		grouped=$(echo "$out" | grep "issuing" | grep -E "FROM public\.dsc_[0-9]+" | grep -c " GROUP BY ")
		rowsel=$(echo "$out" | grep "issuing" | grep -E "FROM public\.dsc_[0-9]+" | grep -v " GROUP BY \|WHERE false" | sed -n 1,3p)
		ok "$([ "$grouped" -gt 0 ]; echo $?)" "dp_discover on dsc sends the workers the grouped counts of each column ($grouped statements)"
		is "$rowsel" "" "no statement dp_discover sends to a worker reads the shard's rows outside a GROUP BY"
	else
		got=$(disc "${as_analyst[@]}")
	fi
	is "$got" "$local_disc" "dp_discover on $t (counted on the workers) learns what it learns on the local table"
	is "$(domains $t)" "$local_domains" "the domains dp_discover stored for $t equal the local table's"
	gap=$(edge_gap $t)
	ok "$([ -n "$gap" ] && awk -v g="$gap" 'BEGIN { exit !(g <= 3) }'; echo $?)" "the inner edges of n on $t are the local table's within 3 (largest gap $gap)"
	is "$(spent $t | cut -d' ' -f2)" "$(($(echo $before | cut -d' ' -f2) + 1))" "one ledger row for dp_discover on $t"
done
plan=$(c "EXPLAIN (VERBOSE, COSTS OFF) SELECT w COLLATE \"C\", count(*) FROM dsc GROUP BY 1")
ok "$(grep -q "count(\*).* GROUP BY " <<<"$(grep "Query: SELECT" <<<"$plan")"; echo $?)" \
	"EXPLAIN: each shard groups and counts its own rows (the task's query has GROUP BY)"
res=$(psql -X -qAt "${as_analyst[@]}" -d $DB -c "SELECT rows_written FROM dp_synthesize('dsc', 1, target => 'dsc_syn')" 2>&1)
ok "$([ "$res" -gt 11000 ] 2>/dev/null && [ "$res" -lt 13000 ]; echo $?)" \
	"dp_synthesize on dsc with the discovered domains writes about 12,000 rows ($res)"
is "$(balanced)" t "spent equals the ledger's sum after the discoveries"

# what stays refused on a Citus table, before any charge: the privsyn method, a column whose
# domain would be learned inside dp_synthesize or dp_marginal (their count statement encodes
# every column in its domain, checked before the charge), and dp_discover of a column whose text
# follows the workers' session settings
before=$(spent adult)
refused 'is a Citus table, and the privsyn method counts marginals chosen after the charge' $DB \
	"SELECT * FROM dp_synthesize('adult', 1, method => 'privsyn')" "${as_analyst[@]}"
ok $? "dp_synthesize (privsyn) on the distributed table is refused"
c "SELECT dp_undeclare('adult', 'age')" >/dev/null
refused 'Run dp_discover on the table first' $DB \
	"SELECT * FROM dp_synthesize('adult', 1, target => 'adult_syn2')" "${as_analyst[@]}"
ok $? "dp_synthesize with a column to discover on the distributed table is refused, and says to run dp_discover"
refused 'column "age" of table "adult" has no public domain, and the table is a Citus table' $DB \
	"SELECT * FROM dp_marginal('adult', ARRAY['age'], 1)" "${as_analyst[@]}"
ok $? "dp_marginal of a column to discover on the distributed table is refused"
c "SELECT dp_declare('adult', 'age', lower => 16, upper => 100, bins => 21)" >/dev/null
is "$(spent adult)" "$before" "the budget spent and the ledger rows of adult are unchanged"
c "CREATE TABLE fl (id int, x float8, d date); SELECT create_distributed_table('fl', 'id');
   INSERT INTO fl SELECT i, i / 7.0, date '2020-01-01' + i FROM generate_series(1, 500) i;
   SELECT dp_protect('fl', epsilon => 100)" >/dev/null 2>&1
before=$(spent fl)
for col in x d; do
	refused "of Citus table \"fl\" cannot be discovered on its shards" $DB \
		"SELECT * FROM dp_discover('fl', 1, ARRAY['$col'])" "${as_analyst[@]}"
	ok $? "dp_discover of a $(c "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'fl'::regclass AND attname = '$col'") column on a distributed table is refused"
done
is "$(spent fl)" "$before" "the budget spent and the ledger rows of fl are unchanged"

# a distributed table with a privacy unit: its shards count rows that cannot be bounded per unit
# there, so every release is refused before the charge
c "CREATE TABLE visits_u (patient int NOT NULL, a int NOT NULL);
   INSERT INTO visits_u SELECT i % 50, i % 7 FROM generate_series(1, 500) i;
   SELECT create_distributed_table('visits_u', 'patient');
   SELECT dp_protect('visits_u', epsilon => 100);
   SELECT dp_declare('visits_u', 'a', lower => 0, upper => 6, bins => 7);
   SELECT dp_privacy_unit('visits_u', 'patient', max_rows_per_unit => 2)" >/dev/null 2>&1
is "$(c "SELECT privacy_unit::text || ' ' || max_rows_per_unit FROM dpsynth.budgets WHERE relid = 'visits_u'::regclass")" "1 2" \
	"visits_u is protected (distributed) and has a privacy unit"
before=$(spent visits_u)
refused 'which has a privacy unit' $DB "SELECT * FROM dp_marginal('visits_u', ARRAY['a'], 1)" "${as_analyst[@]}"
ok $? "dp_marginal on a distributed table with a privacy unit is refused"
refused 'which has a privacy unit' $DB "SELECT * FROM dp_synthesize('visits_u', 1, target => 'visits_u_syn')" "${as_analyst[@]}"
ok $? "dp_synthesize on a distributed table with a privacy unit is refused"
is "$(spent visits_u)" "$before" "the budget spent and the ledger rows of visits_u are unchanged"

# ---- hostile workers (as test/script/15_hostile_remote.sh for postgres_fdw): a small distributed
# table h on both workers; each case breaks or subverts dpsynth on one worker (DDL propagation off,
# so the change stays there).  Every analyst's dp_marginal is either refused before the charge
# (nothing charged) or fails after it with dpsynth's generic error (YD004); the value planted in a
# worker's errors (SECRET-4417-PLANTED) never reaches the analyst (psql's whole output with
# VERBOSITY verbose, SHOW_CONTEXT always, client_min_messages debug5), and the coordinator's log
# keeps it; spent equals the ledger's sum throughout.
SECRET=SECRET-4417-PLANTED
w() { local n=$1 sql=$2; psql -X -qAt -v ON_ERROR_STOP=1 -h "$(node_dir $n)" -p "$(node_port $n)" -d $DB \
	-c "SET citus.enable_ddl_propagation = off; SET citus.enable_manual_changes_to_shards = on; SET dpsynth.allow_drop_extension = on; $sql"; }
c "SET citus.shard_count = 4; CREATE TABLE h (id int, a int); SELECT create_distributed_table('h', 'id');
   INSERT INTO h SELECT i, i % 10 FROM generate_series(1, 2000) i;
   SELECT dp_protect('h', epsilon => 1000); SELECT dp_declare('h', 'a', lower => 0, upper => 10, bins => 10)" >/dev/null 2>&1
ok $? "h: 2,000 rows distributed over 4 shards, protected"
is "$(c "SELECT count(DISTINCT n.nodeport) FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid)
	JOIN pg_dist_node n USING (groupid) WHERE s.logicalrelid = 'h'::regclass")" 2 "h has shards on both workers"
hledger() { c "SELECT count(*) || ' ' || count(*) FILTER (WHERE status = 'charged') FROM dpsynth.ledger WHERE relid = 'h'::regclass"; }
# attempt DESC WANT: the analyst's dp_marginal on h; WANT: "refused" (nothing charged) or "failed"
# (one more ledger row, left charged, and the generic error)
attempt() {
	local desc=$1 want=$2 before out after
	before=$(hledger)
	out=$(PGOPTIONS="-c client_min_messages=debug5" psql -X -qAt -v VERBOSITY=verbose -v SHOW_CONTEXT=always \
		"${as_analyst[@]}" -d $DB -c "SELECT * FROM dp_marginal('h', ARRAY['a'], 1)" 2>&1)
	after=$(hledger)
	if [ "$want" = refused ]; then
		ok "$(grep -q "ERROR:  55000: .*cannot run dpsynth" <<<"$out" && grep -q "Nothing was charged" <<<"$out" &&
			[ "$before" = "$after" ]; echo $?)" "$desc: refused before the charge (ledger $before -> $after)"
	else
		ok "$(grep -q "ERROR:  YD004: dp_marginal failed after its charge; nothing was released" <<<"$out" &&
			[ "$(echo $after | cut -d' ' -f2)" = "$(($(echo $before | cut -d' ' -f2) + 1))" ]; echo $?)" \
			"$desc: fails after the charge with the generic error, the ledger row left charged ($before -> $after)"
	fi
	[[ "$out" == *ERROR* ]] || head -n 3 <<<"$out" | sed 's/^/# /'
	ok "$([[ "$out" != *SECRET* ]]; echo $?)" "$desc: the planted value is in nothing the analyst receives"
	is "$(balanced)" t "$desc: spent equals the ledger's sum"
}
restore() { w $1 "DROP EXTENSION IF EXISTS dpsynth CASCADE; CREATE EXTENSION dpsynth" >/dev/null 2>&1; }
is "$(psql -X -qAt "${as_analyst[@]}" -d $DB -c "SELECT sum(noisy_count) > 1900 FROM dp_marginal('h', ARRAY['a'], 1)" 2>&1)" t \
	"h: a sound release first"

# 1. a worker whose aggregate raises with the planted value, on rows only: every check over zero rows passes
for f in _state_add _state_add_pairs; do
	w w1 "CREATE OR REPLACE FUNCTION dpsynth.$f(dpsynth.partial_state, int4[], int4[]) RETURNS dpsynth.partial_state
		LANGUAGE plpgsql AS \$\$ BEGIN RAISE EXCEPTION '$SECRET row %', \$2 USING DETAIL = 'detail $SECRET', HINT = 'hint $SECRET'; END \$\$" >/dev/null
done
attempt "a worker raising on its rows after the charge" failed
ok "$(grep -q "dp_marginal failed after its charge (ledger row [0-9]*).*$SECRET row" "$(node_dir c)/server.log"; echo $?)" \
	"the coordinator's server log keeps the worker's error, planted value included"
restore w1
# the same with a cancel's SQLSTATE, whose words a local cancel keeps
for f in _state_add _state_add_pairs; do
	w w1 "CREATE OR REPLACE FUNCTION dpsynth.$f(dpsynth.partial_state, int4[], int4[]) RETURNS dpsynth.partial_state
		LANGUAGE plpgsql AS \$\$ BEGIN RAISE EXCEPTION 'canceling statement due to user request $SECRET' USING ERRCODE = 'query_canceled'; END \$\$" >/dev/null
done
out=$(psql -X -qAt -v VERBOSITY=verbose "${as_analyst[@]}" -d $DB -c "SELECT * FROM dp_marginal('h', ARRAY['a'], 1)" 2>&1)
ok "$([[ "$out" == *"ERROR:  57014: dp_marginal failed after its charge"* && "$out" != *SECRET* ]]; echo $?)" \
	"a worker's error with a cancel's SQLSTATE: 57014 with dpsynth's generic text"
is "$(balanced)" t "spent equals the ledger's sum"
restore w1
is "$(psql -X -qAt "${as_analyst[@]}" -d $DB -c "SELECT sum(noisy_count) > 1900 FROM dp_marginal('h', ARRAY['a'], 1)" 2>&1)" t \
	"h releases again once the worker is mended"

# 2. a worker without dpsynth
w w2 "DROP EXTENSION dpsynth CASCADE" >/dev/null 2>&1
attempt "a worker without dpsynth" refused
restore w2
# 3. a worker whose dpsynth library says another version, and one whose extension is another version
w w1 "CREATE OR REPLACE FUNCTION dpsynth._shard_identity(bigint) RETURNS text LANGUAGE sql IMMUTABLE
	AS \$\$ SELECT '0.3.9 1 1' \$\$" >/dev/null
attempt "a worker with another dpsynth library version" refused
restore w1
w w2 "UPDATE pg_extension SET extversion = '0.3.4' WHERE extname = 'dpsynth'" >/dev/null
attempt "a worker with another dpsynth extension version" refused
w w2 "UPDATE pg_extension SET extversion = '$(c "SELECT extversion FROM pg_extension WHERE extname = 'dpsynth'")' WHERE extname = 'dpsynth'" >/dev/null
shard=$(c "SELECT shard_name('h'::regclass, s.shardid) FROM pg_dist_shard s JOIN pg_dist_placement p USING (shardid)
	JOIN pg_dist_node n USING (groupid) WHERE s.logicalrelid = 'h'::regclass AND n.nodeport = $(node_port w1) LIMIT 1")
# 4. dp_discover (column a undeclared) on a worker whose shard is a view raising with the planted
# value on its rows: every check over zero rows passes; after the charge, YD004 and nothing of it
c "SELECT dp_undeclare('h', 'a')" >/dev/null
w w1 "ALTER TABLE $shard RENAME TO ${shard}_real;
	CREATE FUNCTION public.boom(int) RETURNS int LANGUAGE plpgsql AS \$\$ BEGIN RAISE EXCEPTION '$SECRET value %', \$1; END \$\$;
	CREATE VIEW $shard AS SELECT id, CASE WHEN a = 7 THEN public.boom(a) ELSE a END AS a FROM ${shard}_real" >/dev/null
ok $? "shard $shard on w1: a view raising with the planted value on its rows"
before=$(hledger)
out=$(PGOPTIONS="-c client_min_messages=debug5" psql -X -qAt -v VERBOSITY=verbose -v SHOW_CONTEXT=always \
	"${as_analyst[@]}" -d $DB -c "SELECT * FROM dp_discover('h', 1)" 2>&1)
ok "$(grep -q "ERROR:  YD004: dp_discover failed after its charge; nothing was released" <<<"$out" &&
	[ "$(hledger | cut -d' ' -f2)" = "$(($(echo $before | cut -d' ' -f2) + 1))" ]; echo $?)" \
	"dp_discover on a worker raising on its rows: fails after the charge with the generic error ($before -> $(hledger))"
[[ "$out" == *ERROR* ]] || head -n 3 <<<"$out" | sed 's/^/# /'
ok "$([[ "$out" != *SECRET* ]]; echo $?)" "dp_discover on a worker raising on its rows: the planted value is in nothing the analyst receives"
ok "$(grep -q "dp_discover failed after its charge (ledger row [0-9]*).*$SECRET value" "$(node_dir c)/server.log"; echo $?)" \
	"the coordinator's server log keeps the worker's error of dp_discover"
is "$(balanced)" t "spent equals the ledger's sum"
w w1 "DROP VIEW $shard; ALTER TABLE ${shard}_real RENAME TO $shard; DROP FUNCTION public.boom(int)" >/dev/null
c "SELECT dp_declare('h', 'a', lower => 0, upper => 10, bins => 10)" >/dev/null
# 5. a shard whose column has another type (text, with the planted value in its rows)
w w1 "ALTER TABLE $shard ALTER COLUMN a TYPE text USING CASE WHEN a = 7 THEN '$SECRET' ELSE a::text END" >/dev/null
ok $? "shard $shard on w1: column a is text now, with the planted value"
attempt "a shard whose column has another type" refused
# dp_discover checks the shards' column types before its charge too: refused, nothing charged
c "SELECT dp_undeclare('h', 'a')" >/dev/null
before=$(hledger)
out=$(psql -X -qAt -v VERBOSITY=verbose "${as_analyst[@]}" -d $DB -c "SELECT * FROM dp_discover('h', 1)" 2>&1)
ok "$(grep -q "ERROR:  55000: a shard of Citus table \"h\" on node .* cannot count the values of its columns" <<<"$out" &&
	grep -q "Nothing was charged" <<<"$out" && [ "$(hledger)" = "$before" ]; echo $?)" \
	"dp_discover on h with a shard of another column type: refused before the charge (ledger $before -> $(hledger))"
[[ "$out" == *ERROR* ]] || head -n 3 <<<"$out" | sed 's/^/# /'
ok "$([[ "$out" != *SECRET* ]]; echo $?)" "dp_discover on h: the planted value is in nothing the analyst receives"
is "$(c "SELECT count(*) FILTER (WHERE status = 'completed') FROM dpsynth.ledger WHERE relid = 'h'::regclass")" 2 \
	"h: the two sound releases completed, nothing else"

# ---- a million rows generated on the cluster, distributed and local: the same release
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
t0=$(date +%s.%N)
c "CREATE TABLE big (id bigint, a int, b int, c text); SELECT create_distributed_table('big', 'id');
   INSERT INTO big SELECT i, (i * 7919) % 50, (i * 104729 % 1000003) % 30, (ARRAY['p', 'q', 'r', 's'])[1 + (i * 31) % 4]
	FROM generate_series(1::bigint, 1000000) i;
   CREATE TABLE big_local AS SELECT * FROM big" >/dev/null 2>&1
ok $? "big: 1,000,000 rows generated and distributed, and a local copy ($(secs $t0 $(date +%s.%N)) s)"
for t in big big_local; do
	c "SELECT dp_protect('$t', epsilon => 1000); SELECT dp_declare('$t', 'a', lower => 0, upper => 50, bins => 50);
	   SELECT dp_declare('$t', 'b', lower => 0, upper => 30, bins => 30);
	   SELECT dp_declare('$t', 'c', categories => ARRAY['p', 'q', 'r', 's'])" >/dev/null 2>&1
done
t0=$(date +%s.%N); dist=$(marg big "'a', 'b', 'c'"); t1=$(date +%s.%N); here=$(marg big_local "'a', 'b', 'c'"); t2=$(date +%s.%N)
is "$(echo "$dist" | wc -w) $(echo "$dist" | tr ' ' '\n' | awk '{ s += $1 } END { print s }')" "$(echo "$here" | wc -w) 1000000" \
	"dp_marginal of big at epsilon 300: every cell, adding up to its million rows"
ok "$([ "$dist" = "$here" ]; echo $?)" \
	"dp_marginal of 1M distributed rows equals the local copy's, cell by cell ($(secs $t0 $t1) s distributed, $(secs $t1 $t2) s local; load $(cut -d' ' -f1 /proc/loadavg))"
# ---- Citus columnar, another table access method, local: read (serially: it has no parallel
# scan, which dpsynth's scan_workers would have asked for after the charge)
load adult_col
c "CREATE EXTENSION IF NOT EXISTS citus_columnar; ALTER TABLE adult_col SET ACCESS METHOD columnar" >/dev/null
is "$(c "SELECT a.amname FROM pg_class r JOIN pg_am a ON a.oid = r.relam WHERE r.oid = 'adult_col'::regclass")" columnar \
	"adult_col is a columnar table"
psql -X -q -v ON_ERROR_STOP=1 -h "$(node_dir c)" -p "$(node_port c)" -d $DB -v domain="$domain" >/dev/null 2>&1 <<'SQL'
SELECT dp_protect('adult_col', epsilon => 10);
SELECT dp_declare('adult_col', :'domain'::jsonb);
SQL
ok $? "adult_col protected, its domains declared"
# with every table big enough for parallel workers, as scripts/test's second pg_regress pass
total=$(PGOPTIONS="-c min_parallel_table_scan_size=0" c \
	"SELECT sum(noisy_count) FROM dp_marginal('adult_col', ARRAY['sex', 'income'], 1)" -U $ANALYST 2>&1)
# 4 cells, each with noise of sd below 2 at epsilon 1: 400 is far beyond it
ok "$([ "${total%%.*}" -gt 32161 ] 2>/dev/null && [ "${total%%.*}" -lt 32961 ]; echo $?)" \
	"dp_marginal counts the columnar table's rows, with parallel workers allowed (total $total)"
rows=$(PGOPTIONS="-c min_parallel_table_scan_size=0" c \
	"SELECT rows_written FROM dp_synthesize('adult_col', 1)" -U $ANALYST 2>&1)
ok "$([ "$rows" -gt 32161 ] 2>/dev/null && [ "$rows" -lt 32961 ]; echo $?)" \
	"dp_synthesize writes as many rows as the columnar table has, give or take the noise ($rows)"
is "$(c "SELECT count(*) FILTER (WHERE status = 'completed') || ' of ' || count(*) FROM dpsynth.ledger
	WHERE relid = 'adult_col'::regclass")" "2 of 2" "two charges, one per release, both completed"
done_testing
