#!/usr/bin/env python3
"""Prints the SQL (for psql) that loads DIR/NAME_train.csv into table NAME as its owner would
create it: column types from DIR/domain.json, NOT NULL where domain.json does not say "nullable":
true and the column has no missing value (the owner knows the schema), then protects it with a
budget of epsilon EPS and declares domain.json.  Usage: load_dataset.py DIR NAME EPS"""
import csv, json, os, sys

base, name, eps = sys.argv[1], sys.argv[2], sys.argv[3]
dom = json.load(open(os.path.join(base, "domain.json")))
cols = open(os.path.join(base, f"{name}_train.csv")).readline().strip().split(",")
types = {"integer": "integer", "numeric": "float8", "float": "float8", "categorical": "text"}
null = "?" if name == "adult" else ""
missing = set()
with open(os.path.join(base, f"{name}_train.csv"), newline="") as f:
    for row in csv.DictReader(f):
        missing.update(k for k, v in row.items() if v == null)
defs = []
for c in cols:
    d = dom[c]
    t = types[d["type"]]
    if t == "integer" and max(abs(d.get("lower", 0)), abs(d.get("upper", 0))) > 2**31 - 1:
        t = "bigint"
    defs.append(f'"{c}" {t}' + ("" if d.get("nullable") or c in missing else " NOT NULL"))
print(f"DROP TABLE IF EXISTS {name};")
print(f"CREATE TABLE {name} ({', '.join(defs)});")
print(f"\\copy {name} FROM '{os.path.join(base, name + '_train.csv')}' WITH (FORMAT csv, HEADER true, NULL '{null}')")
print(f"SELECT dp_protect('{name}', epsilon => {eps});")
print(f"SELECT dp_declare('{name}', $json${json.dumps(dom)}$json$::jsonb);")
