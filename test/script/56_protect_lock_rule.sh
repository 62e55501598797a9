#!/usr/bin/env bash
# dp_protect locks the tree it protects (SHARE UPDATE EXCLUSIVE: test/script/52_protect_detach_race.sh)
# for exactly the roles that may protect it, and who may is written once: dpsynth._check_owner,
# which dpsynth._dp_protect asks before it takes the lock (dpsynth._lock_tree) and again under it.
# For a matrix of roles, with the lock held by another session on a partition of the tree: a role
# the rule lets through waits for the lock (and runs out of lock_timeout, 55P03), any other is
# refused at once (42501) without queueing.  And a role that loses the right while it waits is
# refused once it has the lock.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_protect_lock_rule
fresh_db $DB
psql -X -q -d $DB >/dev/null 2>&1 <<'SQL'
DO $$
DECLARE r text;
BEGIN
	FOREACH r IN ARRAY ARRAY['regress_plr_owner', 'regress_plr_member', 'regress_plr_noinherit',
							 'regress_plr_admin_read', 'regress_plr_admin', 'regress_plr_other',
							 'regress_plr_super', 'regress_plr_leaver'] LOOP
		IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
			EXECUTE format('CREATE ROLE %I LOGIN', r);
		END IF;
	END LOOP;
END $$;
ALTER ROLE regress_plr_super SUPERUSER;
ALTER ROLE regress_plr_noinherit NOINHERIT;
GRANT regress_plr_owner TO regress_plr_member, regress_plr_noinherit, regress_plr_leaver;
GRANT dpsynth_admin TO regress_plr_admin_read, regress_plr_admin;
CREATE TABLE t (id int4, x int4) PARTITION BY RANGE (id);
CREATE TABLE t1 PARTITION OF t FOR VALUES FROM (0) TO (100);
ALTER TABLE t OWNER TO regress_plr_owner;
ALTER TABLE t1 OWNER TO regress_plr_owner;
GRANT SELECT ON t TO regress_plr_admin_read;
SQL

TMPD=$(mktemp -d)
bg=""
cleanup() { [ -n "$bg" ] && kill "$bg" 2>/dev/null; rm -rf "$TMPD"; }
trap cleanup EXIT
session H $DB
budget() { q $DB "SELECT coalesce((SELECT epsilon::text FROM dpsynth.budgets WHERE relid = '$1'::regclass), 'none')"; }
# the rule itself, asked as the extension's owner
rule() {
	q $DB "DO \$\$ BEGIN
		PERFORM dpsynth._check_owner('$1'::regrole, 't'::regclass, 'protect');
		RAISE NOTICE 'allowed';
	EXCEPTION WHEN insufficient_privilege THEN RAISE NOTICE 'refused';
	END \$\$" 2>&1 | sed -n 's/.*NOTICE:  //p'
}
# what dp_protect does for the role while H holds SHARE UPDATE EXCLUSIVE on the partition
attempt() {
	local out
	out=$(psql -X -qAt -v VERBOSITY=verbose -U "$1" -d $DB -c "SET lock_timeout = '2s'" \
		-c "SELECT dp_protect('t', epsilon => 5)" 2>&1 | head -n 1)
	case $out in
		*"ERROR:  55P03:"*) echo waited ;;
		*"ERROR:  42501:"*) echo refused ;;
		*) echo "other: $out" ;;
	esac
}

sq H "BEGIN" >/dev/null
sq H "LOCK TABLE t1 IN SHARE UPDATE EXCLUSIVE MODE" >/dev/null
allowed=""
for r in regress_plr_owner regress_plr_member regress_plr_noinherit regress_plr_admin_read \
		regress_plr_admin regress_plr_other regress_plr_super; do
	verdict=$(rule $r)
	[ "$verdict" = allowed ] && allowed="$allowed ${r#regress_plr_}"
	want=refused
	[ "$verdict" = allowed ] && want=waited
	is "$(attempt $r)" "$want" "$r: dp_protect waits for the tree's lock exactly when dpsynth._check_owner lets it through ($verdict)"
done
is "$allowed" " owner member admin_read super" "the rule lets through the owner, an inheriting member of it, an admin who may read the table, a superuser"
sq H "COMMIT" >/dev/null
is "$(budget t)" none "no attempt protected the table"

# the right lost while waiting for the lock: refused under it
sq H "BEGIN" >/dev/null
sq H "LOCK TABLE t1 IN SHARE UPDATE EXCLUSIVE MODE" >/dev/null
psql -X -qAt -v VERBOSITY=verbose -U regress_plr_leaver -d $DB -c "SELECT dp_protect('t', epsilon => 5)" \
	>"$TMPD/bg.out" 2>&1 &
bg=$!
wait_lock $DB "SELECT dp_protect"
ok $? "a member of the owner's role waits for the tree's lock"
q $DB "REVOKE regress_plr_owner FROM regress_plr_leaver" >/dev/null
sq H "COMMIT" >/dev/null
wait $bg
bg=""
grep -q "ERROR:  42501: permission denied to protect table" "$TMPD/bg.out"
ok $? "and, no longer a member once it has it, is refused (got '$(head -n 1 "$TMPD/bg.out")')"
is "$(budget t)" none "the table is not protected"
q $DB "GRANT regress_plr_owner TO regress_plr_leaver" >/dev/null
psql -X -qAt -U regress_plr_leaver -d $DB -c "SELECT dp_protect('t', epsilon => 5)" >/dev/null 2>&1
is "$(budget t)" 5 "a member protects it when nothing waits"
# A catalog not yet updated (0.20.0, whose _dp_protect does not call dpsynth._lock_tree) with this
# library loaded: the library locks the tree itself after dpsynth._check_owner, for the same roles.
OLD=${DB}_old
psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $OLD" -c "CREATE DATABASE $OLD" >/dev/null
psql -X -q -d $OLD >/dev/null 2>&1 <<'SQL'
CREATE EXTENSION dpsynth VERSION '0.20.0';
CREATE TABLE t (id int4, x int4) PARTITION BY RANGE (id);
CREATE TABLE t1 PARTITION OF t FOR VALUES FROM (0) TO (100);
ALTER TABLE t OWNER TO regress_plr_owner;
ALTER TABLE t1 OWNER TO regress_plr_owner;
SQL
is "$(q $OLD "SELECT extversion || ' ' || (to_regproc('dpsynth._lock_tree') IS NULL) FROM pg_extension WHERE extname = 'dpsynth'")" \
	"0.20.0 true" "a 0.20.0 catalog, without dpsynth._lock_tree"
session O $OLD
sq O "BEGIN" >/dev/null
sq O "LOCK TABLE t1 IN SHARE UPDATE EXCLUSIVE MODE" >/dev/null
old_attempt() {
	local out
	out=$(psql -X -qAt -v VERBOSITY=verbose -U "$1" -d $OLD -c "SET lock_timeout = '2s'" \
		-c "SELECT dp_protect('t', epsilon => 5)" 2>&1 | head -n 1)
	case $out in
		*"ERROR:  55P03:"*) echo waited ;;
		*"ERROR:  42501:"*) echo refused ;;
		*) echo "other: $out" ;;
	esac
}
is "$(old_attempt regress_plr_owner)" waited "on the 0.20.0 catalog the owner's dp_protect waits for the tree's lock"
is "$(old_attempt regress_plr_member)" waited "so does an inheriting member's"
is "$(old_attempt regress_plr_other)" refused "another role is refused at once, without queueing"
sq O "COMMIT" >/dev/null
is "$(q $OLD "SELECT count(*) FROM dpsynth.budgets")" 0 "no attempt protected the table"
sq O "SELECT 1" >/dev/null
exec {O_W}>&-
psql -X -q -d postgres -c "DROP DATABASE $OLD WITH (FORCE)" >/dev/null

# the roles are the cluster's (a superuser among them): gone with the database
sq H "SELECT 1" >/dev/null
exec {H_W}>&-
psql -X -q -d postgres -c "DROP DATABASE $DB WITH (FORCE)" \
	-c "DROP ROLE regress_plr_owner, regress_plr_member, regress_plr_noinherit, regress_plr_admin_read, regress_plr_admin, regress_plr_other, regress_plr_super, regress_plr_leaver" >/dev/null
ok $? "the database and the roles are dropped"
done_testing
