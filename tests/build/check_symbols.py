#!/usr/bin/env python3
"""The exports of a shared library are a decision (issue 8).

Three lists must agree:
  - the version script (lib/spfkit.map), checked in: what may be exported;
  - the visible symbols of the library's objects (the static archive):
    with -fvisibility=hidden only what a public header declares is
    visible (lib/export.h), so this is the public API as compiled;
  - what the shared library exports (nm -D --defined-only), each with its
    version node.
Also: every export is spfkit_-prefixed (never spfkit__, the internals),
the SONAME is as given, and every public header is compiled with default
visibility (reached from lib/export.h).

  check_symbols.py --map M --archive A --shared S --soname N [--export-h E]
  check_symbols.py --map M --archive A --update   (rewrite M from A)

On a mismatch it prints the difference and the command that regenerates
the map (tools/update-symbols.sh BUILD_DIR): review its diff before
committing, a removed line is an ABI break.
"""
import argparse
import os
import re
import subprocess
import sys

HEADER = """/*
 * The exports of {lib}: each one a decision (issue 8).
 * Libraries are built with -fvisibility=hidden; what the public headers
 * declare is visible (lib/export.h) and exported only if listed here.
 * tests/build/check_symbols.py checks this list against the public
 * headers and the built library; tools/update-symbols.sh BUILD_DIR
 * rewrites it from a build (review the diff: a removed line breaks the
 * ABI). After a release, new symbols go in a new node that inherits this
 * one ("SPFKIT_1.1 {{ global: ...; }} SPFKIT_1.0;"), never in a released one.
 */
"""


def run(cmd):
    try:
        return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"check_symbols: {' '.join(cmd)} failed: {e}")


def parse_map(path):
    """[(node, parent, [symbols])] in file order."""
    text = re.sub(r"/\*.*?\*/", "", open(path, encoding="utf-8").read(), flags=re.S)
    text = re.sub(r"#[^\n]*", "", text)
    nodes = []
    for m in re.finditer(r"([A-Za-z0-9_.]+)\s*\{(.*?)\}\s*([A-Za-z0-9_.]*)\s*;", text, re.S):
        name, body, parent = m.group(1), m.group(2), m.group(3)
        syms, scope = [], "global"
        for tok in re.split(r"[;\s]+", body):
            if not tok:
                continue
            if tok.endswith(":"):
                scope = tok[:-1]
                continue
            if scope == "global":
                syms.append(tok)
        nodes.append((name, parent, syms))
    return nodes


def visible(archive):
    """Defined GLOBAL/WEAK symbols of DEFAULT visibility in an archive."""
    out = set()
    for line in run(["readelf", "-sW", archive]).splitlines():
        f = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(f) >= 8 and f[0].endswith(":") and f[4] in ("GLOBAL", "WEAK"):
            if f[5] == "DEFAULT" and f[6] != "UND" and f[3] in ("FUNC", "OBJECT", "TLS"):
                out.add(f[7])
    return out


def exported(shared, nodes=()):
    """{name: version} of the dynamic symbols a shared library defines,
    without the version nodes' own (absolute) symbols."""
    out = {}
    for line in run(["nm", "-D", "--defined-only", shared]).splitlines():
        f = line.split()
        if len(f) < 3:
            continue
        kind, sym = f[1], f[2]
        name, _, version = sym.partition("@")
        version = version.lstrip("@")
        if kind == "A" and name in nodes:
            continue  # a version node's own symbol, as "A SPFKIT_1.0"
        out[name] = version
    return out


def soname(shared):
    for line in run(["readelf", "-dW", shared]).splitlines():
        m = re.search(r"\(SONAME\).*\[(.*)\]", line)
        if m:
            return m.group(1)
    return None


def header_closure(export_h, include_dir):
    """Public headers reached by #include <spfkit/...> from export_h."""
    seen, todo = set(), [export_h]
    while todo:
        path = todo.pop()
        try:
            text = open(path, encoding="utf-8").read()
        except OSError:
            continue
        for name in re.findall(r"^\s*#\s*include\s*<spfkit/([^>]+)>", text, re.M):
            if name in seen:
                continue
            seen.add(name)
            src = os.path.join(include_dir, name)
            todo.append(src if os.path.exists(src) else src + ".in")
    return seen


def write_map(path, lib, nodes):
    lines = [HEADER.format(lib=lib)]
    for i, (name, parent, syms) in enumerate(nodes):
        lines.append(f"{name} {{\n  global:\n")
        lines += [f"    {s};\n" for s in sorted(syms)]
        if i == 0:
            lines.append("  local:\n    *;\n")
        lines.append("}" + (f" {parent}" if parent else "") + ";\n")
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(lines))


def show(title, names):
    print(title)
    for n in sorted(names):
        print(f"    {n}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--map", required=True)
    ap.add_argument("--archive", required=True, action="append")
    ap.add_argument("--shared")
    ap.add_argument("--soname")
    ap.add_argument("--node", default="SPFKIT_1.0", help="the first (oldest) version node")
    ap.add_argument("--export-h", help="lib/export.h: every include/spfkit/*.h must be reached")
    ap.add_argument("--include-dir", help="include/spfkit, for --export-h")
    ap.add_argument("--regen", default="tools/update-symbols.sh BUILD_DIR",
                    help="the command to print on a mismatch")
    ap.add_argument("--update", action="store_true", help="rewrite --map from --archive")
    a = ap.parse_args()

    public = set()
    for ar in a.archive:
        public |= visible(ar)
    lib = os.path.basename(a.shared) if a.shared else \
        "lib" + os.path.basename(a.map).rsplit(".", 1)[0] + ".so.1"

    if a.update:
        nodes = parse_map(a.map) if os.path.exists(a.map) else []
        if not nodes:
            nodes = [(a.node, "", [])]
        listed = {s for _, _, syms in nodes for s in syms}
        gone = listed - public
        new = public - listed
        nodes = [(n, p, [s for s in syms if s not in gone]) for n, p, syms in nodes]
        nodes[-1][2].extend(sorted(new))
        write_map(a.map, lib, nodes)
        if new:
            show(f"{a.map}: added to {nodes[-1][0]}:", new)
        if gone:
            show(f"{a.map}: removed (an ABI break once released):", gone)
        if not new and not gone:
            print(f"{a.map}: up to date ({len(listed)} symbols)")
        return 0

    problems = []
    nodes = parse_map(a.map)
    version_of = {s: n for n, _, syms in nodes for s in syms}
    listed = set(version_of)
    if not nodes or nodes[0][0] != a.node:
        problems.append(f"{a.map}: the first version node is not {a.node}")
    wild = sorted(s for s in listed if any(c in s for c in "*?["))
    if wild:
        problems.append(f"{a.map}: patterns in global: {', '.join(wild)}; name each symbol")

    bad = sorted(s for s in public if not s.startswith("spfkit_") or s.startswith("spfkit__"))
    if bad:
        show("visible symbols that are not spfkit_ public names (made visible by a public header?):",
             bad)
        problems.append("non-public names are visible")

    if public != listed:
        print(f"{a.map} does not match the public API compiled into {', '.join(a.archive)}:")
        for s in sorted(public - listed):
            print(f"+   {s};   (declared in a public header, not exported)")
        for s in sorted(listed - public):
            print(f"-   {s};   (listed, but no public definition)")
        problems.append("map and public headers differ")

    if a.shared:
        exp = exported(a.shared, {n for n, _, _ in nodes})
        names = set(exp)
        not_spfkit = sorted(s for s in names if not s.startswith("spfkit_") or s.startswith("spfkit__"))
        if not_spfkit:
            show(f"{a.shared} exports non-public names:", not_spfkit)
            problems.append("non-public exports")
        if names != listed:
            print(f"{a.shared} exports (nm -D --defined-only) differ from {a.map}:")
            for s in sorted(names - listed):
                print(f"+   {s}   (exported, not listed)")
            for s in sorted(listed - names):
                print(f"-   {s}   (listed, not exported)")
            problems.append("exports and map differ")
        wrong = sorted(f"{s}@{exp[s] or '(none)'} (want @{version_of[s]})"
                       for s in names & listed if exp[s] != version_of[s])
        if wrong:
            show("exports with the wrong version node:", wrong)
            problems.append("version nodes")
        if a.soname:
            got = soname(a.shared)
            if got != a.soname:
                problems.append(f"{a.shared}: SONAME {got}, want {a.soname}")
        print(f"{len(names)} symbols exported by {os.path.basename(a.shared)}")

    if a.export_h:
        reached = header_closure(a.export_h, a.include_dir)
        have = {f[:-3] if f.endswith(".h.in") else f for f in os.listdir(a.include_dir)
                if f.endswith(".h") or f.endswith(".h.in")}
        have = {h if h.endswith(".h") else h + ".h" for h in have}
        missed = sorted(have - reached)
        if missed:
            show(f"public headers not reached from {a.export_h} (their functions stay hidden;"
                 " include them from <spfkit/spfkit.h> or lib/export.h):", missed)
            problems.append("headers not reached")

    if problems:
        print()
        for p in problems:
            print(f"FAIL: {p}")
        print(f"To accept the public API as built, run: {a.regen}")
        print(f"and review `git diff {a.map}` (each + line is a new export, each - line an ABI break).")
        return 1
    print(f"{len(listed)} symbols in {a.map}: as the public headers declare"
          + (" and the library exports" if a.shared else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
