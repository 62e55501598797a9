# bench/units_perclass.py SYNTH.csv...: evaluate.py's TSTR (HistGradientBoosting, covid_testing, target result)
# with the one-vs-rest AUC of each class besides the macro mean evaluate.py reports (issue 39 diagnosis).
import sys, numpy as np, pandas as pd
sys.path.insert(0, "/work/wt/shared/tools")
import evaluate as E
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import roc_auc_score
SH = "/work/wt/shared/datasets/covid_testing/"
test = E.load(SH + "covid_testing_test.csv")
excl = {"subject_id", "fake_first_name", "fake_last_name"}
test = test[[c for c in test.columns if c not in excl]]
target = "result"
cols = [c for c in test.columns if c != target]
cats = {c: {v: i for i, v in enumerate(sorted(set(test[c])))} for c in cols if not E.numeric(test[c])}
def frame(df):
    out = pd.DataFrame(index=df.index)
    for c in cols:
        v = df[c] if c in df.columns else pd.Series([""] * len(df), index=df.index)
        out[c] = v.map(cats[c]).fillna(-1).astype(float) if c in cats else pd.to_numeric(v.where(~v.isin(E.MISSING)), errors="coerce")
    return out
norm = lambda s: s.str.rstrip(".").map(E.canonical)
labels = sorted(set(norm(test[target]))); index = {v: i for i, v in enumerate(labels)}
ytest = norm(test[target]).map(index).to_numpy()
for f in sys.argv[1:]:
    tr = E.load(f)
    y = norm(tr[target]).map(index); keep = y.notna().to_numpy(); y = y[keep].astype(int).to_numpy()
    clf = HistGradientBoostingClassifier(random_state=0).fit(frame(tr)[keep], y)
    p = np.zeros((len(test), len(labels))); p[:, clf.classes_] = clf.predict_proba(frame(test))
    counts = np.bincount(y, minlength=len(labels))
    per = {labels[c]: round(roc_auc_score(ytest == c, p[:, c]), 3) for c in range(len(labels))}
    print(f.split("/")[-1], "synth counts", dict(zip(labels, counts.tolist())), "AUC per class", per, "macro", round(np.mean(list(per.values())), 3))
