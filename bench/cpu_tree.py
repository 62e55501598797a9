#!/usr/bin/env python3
"""bench/cpu_tree.py COMMAND [ARGS...] - runs COMMAND and prints, on stderr, its wall time and the
user + system CPU of its whole process tree, servers included: this process is made a child
subreaper (prctl PR_SET_CHILD_SUBREAPER), so a postmaster that pg_ctl detaches is reaped here,
and every server process's CPU with it, once the command has stopped its clusters.  On a machine
shared with other work, the CPU seconds compare runs where the wall seconds do not.

A script test with a cluster of its own, for example:
  DPSYNTH_PORT=55600 bench/cpu_tree.py bash -c 'source scripts/lib.sh; set +e; dp_cluster_start
      bash test/script/10_privacy_audit.sh; rc=$?; dp_cluster_stop; exit $rc'
"""
import ctypes
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    sys.exit("cpu_tree.py: prctl(PR_SET_CHILD_SUBREAPER) failed")
t0 = time.time()
rc = subprocess.call(sys.argv[1:])
while True:		# the detached descendants, until none is left
    try:
        os.waitpid(-1, 0)
    except ChildProcessError:
        break
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
sys.stderr.write("cpu_tree: wall %.1f s, user %.1f s, sys %.1f s, cpu %.1f s, exit %d\n"
                 % (time.time() - t0, ru.ru_utime, ru.ru_stime, ru.ru_utime + ru.ru_stime, rc))
sys.exit(rc if rc >= 0 else 128 - rc)
