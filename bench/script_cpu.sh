#!/usr/bin/env bash
# bench/script_cpu.sh SCRIPT [ARGS]: the wall seconds and CPU seconds of one script test (or any
# script that uses the cluster of PGHOST/PGPORT), for comparing a tier before and after a change
# on a shared machine, where wall seconds follow the load and CPU seconds do not.  Client CPU is
# the script's and its children's (/usr/bin/time); server CPU is what the cluster's processes
# used in between, read from the postmaster's reaped children (/proc/PID/stat cutime + cstime),
# so it counts the backends that ended (the script's own sessions) and is only the script's when
# nothing else uses the cluster.  A script that restarts the server has no server CPU ("?").
# Prints one line: script, exit status, wall, client and server CPU, TAP ok / not ok, load.
set -uo pipefail
: "${PGHOST:?export PGHOST/PGPORT of a running cluster}"
[ $# -ge 1 ] || { echo "usage: bench/script_cpu.sh SCRIPT [ARGS]" >&2; exit 2; }
pidfile=$PGHOST/data/postmaster.pid
[ -f "$pidfile" ] || pidfile=${DATADIR:-$PGHOST/data}/postmaster.pid
pm=$(head -n 1 "$pidfile")
reaped() { awk '{print $16 + $17}' "/proc/$pm/stat" 2>/dev/null; }
tmp=$(mktemp -d)
c0=$(reaped)
l0=$(cut -d' ' -f1 /proc/loadavg)
/usr/bin/time -f "%e %U %S" -o "$tmp/time" bash "$@" >"$tmp/out" 2>&1
rc=$?
sleep 2	# the last backends are reaped
c1=$(reaped)
read -r wall user sys <"$tmp/time"
server="?"
[ -n "$c1" ] && server=$(awk -v a="$c0" -v b="$c1" -v t="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", (b - a) / t}')
printf '%s rc=%s wall=%s client_cpu=%.2f server_cpu=%s ok=%s not_ok=%s load=%s..%s\n' "$1" "$rc" "$wall" \
	"$(echo "$user + $sys" | bc)" "$server" "$(grep -c '^ok' "$tmp/out")" "$(grep -c '^not ok' "$tmp/out")" \
	"$l0" "$(cut -d' ' -f1 /proc/loadavg)"
rm -rf "$tmp"
