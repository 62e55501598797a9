#!/usr/bin/env python3
"""bench/model_domains.py - the synthesized columns' domains of a stored model (dp_model_json's
output, a file or stdin) as the text that bench/final_1m.c encodes Adult's rows with: one line a
column, `name int CODES NULLCELL e0 e1 ... eCODES` (integer bins: code i holds [e_i, e_{i+1} - 1])
or `name cat CODES NULLCELL v0 v1 ...` (categories: code i is value v_i; with NULLCELL 1 the last
code is NULL and any value not listed).  Public facts of the model only (its released domains).

Usage: psql -qAt -c "SELECT dp_model_json(ID)" | bench/model_domains.py > bench/adult_1m_domains.txt
"""
import json
import sys

m = json.load(open(sys.argv[1]) if len(sys.argv) > 1 else sys.stdin)
for c in sorted(m["columns"], key=lambda c: c["index"]):
    if c.get("treatment") != "synthesized":
        continue
    d = c["domain"]
    null = 1 if d.get("null_cell") else 0
    if d["kind"] == "integer_bins":
        toks = [str(int(e)) for e in d["edges"]]
        assert len(toks) == c["codes"] + 1 - null, c["name"]
        kind = "int"
    elif d["kind"] == "categories":
        toks = d["values"]
        assert len(toks) == c["codes"] - null, c["name"]
        assert all(" " not in v for v in toks), c["name"]
        kind = "cat"
    else:
        sys.exit("column %s: domain kind %s not handled" % (c["name"], d["kind"]))
    print(c["name"], kind, c["codes"], null, " ".join(toks))
