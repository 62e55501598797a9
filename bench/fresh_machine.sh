#!/usr/bin/env bash
# bench/fresh_machine.sh [options] [COMMIT] - the README's test command on a fresh Debian 12.
#
# Makes a fresh Debian 12 (bookworm) root with mmdebstrap, clones COMMIT (default HEAD) of a git
# repository (--repo, default this checkout) into it as /ci/dpsynth with ../shared beside it
# (/ci/shared, a read-only bind mount of --shared, default this checkout's ../shared), mounts
# /proc, /sys, /dev, /dev/pts and a tmpfs /dev/shm, and runs the README's test command (the
# `./scripts/test` line of its first code block, as .ci/run runs it: from the checkout's top) in
# the root as root, under /usr/bin/time, with a clean environment.  The log goes to
# ROOT.log; the wall time and the command's last "N passed, N failed" line are printed at the end.
# Everything mounted is unmounted on exit, and any process still running in the root is ended
# first; the root stays for inspection (--clean removes it).  The host's own files are not used
# by the command: /var/cache/dpsynth-pg (scripts/pgbuild, scripts/citusbuild) is the root's own.
#
# What a fresh machine is taken to have (--variant, --include): mmdebstrap's minbase (the
# Essential and Priority: required packages and apt, as in Debian's container image) plus
# ca-certificates; the checkout is already there (cloned by the host's git, so git is not
# installed in the root).  Two departures from a real machine, both for sharing this one: no
# service is started by a package's installation (/usr/sbin/policy-rc.d exits 101: the
# postgresql package would start a cluster on the host's port 5432), and the command's clusters
# use DPSYNTH_PORT=--port (default 55200; scripts/test uses that port to port + 99).
#
# Options:
#   --root DIR      the root to make (default tmp_fresh_root in this checkout); it must not exist
#   --repo DIR      the git repository to clone (default this checkout)
#   --shared DIR    what /ci/shared shows, read-only (default this checkout's ../shared)
#   --port N        DPSYNTH_PORT inside the root (default 55200)
#   --nice N        run the command (and the setup) under nice -n N (default: not niced)
#   --variant V     mmdebstrap's variant (default minbase); --include PKGS (default ca-certificates)
#   --setup-only    do not run the test command; time the apt-get steps it makes instead (the
#                   install of scripts/lib.sh's packages plus scripts/test's, then the packages
#                   scripts/pgbuild and scripts/citusbuild install, with pgbuild's deb-src entry)
#   --check CMD     after the setup (with --setup-only), run CMD with bash in the checkout, in
#                   the root, as root (e.g. './scripts/demo')
#   --reuse         use the root an earlier run left (no bootstrap, no clone): to rerun --setup-only
#                   with another --check; its times are not a fresh machine's
#   --clean         remove the root at the end
# Exit status: the test command's (or the setup's and the check's), 2 on a usage or setup error.
set -uo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=$TOP/tmp_fresh_root
REPO=$TOP
SHARED=$TOP/../shared
PORT=55200
NICE=""
VARIANT=minbase
INCLUDE=ca-certificates
SETUP_ONLY=0
CHECK=""
CLEAN=0
REUSE=0
COMMIT=HEAD
die() { echo "fresh_machine.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
		--root) ROOT=$2; shift ;;
		--repo) REPO=$2; shift ;;
		--shared) SHARED=$2; shift ;;
		--port) PORT=$2; shift ;;
		--nice) NICE=$2; shift ;;
		--variant) VARIANT=$2; shift ;;
		--include) INCLUDE=$2; shift ;;
		--setup-only) SETUP_ONLY=1 ;;
		--check) CHECK=$2; shift ;;
		--clean) CLEAN=1 ;;
		--reuse) REUSE=1 ;;
		-h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
		-*) die "unknown option $1" ;;
		*) COMMIT=$1 ;;
	esac
	shift
done
[ "$(id -u)" = 0 ] || die "runs as root (mmdebstrap, mount, chroot)"
command -v mmdebstrap >/dev/null || die "mmdebstrap is missing (apt-get install mmdebstrap)"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (apt-get install time)"
[ -n "$CHECK" ] && [ $SETUP_ONLY = 0 ] && die "--check goes with --setup-only"
ROOT=$(realpath -m "$ROOT")
case $ROOT in /|/usr|/usr/*|/var|/etc|/etc/*|/home|/root|/work|/work/wt) die "refusing root $ROOT" ;; esac
if [ $REUSE = 1 ]; then
	[ -d "$ROOT/ci/dpsynth/.git" ] || die "--reuse: no earlier run's root at $ROOT"
	[ -z "$(findmnt -rno TARGET | grep "^$ROOT/")" ] || die "--reuse: something is mounted under $ROOT"
else
	[ -e "$ROOT" ] && die "$ROOT exists (a root is made fresh each time: remove it first, or --reuse it)"
fi
SHARED=$(realpath "$SHARED") || die "no shared directory"
[ -d "$SHARED" ] || die "no shared directory $SHARED"
SHA=$(git -C "$REPO" rev-parse --verify "$COMMIT^{commit}") || die "no commit $COMMIT in $REPO"
NICE_CMD=()
[ -n "$NICE" ] && NICE_CMD=(nice -n "$NICE")
LOG=$ROOT.log
CI=/ci/dpsynth

# ---- unmount and clean up on exit ----
mounted=()
finish() {
	local d i
	# a process left in the root (a server a killed test did not stop) would hold its mounts
	for d in /proc/[0-9]*; do
		[ "$(readlink "$d/root" 2>/dev/null)" = "$ROOT" ] && kill -KILL "${d#/proc/}" 2>/dev/null
	done
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount "${mounted[$i]}" 2>/dev/null || umount -l "${mounted[$i]}"
	done
	mounted=()
	if [ $CLEAN = 1 ] && [ -d "$ROOT" ]; then
		if findmnt -rno TARGET | grep -q "^$ROOT/"; then
			echo "fresh_machine.sh: something is still mounted under $ROOT: not removed" >&2
		else
			rm -rf "$ROOT"
		fi
	fi
}
trap finish EXIT
trap 'exit 130' INT TERM
mnt() {	# mnt TARGET MOUNT-ARGS...: mounts, and remembers it for finish
	local target=$ROOT$1
	shift
	mkdir -p "$target" && mount "$@" "$target" || die "mount $* $target failed"
	mounted+=("$target")
}
# in_root CMD: sets IN_ROOT to the command line that runs bash -c CMD in the checkout, in the
# root, as root, with a clean environment
in_root() {
	IN_ROOT=("${NICE_CMD[@]}" chroot "$ROOT" /usr/bin/env -i HOME=/root TERM=dumb
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
		DPSYNTH_PORT="$PORT" /bin/bash -c "cd $CI && $1")
}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# ---- 1. a fresh Debian 12 ----
if [ $REUSE = 1 ]; then
	SHA=$(git -C "$ROOT$CI" rev-parse HEAD)
	echo "fresh_machine.sh: reusing $ROOT ($SHA; not a fresh machine: packages already installed); log $LOG"
else
	echo "fresh_machine.sh: $SHA into $ROOT (variant $VARIANT, include ${INCLUDE:-nothing}); log $LOG"
	: >"$LOG"
	t=$(now)
	mmdebstrap --variant="$VARIANT" ${INCLUDE:+--include="$INCLUDE"} \
		--customize-hook='printf "#!/bin/sh\nexit 101\n" >"$1/usr/sbin/policy-rc.d"; chmod 755 "$1/usr/sbin/policy-rc.d"' \
		bookworm "$ROOT" \
		"deb http://deb.debian.org/debian bookworm main" \
		"deb http://deb.debian.org/debian bookworm-updates main" \
		"deb http://deb.debian.org/debian-security bookworm-security main" >>"$LOG" 2>&1 ||
		{ tail -n 20 "$LOG"; die "mmdebstrap failed"; }
	echo "bootstrap (not part of the target: a fresh machine has Debian already): $(secs "$t" "$(now)") s"

	# ---- 2. the checkout, ../shared beside it ----
	git clone -q --no-hardlinks --no-checkout "$REPO" "$ROOT$CI" && git -C "$ROOT$CI" checkout -q "$SHA" ||
		die "clone of $SHA failed"
fi
# The Release files' dates are checked against this machine's clock: a host that turns the check
# off (its clock ahead of the archive it reaches) gets it off in the root too, or the suites
# scripts/pgbuild adds would be refused as expired.  A machine with a true clock needs nothing.
if [ "$(apt-config shell v Acquire::Check-Valid-Until)" = "v='false'" ]; then
	echo 'Acquire::Check-Valid-Until "false";' >"$ROOT/etc/apt/apt.conf.d/99fresh-machine-valid-until"
	echo "note: as on this host, apt does not check the Release files' Valid-Until in the root"
fi
mnt /ci/shared --bind "$SHARED"
mount -o remount,ro,bind "$ROOT/ci/shared" || die "cannot make /ci/shared read-only"

# ---- 3. what a chroot needs for PostgreSQL ----
mnt /proc -t proc proc
mnt /sys -t sysfs sysfs
mnt /dev --bind /dev
mnt /dev/pts --bind /dev/pts
mnt /dev/shm -t tmpfs -o mode=1777,nosuid,nodev shm

# ---- 4. the README's test command, or the setup's apt-get steps ----
if [ $SETUP_ONLY = 1 ]; then
	# the lines as the scripts have them: scripts/test's dp_install_packages (scripts/lib.sh adds
	# its own packages), scripts/pgbuild's deb-src entry and apt-get install, scripts/citusbuild's
	join() { sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$1"; }
	test_pkgs=$(sed -n 's/^TEST_PACKAGES=(\(.*\))$/\1/p' "$ROOT$CI/scripts/test")
	pg_pkgs=$(bash "$ROOT$CI/scripts/pgbuild" --packages)
	citus_pkgs=$(bash "$ROOT$CI/scripts/citusbuild" --packages)
	src_entry=$(sed -n "/<<'SRC'/,/^SRC$/p" "$ROOT$CI/scripts/pgbuild" | sed '1d;$d')
	[ -n "$test_pkgs" ] && [ -n "$pg_pkgs" ] && [ -n "$citus_pkgs" ] && [ -n "$src_entry" ] ||
		die "the apt-get lines of scripts/test, scripts/pgbuild or scripts/citusbuild were not found"
	rc=0
	step() {	# step NAME CMD [tolerated]: times CMD in the root; a failure fails the run unless tolerated
		local r wall user sys
		echo "== $1: $2" >>"$LOG"
		in_root "$2"
		/usr/bin/time -f '%e %U %S' -o "$ROOT.step.log" "${IN_ROOT[@]}" >>"$LOG" 2>&1
		r=$?
		read -r wall user sys <"$ROOT.step.log"
		rm -f "$ROOT.step.log"
		echo "$1: $wall s wall, $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }') s CPU (exit $r${3:+, ignored as the script ignores it})"
		[ $r = 0 ] || [ -n "${3:-}" ] || rc=$r
	}
	step "apt: scripts/test's packages (apt-get update, install)" \
		"set -e; source scripts/lib.sh; set +u; dp_install_packages $test_pkgs"
	step "apt: scripts/pgbuild's deb-src entry and apt-get update" \
		"printf '%s\n' \"$src_entry\" >/etc/apt/sources.list.d/dpsynth-src.sources && apt-get update -qq" tolerated
	step "apt: scripts/pgbuild's packages" \
		"DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pg_pkgs"
	step "apt: scripts/citusbuild's packages" \
		"DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $citus_pkgs"
	if [ -n "$CHECK" ] && [ $rc = 0 ]; then
		mark=$(wc -l <"$LOG")
		step "check: $CHECK" "$CHECK"
		tail -n +"$((mark + 1))" "$LOG" | grep -E '^(not ok|ok)' | tail -n 40
	fi
	echo "root: $ROOT$([ $CLEAN = 1 ] && echo ' (removed: --clean)'); log: $LOG"
	exit $rc
fi
command=$(awk '/^```/ { n++; next } n == 1' "$ROOT$CI/README.md" | sed -n 's/^\(\.\/scripts\/test\)\( .*\)\{0,1\}$/\1/p' | head -n 1)
[ -n "$command" ] || die "no ./scripts/test line in the README's first code block"
echo "running, as .ci/run does: cd $CI && $command (DPSYNTH_PORT=$PORT${NICE:+, nice -n $NICE})"
in_root "$command"
/usr/bin/time -v -o "$ROOT.time.log" "${IN_ROOT[@]}" >>"$LOG" 2>&1
rc=$?
echo "the test command exited $rc"
grep -E 'Elapsed \(wall clock\)|User time|System time' "$ROOT.time.log" | sed 's/^\t*/  /'
grep -E '^[0-9]+ passed, [0-9]+ failed$' "$LOG" | tail -n 1
echo "root: $ROOT; log: $LOG; /usr/bin/time -v: $ROOT.time.log"
exit $rc
