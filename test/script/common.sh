#!/usr/bin/env bash
# Shared by the script tests: TAP helpers and a fresh database with dpsynth.  Expects PGHOST,
# PGPORT and PGUSER of a running throwaway cluster (scripts/test exports them).
set -uo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The binaries a test uses to stop, restart or create a cluster (pg_ctl, initdb, postgres) are
# $PGBIN's.  scripts/lib.sh falls back to the system's PostgreSQL 15 when PGBIN is unset, which
# would restart a private cluster on the system's server and the dpsynth installed there (maybe
# an older one): refused.  scripts/test exports the PGBIN it runs with; by hand, export it (the
# system's is /usr/lib/postgresql/15/bin).
if [ -z "${PGBIN:-}" ]; then
	echo "Bail out! PGBIN is not set: export PGBIN (the bin/ of the PostgreSQL the cluster runs;" \
		"the system's is /usr/lib/postgresql/15/bin) or run through scripts/test" >&2
	exit 2
fi
source "$TOP/scripts/lib.sh"
set +e
: "${PGHOST:?run through scripts/test, or export PGHOST/PGPORT of a running cluster}"
# and the running cluster's server must be $PGBIN's (checked where /proc shows it)
dp_pm_pid=$(head -n 1 "${DATADIR:-$PGHOST/data}/postmaster.pid" 2>/dev/null)
if [ -n "$dp_pm_pid" ] && dp_pm_exe=$(readlink "/proc/$dp_pm_pid/exe" 2>/dev/null) && [ -n "$dp_pm_exe" ] &&
	[ "${dp_pm_exe% (deleted)}" != "$(readlink -f "$PGBIN/postgres")" ]; then
	echo "Bail out! the cluster at $PGHOST runs $dp_pm_exe, not PGBIN's ($PGBIN/postgres)" >&2
	exit 2
fi
unset dp_pm_pid dp_pm_exe
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

# session NAME DB [psql option ...]: a psql of its own on a pair of FIFOs in $TMPD (the caller
# makes TMPD), left open across statements; sq NAME SQL [seconds] sends it one statement and
# prints its answer (waiting up to 30 s, or the seconds given, for each line)
session() {
	local name=$1 db=$2 w r
	shift 2
	mkfifo "$TMPD/$name.in" "$TMPD/$name.out"
	psql -X -qAt "$@" -d "$db" <"$TMPD/$name.in" >"$TMPD/$name.out" 2>&1 &
	exec {w}>"$TMPD/$name.in"
	exec {r}<"$TMPD/$name.out"
	eval "${name}_W=$w ${name}_R=$r"
}
sq() {
	local w r line
	eval "w=\$${1}_W r=\$${1}_R"
	echo "$2;" >&"$w"
	echo "SELECT 'END-OF-ANSWER';" >&"$w"
	while IFS= read -r -t "${3:-30}" line <&"$r"; do
		[ "$line" = END-OF-ANSWER ] && break
		echo "$line"
	done
}

# wait_lock DB PREFIX: waits (up to 30 s) until a statement of DB starting with PREFIX waits for
# a lock; fails otherwise
wait_lock() {
	for _ in $(seq 1 600); do
		[ "$(q "$1" "SELECT count(*) FROM pg_stat_activity WHERE datname = '$1' AND wait_event_type = 'Lock' AND query LIKE '$2%'")" = 1 ] && return 0
		sleep 0.05
	done
	return 1
}

# backend_pid DB PATTERN: the pid of DB's backend whose query is LIKE PATTERN, waiting up to 5 s
# for it to start (empty if none did)
backend_pid() {
	local pid=""
	for _ in $(seq 1 100); do
		pid=$(q "$1" "SELECT pid FROM pg_stat_activity WHERE query LIKE '$2'")
		[ -n "$pid" ] && break
		sleep 0.05
	done
	echo "$pid"
}

# the threads of process $1 (a backend, and the helper threads of the call it runs)
proc_threads() { ls "/proc/$1/task" 2>/dev/null | wc -l; }

# log_mark: the server log's end now (the cluster logs to $PGHOST/server.log; bails out without
# one, as a crash check would then see nothing); new_log: its lines written since
log_mark() {
	LOG="$PGHOST/server.log"
	if [ ! -f "$LOG" ]; then
		echo "Bail out! no server log at $LOG: the crash checks would see nothing" >&2
		exit 2
	fi
	log_from=$(($(stat -c %s "$LOG") + 1))
}
new_log() { tail -c "+$log_from" "$LOG"; }

# a protected table NAME of Adult's rows K times in database DB, its domains declared
adult_repeated() {
	psql -X -q -d "$1" -v domain="$(cat "$TOP/data/adult/domain.json")" >/dev/null 2>&1 <<SQL
CREATE TABLE $2 (LIKE adult);
INSERT INTO $2 SELECT a.* FROM adult a, generate_series(1, $3) g;
SELECT dp_protect('$2', epsilon => 100);
SELECT dp_declare('$2', :'domain'::jsonb);
SQL
}

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

# catalog DB: the dpsynth extension's objects in DB, one line per object, sorted; a line carries
# what a fresh install and an updated one must agree on (a function's definition, a relation's
# kind, options, columns, constraints, indexes, triggers, policies and privileges, a view's query,
# event triggers, the schema's privileges, comments, the tables pg_dump keeps).  Used by the
# upgrade tests to compare an updated extension with a fresh install object by object.
catalog() {
	q "$1" "WITH ext AS (SELECT oid FROM pg_extension WHERE extname = 'dpsynth'),
	members AS (SELECT classid, objid FROM pg_depend, ext WHERE refclassid = 'pg_extension'::regclass
				AND refobjid = ext.oid AND deptype = 'e'),
	rels AS (SELECT c.oid FROM pg_class c JOIN members m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid)
	SELECT x FROM (
	  SELECT 'fn ' || p.oid::regprocedure || ' ' || md5(pg_get_functiondef(p.oid)) || ' ' || coalesce(p.proacl::text, '') AS x
	  FROM pg_proc p JOIN members m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid WHERE p.prokind <> 'a'
	  UNION ALL
	  SELECT 'agg ' || p.oid::regprocedure || ' ' || concat_ws(' ', a.aggkind, a.aggtransfn::regproc, a.aggfinalfn::regproc,
			 a.aggcombinefn::regproc, a.aggserialfn::regproc, a.aggdeserialfn::regproc, a.aggtranstype::regtype,
			 a.agginitval, p.proparallel, p.proacl)
	  FROM pg_proc p JOIN members m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid
	  JOIN pg_aggregate a ON a.aggfnoid = p.oid
	  UNION ALL
	  SELECT 'rel ' || c.oid::regclass || ' ' || c.relkind::text || ' ' || c.relpersistence::text || ' '
			 || c.relrowsecurity || ' ' || c.relforcerowsecurity || ' ' || coalesce(c.relacl::text, '') || ' '
			 || coalesce(c.reloptions::text, '') || ' ' || CASE WHEN c.relkind = 'v' THEN md5(pg_get_viewdef(c.oid)) ELSE '' END
	  FROM pg_class c JOIN rels r ON r.oid = c.oid
	  UNION ALL
	  SELECT 'col ' || a.attrelid::regclass || ' ' || a.attnum || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
			 || ' ' || a.attnotnull || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '') || ' ' || a.attidentity::text
			 || ' ' || a.attgenerated::text || ' ' || coalesce(a.attacl::text, '')
	  FROM pg_attribute a JOIN rels r ON r.oid = a.attrelid
	  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
	  WHERE a.attnum > 0 AND NOT a.attisdropped
	  UNION ALL
	  SELECT 'con ' || co.conrelid::regclass || ' ' || co.conname || ' ' || pg_get_constraintdef(co.oid)
	  FROM pg_constraint co JOIN rels r ON r.oid = co.conrelid
	  UNION ALL
	  SELECT 'idx ' || i.indrelid::regclass || ' ' || pg_get_indexdef(i.indexrelid)
	  FROM pg_index i JOIN rels r ON r.oid = i.indrelid
	  UNION ALL
	  SELECT 'trg ' || tg.tgrelid::regclass || ' ' || pg_get_triggerdef(tg.oid) || ' ' || tg.tgenabled::text
	  FROM pg_trigger tg JOIN rels r ON r.oid = tg.tgrelid WHERE NOT tg.tgisinternal
	  UNION ALL
	  SELECT 'pol ' || po.polrelid::regclass || ' ' || concat_ws(' ', po.polname, po.polcmd, po.polpermissive,
			 po.polroles::regrole[], pg_get_expr(po.polqual, po.polrelid), pg_get_expr(po.polwithcheck, po.polrelid))
	  FROM pg_policy po JOIN rels r ON r.oid = po.polrelid
	  UNION ALL
	  SELECT 'seq ' || s.seqrelid::regclass || ' ' || concat_ws(' ', s.seqtypid::regtype, s.seqstart, s.seqincrement,
			 s.seqmax, s.seqmin, s.seqcache, s.seqcycle)
	  FROM pg_sequence s JOIN rels r ON r.oid = s.seqrelid
	  UNION ALL
	  SELECT 'evt ' || e.evtname || ' ' || e.evtevent || ' ' || e.evtfoid::regproc || ' ' || coalesce(e.evttags::text, '')
			 || ' ' || e.evtenabled::text
	  FROM pg_event_trigger e JOIN members m ON m.classid = 'pg_event_trigger'::regclass AND m.objid = e.oid
	  UNION ALL
	  SELECT 'nsp ' || n.nspname || ' ' || coalesce(n.nspacl::text, '')
	  FROM pg_namespace n JOIN members m ON m.classid = 'pg_namespace'::regclass AND m.objid = n.oid
	  UNION ALL
	  SELECT 'typ ' || t.oid::regtype || ' ' || t.typtype::text || ' ' || coalesce(t.typacl::text, '') || ' '
			 || coalesce((SELECT string_agg(enumlabel::text, ',' ORDER BY enumsortorder) FROM pg_enum WHERE enumtypid = t.oid), '')
	  FROM pg_type t JOIN members m ON m.classid = 'pg_type'::regclass AND m.objid = t.oid
	  UNION ALL
	  SELECT 'other ' || pg_describe_object(m.classid, m.objid, 0) FROM members m
	  WHERE m.classid NOT IN ('pg_proc'::regclass, 'pg_class'::regclass, 'pg_event_trigger'::regclass,
							  'pg_namespace'::regclass, 'pg_type'::regclass)
	  UNION ALL
	  SELECT 'cmt ' || pg_describe_object(d.classoid, d.objoid, d.objsubid) || ' ' || md5(d.description)
	  FROM pg_description d
	  WHERE (d.classoid, d.objoid) IN (SELECT classid, objid FROM members)
		 OR (d.classoid = 'pg_class'::regclass AND d.objoid IN (SELECT oid FROM rels))
	  UNION ALL
	  SELECT 'cfg ' || cfg::regclass || ' ' || cond FROM pg_extension e, unnest(e.extconfig, e.extcondition) AS u(cfg, cond)
	  WHERE e.extname = 'dpsynth') s
	ORDER BY x"
}

# same_catalog DB FRESH DESCRIPTION: one TAP line, ok when DB's dpsynth equals FRESH's object by
# object; otherwise the differing lines follow as comments (< DB only, > FRESH only).
same_catalog() {
	local got want
	got=$(catalog "$1")
	want=$(catalog "$2")
	[ -n "$want" ] && [ "$got" = "$want" ]
	ok $? "$3"
	[ "$got" = "$want" ] || diff <(echo "$got") <(echo "$want") | grep '^[<>]' | sed -n 1,40p | sed 's/^/# /'
}

# second_cluster_start DIR PORT / second_cluster_stop DIR: another throwaway cluster of the
# installation in use (a shard), Unix socket only, in DIR.
second_cluster_stop() {
	[ -f "$1/data/postmaster.pid" ] &&
		as_pg "$PGBIN/pg_ctl" -D "$1/data" -m immediate -w stop >/dev/null 2>&1
	rm -rf "$1"
}
second_cluster_start() {
	local dir=$1 port=$2
	second_cluster_stop "$dir"
	mkdir -p "$dir"
	[ "$(id -u)" = 0 ] && chown postgres: "$dir"
	as_pg "$PGBIN/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null
	cat >> "$dir/data/postgresql.conf" <<-CONF
listen_addresses = ''
unix_socket_directories = '$dir'
port = $port
max_connections = 20
CONF
	as_pg "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
}

# audit_real_and_broken FLAG PORT_OFFSET CLAIM BROKEN: the empirical privacy audit's two halves,
# with the calling script's releases DB PREFIX and audit DB PREFIX: the installed build keeps its
# claim; a build compiled with -DFLAG (test-only) into a private copy of this PostgreSQL, on a
# cluster at PGPORT + PORT_OFFSET, is refuted.  CLAIM and BROKEN word the two checks.
audit_real_and_broken() {
	local flag=$1 port_offset=$2 claim=$3 broken=$4
	work=$(mktemp -d)
	chmod 755 "$work"
	alt_pid=""
	cleanup() {
		[ -f "$work/cluster/data/postmaster.pid" ] &&
			as_pg "$work/pg$ALT_BIN/pg_ctl" -D "$work/cluster/data" -m immediate -w stop >/dev/null 2>&1
		rm -rf "$work"
	}
	trap cleanup EXIT

	# ---- 1. the installed build ----
	releases $DB "$work/real"
	is "$(cat "$work/real.d0" "$work/real.d1" | wc -l | tr -d ' ')" $((2 * N)) "$((2 * N)) releases from the installed build"
	res=$(audit $DB "$work/real"); rc=$?
	echo "# installed build: $res"
	ok $rc "the installed build keeps its claim$claim${AUDIT_CLAIM_TAIL- (and its epsilon lower bound stays under $EPS)}"
	psql -X -q -d postgres -c "DROP DATABASE $DB" >/dev/null

	# ---- 2. the broken build, in a private copy of this PostgreSQL installation ----
	ALT_BIN=$("$PG_CONFIG" --bindir)
	for d in "$("$PG_CONFIG" --bindir)/.." "$("$PG_CONFIG" --sharedir)" "$("$PG_CONFIG" --includedir)"; do
		d=$(cd "$d" && pwd)
		mkdir -p "$work/pg$(dirname "$d")"
		cp -a "$d" "$work/pg$(dirname "$d")/"
	done
	ALT_CONFIG=$work/pg$ALT_BIN/pg_config
	mkdir -p "$work/src"
	(cd "$TOP" && tar --exclude=.git --exclude='tmp_*' --exclude='test/unit/bin' --exclude='bench/out' -cf - .) | tar -C "$work/src" -xf -
	# Only what the flag changes is compiled again: the copy keeps this checkout's objects (built
	# with the same headers and flags) except those of the sources that name the flag, and the
	# module.  A header naming it, or no objects to keep, means a clean build of everything.  The
	# refutation below is the proof that the flag took effect: an unbroken build is not refuted.
	built=1
	flagged=$(grep -rlw --include="*.[ch]" -e "${flag#-D}" "$work/src/src")
	if [ -z "$flagged" ] || grep -q '\.h$' <<<"$flagged" || ! ls "$work/src"/src/*.o >/dev/null 2>&1; then
		make -C "$work/src" -s clean >/dev/null 2>&1
	else
		for f in $flagged; do rm -f "${f%.c}.o" "${f%.c}.bc"; done
		rm -f "$work/src"/*.so
	fi
	echo "# the broken build compiles: $(echo "$flagged" | xargs -n 1 basename | tr '\n' ' ')"
	if make -C "$work/src" -s PG_CONFIG="$ALT_CONFIG" COPT=$flag >"$work/build.log" 2>&1 &&
		make -C "$work/src" -s PG_CONFIG="$ALT_CONFIG" install >>"$work/build.log" 2>&1; then
		built=0
	fi
	ok $built "the broken build ($flag) compiles into a private copy of PostgreSQL"
	[ $built = 0 ] || tail -n 20 "$work/build.log"
	mkdir -p "$work/cluster"
	chown -R postgres: "$work/cluster" 2>/dev/null
	as_pg "$work/pg$ALT_BIN/initdb" -D "$work/cluster/data" -U postgres --auth=trust --no-sync >/dev/null 2>&1
	cat >> "$work/cluster/data/postgresql.conf" <<-CONF
	listen_addresses = ''
	unix_socket_directories = '$work/cluster'
	port = $((PGPORT + port_offset))
	max_worker_processes = 16
	CONF
	as_pg "$work/pg$ALT_BIN/pg_ctl" -D "$work/cluster/data" -l "$work/cluster/server.log" -w start >/dev/null 2>&1
	ok $? "a temporary cluster runs the broken build"
	(
		export PGHOST=$work/cluster PGPORT=$((PGPORT + port_offset))
		releases $DB "$work/broken"
		audit $DB "$work/broken" >"$work/broken.res" 2>&1
		echo $? >"$work/broken.rc"
	)
	is "$(cat "$work/broken.d0" "$work/broken.d1" 2>/dev/null | wc -l | tr -d ' ')" $((2 * N)) "$((2 * N)) releases from the broken build"
	res=$(cat "$work/broken.res" 2>/dev/null)
	echo "# broken build: $res"
	# a refutation, not any failure: the audit read N + N releases, and their alpha and beta are
	# beyond what the claimed noise allows (an empty or unreadable file makes it fail as well)
	[ "$(cat "$work/broken.rc" 2>/dev/null)" = 1 ] && [[ $res == "releases $N + $N;"*"CLAIM REFUTED" ]]
	ok $? "the same test refutes $broken: $N + $N releases, beta beyond the claimed noise's bound"
}
