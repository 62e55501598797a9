#!/usr/bin/env python3
"""Replay of the one-way stage: true code counts + Gaussian noise, dp_rare_merge, split back by
several estimators (group totals exact), TVD per column vs truth.  Scenarios from argv."""
import json, sys, math
import numpy as np, pandas as pd
import os
SHARED = os.environ.get("SHARED", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared"))
RHO = {0.1: 0.0003210476903454376, 0.3: 0.002539642523021175, 1: 0.024355970359515547, 3: 0.1850698406532285}

def codes(df, dom):
    out = {}
    for c, spec in dom.items():
        if c.startswith('_') or c not in df.columns or spec.get('privacy_unit'):
            continue
        x = df[c]
        t = spec['type']
        if t == 'categorical':
            vals = spec['values']
            idx = {str(v): i for i, v in enumerate(vals)}
            k = x.map(lambda v: idx.get(str(v), len(vals)) if pd.notna(v) else len(vals))
            out[c] = (np.bincount(k, minlength=len(vals) + 1), 0)
        else:
            lo, hi = spec['lower'], spec['upper']
            if t == 'integer' and hi - lo + 1 <= 32:
                nb = hi - lo + 1; k = (x.fillna(lo) - lo).clip(0, nb - 1).astype(int)
            else:
                nb = 32 if t != 'integer' else 16
                k = ((x.fillna(lo) - lo) / (hi - lo) * nb).clip(0, nb - 1).astype(int)
            cnt = np.bincount(k, minlength=nb)
            out[c] = (np.append(cnt, 0), nb)   # + NULL cell (empty)
    return out

def rare_merge(z, ordered, thr):
    size = len(z); rep = list(range(size))
    k = 0
    while k < ordered:
        if not z[k] < thr: k += 1; continue
        k1 = k; mass = 0
        while k1 < ordered and z[k1] < thr: mass += z[k1]; k1 += 1
        if mass < thr and (k > 0 or k1 < ordered):
            to = k1 if k == 0 else (k - 1 if k1 >= ordered else (k - 1 if z[k - 1] <= z[k1] else k1))
            for q in range(k, k1): rep[q] = to
        else:
            for q in range(k, k1): rep[q] = k
        k = k1
    rare = [k for k in range(ordered, size) if z[k] < thr]
    partner = -1
    if len(rare) == 1 and size > 1:
        for k in range(size):
            if not z[k] < thr and (partner < 0 or z[k] > z[partner]): partner = k
    if len(rare) >= 2 or partner >= 0:
        r0 = partner if partner >= 0 else rare[0]
        for k in rare: rep[k] = r0
    # resolve chains (rep of rep)
    def root(k):
        while rep[k] != k: k = rep[k]
        return k
    return [root(k) for k in range(size)]

def w_prop(z, s2): return np.maximum(z, 0)
def w_js(z, s2):
    k = len(z)
    if k < 4: return np.maximum(z, 0)
    m = z.mean(); ss = ((z - m) ** 2).sum()
    s = max(0, 1 - (k - 3) * s2 / ss) if ss > 0 else 0
    return np.maximum(m + s * (z - m), 0)
def sure_soft(z, s2):
    # one-sided soft threshold x = max(z - t, 0); SURE(t) = sum_{z>t} t^2 + sum_{z<=t} z^2 + 2 s2 #{z>t} - k s2
    cands = np.concatenate([[0.0], np.sort(z[z > 0])])
    best = None
    for t in cands:
        r = np.sum(np.where(z > t, t * t, z * z)) + 2 * s2 * np.sum(z > t) - len(z) * s2
        if best is None or r < best[0]: best = (r, t)
    return best
def w_soft(z, s2):
    r, t = sure_soft(z, s2); return np.maximum(z - t, 0)
def js_sure(z, s2):
    k = len(z); m = z.mean(); ss = ((z - m) ** 2).sum()
    # SURE of positive-part JS toward the mean (ignoring the clip at 0)
    if ss <= (k - 3) * s2: return ss - k * s2 + 2 * s2 * 1  # all to mean: ||m-z||^2 + 2 s2 (df 1) - k s2
    return k * s2 - (k - 3) ** 2 * s2 * s2 / ss
def w_choose(z, s2):
    if len(z) < 4: return np.maximum(z, 0)
    rs, t = sure_soft(z, s2)
    return np.maximum(z - t, 0) if rs < js_sure(z, s2) else w_js(z, s2)

EST = dict(prop=w_prop, js=w_js, soft=w_soft, choose=w_choose)

def run(name, df, dom, eps, disc, reps, rng):
    cs = codes(df, dom); d = len(cs)
    rho_one = RHO[eps] * (0.9 if disc else 1) * 0.25
    s2 = 1 / (2 * rho_one / d); thr = 3 * math.sqrt(s2)
    res = {e: {c: [] for c in cs} for e in EST}
    for _ in range(reps):
        for c, (cnt, ordered) in cs.items():
            z = cnt + rng.normal(0, math.sqrt(s2), len(cnt))
            rep = rare_merge(list(z), ordered, thr)
            p = cnt / cnt.sum()
            for e, f in EST.items():
                est = np.zeros(len(cnt))
                for g in set(rep):
                    mem = [k for k in range(len(cnt)) if rep[k] == g]
                    tot = cnt[mem].sum()
                    w = f(z[mem], s2) if len(mem) > 1 else np.ones(1)
                    w = w / w.sum() if w.sum() > 0 else np.ones(len(mem)) / len(mem)
                    est[mem] = tot * w
                res[e][c].append(0.5 * np.abs(est / est.sum() - p).sum())
    print(f"## {name} eps {eps} n {len(df)} sigma {math.sqrt(s2):.1f}")
    print("%-22s" % "column" + "".join("%8s" % e for e in EST))
    for c in cs:
        print("%-22s" % c[:22] + "".join("%8.3f" % np.mean(res[e][c]) for e in EST))
    print("%-22s" % "MEAN" + "".join("%8.3f" % np.mean([np.mean(res[e][c]) for c in cs]) for e in EST))

rng = np.random.default_rng(1)
for arg in sys.argv[1:]:
    ds, eps, n = arg.split(':'); eps = float(eps) if eps != '1' and eps != '3' else int(eps)
    df = pd.read_csv(os.path.join(SHARED, 'datasets', ds, f'{ds}_train.csv'))
    dom = json.load(open(os.path.join(SHARED, 'datasets', ds, 'domain.json')))
    if ds == 'males':
        df = df.groupby('nr').sample(1, random_state=1) if n == 'k1' else df
    elif n != 'all':
        df = df.sample(int(n), random_state=1)
    disc = any(v.get('type') in ('integer', 'numeric', 'real') and 'bins' not in v for k, v in dom.items() if not k.startswith('_'))
    run(ds, df, dom, eps, disc, 40, rng)
