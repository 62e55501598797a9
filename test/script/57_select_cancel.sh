#!/usr/bin/env bash
# A cancel in a big table's rounds: over 131,072 rows the rounds re-estimate the table on 16,384
# rows and count and score their candidates on helper threads (dp_run_parallel from
# src/core/dp_adaptive.c and dp_adaptive_cand.c), so a cancel may land in a helper's pass or
# between them.  It is let in once the helpers are joined: the call ends with the cancel's
# message, no table is left, the backend keeps no thread of the call, and the session and the
# server go on.  Adult's rows 5 times (162,805).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_select_cancel
fresh_db $DB
dp_load_adult $DB
adult_repeated $DB big 5
log_mark

# A call whose backend is seen in the marginal selection is cancelled there; on a busy machine the
# selection may be over before it is looked at, so up to 10 calls are tried for one such cancel.
landed=""
for try in $(seq 1 10); do
	out=$(mktemp)
	# after the call, the session stays (pg_sleep) so that its backend can be looked at
	psql -X -qAt -d $DB -c "SET dpsynth.synthesis_threads = 2" \
		-c "SELECT k_way_marginals FROM dp_synthesize('big', epsilon => 1, target => 'cancelled')" \
		-c "SELECT 'alive', pg_backend_pid()" -c "SELECT pg_sleep(3)" >"$out" 2>&1 &
	client=$!
	pid=$(backend_pid $DB 'dp_synthesize(big)%')
	seen=""
	for _ in $(seq 1 2000); do
		a=$(q $DB "SELECT query FROM pg_stat_activity WHERE pid = ${pid:-0}")
		case "$a" in
			*"marginal selection"*)
				q $DB "SELECT pg_cancel_backend($pid)" >/dev/null
				seen=yes
				break ;;
			*"row synthesis"*|*"writing"*|"") break ;;
		esac
		sleep 0.002
	done
	if [ -n "$seen" ]; then
		sleep 1
		after=$(proc_threads "$pid")
		wait $client
		landed=$try
		break
	fi
	wait $client
	psql -X -q -d $DB -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS cancelled" >/dev/null
	rm -f "$out"
done
echo "# cancelled in the selection at try ${landed:-none}"
ok $([ -n "$landed" ]; echo $?) "a cancel landed in the rounds"
if [ -n "$landed" ]; then
	echo "# $(tr '\n' ' ' <"$out")"
	ok $(grep -q "canceling statement due to user request" "$out"; echo $?) "the call ends with the cancel's message"
	is "$after" 1 "the backend keeps no helper thread after the cancel"
	ok $(grep -q "^alive|$pid" "$out"; echo $?) "the session goes on in the same backend"
	is "$(q $DB "SELECT to_regclass('cancelled') IS NULL")" t "no table is left behind"
	rm -f "$out"
fi
ok $(! new_log | grep -q "terminated by signal\|was terminated by\|crash of another server process"; echo $?) \
	"the server log shows no crash"

# the same call uncancelled releases its copy
is "$(q $DB "SELECT k_way_marginals > 0 FROM dp_synthesize('big', epsilon => 1, target => 'whole')")" t \
	"an uncancelled call releases its copy"
is "$(q $DB "SELECT count(*) > 150000 FROM whole")" t "with its rows"
done_testing
