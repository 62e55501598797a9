#!/usr/bin/env python3
"""Checks README.md and docs/*.md against the installed extension (used by 24_docs.sh).

Usage: docs_check.py TOP DB ERRCODES_H
  TOP        the checkout
  DB         a database where README.md's examples run, in order (it must be fresh: the
             examples start with CREATE EXTENSION); docs/NAME.md's examples each run in a fresh
             database DB_NAME (created and dropped here, with the extension)
  ERRCODES_H PostgreSQL's utils/errcodes.h, to name the SQLSTATEs that src/ raises

Prints one line per check: "ok MESSAGE" or "not ok MESSAGE" (24_docs.sh turns them into TAP).

The README's reference (between <!-- reference:begin --> and <!-- reference:end -->) documents:
  - a public function, view, role or setting by a heading "#### `NAME...`"; a function's heading
    gives its signature, `name(arg type, ...) → result`, whose input argument names must be those
    of an overload in pg_proc (and its output columns, for `→ SETOF (...)` or `→ (...)`, the OUT
    arguments);
  - an internal function of the schema dpsynth, or a catalog table, by naming it in backquotes
    anywhere in the reference (`dpsynth._name(...)`, `dpsynth.table`): the list for auditors.
Every extension member must be documented; every name documented must exist.

An example is a ```sql block; a ```text block right after it (nothing but blank lines between)
is its output, as psql -X -q prints it (aligned, with headers); it must match line for line
(trailing blanks ignored).
"""
import os
import re
import subprocess
import sys

TOP, DB, ERRCODES_H = sys.argv[1:4]
failures = 0


def report(ok, msg):
    global failures
    if not ok:
        failures += 1
    print(("ok " if ok else "not ok ") + msg)
    sys.stdout.flush()


def psql(db, sql, *extra):
    return subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", db, *extra],
                          input=sql, capture_output=True, text=True)


def query(db, sql):
    r = subprocess.run(["psql", "-X", "-qAt", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d", db, "-c", sql],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("query failed: " + r.stderr)
    return [line.split("\t") for line in r.stdout.splitlines() if line]


def blocks(text):
    """[(sql, expected output or None, line number)] of a markdown text."""
    lines = text.splitlines()
    out = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("```sql"):
            start = i + 1
            j = start
            while not lines[j].startswith("```"):
                j += 1
            sql = "\n".join(lines[start:j]) + "\n"
            k = j + 1
            while k < len(lines) and lines[k].strip() == "":
                k += 1
            expected = None
            if k < len(lines) and lines[k].startswith("```text"):
                m = k + 1
                while not lines[m].startswith("```"):
                    m += 1
                expected = lines[k + 1:m]
                j = m
            out.append((sql, expected, start))
            i = j + 1
        else:
            i += 1
    return out


def run_examples(db, path, text):
    for sql, expected, line in blocks(text):
        r = psql(db, sql)
        first = sql.strip().splitlines()[0][:60]
        if r.returncode != 0:
            report(False, f"{path}:{line}: the example runs ({first}): {r.stderr.strip()[:300]}")
            continue
        if expected is None:
            report(True, f"{path}:{line}: the example runs ({first})")
            continue
        got = [l.rstrip() for l in r.stdout.splitlines()]
        want = [l.rstrip() for l in expected]
        while got and got[-1] == "":
            got.pop()
        ok = got == want
        report(ok, f"{path}:{line}: the example's output is the one shown ({first})"
               + ("" if ok else "\n# got:\n# " + "\n# ".join(got) + "\n# want:\n# " + "\n# ".join(want)))


readme = open(os.path.join(TOP, "README.md")).read()

# ---- 1. README's examples, in order, in DB (the catalog checks below read the same DB)
run_examples(DB, "README.md", readme)

# ---- 2. the catalog: every member of the extension, every role and setting of dpsynth
members = query(DB, """
    SELECT CASE WHEN p.pronamespace = 'dpsynth'::regnamespace THEN 'dpsynth.' ELSE '' END || p.proname,
           'function', coalesce(array_to_string(p.proargnames[1:p.pronargs], ','), ''),
           coalesce(array_to_string(ARRAY(SELECT p.proargnames[i] FROM generate_subscripts(p.proargmodes, 1) i
                                          WHERE p.proargmodes[i] IN ('o', 't')), ','), ''),
           pg_get_function_arguments(p.oid)
    FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
    JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'dpsynth'
    UNION ALL
    SELECT CASE WHEN c.relnamespace = 'dpsynth'::regnamespace THEN 'dpsynth.' ELSE '' END || c.relname,
           CASE c.relkind WHEN 'v' THEN 'view' ELSE 'table' END, '', '', ''
    FROM pg_class c JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'
    JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'dpsynth'
    WHERE c.relkind IN ('r', 'v', 'm', 'p')
    UNION ALL
    SELECT CASE WHEN t.typnamespace = 'dpsynth'::regnamespace THEN 'dpsynth.' ELSE '' END || t.typname,
           'table', '', '', ''
    FROM pg_type t JOIN pg_depend d ON d.classid = 'pg_type'::regclass AND d.objid = t.oid AND d.deptype = 'e'
    JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'dpsynth'
    UNION ALL
    SELECT rolname, 'role', '', '', '' FROM pg_roles WHERE rolname LIKE 'dpsynth\\_%'
""")
settings = query(DB, "LOAD 'dpsynth'; SELECT name, 'setting', '', '', '' FROM pg_settings WHERE name LIKE 'dpsynth.%'")


def norm_default(x):
    """A DEFAULT as written in the README or by pg_get_function_arguments, comparable."""
    if x is None:
        return None
    x = re.sub(r"::[a-z ]+(\[\])?$", "", x.strip()).lower()
    try:
        return float(x)
    except ValueError:
        return x


def defaults_of(arglist):
    """(the DEFAULT of each input argument, or None), from 'name type DEFAULT x, ...'."""
    out = []
    for a in split_args_raw(arglist):
        if a.startswith("OUT "):
            continue
        m = re.search(r" DEFAULT (.*)$", a)
        out.append(norm_default(m.group(1)) if m else None)
    return tuple(out)


def split_args_raw(s):
    depth, cur, out = 0, "", []
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


catalog = {}
for name, kind, args, outs, arglist in members + settings:
    catalog.setdefault(name, {"kind": kind, "sigs": set()})
    if kind == "function":
        catalog[name]["sigs"].add((tuple(a for a in args.split(",") if a), tuple(o for o in outs.split(",") if o),
                                   defaults_of(arglist)))
report(any(v["kind"] == "setting" for v in catalog.values()), "the library's settings are visible")

# ---- 3. the reference
m = re.search(r"<!-- reference:begin -->(.*)<!-- reference:end -->", readme, re.S)
report(m is not None, "README.md has a reference between its markers")
ref = m.group(1) if m else ""
headed = {}
for h in re.finditer(r"^#### `([^`]+)`", ref, re.M):
    sig = h.group(1)
    name = re.match(r"[A-Za-z_][A-Za-z0-9_.]*", sig).group(0)
    headed.setdefault(name, []).append(sig)
listed = set(re.findall(r"`(dpsynth\.[a-z_]+)", ref))
documented = set(headed) | listed

for name, info in sorted(catalog.items()):
    if name.startswith("dpsynth.") and info["kind"] in ("function", "table"):
        ok = name in listed
        where = "in the reference's list for auditors"
    else:
        ok = name in headed
        where = "with an entry (a #### heading) in the README's reference"
    report(ok, f"{info['kind']} {name} is documented {where}")
for name in sorted(documented):
    report(name in catalog, f"{name}, documented in the README's reference, exists in the installed extension")


def split_args(s):
    return [a.split()[0].strip('"') for a in split_args_raw(s)]


for name, sigs in sorted(headed.items()):
    if catalog.get(name, {}).get("kind") != "function":
        continue
    for sig in sigs:
        mm = re.match(r"[a-z_]+\((.*?)\)\s*→\s*(.*)$", sig)
        if not mm:
            report(False, f"{name}: the heading gives a signature `name(args) → result` ({sig[:60]})")
            continue
        args = tuple(split_args(mm.group(1)))
        defaults = defaults_of(mm.group(1))
        res = re.match(r"(?:SETOF\s*)?\((.*)\)\s*$", mm.group(2))
        outs = tuple(split_args(res.group(1))) if res else None
        match = [s for s in catalog[name]["sigs"]
                 if s[0] == args and (outs is None or s[1] == outs) and s[2] == defaults]
        report(bool(match), f"{name}({', '.join(args)}): the README's signature (arguments, defaults, output "
               "columns) is an overload in pg_proc"
               + ("" if match else f" (pg_proc has {sorted(catalog[name]['sigs'], key=str)}, README {defaults})"))

# every `dpsynth.x` and every `dp_x` (a name alone or called) the README writes in backquotes
# exists, but for the file names of the layout
prose = re.sub(r"^### Layout\n.*?^## ", "## ", readme, flags=re.S | re.M)
for tok in sorted(set(re.findall(r"`(dpsynth\.[a-z_]+)`", prose)) | set(re.findall(r"`(dpsynth\._[a-z_]+)\(", prose))):
    if not os.path.exists(os.path.join(TOP, tok)) and not os.path.exists(os.path.join(TOP, "src", tok)):
        report(tok in catalog, f"`{tok}`, named in README.md, exists")
for tok in sorted(set(re.findall(r"`(dp_[a-z_]+)(?=[`(])", prose))):
    report(tok in catalog, f"`{tok}`, named in README.md, exists")

# no dates (but the epoch of the date and time units) or commit hashes in the README's prose
prose_only = re.sub(r"^```.*?^```", "", readme, flags=re.S | re.M)
dates = [d for d in re.findall(r"\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b", prose_only) if d != "2000-01-01"]
report(not dates, "README.md's prose has no dates" + (f" ({dates[:3]})" if dates else ""))
hashes = re.findall(r"\b(?:commit|since) [0-9a-f]{7,40}\b", prose_only)
report(not hashes, "README.md's prose has no commit hashes" + (f" ({hashes[:3]})" if hashes else ""))

# ---- 4. every SQLSTATE that src/ and sql/dpsynth.sql raise is in the troubleshooting table
codes = {}
for line in open(ERRCODES_H):
    mm = re.match(r"#define (ERRCODE_[A-Z0-9_]+)\s+MAKE_SQLSTATE\('(.)','(.)','(.)','(.)','(.)'\)", line)
    if mm:
        codes[mm.group(1)] = "".join(mm.group(i) for i in range(2, 7))
raised = set()
src = []
for d in ("src", "src/core"):
    for f in sorted(os.listdir(os.path.join(TOP, d))):
        if f.endswith((".c", ".h")):
            src.append(open(os.path.join(TOP, d, f)).read())
for text in src:
    for mm in re.finditer(r"#define (ERRCODE_DPSYNTH_[A-Z_]+)\s+MAKE_SQLSTATE\('(.)','(.)','(.)','(.)','(.)'\)", text):
        codes[mm.group(1)] = "".join(mm.group(i) for i in range(2, 7))
for text in src:
    # raised: errcode(X), "? X : Y", "= X;" and "return X;" (not == or != comparisons)
    for mm in re.finditer(r"(?:errcode\(|[?:]\s*|(?<![=!<>])=\s*|return\s+)(ERRCODE_[A-Z0-9_]+)", text):
        if mm.group(1) != "ERRCODE_TO_CATEGORY":
            raised.add(mm.group(1))
sql = open(os.path.join(TOP, "sql", "dpsynth.sql")).read()
for mm in re.finditer(r"ERRCODE\s*=\s*'([a-z0-9_]+)'", sql):
    raised.add(mm.group(1) if re.match(r"^[0-9A-Z]{5}$", mm.group(1)) else "ERRCODE_" + mm.group(1).upper())
tm = re.search(r"^## Troubleshooting\n(.*?)^## ", readme, re.S | re.M)
table = tm.group(1) if tm else ""
report(bool(table), "README.md has a Troubleshooting section")
for macro in sorted(raised):
    code = codes.get(macro, macro)
    if code == "08000" or macro == "ERRCODE_CONNECTION_EXCEPTION":
        code = "08000"
    found = re.search(r"^\| [^|]*\b" + re.escape(code) + r"\b", table, re.M) is not None
    report(found, f"SQLSTATE {code} ({macro}), raised in src/ or sql/, is in the README's troubleshooting table")

# ---- 5. the layout names every module of src/ and src/core/
lm = re.search(r"^### Layout\n(.*?)^## ", readme, re.S | re.M)
layout = lm.group(1) if lm else ""
for d in ("src", "src/core"):
    stems = set()
    for f in os.listdir(os.path.join(TOP, d)):
        if f.endswith(".c"):
            stems.add(f[:-2])
        elif f.endswith(".h") and not os.path.exists(os.path.join(TOP, d, f[:-2] + ".c")):
            stems.add(f)
    for s in sorted(stems):
        base = s[:-2] if s.endswith(".h") else s
        ok = re.search(r"`" + re.escape(s) + r"`", layout) or re.search(r"`" + re.escape(base) + r"(\.h)?`", layout)
        report(bool(ok), f"the README's layout names {d}/{s}")

# ---- 6. docs/*.md: no reference outside the repository, and their examples run
for f in sorted(os.listdir(os.path.join(TOP, "docs"))):
    if not f.endswith(".md"):
        continue
    text = open(os.path.join(TOP, "docs", f)).read()
    if not blocks(text):
        continue
    db = DB + "_" + re.sub(r"[^a-z0-9]", "_", f[:-3].lower())
    psql("postgres", f"DROP DATABASE IF EXISTS {db};")
    psql("postgres", f"CREATE DATABASE {db};")
    psql(db, "CREATE EXTENSION dpsynth;")
    run_examples(db, "docs/" + f, text)
    psql("postgres", f"DROP DATABASE IF EXISTS {db};")
for path in ["README.md"] + ["docs/" + f for f in os.listdir(os.path.join(TOP, "docs")) if f.endswith(".md")]:
    report("../shared" not in open(os.path.join(TOP, path)).read(), f"{path} refers to nothing outside the repository")

sys.exit(1 if failures else 0)
