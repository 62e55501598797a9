#!/usr/bin/env bash
# A big synthesis writes its first rows while a helper thread still draws later ones
# (dp_gum_params.chunk_sink, src/synth_write.c's synth_write_chunk): a cancel that lands in that
# overlapped write stops and joins the helper before the error unwinds.  The call ends with the
# cancel's message, no table is left, the backend keeps no thread of the call, and the session
# and the server go on.  Adult's rows 5 times (162,805: a model drawn from a sub-model, over
# 131,072 rows) with rows => 1,000,000 draws its final rows in chunks.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_stream_cancel
fresh_db $DB
dp_load_adult $DB
adult_repeated $DB big 5
log_mark

# A call whose backend is seen writing the table ('writing the synthetic table' in its
# activity) while it has 2 threads is cancelled there; on a busy machine the helper may have
# finished before the write is seen, so up to 5 calls are tried for one such cancel.
overlapped=""
for try in 1 2 3 4 5; do
	out=$(mktemp)
	# after the call, the session stays (pg_sleep) so that its backend can be looked at
	psql -X -qAt -d $DB -c "SET dpsynth.synthesis_threads = 2" \
		-c "SELECT rows_written FROM dp_synthesize('big', epsilon => 1, target => 'streamed', rows => 1000000)" \
		-c "SELECT 'alive', pg_backend_pid()" -c "SELECT pg_sleep(3)" >"$out" 2>&1 &
	client=$!
	pid=$(backend_pid $DB 'dp_synthesize(big)%')
	seen=""
	for _ in $(seq 1 2000); do
		a=$(q $DB "SELECT query FROM pg_stat_activity WHERE pid = ${pid:-0}")
		case "$a" in
			*"writing the synthetic table"*)
				if [ "$(proc_threads "$pid")" -ge 2 ]; then
					q $DB "SELECT pg_cancel_backend($pid)" >/dev/null
					seen=yes
				fi
				break ;;
			"") break ;;
		esac
		sleep 0.005
	done
	if [ -n "$seen" ]; then
		sleep 1
		after=$(proc_threads "$pid")
		wait $client
		overlapped=$try
		break
	fi
	wait $client
	psql -X -q -d $DB -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS streamed" >/dev/null
	rm -f "$out"
done
echo "# cancelled in the overlapped write at try ${overlapped:-none}"
ok $([ -n "$overlapped" ]; echo $?) "a cancel landed while the table was written and a helper still drew rows"
if [ -n "$overlapped" ]; then
	echo "# $(tr '\n' ' ' <"$out")"
	ok $(grep -q "canceling statement due to user request" "$out"; echo $?) "the call ends with the cancel's message"
	is "$after" 1 "the backend keeps no helper thread after the cancel"
	ok $(grep -q "^alive|$pid" "$out"; echo $?) "the session goes on in the same backend"
	is "$(q $DB "SELECT to_regclass('streamed') IS NULL")" t "no table is left behind"
	rm -f "$out"
fi
ok $(! new_log | grep -q "terminated by signal"; echo $?) "no backend died"

# A terminate request (FATAL: the process exits without unwinding) in the overlapped write: the
# exit callback joins the helper before the transaction's memory goes; the backend exits
# cleanly, and another session, which a crash of a backend would end, goes on: one sleeping
# through each try, asked afterwards whether it is still there.
terminated=""
survived=""
for try in 1 2 3 4 5; do
	psql -X -qAt -d $DB -c "SELECT pg_sleep(120)" >/dev/null 2>&1 &
	sleeper=$!
	psql -X -qAt -d $DB -c "SET dpsynth.synthesis_threads = 2" \
		-c "SELECT rows_written FROM dp_synthesize('big', epsilon => 1, target => 'terminated', rows => 1000000)" >/dev/null 2>&1 &
	client=$!
	pid=$(backend_pid $DB 'dp_synthesize(big)%')
	for _ in $(seq 1 2000); do
		a=$(q $DB "SELECT query FROM pg_stat_activity WHERE pid = ${pid:-0}")
		case "$a" in
			*"writing the synthetic table"*)
				if [ "$(proc_threads "$pid")" -ge 2 ]; then
					q $DB "SELECT pg_terminate_backend($pid)" >/dev/null
					terminated=$try
				fi
				break ;;
			"") break ;;
		esac
		sleep 0.005
	done
	wait $client
	sleep 1
	survived=$(q $DB "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(120)' AND state = 'active'" 2>/dev/null)
	q $DB "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(120)'" >/dev/null 2>&1
	wait $sleeper
	[ -n "$terminated" ] && break
	psql -X -q -d $DB -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS terminated" >/dev/null
done
echo "# terminated in the overlapped write at try ${terminated:-none}"
ok $([ -n "$terminated" ]; echo $?) "a terminate request landed while the table was written and a helper still drew rows"
is "$survived" 1 "another session, sleeping through the call, goes on (no crash of a backend)"
ok $(! new_log | grep -q "terminated by signal\|was terminated by\|crash of another server process"; echo $?) \
	"the server log shows no crash"
is "$(q $DB "SELECT to_regclass('terminated') IS NULL")" t "no table is left behind"

# the same call uncancelled writes every row it drew
is "$(q $DB "SELECT rows_written > 900000 FROM dp_synthesize('big', epsilon => 1, target => 'streamed', rows => 1000000)")" t \
	"an uncancelled call writes its rows"
is "$(q $DB "SELECT count(*) > 900000 FROM streamed")" t "and they are in the table"
done_testing
