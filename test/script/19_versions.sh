#!/usr/bin/env bash
# sql/ ships one full script of an old version (the base) and the chain of update scripts
# dpsynth--OLD--NEW.sql; every version installs through them.  The versions are read from the
# scripts' names, so a new update script is covered without editing this test:
# - the chain leads from the base to the current version (dpsynth.control's default_version)
#   without a gap or a fork and uses every update script, and the server installs exactly these
#   scripts (no other full script shadows the chain);
# - the base, updated one step at a time to the current version, is object for object a fresh
#   install (catalog and same_catalog: common.sh);
# - every version, installed with CREATE EXTENSION dpsynth VERSION 'x' in a fresh database and
#   updated with ALTER EXTENSION dpsynth UPDATE, is object for object a fresh install.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
PREFIX=dpsynth_versions
FRESH=${PREFIX}_fresh
current=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$TOP/dpsynth.control")

# ---- the scripts: one base, and update scripts that chain it to the current version
declare -A next
bases=()
updates=0
fork=""
for f in "$TOP"/sql/dpsynth--*.sql; do
	name=${f##*/dpsynth--}
	name=${name%.sql}
	case "$name" in
		*--*)
			from=${name%%--*}
			to=${name#*--}
			[ -n "${next[$from]:-}" ] && fork="$fork $from"
			next[$from]=$to
			updates=$((updates + 1)) ;;
		"$current") ;;	# the build's copy of sql/dpsynth.sql
		*) bases+=("$name") ;;
	esac
done
is "${#bases[@]}" 1 "sql/ ships one full script besides the current version's (${bases[*]:-none})"
base=${bases[0]:-}
is "$fork" "" "no version has two update scripts"
versions=()
v=$base
while [ -n "$v" ] && [ "$v" != "$current" ] && [ ${#versions[@]} -le $updates ]; do
	versions+=("$v")
	v=${next[$v]:-}
done
is "$v" "$current" "the update scripts chain $base to $current (${versions[*]} ${v:-<gap>})"
is "${#versions[@]}" "$updates" "the chain uses every update script"

# the server's extension directory holds exactly these scripts (`make install` of this checkout)
want=$(cd "$TOP/sql" && for f in dpsynth--*--*.sql dpsynth--"$base".sql; do echo "$f $(md5sum <"$f" | cut -c1-32)"; done
	echo "dpsynth--$current.sql $(md5sum <"$TOP/sql/dpsynth.sql" | cut -c1-32)")
got=$(q postgres "SELECT f || ' ' || md5(pg_read_file(d || '/' || f))
	FROM (SELECT setting || '/extension' AS d FROM pg_config WHERE name = 'SHAREDIR') s, pg_ls_dir(d) f
	WHERE f LIKE 'dpsynth--%.sql'")
[ "$(echo "$got" | sort)" = "$(echo "$want" | sort)" ]
ok $? "the server installs this checkout's scripts and no other full script (else: make install)"
diff <(echo "$got" | sort) <(echo "$want" | sort) | grep '^[<>]' | sed 's/^/# /'
is "$(q postgres "SELECT string_agg(version, ' ' ORDER BY version) FROM pg_available_extension_versions WHERE name = 'dpsynth'")" \
	"$(printf '%s\n' "${versions[@]}" "$current" | sort | tr '\n' ' ' | sed 's/ $//')" \
	"pg_available_extension_versions offers every version of the chain"

extversion() { q "$1" "SELECT extversion FROM pg_extension WHERE extname = 'dpsynth'"; }
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $FRESH" 2>/dev/null
psql -X -q -d postgres -c "CREATE DATABASE $FRESH"
q $FRESH "CREATE EXTENSION dpsynth" >/dev/null
is "$(extversion $FRESH)" "$current" "a fresh install is $current"
ok "$([ "$(catalog $FRESH | grep -c '^fn ')" -gt 0 ]; echo $?)" "the catalog lists the extension's functions"

# ---- the base, updated one step at a time
db=${PREFIX}_chain
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" 2>/dev/null
psql -X -q -d postgres -c "CREATE DATABASE $db"
q $db "CREATE EXTENSION dpsynth VERSION '$base'" >/dev/null
is "$(extversion $db)" "$base" "the base $base installs"
for v in "${versions[@]:1}" "$current"; do
	q $db "ALTER EXTENSION dpsynth UPDATE TO '$v'" >/dev/null
	is "$(extversion $db)" "$v" "one step: ALTER EXTENSION dpsynth UPDATE TO '$v'"
done
same_catalog $db $FRESH "$base updated step by step to $current equals a fresh install"
psql -X -q -d postgres -c "DROP DATABASE $db"

# ---- every version installed through the chain, then updated to the current one
for v in "${versions[@]}"; do
	db=${PREFIX}_${v//./_}
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" 2>/dev/null
	psql -X -q -d postgres -c "CREATE DATABASE $db"
	q $db "CREATE EXTENSION dpsynth VERSION '$v'" >/dev/null
	is "$(extversion $db)" "$v" "CREATE EXTENSION dpsynth VERSION '$v'"
	q $db "ALTER EXTENSION dpsynth UPDATE" >/dev/null
	is "$(extversion $db)" "$current" "$v: ALTER EXTENSION dpsynth UPDATE reaches $current"
	same_catalog $db $FRESH "$v updated to $current equals a fresh install"
	psql -X -q -d postgres -c "DROP DATABASE $db"
done

psql -X -q -d postgres -c "DROP DATABASE $FRESH"
done_testing
