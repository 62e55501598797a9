#!/usr/bin/python3
"""bench/ab_summary.py - the summary of a same-hour A/B log (bench/heaped_ab.sh, bench/quality_ab.sh):
one line per key, the number of lines and each value's mean (min-max).

Usage: ab_summary.py LOG KEYS FIRST COUNT
  KEYS: comma-separated field numbers (0-based) of the key, in the order printed and sorted (a field
  that reads as a number sorts as one); FIRST, COUNT: the values are fields FIRST .. FIRST+COUNT-1.
"""
import collections
import sys


def sortable(v):
    try:
        return (0, float(v), v)
    except ValueError:
        return (1, 0.0, v)


log, keys, first, count = sys.argv[1], [int(k) for k in sys.argv[2].split(',')], int(sys.argv[3]), int(sys.argv[4])
d = collections.defaultdict(list)
for line in open(log):
    f = line.split()
    if len(f) >= first + count:
        d[tuple(f[k] for k in keys)].append([float(x) for x in f[first:first + count]])
for key in sorted(d, key=lambda k: [sortable(v) for v in k]):
    cols = list(zip(*d[key]))
    print(' '.join(key), len(d[key]), ' '.join('%.4f (%.4f-%.4f)' % (sum(c) / len(c), min(c), max(c)) for c in cols))
