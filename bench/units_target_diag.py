# bench/units_target_diag.py MODEL.json... [--csv SYNTH.csv...] (issue 39 item 5 diagnosis of the TSTR target
# per unit): per model, the k learned, the target's one-way and every measured marginal holding the target
# with its noise sd per cell (1 / sqrt(2 rho), in rows: the method's rho is rho_method / k^2 and its noise
# is drawn for sensitivity 1 at that rho, so the sd of a count is that whatever k), and the merged codes of
# the columns the classifier leans on; per synthetic CSV (covid_testing), the target's conditionals on them
# against the train table's.  Targets: result (covid_testing), union (males).
import json, math, sys
args = sys.argv[1:]
csvs = args[args.index("--csv") + 1:] if "--csv" in args else []
models = args[:args.index("--csv")] if "--csv" in args else args
for f in models:
    d = json.load(open(f))
    cols = {c["name"]: c for c in d["columns"]}
    target = "result" if "result" in cols else "union"
    sd = lambda m: 1 / math.sqrt(2 * m["rho"]) if m["rho"] > 0 else float("inf")
    pairs = [f"{'+'.join(m['columns'])} {sd(m):.0f}" for m in d["marginals"] if target in m["columns"]]
    k = len(d.get("rows_per_unit") or [1])
    extra = ""
    if target == "result":
        ct = cols["ct_result"]
        extra = (f" | ct_result merged {ct['merged_code']} (NULL cell noisy {ct['one_way_noisy'][-1]:.0f})"
                 f" | result merged {cols['result']['merged_code']} noisy {[round(x) for x in cols['result']['one_way_noisy']]}")
    print(f"{f.split('/')[-1]}: k {k}, {len(d['marginals'])} marginals; with {target} (sd per cell): {'; '.join(pairs)}{extra}")
if csvs:
    import pandas as pd
    def bins(df):
        ct = pd.cut(df.ct_result, [-1e9, 44.05, 44.95, 1e9], right=False, labels=["<44.05", "44.05-44.95", ">=44.95"])
        ct = ct.astype(str).where(df.ct_result.notna(), "null")
        rv = pd.cut(df.rec_ver_tat, [-1e9, 5, 7.5, 12, 1e9], right=False, labels=["<5", "5-7.5", "7.5-12", ">=12"]).astype(str)
        return ct, rv
    def show(name, df):
        ct, rv = bins(df)
        ppos = df.groupby(ct).result.apply(lambda s: round((s == "positive").mean(), 3)).to_dict()
        pinv = df.groupby(rv).result.apply(lambda s: round((s == "invalid").mean(), 3)).to_dict()
        pinvct = df.groupby(ct).result.apply(lambda s: round((s == "invalid").mean(), 3)).to_dict()
        print(f"{name}: P(positive | ct_result) {ppos}; P(invalid | ct_result) {pinvct}; P(invalid | rec_ver_tat h) {pinv}")
    show("train", pd.read_csv("/work/wt/shared/datasets/covid_testing/covid_testing_train.csv"))
    for f in csvs:
        show(f.split("/")[-1], pd.read_csv(f))
