#!/usr/bin/env python3
"""bench/plot_results.py - the generated section of bench/RESULTS.md and its plots, from the raw
records bench/regenerate.sh leaves in OUT (quality.jsonl: one evaluate.py result per run with
table, epsilon and seconds; speed.jsonl: one dp_synthesize call per line with rows, seconds and
peak_kb).  Prints the Markdown on stdout and writes OUT/quality_TABLE.png and OUT/speed.png.

The comparison systems' figures are read from ANCHORS.md (../shared/datasets): its AIM and MST rows
(measured at epsilon 1 only) and its "no noise, 32 bins" row (what that binning alone costs).
Nothing here is measured: it summarises what the records say (means, and min-max over the runs).
"""
import argparse
import collections
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.ticker  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

METRICS = [("tvd1", "tvd1", 3), ("tvd2", "tvd2", 3), ("tvd3", "tvd3", 3), ("range", "range", 4),
           ("tstr_auc", "TSTR AUC", 3)]
PLOTTED = [("tvd2", "mean 2-way TVD (lower is better)"), ("tvd3", "mean 3-way TVD (lower is better)"),
           ("tstr_auc", "TSTR AUC (higher is better)")]
ANCHOR_COLS = {"tvd1": 3, "tvd2": 4, "tvd3": 5, "range": 6, "tstr_auc": 7}


def read_jsonl(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def read_anchors(path):
    """{table: {system: {metric: value}}} from ANCHORS.md's table (epsilon 1)."""
    out, cur = collections.defaultdict(dict), None
    if not path or not os.path.exists(path):
        return out
    for line in open(path):
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 9 or cells[0].startswith("---") or cells[0].startswith("table"):
            continue
        if cells[0]:
            cur = cells[0].split(" ")[0]
        system = cells[1]
        if system.startswith("AIM"):
            key = "AIM" if system == "AIM" else "AIM (stopped early)"
        elif system in ("MST",) or system.startswith("no noise"):
            key = "MST" if system == "MST" else "no noise, 32 bins"
        else:
            continue
        vals = {}
        for m, col in ANCHOR_COLS.items():
            try:
                vals[m] = float(cells[col])
            except ValueError:
                pass
        out[cur][key] = vals
    return out


def num(v, nd):
    return f"{v:.{nd}f}".lstrip("0") if v is not None and v == v else ""


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")


def quality_section(recs, anchors, tables, epsilons):
    lines = ["| table | epsilon | runs | dpsynth tvd1 / tvd2 / tvd3 / range / AUC (mean) | AUC min-max | "
             "AIM (epsilon 1) | MST (epsilon 1) | seconds (mean) |",
             "|---|---|---|---|---|---|---|---|"]
    for t in tables:
        for e in epsilons:
            rs = [r for r in recs if r["table"] == t and r["epsilon"] == e]
            if not rs:
                continue
            ours = " / ".join(num(mean([r.get(m) for r in rs]), nd) for m, _, nd in METRICS)
            aucs = [r["tstr_auc"] for r in rs if r.get("tstr_auc") is not None]
            rng = f"{num(min(aucs), 3)}-{num(max(aucs), 3)}" if aucs else ""
            anch = []
            for sysname in ("AIM", "MST"):
                a = anchors.get(t, {}).get(sysname)
                if a is None and sysname == "AIM":
                    a = anchors.get(t, {}).get("AIM (stopped early)")
                anch.append(" / ".join(num(a.get(m), nd) for m, _, nd in METRICS) if a and e == 1 else "")
            lines.append(f"| {t} | {e:g} | {len(rs)} | {ours} | {rng} | {anch[0]} | {anch[1]} | "
                         f"{mean([r.get('seconds') for r in rs]):.2f} |")
    return lines


def speed_section(recs):
    lines = ["| rows | runs | rows written | seconds: total (min-max) | read | write | "
             "peak MB (min-max) |", "|---|---|---|---|---|---|---|"]
    by = collections.OrderedDict()
    for r in sorted(recs, key=lambda r: r["rows"]):
        by.setdefault(r["rows"], []).append(r)
    for n, rs in by.items():
        tot = [r["seconds"]["total"] for r in rs]
        peak = [r["peak_kb"] / 1024 for r in rs]
        lines.append(f"| {n:,} | {len(rs)} | {round(mean([r['rows_written'] for r in rs])):,} | "
                     f"{mean(tot):.2f} ({min(tot):.2f}-{max(tot):.2f}) | "
                     f"{mean([r['seconds'].get('read') for r in rs]):.2f} | "
                     f"{mean([r['seconds'].get('write') for r in rs]):.2f} | "
                     f"{mean(peak):.0f} ({min(peak):.0f}-{max(peak):.0f}) |")
    return lines, by


def plot_quality(recs, anchors, table, epsilons, path, smoke):
    fig, axes = plt.subplots(1, len(PLOTTED), figsize=(4.2 * len(PLOTTED), 3.6))
    for ax, (m, label) in zip(axes, PLOTTED):
        xs, ys, lo, hi = [], [], [], []
        for e in epsilons:
            v = [r[m] for r in recs if r["table"] == table and r["epsilon"] == e and r.get(m) is not None]
            if v:
                xs.append(e)
                ys.append(mean(v))
                lo.append(mean(v) - min(v))
                hi.append(max(v) - mean(v))
        ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, label="dpsynth (mean, min-max)")
        for sysname, style in (("AIM", "s"), ("AIM (stopped early)", "s"), ("MST", "^")):
            a = anchors.get(table, {}).get(sysname, {})
            if m in a:
                ax.plot([1], [a[m]], style, markersize=8, linestyle="none", label=f"{sysname}, epsilon 1")
        nn = anchors.get(table, {}).get("no noise, 32 bins", {})
        if m in nn:
            ax.axhline(nn[m], color="grey", linestyle=":", label="no noise, 32 bins")
        ax.set_xscale("log")
        ax.set_xticks(epsilons)
        ax.set_xticklabels([f"{e:g}" for e in epsilons])
        ax.minorticks_off()
        ax.set_xlabel("epsilon (delta 1e-6)")
        ax.set_title(label, fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    n = sum(1 for r in recs if r["table"] == table)
    fig.suptitle(f"{table}: fidelity against epsilon ({n} run{'' if n == 1 else 's'} in all)" + (" - SMOKE RUN, reduced matrix" if smoke else ""))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_speed(by, path, smoke):
    rows = list(by)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for ax, key, label in ((axes[0], "seconds", "seconds (dp_synthesize total)"),
                           (axes[1], "peak", "peak backend memory, MB (RssAnon)")):
        vals = [[(r["seconds"]["total"] if key == "seconds" else r["peak_kb"] / 1024) for r in by[n]] for n in rows]
        ys = [mean(v) for v in vals]
        ax.errorbar(rows, ys, yerr=[[y - min(v) for y, v in zip(ys, vals)], [max(v) - y for y, v in zip(ys, vals)]],
                    marker="o", capsize=3)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("rows (Adult repeated), epsilon 1")
        ax.set_title(label, fontsize=10)
        ax.grid(alpha=0.3, which="both")
    fig.suptitle("dp_synthesize time and memory against rows" + (" - SMOKE RUN, reduced matrix" if smoke else ""))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--anchors")
    ap.add_argument("--date", default="")
    ap.add_argument("--commit", default="")
    ap.add_argument("--machine", default="")
    ap.add_argument("--command", default="")
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    quality = read_jsonl(os.path.join(a.out, "quality.jsonl"))
    speed = read_jsonl(os.path.join(a.out, "speed.jsonl"))
    anchors = read_anchors(a.anchors)
    tables = list(dict.fromkeys(r["table"] for r in quality))
    epsilons = sorted({r["epsilon"] for r in quality})

    md = [f"## Generated by bench/regenerate.sh, {a.date}, commit {a.commit}" + (" (SMOKE RUN: reduced matrix, not the results)" if a.smoke else ""),
          "", f"Machine: {a.machine}. Command: `{a.command}`.", ""]
    if quality:
        md += ["### Quality", "",
               "dp_synthesize with its default method, delta 1e-6, each table's domain.json declared anew before "
               "every run; evaluate.py against TABLE_train.csv, TSTR on TABLE_test.csv. AIM and MST: ANCHORS.md "
               "(epsilon 1 only; star's AIM row is AIM stopped early, a floor of what it reaches). "
               "Plots: " + ", ".join(f"quality_{t}.png" for t in tables) + ".", ""]
        md += quality_section(quality, anchors, tables, epsilons) + [""]
        for t in tables:
            plot_quality(quality, anchors, t, epsilons, os.path.join(a.out, f"quality_{t}.png"), a.smoke)
    if speed:
        lines, by = speed_section(speed)
        md += ["### Speed", "",
               "One dp_synthesize call at epsilon 1 on Adult's rows repeated to each size (domain.json "
               "declared), each in a fresh session; seconds as dp_synthesize reports them (read = scan and "
               "encode, write = create, decode and insert); peak = largest private memory (RssAnon) of the "
               "backend, sampled every 20 ms. Plot: speed.png.", ""]
        md += lines + [""]
        plot_speed(by, os.path.join(a.out, "speed.png"), a.smoke)
    sys.stdout.write("\n".join(md))


if __name__ == "__main__":
    main()
