#!/usr/bin/env bash
# Past one machine (docs/DISTRIBUTED.md): dpsynth._partial_counts over PostgreSQL's parallel
# query and over a partitioned table with one local partition and one postgres_fdw partition on a
# second local cluster (the "shard").  Checks that the merged counts are exact, what crosses the
# wire in each plan (EXPLAIN VERBOSE's Remote SQL, EXPLAIN ANALYZE's rows), and that the shard
# counts its own rows when the coordinator aggregates partition by partition, also of the codes
# of the encoders as SQL (dpsynth._encoder), which the shard runs itself; and that dp_marginal and
# dp_synthesize on the protected partitioned table count the foreign partition on the shard
# (src/foreign.c, src/synthesize.c).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_dist
SHARD_PORT=${DPSYNTH_SHARD_PORT:-$((PGPORT + 10))}
SHARD_DIR=$TOP/tmp_cluster_shard
SIZES="'{10,20}'"
ROWS_LOCAL=150000
ROWS_SHARD=100000

shard_stop() {
	[ -n "${KEEP_SHARD_LOG:-}" ] && cp "$SHARD_DIR/server.log" /tmp/shard.log 2>/dev/null
	second_cluster_stop "$SHARD_DIR"
}
trap shard_stop EXIT

# ---- the shard: a second throwaway cluster with dpsynth, Unix socket only
second_cluster_start "$SHARD_DIR" "$SHARD_PORT"
ok $? "the shard cluster starts on port $SHARD_PORT"
shard() { psql -X -qAt -v ON_ERROR_STOP=1 -h "$SHARD_DIR" -p "$SHARD_PORT" -d "$DB" -c "$1"; }
psql -X -q -h "$SHARD_DIR" -p "$SHARD_PORT" -d postgres -c "CREATE DATABASE $DB"
shard "CREATE EXTENSION dpsynth" >/dev/null
# the shard's rows: another distribution than the local partition's, so that a lost part shows
shard "CREATE TABLE t_remote (id int NOT NULL, a int NOT NULL, b int NOT NULL);
	INSERT INTO t_remote SELECT $ROWS_LOCAL + i, (i * 7) % 10, (i % 13 + i % 5) % 20 FROM generate_series(1, $ROWS_SHARD) i;
	ANALYZE t_remote;" >/dev/null

# ---- the coordinator: a partitioned table, one partition local, one on the shard
fresh_db $DB >/dev/null
ensure_analyst $DB regress_dist_analyst
psql -X -q -v ON_ERROR_STOP=1 -d $DB >/dev/null <<SQL
CREATE EXTENSION postgres_fdw;
-- extensions 'dpsynth': dpsynth's functions are shippable (the same version is installed there)
CREATE SERVER shard FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '$SHARD_DIR', port '$SHARD_PORT', dbname '$DB', extensions 'dpsynth');
CREATE USER MAPPING FOR postgres SERVER shard OPTIONS (user 'postgres');
CREATE TABLE t (id int NOT NULL, a int NOT NULL, b int NOT NULL) PARTITION BY RANGE (id);
CREATE TABLE t_local PARTITION OF t FOR VALUES FROM (1) TO ($ROWS_LOCAL + 1);
CREATE FOREIGN TABLE t_shard PARTITION OF t FOR VALUES FROM ($ROWS_LOCAL + 1) TO (MAXVALUE)
	SERVER shard OPTIONS (table_name 't_remote');
INSERT INTO t_local SELECT i, i % 10, (i / 3) % 20 FROM generate_series(1, $ROWS_LOCAL) i WHERE i % 10 <> 9 OR i % 7 = 0;
ANALYZE t_local;
ANALYZE t_shard;
SQL
ok $? "postgres_fdw partition t_shard of t on the shard"

# The exact counts of the 10 x 20 grid from GROUP BY (empty cells included), for the rows given.
truth_sql() {
	echo "SELECT array_agg(coalesce(n, 0) ORDER BY g.a, g.b)
		FROM (SELECT a, b FROM generate_series(0, 9) a, generate_series(0, 19) b) g
		LEFT JOIN ($1) c USING (a, b)"
}
local_truth=$(q $DB "$(truth_sql "SELECT a, b, count(*) n FROM t_local GROUP BY a, b")")
remote_truth=$(shard "$(truth_sql "SELECT a, b, count(*) n FROM t_remote GROUP BY a, b")")
# the counts over the union: local + remote, cell by cell
union_truth=$(q $DB "SELECT array_agg(x + y ORDER BY i) FROM unnest('$local_truth'::int8[], '$remote_truth'::int8[]) WITH ORDINALITY u(x, y, i)")
# same_counts GOT WANT DESCRIPTION: equal vectors, described by their number of rows and cells
same_counts() {
	local rows
	rows=$(echo "$2" | tr -d '{}' | tr ',' '\n' | awk '{s += $1} END {print s + 0}')
	ok "$([ -n "$1" ] && [ "$1" = "$2" ]; echo $?)" "$3 ($rows rows in 200 cells)"
	[ "$1" = "$2" ] || echo "# got '$1', want '$2'"
}
# counts TABLE [SETTINGS]: the merged exact counts of TABLE's rows, through the aggregate
counts() { q $DB "$2 SELECT dpsynth._partial_vector(dpsynth._partial_counts(ARRAY[a, b], $SIZES), $SIZES) FROM $1"; }

# ---- 1. PostgreSQL's parallel aggregation on the local partition
PAR="SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;"
plan=$(q $DB "$PAR EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
	SELECT dpsynth._partial_counts(ARRAY[a, b], $SIZES) FROM t_local")
echo "$plan" | sed 's/^/# /'
ok "$(grep -qE 'Finalize Aggregate.*Gather.*Workers Launched: [1-9].*Partial Aggregate.*Parallel Seq Scan' <<<"${plan//$'\n'/ }"; echo $?)" \
	"EXPLAIN ANALYZE: Partial Aggregate in launched workers under Gather, Finalize Aggregate in the leader"
same_counts "$(counts t_local "$PAR")" "$local_truth" "parallel counts of t_local equal GROUP BY's"
same_counts "$(counts t_local "SET max_parallel_workers_per_gather = 0;")" "$local_truth" "serial counts of t_local equal GROUP BY's"

# ---- 2. the aggregate over the partitioned table, as the planner runs it
same_counts "$(counts t "")" "$union_truth" "counts over t (local + postgres_fdw partition) equal the union's"
same_counts "$(counts t "SET enable_partitionwise_aggregate = on; $PAR")" "$union_truth" \
	"the same with partitionwise aggregation and parallel workers"
naive="SET enable_partitionwise_aggregate = on; EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF)
	SELECT dpsynth._partial_counts(ARRAY[a, b], $SIZES) FROM t"
plan=$(q $DB "$naive")
echo "$plan" | sed 's/^/# /'
remote_sql=$(grep -m1 'Remote SQL' <<<"$plan" | sed 's/^ *Remote SQL: //')
ok "$(grep -q 'Partial Aggregate' <<<"$plan" && [[ "$remote_sql" != *_partial_counts* ]]; echo $?)" \
	"postgres_fdw does not push a partial aggregate: the foreign partition is scanned for rows (Remote SQL: $remote_sql)"
is "$(echo "$plan" | grep -A1 'Foreign Scan on' | grep -oE 'actual rows=[0-9]+' | sed -n 1p)" "actual rows=$ROWS_SHARD" \
	"so every row of the shard crosses the wire"

# ---- 3. partition by partition: the whole aggregate of a foreign partition is pushed to the shard
merged="SELECT dpsynth._partial_merge(s) FROM (
		SELECT dpsynth._partial_counts(ARRAY[a, b], $SIZES) s FROM t_local
		UNION ALL SELECT dpsynth._partial_counts(ARRAY[a, b], $SIZES) FROM t_shard) parts"
same_counts "$(q $DB "SELECT dpsynth._partial_vector(($merged), $SIZES)")" "$union_truth" \
	"merging the local partition's state with the shard's equals the union's counts"
plan=$(q $DB "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF) $merged")
echo "$plan" | sed 's/^/# /'
remote_sql=$(grep -m1 'Remote SQL' <<<"$plan" | sed 's/^ *Remote SQL: //')
ok "$([[ "$remote_sql" == *"dpsynth._partial_counts(ARRAY[a, b]"*"FROM public.t_remote"* ]]; echo $?)" \
	"the shard runs the aggregate (Remote SQL: $remote_sql)"
is "$(echo "$plan" | grep -A1 'Foreign Scan' | grep -oE 'actual rows=[0-9]+' | sed -n 1p)" "actual rows=1" \
	"one row (the shard's state) crosses the wire, not $ROWS_SHARD"
bytes=$(shard "SELECT octet_length(dpsynth._partial_counts(ARRAY[a, b], $SIZES)) FROM t_remote")
echo "# the shard's state: $bytes bytes for $ROWS_SHARD rows of 200 cells; the row fetch of section 2 sends $ROWS_SHARD rows of (a, b)"
is "$bytes" "$((10 + 4 * 2 + 8 * 200))" "the shard's state is the dense 200-cell form"
# without extensions 'dpsynth', postgres_fdw does not ship an extension's function: rows cross
q $DB "ALTER SERVER shard OPTIONS (DROP extensions)"
plan=$(q $DB "EXPLAIN (VERBOSE, COSTS OFF) $merged")
remote_sql=$(grep -m1 'Remote SQL' <<<"$plan" | sed 's/^ *Remote SQL: //')
ok "$([[ "$remote_sql" != *_partial_counts* ]]; echo $?)" \
	"without extensions 'dpsynth' the aggregate stays on the coordinator (Remote SQL: $remote_sql)"
q $DB "ALTER SERVER shard OPTIONS (ADD extensions 'dpsynth')"

# ---- 3b. the encoders as SQL (dpsynth._encoder): the shard encodes its own rows and counts them
# (the expressions of a protected local table with the same columns and domains)
q $DB "CREATE TABLE t_domain (id int NOT NULL, a int NOT NULL, b int NOT NULL);
	SELECT dp_protect('t_domain', epsilon => 1, discovery => false);
	SELECT dp_declare('t_domain', 'a', lower => 0, upper => 9, bins => 10);
	SELECT dp_declare('t_domain', 'b', lower => 0, upper => 19, bins => 20);" >/dev/null 2>&1
ea=$(q $DB "SELECT expression FROM dpsynth._encoder('t_domain', 'a')")
eb=$(q $DB "SELECT expression FROM dpsynth._encoder('t_domain', 'b')")
esizes=$(q $DB "SELECT ARRAY[(SELECT codes FROM dpsynth._encoder('t_domain', 'a')), (SELECT codes FROM dpsynth._encoder('t_domain', 'b'))]")
is "$esizes" "{10,20}" "the encoders of a and b: 10 and 20 codes (NOT NULL: no NULL cell)"
encoded="SELECT dpsynth._partial_merge(s) FROM (
		SELECT dpsynth._partial_counts(ARRAY[$ea, $eb], $SIZES) s FROM t_local
		UNION ALL SELECT dpsynth._partial_counts(ARRAY[$ea, $eb], $SIZES) FROM t_shard) parts"
same_counts "$(q $DB "SELECT dpsynth._partial_vector(($encoded), $SIZES)")" "$union_truth" \
	"counts of the encoders' codes, merged over the local partition and the shard, equal the union's"
plan=$(q $DB "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF) $encoded")
remote_sql=$(grep -m1 'Remote SQL' <<<"$plan" | sed 's/^ *Remote SQL: //')
echo "# Remote SQL: $remote_sql"
ok "$([[ "$remote_sql" == *"dpsynth._partial_counts(ARRAY[(CASE WHEN"*"width_bucket"*"FROM public.t_remote"* ]]; echo $?)" \
	"the shard runs the encoders and the aggregate"
is "$(echo "$plan" | grep -A1 'Foreign Scan' | grep -oE 'actual rows=[0-9]+' | sed -n 1p)" "actual rows=1" \
	"one row (the shard's state) crosses the wire"

# ---- 4. who may count: not the analyst, here or on the shard
# (even one with SELECT on the rows: the aggregate itself is refused)
q $DB "GRANT SELECT ON t_local TO regress_dist_analyst"
err=$(psql -X -qAt -U regress_dist_analyst -d $DB -c "SELECT dpsynth._partial_counts(ARRAY[a, b], $SIZES) FROM t_local" 2>&1)
ok "$([[ "$err" == *"permission denied for aggregate _partial_counts"* ]]; echo $?)" "an analyst cannot run the aggregate on the coordinator ($err)"
is "$(shard "SELECT has_function_privilege('public', 'dpsynth._partial_counts(int4[], int4[])', 'EXECUTE')")" f \
	"nor can PUBLIC on the shard"

# ---- 5. dp_marginal on the partitioned table: the shard counts its partition (src/foreign.c)
q $DB "SELECT dp_protect('t', epsilon => 1000, discovery => false);
	SELECT dp_declare('t', 'a', lower => 0, upper => 9, bins => 10);
	SELECT dp_declare('t', 'b', lower => 0, upper => 19, bins => 20);" >/dev/null 2>&1
ok $? "a partitioned table with a foreign partition is protected"
spent() { q $DB "SELECT rho_spent FROM dpsynth.budgets WHERE relid = 't'::regclass"; }
shard "ALTER SYSTEM SET log_statement = 'all'; " >/dev/null 2>&1; shard "SELECT pg_reload_conf()" >/dev/null
mark=$(wc -l <"$SHARD_DIR/server.log")
# sigma < 0.1 at this epsilon: the released counts are the exact ones
released=$(psql -X -qAt -U regress_dist_analyst -d $DB -c "SELECT array_agg(noisy_count ORDER BY i)
	FROM dp_marginal('t', ARRAY['a', 'b'], epsilon => 300) WITH ORDINALITY m(cell, noisy_count, i)" 2>&1)
same_counts "$released" "$union_truth" "an analyst's dp_marginal on t counts the local partition here and t_shard on the shard"
is "$(q $DB "SELECT details->>'foreign_partitions' FROM dpsynth.ledger ORDER BY id DESC LIMIT 1")" 1 \
	"its ledger row says one foreign partition was counted"
sleep 0.5
shard_log=$(tail -n +"$((mark + 1))" "$SHARD_DIR/server.log")
echo "$shard_log" | grep -E '(statement|execute [^:]*): ' | cut -c1-200 | sed 's/^/# shard: /'
ok "$(grep -q 'dpsynth._partial_counts(ARRAY\[(CASE WHEN' <<<"$shard_log"; echo $?)" \
	"the shard ran the encoders and the aggregate"
ok "$(! grep -qE 'SELECT (id, )?a, b FROM public.t_remote' <<< "$shard_log"; echo $?)" \
	"no statement fetched the shard's rows"
s0=$(spent)
err=$(psql -X -qAt -U regress_dist_analyst -d $DB -c "SELECT * FROM dp_discover('t', epsilon => 1)" 2>&1)
ok "$([[ "$err" == *'partition "t_shard" of table "t" is a foreign table'* ]]; echo $?)" \
	"dp_discover reads rows and refuses the foreign partition ($(head -n 1 <<<"$err"))"
err=$(psql -X -qAt -U regress_dist_analyst -d $DB -c "SELECT * FROM dp_synthesize('t', epsilon => 1)" 2>&1)
ok "$([[ "$err" == *'column "id" of table "t" has no public domain'* ]]; echo $?)" \
	"dp_synthesize with a column that discovery would learn: refused ($(head -n 1 <<<"$err"))"
is "$(spent)" "$s0" "before any charge"

# ---- 5b. dp_synthesize on the partitioned table (the adaptive method): the shard counts every
# column and pair of its partition, the coordinator adds them to the local rows' counts
q $DB "SELECT dp_declare('t', 'id', lower => 1, upper => $((ROWS_LOCAL + ROWS_SHARD)), bins => 8);
	GRANT CREATE ON SCHEMA public TO regress_dist_analyst" >/dev/null
err=$(psql -X -qAt -U regress_dist_analyst -d $DB -c "SELECT * FROM dp_synthesize('t', epsilon => 1, method => 'privsyn')" 2>&1)
ok "$([[ "$err" == *'the privsyn method reads every row'* ]]; echo $?)" \
	"the privsyn method: refused ($(head -n 1 <<<"$err"))"
is "$(spent)" "$s0" "before any charge"
total=$(q $DB "SELECT count(*) FROM t")
mark=$(wc -l <"$SHARD_DIR/server.log")
res=$(psql -X -qAt -U regress_dist_analyst -d $DB -c "SELECT rows_written, k_way_marginals FROM dp_synthesize('t', epsilon => 200, target => 'regress_dist_analyst_t_synth')" 2>&1)
sleep 0.5
shard_log=$(tail -n +"$((mark + 1))" "$SHARD_DIR/server.log")
rows=${res%%|*}
ok "$([[ "$rows" =~ ^[0-9]+$ ]] && [ $((rows > total ? rows - total : total - rows)) -le $((total / 100)) ]; echo $?)" \
	"an analyst's dp_synthesize on t: $rows rows for $total (within 1%; rows_written|k_way: $res)"
is "$(q $DB "SELECT details->>'foreign_partitions' FROM dpsynth.ledger ORDER BY id DESC LIMIT 1")" 1 \
	"its ledger row says one foreign partition was counted"
# (a, b) of the synthetic rows against the union's exact counts (and the local partition's): the
# total variation distance, over the 200 cells
tvd() {
	q $DB "WITH s AS (SELECT a, b, count(*)::float8 / sum(count(*)) OVER () p FROM regress_dist_analyst_t_synth GROUP BY a, b),
		r AS (SELECT (i - 1) / 20 a, (i - 1) % 20 b, n::float8 / sum(n) OVER () p FROM unnest('$1'::int8[]) WITH ORDINALITY u(n, i))
		SELECT round((sum(abs(coalesce(s.p, 0) - coalesce(r.p, 0))) / 2)::numeric, 4) FROM s FULL JOIN r USING (a, b)"
}
# False alarms: the call runs at epsilon 200 (noise sd under one row a cell on every marginal it
# measures), and a run read .0003 against the union and .3037 against the local partition.  Even a
# copy no better than 250,000 rows drawn from the union's 200 cells has E TVD <= 1/2 sqrt(2 K /
# (pi n)) = .011 (K = 200, n = 250,000), and one row moves the TVD by at most 1/n, so by
# McDiarmid's inequality P(TVD >= .05) <= exp(-2 (.039)^2 n) < 1e-300.  The local partition's
# distance to the union is fixed by the data (its own (a, b) pattern), so the second bar (> .2)
# fails only with the first.
tvd_union=$(tvd "$union_truth")
tvd_local=$(tvd "$local_truth")
ok "$(awk -v u="$tvd_union" -v l="$tvd_local" 'BEGIN { exit !(u < 0.05 && l > 0.2) }'; echo $?)" \
	"the synthetic (a, b) follows the union's rows (TVD $tvd_union), not the local partition's ($tvd_local)"
echo "$shard_log" | grep -A1 -E 'execute [^:]*: DECLARE' | grep -v '^--' | cut -c1-160 | sed 's/^/# shard: /'
# before the charge, two probes over zero rows (WHERE $1 with $1 false: the column types, then the
# count statement with the shard's identity); after it, the count
stmt=$(echo "$shard_log" | grep -A1 -E 'execute [^:]*: DECLARE .* CURSOR FOR$' | grep 'SELECT dpsynth._partial_counts(ARRAY\[(CASE WHEN' | grep -v '\$1')
probes=$(echo "$shard_log" | grep -A1 -E 'execute [^:]*: DECLARE .* CURSOR FOR$' | grep -c 'WHERE (\$1::boolean)')
is "$(echo "$shard_log" | grep -cE 'execute [^:]*: DECLARE')|$probes|$(echo "$shard_log" | grep -c "parameters: \$1 = 'f'")|$(echo "$stmt" | grep -c .)|$(echo "$stmt" | grep -o 'dpsynth._partial_counts(ARRAY' | wc -l)" "3|2|2|1|3" \
	"the shard opened three cursors: two probes over zero rows, then one statement (one scan) with the encoders and the aggregate of each pair of (id, a, b)"
ok "$(! grep -qE 'SELECT (id, )?a, b FROM public.t_remote|SELECT id, a, b' <<< "$shard_log"; echo $?)" \
	"no statement fetched the shard's rows"
s0=$(spent)
# a server that would send rows (postgres_fdw does not ship dpsynth's aggregate) is refused
q $DB "ALTER SERVER shard OPTIONS (DROP extensions)"
err=$(psql -X -qAt -U regress_dist_analyst -d $DB -c "SELECT count(*) FROM dp_marginal('t', ARRAY['a'], epsilon => 1)" 2>&1)
ok "$([[ "$err" == *'server "shard" of partition "t_shard" would send rows, not counts'* ]]; echo $?)" \
	"without extensions 'dpsynth' the call is refused ($err)"
is "$(spent)" "$s0" "before any charge"
q $DB "ALTER SERVER shard OPTIONS (ADD extensions 'dpsynth')"
# a shard that is down: refused before the charge (the statement over no row)
as_pg "$PGBIN/pg_ctl" -D "$SHARD_DIR/data" -m fast -w stop >/dev/null 2>&1
err=$(psql -X -qAt -U regress_dist_analyst -d $DB -c "SELECT count(*) FROM dp_marginal('t', ARRAY['a'], epsilon => 1)" 2>&1)
head -n 2 <<<"# $err"
ok "$([[ "$err" == *'could not connect to server "shard"'* ]]; echo $?)" "a shard that is down: the call fails"
is "$(spent)" "$s0" "before any charge"

# ---- 6. more column kinds, and what is refused before the charge
# t2: a text column counted on the shard, a timestamp column whose encoder postgres_fdw keeps,
# and 16 booleans (a marginal over the foreign partition has at most 16 columns)
as_pg "$PGBIN/pg_ctl" -D "$SHARD_DIR/data" -l "$SHARD_DIR/server.log" -w start >/dev/null
bools=$(for i in $(seq 1 16); do printf ', f%d boolean NOT NULL' "$i"; done)
bvals=$(for i in $(seq 1 16); do printf ', (i >> %d) %% 2 = 1' "$((i - 1))"; done)
shard "CREATE TABLE t2_remote (id int NOT NULL, g text, ts timestamp $bools);
	INSERT INTO t2_remote SELECT 1000 + i, (ARRAY['x', 'y', 'z', 'other'])[1 + i % 4], TIMESTAMP '2020-01-01' + i * INTERVAL '15 minutes' $bvals
	FROM generate_series(1, 3000) i;" >/dev/null
q $DB "CREATE TABLE t2 (id int NOT NULL, g text, ts timestamp $bools) PARTITION BY RANGE (id);
	CREATE TABLE t2_local PARTITION OF t2 FOR VALUES FROM (MINVALUE) TO (1001);
	CREATE FOREIGN TABLE t2_shard PARTITION OF t2 FOR VALUES FROM (1001) TO (100000)
		SERVER shard OPTIONS (table_name 't2_remote');
	INSERT INTO t2_local SELECT i, (ARRAY['x', 'y', NULL])[1 + i % 3],
		CASE WHEN i % 10 <> 0 THEN TIMESTAMP '2019-12-31' + i * INTERVAL '1 hour' END $bvals FROM generate_series(1, 1000) i;
	SELECT dp_protect('t2', epsilon => 1000, discovery => false);
	SELECT dp_declare('t2', 'g', categories => ARRAY['x', 'y', 'z']);
	SELECT dp_declare('t2', 'ts', lower => '2020-01-01'::timestamptz, upper => '2020-02-01'::timestamptz, bins => 4);" >/dev/null 2>&1
spent2() { q $DB "SELECT rho_spent FROM dpsynth.budgets WHERE relid = 't2'::regclass"; }
released=$(psql -X -qAt -U regress_dist_analyst -d $DB -c "SELECT string_agg(coalesce(cell[1], 'NULL') || ':' || noisy_count, ' ' ORDER BY i)
	FROM dp_marginal('t2', ARRAY['g'], epsilon => 300) WITH ORDINALITY m(cell, noisy_count, i)" 2>&1)
exact=$(q $DB "SELECT string_agg(g || ':' || n, ' ' ORDER BY o) FROM (SELECT CASE WHEN g IN ('x', 'y', 'z') THEN g ELSE 'NULL' END g,
	count(*) n, min(CASE g WHEN 'x' THEN 1 WHEN 'y' THEN 2 WHEN 'z' THEN 3 ELSE 4 END) o FROM t2 GROUP BY 1) c")
is "$released" "$exact" "a text column: the shard matches its labels (an unlisted label and NULL in the NULL cell)"
# a timestamp column, binned on the shard (its encoder compares timestamps): the same counts as
# a local copy of the same rows read by the C encoder
q $DB "CREATE TABLE t2_copy AS SELECT g, ts FROM t2;
	SELECT dp_protect('t2_copy', epsilon => 1000, discovery => false);
	SELECT dp_declare('t2_copy', 'ts', lower => '2020-01-01'::timestamptz, upper => '2020-02-01'::timestamptz, bins => 4);" >/dev/null 2>&1
across=$(q $DB "SELECT string_agg(noisy_count::text, ' ') FROM dp_marginal('t2', ARRAY['ts'], epsilon => 300)")
here=$(q $DB "SELECT string_agg(noisy_count::text, ' ') FROM dp_marginal('t2_copy', ARRAY['ts'], epsilon => 300)")
ok "$([ -n "$across" ] && [ "$across" = "$here" ]; echo $?)" "a timestamp column counted on the shard equals the C encoder's counts of the same rows ($across)"
# categories of an integer are matched by format('%s', ...), which is stable: postgres_fdw keeps it
q $DB "SELECT dp_declare('t2', 'id', categories => ARRAY['1', '2'])" >/dev/null 2>&1
s0=$(spent2)
err=$(psql -X -qAt -U regress_dist_analyst -d $DB -c "SELECT count(*) FROM dp_marginal('t2', ARRAY['g', 'id'], epsilon => 1)" 2>&1)
ok "$([[ "$err" == *'would not ship the encoder of column "id"'* ]]; echo $?)" "an encoder postgres_fdw keeps local: refused, naming the column ($(head -n 1 <<<"$err"))"
err=$(psql -X -qAt -U regress_dist_analyst -d $DB -c "SELECT count(*) FROM dp_marginal('t2', ARRAY['g'$(for i in $(seq 1 16); do printf ", 'f%d'" "$i"; done)], epsilon => 1)" 2>&1)
ok "$([[ "$err" == *"at most 16 columns"* ]]; echo $?)" "17 columns: refused ($(head -n 1 <<<"$err"))"
# a second partition over the same remote table would count its rows twice
q $DB "CREATE FOREIGN TABLE t2_again PARTITION OF t2 FOR VALUES FROM (100000) TO (MAXVALUE) SERVER shard OPTIONS (table_name 't2_remote')"
err=$(psql -X -qAt -U regress_dist_analyst -d $DB -c "SELECT count(*) FROM dp_marginal('t2', ARRAY['g'], epsilon => 1)" 2>&1)
ok "$([[ "$err" == *'read the same table on server "shard"'* ]]; echo $?)" "two partitions over one remote table: refused ($(head -n 1 <<<"$err"))"
q $DB "DROP FOREIGN TABLE t2_again"
is "$(spent2)" "$s0" "each refused before any charge"
err=$(psql -X -qAt -U regress_dist_analyst -d $DB -c "SELECT count(*) FROM dp_synthesize('t2', epsilon => 1)" 2>&1)
ok "$([[ "$err" == *'would not ship the encoder of column "id"'* ]]; echo $?)" "dp_synthesize too: refused, naming the column ($(head -n 1 <<<"$err"))"
is "$(spent2)" "$s0" "before any charge"

# t3: 25 columns, 300 pairs: two statements on the shard (DP_FOREIGN_SETS_PER_SCAN = 256)
b24=$(for i in $(seq 1 24); do printf ', f%d boolean NOT NULL' "$i"; done)
v24=$(for i in $(seq 1 24); do printf ', (i * %d) %% 7 < %d' "$i" "$((1 + i % 5))"; done)
shard "CREATE TABLE t3_remote (id int NOT NULL $b24);
	INSERT INTO t3_remote SELECT 5000 + i $v24 FROM generate_series(1, 4000) i;" >/dev/null
q $DB "CREATE TABLE t3 (id int NOT NULL $b24) PARTITION BY RANGE (id);
	CREATE TABLE t3_local PARTITION OF t3 FOR VALUES FROM (MINVALUE) TO (5001);
	CREATE FOREIGN TABLE t3_shard PARTITION OF t3 FOR VALUES FROM (5001) TO (MAXVALUE) SERVER shard OPTIONS (table_name 't3_remote');
	INSERT INTO t3_local SELECT i $(for i in $(seq 1 24); do printf ', i %% 2 = 0'; done) FROM generate_series(1, 3000) i;
	SELECT dp_protect('t3', epsilon => 1000);" >/dev/null 2>&1
# discovery is allowed on t3, but it would read rows: refused for the foreign partition
spent3() { q $DB "SELECT rho_spent FROM dpsynth.budgets WHERE relid = 't3'::regclass"; }
s3=$(spent3)
err=$(psql -X -qAt -U regress_dist_analyst -d $DB -c "SELECT count(*) FROM dp_synthesize('t3', epsilon => 1)" 2>&1)
ok "$([[ "$err" == *'column "id" of table "t3" has no public domain, and the table has a foreign partition'* ]]; echo $?)" \
	"a column discovery would learn: refused ($(head -n 1 <<<"$err"))"
is "$(spent3)" "$s3" "before any charge"
q $DB "SELECT dp_declare('t3', 'id', lower => 1, upper => 9000, bins => 4)" >/dev/null
mark=$(wc -l <"$SHARD_DIR/server.log")
res=$(psql -X -qAt -U regress_dist_analyst -d $DB -c "SELECT rows_written FROM dp_synthesize('t3', epsilon => 500, target => 'regress_dist_analyst_t3_synth', focus => ARRAY['f1'])" 2>&1)
sleep 0.5
stmts=$(tail -n +"$((mark + 1))" "$SHARD_DIR/server.log" | grep -A1 -E 'execute [^:]*: DECLARE .* CURSOR FOR$' | grep 'SELECT dpsynth._partial_counts(ARRAY' | grep -v '\$1')
is "$res|$(echo "$stmts" | grep -c .)|$(echo "$stmts" | grep -o 'dpsynth._partial_counts(ARRAY' | wc -l)" "7000|2|300" \
	"25 columns, focus on f1: 7,000 rows written; the shard counted the 300 pairs in 2 statements"
is "$(q $DB "SELECT (details->'focus')::text FROM dpsynth.ledger ORDER BY id DESC LIMIT 1")" '["f1"]' "its ledger row names the focus"
share=$(q $DB "SELECT round(avg(f1::int)::numeric, 3) || '|' || (SELECT round(avg(f1::int)::numeric, 3) FROM t3) FROM regress_dist_analyst_t3_synth")
ok "$(awk -F'|' 'NF == 2 { d = $1 - $2; ok = (d < 0.02 && d > -0.02) } END { exit !ok }' <<<"$share"; echo $?)" \
	"f1's share in the synthetic rows follows the union's (synthetic|real: $share)"

psql -X -q -d postgres -c "DROP DATABASE $DB" 2>/dev/null
done_testing
