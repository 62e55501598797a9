#!/usr/bin/python3
# bench/heaped_diag.py - where hours_per_week's one-way error (hours1) comes from on bench/heaped.sh's
# table: per run, the bins the model learned, the error at the level of the model's bins (the
# consistent one-way against the real rows, the rows drawn against the model: the final draw's
# fit) and inside them (the real bin totals spread by the released shape: the shape's noise; the
# drawn bin totals spread by the shape against the drawn values: the draw's randomness), and the
# noise scale of every marginal holding hours_per_week.  Against the database bench/heaped.sh
# made (PGHOST, PGPORT, PGUSER exported; table heaped); each run declares data/adult/domain.json
# and synthesizes into synth_d.  Usage: bench/heaped_diag.py EPSILON RUNS [DATABASE]
import json, os, subprocess, sys, collections
eps = sys.argv[1]; runs = int(sys.argv[2]); db = sys.argv[3] if len(sys.argv) > 3 else 'heaped'
def q(sql):
    return subprocess.run(['psql', '-X', '-qAt', '-d', db, '-c', sql], capture_output=True, text=True, check=True).stdout
dom = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data', 'adult', 'domain.json')))
cols = "age, workclass, education, marital_status, occupation, relationship, race, sex, hours_per_week, income".replace(' ', '').split(',')
dom = {k: v for k, v in dom.items() if k in cols}
real = collections.Counter()
for l in q("select coalesce(hours_per_week::text,'N'), count(*) from heaped group by 1").split():
    v, c = l.split('|'); real[v] = int(c)
N = sum(real.values())
def tvd(a, b):
    sa, sb = sum(a.values()), sum(b.values())
    return 0.5 * sum(abs(a.get(k, 0) / sa - b.get(k, 0) / sb) for k in set(a) | set(b))
for r in range(runs):
    subprocess.run(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', db, '-v', 'dom=' + json.dumps(dom)], input="SELECT dp_declare('heaped', :'dom'::jsonb);", text=True, check=True, capture_output=True)
    q("DROP TABLE IF EXISTS synth_d")
    mid = int(q(f"SELECT model_id FROM dp_synthesize('heaped', epsilon => {eps}, target => 'synth_d')").strip())
    m = json.loads(q(f"select dp_model_json({mid})"))
    col = [c for c in m['columns'] if c['name'] == 'hours_per_week'][0]
    edges = col['domain']['edges']; nb = len(edges) - 1
    shape = col['domain'].get('shape', [])
    synth = collections.Counter()
    for l in q("select coalesce(hours_per_week::text,'N'), count(*) from synth_d group by 1").split():
        v, c = l.split('|'); synth[v] = int(c)
    def binof(v):
        if v == 'N': return nb
        x = int(v)
        for b in range(nb):
            if edges[b] <= x < edges[b + 1]: return b
        return nb
    rb = collections.Counter(); sb = collections.Counter()
    for v, c in real.items(): rb[binof(v)] += c
    for v, c in synth.items(): sb[binof(v)] += c
    # model's one-way marginal after consistency, on codes (merged codes mapped)
    idx = col['index']
    ow = [mg for mg in m['marginals'] if mg['attrs'] == [idx]][0]
    mc = col.get('merged_code')
    cells = ow['cells']
    # map bins -> merged code
    def merged(counter):
        out = collections.Counter()
        for b, c in counter.items(): out[mc[b] if mc else b] += c
        return out
    rm, sm = merged(rb), merged(sb)
    mm = collections.Counter({i: max(0.0, x) for i, x in enumerate(cells)})
    # within-bin: real bin totals spread by shape
    sh = collections.defaultdict(float)
    for i in range(0, len(shape), 3):
        for x in range(int(shape[i]), int(shape[i + 1]) + 1):
            sh[x] += shape[i + 2] / (shape[i + 1] - shape[i] + 1)
    def spread(bins, n):
        # bin totals spread over each bin's values by the shape (uniform where it has none)
        out = collections.Counter()
        for b in range(nb):
            vals = list(range(edges[b], edges[b + 1]))
            w = [sh.get(x, 0.0) for x in vals]
            if sum(w) <= 0: w = [1.0] * len(vals)
            for x, wx in zip(vals, w): out[str(x)] += bins[b] * wx / sum(w)
        out['N'] = n
        return out
    wb = spread(rb, real.get('N', 0))
    # marginals holding hours: count x sigma
    mrg = q(f"select columns::text, cells, sigma from dp_model_marginals({mid}) where 'hours_per_week' = any(columns)").strip().split('\n')
    print(f"eps {eps} model {mid} bins {nb} codes {len(cells)} hours1 {tvd(real, synth):.4f} "
          f"bin(real,synth) {tvd(rb, sb):.4f} merged(real,synth) {tvd(rm, sm):.4f} merged(real,model) {tvd(rm, mm):.4f} "
          f"merged(model,synth) {tvd(mm, sm):.4f} within(real bins by shape) {tvd(real, wb):.4f}")
    print("   marginals with hours:", '; '.join(mrg))
    sw = spread(sb, synth.get('N', 0))
    print("   draw within bins: tvd(synth, synth bins by shape) %.4f; tvd(real, synth bins by shape) %.4f" % (tvd(synth, sw), tvd(real, sw)))
    per = []
    for b in range(nb):
        vals = [str(x) for x in range(edges[b], edges[b + 1])]
        l1 = sum(abs(real.get(v, 0) - wb.get(v, 0)) for v in vals)
        per.append((l1 / 2 / N, b, edges[b], edges[b + 1] - 1, rb[b]))
    per.sort(reverse=True)
    for p in per[:6]:
        b = p[1]
        print("   bin [%d,%d] mass %d within %.4f" % (p[2], p[3], p[4], p[0]),
              ' '.join("%d:%d/%.0f" % (x, real.get(str(x), 0), wb.get(str(x), 0)) for x in range(edges[b], edges[b + 1])))
