#!/usr/bin/env python3
"""layout_check.py - the code's shape, as TAP: files a reader can hold and no call loops.

    layout_check.py TOP

Checks, over the C sources of src/ (the PostgreSQL glue) and src/core/ (the pure core):
  - no file over 1,200 lines;
  - no function over 200 lines (from the first line of its declaration to its closing brace;
    a function is a body whose braces stand alone at column 0, as the code's style writes them);
  - the same two bars over the C sources of the tests and benchmarks (test/unit/, test/fuzz/,
    bench/), but for the files of KNOWN_OVERSIZE, each printed as a known exception (with its
    figures) and reported when it is within the bars again, so that its line can go;
  - no loop in the call graph between files: for each object file of the build (src/*.o and
    src/core/*.o, so the extension must be built first), the external functions it defines
    (nm: T) and the symbols it uses (nm: U) give an edge from each file to the files defining
    the functions it calls (a variable, such as a setting's storage, is not a call); every
    strongly connected component of more than one file is a loop.  A loop fails unless it is
    one of KNOWN_LOOPS, exactly (a file joining a known loop fails too); a known loop that is
    gone is reported so that its line can go.
The graph is printed as comments (file -> files it calls) so a reader can see the layering.
"""
import os
import subprocess
import sys

MAX_FILE_LINES = 1200
MAX_FUNCTION_LINES = 200

# Test and benchmark files that may stay over the bars for now (the file's length and its
# functions'), each to be split by responsibility; no other file may join them.
KNOWN_OVERSIZE = []

# Loops the code may keep for now, each to be broken by splitting out what both files need; no
# new one may join them.  None is left (issue 40, item 4 broke GUM's files' one).
KNOWN_LOOPS = []

n = 0
failed = 0


def ok(cond, msg):
    global n, failed
    n += 1
    if cond:
        print("ok %d - %s" % (n, msg))
    else:
        print("not ok %d - %s" % (n, msg))
        failed += 1


def sources(top):
    out = []
    for d in ("src", "src/core"):
        for f in sorted(os.listdir(os.path.join(top, d))):
            if f.endswith(".c"):
                out.append(os.path.join(d, f))
    return out


def test_sources(top):
    out = []
    for d in ("test/unit", "test/fuzz", "bench"):
        for f in sorted(os.listdir(os.path.join(top, d))):
            if f.endswith(".c"):
                out.append(os.path.join(d, f))
    return out


def read_lines(path):
    with open(path) as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def oversize(name, lines):
    """(the file's length if over the bar, else None; its functions over the bar; its function count)."""
    big = len(lines) if len(lines) > MAX_FILE_LINES else None
    fns = functions(lines)
    long_fns = ["%s:%d %s (%d)" % (name, first, fn, length)
                for fn, first, length in fns if length > MAX_FUNCTION_LINES]
    return big, long_fns, len(fns)


def functions(lines):
    """(name, first line, length) of every function whose body is a '{' line to a '}' line."""
    out = []
    i = 0
    while i < len(lines):
        if lines[i].rstrip() == "{":
            # the declaration: back over the lines before '{' to a blank, comment end, or statement end
            j = i
            while j > 0:
                prev = lines[j - 1].rstrip()
                if prev == "" or prev.endswith("*/") or prev.endswith(";") or prev == "}" or prev.startswith("#"):
                    break
                j -= 1
            header = " ".join(l.strip() for l in lines[j:i])
            k = i + 1
            while k < len(lines) and not lines[k].startswith("}"):
                k += 1
            if "(" in header and not header.startswith(("typedef", "struct", "union", "enum")):
                name = header.split("(")[0].split()[-1].lstrip("*")
                out.append((name, j + 1, k - j + 1))
            i = k
        i += 1
    return out


def nm(path, flag):
    r = subprocess.run(["nm", flag, path], capture_output=True, text=True, check=True)
    syms = set()
    for line in r.stdout.splitlines():
        parts = line.split()
        if flag == "-u" and len(parts) == 2 and parts[0] == "U":
            syms.add(parts[1])
        elif flag == "--defined-only" and len(parts) == 3 and parts[1] == "T":
            syms.add(parts[2])
    return syms


def loops(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index = {}
    low = {}
    stack = []
    on = set()
    comps = []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def test_bars(top):
    """The two size bars over the tests and benchmarks, KNOWN_OVERSIZE's files excepted (said so)."""
    tsrcs = test_sources(top)
    big_files = []
    long_functions = []
    nfunctions = 0
    for src in tsrcs:
        big, long_fns, nfns = oversize(src, read_lines(os.path.join(top, src)))
        nfunctions += nfns
        if src in KNOWN_OVERSIZE:
            if big is None and not long_fns:
                print("# a known oversize file is within the bars (remove it from KNOWN_OVERSIZE): %s" % src)
            else:
                print("# known oversize file: %s%s%s" % (
                    src, " (%d lines)" % big if big is not None else "",
                    "; " + ", ".join(long_fns) if long_fns else ""))
            continue
        if big is not None:
            big_files.append("%s (%d)" % (src, big))
        long_functions += long_fns
    for known in KNOWN_OVERSIZE:
        if known not in tsrcs:
            print("# a known oversize file is gone (remove it from KNOWN_OVERSIZE): %s" % known)
    ok(not big_files, "no file of %d in test/unit/, test/fuzz/ and bench/ over %d lines but the known "
       "ones (%d known)%s" % (len(tsrcs), MAX_FILE_LINES, len(KNOWN_OVERSIZE),
                              ": " + ", ".join(big_files) if big_files else ""))
    ok(nfunctions > 100 and not long_functions, "no function of %d there over %d lines but the known "
       "files'%s" % (nfunctions, MAX_FUNCTION_LINES, ": " + ", ".join(long_functions) if long_functions else ""))


def main():
    top = sys.argv[1]
    srcs = sources(top)
    big_files = []
    long_functions = []
    nfunctions = 0
    for src in srcs:
        big, long_fns, nfns = oversize(src, read_lines(os.path.join(top, src)))
        if big is not None:
            big_files.append("%s (%d)" % (src, big))
        long_functions += long_fns
        nfunctions += nfns
    ok(not big_files, "no file of %d in src/ and src/core/ over %d lines%s" % (
        len(srcs), MAX_FILE_LINES, ": " + ", ".join(big_files) if big_files else ""))
    ok(nfunctions > 100 and not long_functions, "no function of %d over %d lines%s" % (
        nfunctions, MAX_FUNCTION_LINES, ": " + ", ".join(long_functions) if long_functions else ""))
    test_bars(top)

    objs = {}
    unbuilt = []
    for src in srcs:
        o = os.path.join(top, src[:-2] + ".o")
        if os.path.exists(o):
            objs[src] = o
        else:
            unbuilt.append(src[:-2] + ".o")
    ok(not unbuilt, "every source file is built, for the call graph%s" % (
        " (missing: %s; build the extension first)" % ", ".join(unbuilt) if unbuilt else ""))
    defined_by = {}
    for src, o in objs.items():
        for s in nm(o, "--defined-only"):
            defined_by[s] = src
    graph = {}
    for src, o in objs.items():
        graph[src] = {defined_by[s] for s in nm(o, "-u") if s in defined_by and defined_by[s] != src}
    for src in sorted(graph):
        print("# %s -> %s" % (src, " ".join(sorted(os.path.basename(x) for x in graph[src])) or "-"))
    found = loops(graph)
    new = [comp for comp in found if set(comp) not in KNOWN_LOOPS]
    for comp in found:
        print("# %s loop: %s" % ("new" if comp in new else "known", " <-> ".join(comp)))
    for known in KNOWN_LOOPS:
        if sorted(known) not in found:
            print("# a known loop is gone (remove it from KNOWN_LOOPS): %s" % " <-> ".join(sorted(known)))
    ok(not new, "no two files call each other, directly or through others, but the known loops "
       "(%d new: %s)" % (len(new), "; ".join(" <-> ".join(c) for c in new) or "none"))
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
