#!/usr/bin/env bash
# One noise function (docs/ARCHITECTURE.md): every count dpsynth releases gets its discrete Gaussian
# noise from dp_noise_counts (src/core/dp_counts.c), which saturates and refuses hostile counts.
# So no C file under src/ other than the sampler's own (dp_sampler.c) and dp_counts.c calls an
# additive noise sampler (dp_dgauss_sample, dp_dlaplace_sample), and dp_counts.c calls
# dp_dgauss_sample once, inside dp_noise_counts.  Needs no server (not common.sh: no PGHOST).
# DPSYNTH_SRC_ROOT checks another tree (e.g. an older commit's, where this fails).
set -uo pipefail
ROOT=${DPSYNTH_SRC_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}

tap_n=0
tap_failed=0
ok() {
	tap_n=$((tap_n + 1))
	if [ "$1" = 0 ]; then echo "ok $tap_n - $2"; else echo "not ok $tap_n - $2"; tap_failed=$((tap_failed + 1)); fi
}

[ -f "$ROOT/src/core/dp_sampler.c" ]
ok $? "the sources are at $ROOT"

# a call: the name followed by an opening parenthesis (a mention in a comment is no call)
calls=$(grep -rnE --include='*.c' --include='*.h' '\bdp_(dgauss|dlaplace)_sample[[:space:]]*\(' "$ROOT/src" |
	grep -vE "^$ROOT/src/core/dp_sampler\.[ch]:|^$ROOT/src/core/dp_counts\.c:")
[ -z "$calls" ]
ok $? "no file under src/ but dp_sampler.[ch] and dp_counts.c calls the noise samplers"
[ -n "$calls" ] && echo "$calls" | sed "s|^$ROOT/|# |"

n=$(grep -cE '\bdp_(dgauss|dlaplace)_sample[[:space:]]*\(' "$ROOT/src/core/dp_counts.c")
[ "$n" = 1 ]
ok $? "dp_counts.c draws in one place (got $n)"

# the function around that call: the last definition line (a name at column 0) before it
fn=$(awk '/^[a-z_][a-z_0-9]*\(/ { name = $0; sub(/\(.*/, "", name) }
	/dp_(dgauss|dlaplace)_sample[[:space:]]*\(/ { print name }' "$ROOT/src/core/dp_counts.c")
[ "$fn" = dp_noise_counts ]
ok $? "the draw is inside dp_noise_counts (got '$fn')"

echo "1..$tap_n"
[ $tap_failed -eq 0 ]
