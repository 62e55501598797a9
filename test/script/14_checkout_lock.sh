#!/usr/bin/env bash
# scripts/lib.sh's checkout lock (dp_lock_checkout, dp_build_install): two scripts started at once
# in one checkout take turns instead of one cleaning the other's objects, unit tests and bench
# binaries under it; a server started by as_pg does not keep the lock after its script ends; a
# child of a script that holds it does not wait for it.  On a scratch checkout whose Makefile
# only records when it runs (no server, no real build).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
unset DPSYNTH_CHECKOUT_LOCKED	# scripts/test holds the real checkout's lock; this is another one
work=$(mktemp -d)
chmod 755 "$work"
trap 'pkill -f "sleep 23.5" 2>/dev/null; rm -rf "$work"' EXIT
cat >"$work/Makefile" <<'EOF'
all:
	@echo "build $$(date +%s.%N) start"; sleep 1; echo "build $$(date +%s.%N) end"
clean:
	@echo clean >>cleans.log
install:
	@:
EOF
# one script: dp_build_install on the scratch checkout, with the given extra commands after it
script() {
	cat <<EOF
source "$TOP/scripts/lib.sh"
TOP=$work
SUDO=
dp_build_install
$1
EOF
}

# 1. two builds at once: one after the other
script "" >"$work/a.sh"
bash "$work/a.sh" >"$work/out1" 2>&1 &
p1=$!
bash "$work/a.sh" >"$work/out2" 2>&1 &
p2=$!
wait $p1 $p2
times=$(grep -h '^build' "$work/out1" "$work/out2" | sort -k2 -n | awk '{print $3}' | tr '\n' ' ')
is "$times" "start end start end " "two builds started at once run one after the other"
ok "$(grep -qh 'waiting for another script' "$work/out1" "$work/out2"; echo $?)" "the second says it waits for the first"

# 2. a server started by as_pg outlives its script but not its lock
script "as_pg bash -c 'sleep 23.5 </dev/null >/dev/null 2>&1 &'" >"$work/b.sh"
bash "$work/b.sh" >/dev/null 2>&1
start=$(date +%s)
timeout 10 bash "$work/a.sh" >"$work/out3" 2>&1
rc=$?
ok $rc "after a script whose server still runs, the next one builds ($(($(date +%s) - start)) s)"
ok "$(grep -q 'waiting for another script' "$work/out3"; echo $((1 - $?)))" "... without waiting"

# 3. a child of a script that holds the lock goes on (dp_build_install again inside)
script "bash $work/a.sh" >"$work/c.sh"
timeout 10 bash "$work/c.sh" >"$work/out4" 2>&1
ok $? "a script's child that builds too does not wait for its parent's lock"
is "$(grep -c '^build.*start' "$work/out4")" 2 "... and both built"

# 4. a clean build, except in a checkout scripts/test has just built that way (DPSYNTH_BUILT: the
# demo under the test command brings it up to date without compiling it again)
rm -f "$work/cleans.log"
bash "$work/a.sh" >/dev/null 2>&1
DPSYNTH_BUILT=$work bash "$work/a.sh" >"$work/out5" 2>&1
DPSYNTH_BUILT=$TOP bash "$work/a.sh" >/dev/null 2>&1
is "$(cat "$work/cleans.log" 2>/dev/null | wc -l | tr -d ' ')" 2 "dp_build_install cleans first, unless DPSYNTH_BUILT names this checkout"
is "$(grep -c '^build.*start' "$work/out5")" 1 "... which make still brings up to date"

# common.sh refuses to run a script test without PGBIN (scripts/lib.sh would fall back to the
# system's binaries and restart a private cluster on them), and with a PGBIN whose postgres is
# not the running cluster's (where /proc shows the postmaster's executable)
echo 'echo reached' >"$work/t.sh" && sed -i "1i source '$TOP/test/script/common.sh'" "$work/t.sh"
out=$(env -u PGBIN bash "$work/t.sh" 2>&1); rc=$?
is "$rc $(grep -c 'Bail out! PGBIN is not set' <<<"$out") $(grep -c reached <<<"$out")" "2 1 0" \
	"a script test without PGBIN stops before it runs"
is "$(bash "$work/t.sh" 2>&1)" reached "... and runs with the PGBIN of this run"
pm=$(head -n 1 "$DATADIR/postmaster.pid" 2>/dev/null)
if [ -n "$pm" ] && [ -n "$(readlink "/proc/$pm/exe" 2>/dev/null)" ]; then
	mkdir -p "$work/otherbin" && cp "$(readlink -f "$PGBIN/pg_config")" "$work/otherbin/postgres"
	out=$(PGBIN=$work/otherbin bash "$work/t.sh" 2>&1); rc=$?
	is "$rc $(grep -c 'Bail out! the cluster at' <<<"$out") $(grep -c reached <<<"$out")" "2 1 0" \
		"a script test whose PGBIN is not the running cluster's stops before it runs"
else
	ok 0 "a PGBIN other than the running cluster's # skip: /proc does not show the postmaster's executable"
fi
done_testing
