#!/usr/bin/env python3
import sys, json, re, collections
# lines: FILE JSON; group by regex key
groups = collections.defaultdict(list)
for fn in sys.argv[1:]:
    for line in open(fn):
        f, _, js = line.partition(' ')
        if not js.strip(): continue
        r = json.loads(js)
        m = re.search(r'/([a-z0-9]+)-(?:k1-)?([0-9.]+)-(\d+)-(.*)\.csv$', f)
        key = (m.group(1), m.group(2), m.group(4))
        groups[key].append(r)
for k in sorted(groups):
    rs = groups[k]
    def mean(x): 
        v = [r[x] for r in rs if r.get(x) is not None]; return sum(v)/len(v) if v else float('nan')
    def rng(x):
        v = [r[x] for r in rs if r.get(x) is not None]; return "(%.3f-%.3f)" % (min(v), max(v)) if v else ""
    print("%-10s %4s %-12s n=%d tvd1 %.3f %s tvd2 %.3f tvd3 %.3f range %.4f auc %.3f %s" % (k[0], k[1], k[2], len(rs), mean('tvd1'), rng('tvd1'), mean('tvd2'), mean('tvd3'), mean('range'), mean('tstr_auc'), rng('tstr_auc')))
