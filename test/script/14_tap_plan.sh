#!/usr/bin/env bash
# scripts/test's TAP plan check (tap_plan_problem in scripts/lib.sh): a script test whose plan
# ("1..N") is missing or does not match its count of results is a failure, so that one that exits
# early with status 0 does not pass with fewer checks.  Planted tests on the TAP helpers of
# common.sh (ok, done_testing), each run as scripts/test runs one (bash, output to a file).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# planted NAME BODY: a script test with BODY after common.sh; its output in $work/NAME.out, its
# exit status in $work/NAME.rc
planted() {
	printf 'source %q\n%s\n' "$TOP/test/script/common.sh" "$2" >"$work/$1.sh"
	bash "$work/$1.sh" >"$work/$1.out" 2>&1
	echo $? >"$work/$1.rc"
}
planted whole 'ok 0 "one"; ok 0 "two"; ok 0 "three"; done_testing'
planted early 'ok 0 "one"; ok 0 "two"; exit 0; ok 0 "three"; done_testing'
planted skipped 'ok 0 "one # skip: not here"; done_testing'
planted failing 'ok 0 "one"; ok 1 "two"; done_testing'
planted short_plan 'echo "1..3"; ok 0 "one"; ok 0 "two"'
planted two_plans 'ok 0 "one"; done_testing; ok 0 "two"; done_testing'

is "$(tap_plan_problem "$work/whole.out")" "" "a test that reaches its end: no plan problem"
is "$(cat "$work/early.rc") $(grep -c '^ok' "$work/early.out")" "0 2" \
	"the planted early 'exit 0' exits 0 after two of its three checks"
problem=$(tap_plan_problem "$work/early.out")
is "$problem" "no TAP plan (1..N): the test stopped before its end, after 2 result(s)" \
	"... and is a plan problem (scripts/test: a failure)"
is "$(tap_plan_problem "$work/skipped.out")" "" "a skip is a result of the plan"
is "$(cat "$work/failing.rc") $(tap_plan_problem "$work/failing.out")" "1 " \
	"a failing check is a result of the plan (the failure is counted as such, not as a plan problem)"
is "$(tap_plan_problem "$work/short_plan.out")" "its TAP plan says 1..3, but it printed 2 result(s)" \
	"a plan of three with two results"
is "$(tap_plan_problem "$work/two_plans.out")" "2 TAP plans (1..N) where there is one" "two plans"
# scripts/test fails a script test on it (its report's branch for script tests)
grep -qE '^[[:space:]]*problem=\$\(tap_plan_problem "\$f"\)' "$TOP/scripts/test" &&
	grep -qE '\[ -z "\$problem" \] \|\| fail' "$TOP/scripts/test"
ok $? "scripts/test fails a script test whose plan has a problem"
done_testing
