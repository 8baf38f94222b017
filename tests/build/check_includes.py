#!/usr/bin/env python3
"""The front ends see include/ and their shared code, never lib/ (issue 8).

  check_includes.py SOURCE_ROOT      check the tree
  check_includes.py --self-test      check the checker on crafted trees

A front end (cli/, policyd/, mta/, milter/, smtpd/, compat/, python/) may include:
  - <spfkit/...> public headers, and system headers;
  - "x.h" found in its own folder, in mta/ (the front ends' shared
    headers) or in util/ (the helpers the library and the front ends
    share: util/spfkit_util.h).
  - for cli/ alone, "publish.h": lib/publish/'s header, the internal
    library of lint, tree and flatten (issue 28), and no other of its files.
It fails on any include that names a lib/ path, resolves into lib/, or
names a header that exists only under lib/ (e.g. "core.h", <ipaddr.h>),
and on a quoted include found nowhere it may look.
"""
import os
import re
import sys
import tempfile

FRONT_ENDS = ["cli", "policyd", "mta", "milter", "smtpd", "compat", "python"]
SHARED = ["mta", "util"]
# lib/ headers a front end may include, by front end: the header of an
# internal library built for it (tests/build also checks its link).
LIB_HEADERS = {"cli": ["lib/publish/publish.h"]}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def lib_headers(root):
    out = {}
    for d, _, files in os.walk(os.path.join(root, "lib")):
        for f in files:
            if f.endswith(".h"):
                out.setdefault(f, os.path.relpath(os.path.join(d, f), root))
    return out


def check(root):
    root = os.path.realpath(root)
    lib = os.path.join(root, "lib") + os.sep
    internal = lib_headers(root)
    problems, files = [], 0
    for fe in FRONT_ENDS:
        top = os.path.join(root, fe)
        if not os.path.isdir(top):
            continue
        for d, _, names in os.walk(top):
            for n in sorted(names):
                if not n.endswith((".c", ".h")):
                    continue
                path = os.path.join(d, n)
                rel = os.path.relpath(path, root)
                files += 1
                text = open(path, encoding="utf-8", errors="replace").read()
                for m in INCLUDE.finditer(text):
                    kind, name = m.group(1), m.group(2)
                    line = text.count("\n", 0, m.start()) + 1
                    where = f"{rel}:{line}: #include {kind}{name}{'>' if kind == '<' else kind}"
                    if re.search(r"(^|/)lib/", name):
                        problems.append(f"{where}: names a lib/ path")
                        continue
                    if kind == "<":
                        base = os.path.basename(name)
                        if not name.startswith("spfkit/") and "/" not in name and base in internal:
                            problems.append(f"{where}: {internal[base]} is a lib/ header")
                        continue
                    allowed = [os.path.join(root, h) for h in LIB_HEADERS.get(fe, [])]
                    if [h for h in allowed if os.path.basename(h) == name]:
                        continue
                    found = None
                    for base_dir in [d] + [os.path.join(root, x) for x in SHARED]:
                        cand = os.path.realpath(os.path.join(base_dir, name))
                        if os.path.exists(cand):
                            found = cand
                            break
                    if found is None:
                        what = (f"{internal[os.path.basename(name)]} is a lib/ header"
                                if os.path.basename(name) in internal
                                else "not in its folder nor in mta/ or util/")
                        problems.append(f"{where}: {what}")
                    elif found.startswith(lib):
                        problems.append(f"{where}: resolves to {os.path.relpath(found, root)}")
                    elif not any(found.startswith(os.path.join(root, x) + os.sep)
                                 for x in [fe] + SHARED):
                        problems.append(f"{where}: outside {fe}/, mta/ and util/")
    return files, problems


def self_test():
    cases = [
        ({"cli/a.c": '#include "core.h"\n'}, 1),
        ({"cli/a.c": '#include "../lib/core/core.h"\n'}, 1),
        ({"policyd/a.c": '#include <ipaddr.h>\n'}, 1),
        ({"policyd/a.c": '  #  include "lib/spf/ipaddr.h"\n'}, 1),
        ({"cli/a.c": '#include "../tests/x.h"\n', "tests/x.h": ""}, 1),
        ({"cli/a.c": '#include <spfkit/spfkit.h>\n#include <stdio.h>\n#include "cli.h"\n',
          "cli/cli.h": '#include "spfkit_util.h"\n',
          "util/spfkit_util.h": "#include <spfkit/common.h>\n"}, 0),
        ({"milter/a.c": '#include "checker.h"\n', "mta/checker.h": ""}, 0),
        ({"policyd/a.c": '#include "config.h"\n', "mta/config.h": ""}, 0),
        ({"cli/a.c": '#include "publish.h"\n', "lib/publish/publish.h": ""}, 0),
        ({"policyd/a.c": '#include "publish.h"\n', "lib/publish/publish.h": ""}, 1),
        ({"cli/a.c": '#include "walk.h"\n', "lib/publish/publish.h": "",
          "lib/publish/walk.h": ""}, 1),
        ({"cli/a.c": '#include <publish.h>\n', "lib/publish/publish.h": ""}, 1),
        ({"cli/a.c": '#include "../lib/publish/publish.h"\n', "lib/publish/publish.h": ""}, 1),
    ]
    failed = 0
    for i, (tree, want) in enumerate(cases):
        with tempfile.TemporaryDirectory() as t:
            for p, body in {"lib/core/core.h": "", "lib/spf/ipaddr.h": "", **tree}.items():
                os.makedirs(os.path.dirname(os.path.join(t, p)), exist_ok=True)
                with open(os.path.join(t, p), "w", encoding="utf-8") as f:
                    f.write(body)
            _, problems = check(t)
            if len(problems) != want:
                failed += 1
                print(f"self-test {i}: {len(problems)} problems, want {want}: {problems}")
    print(f"{len(cases) - failed} passed, {failed} failed (self-test)")
    return failed == 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return 0 if self_test() else 1
    if len(sys.argv) != 2:
        sys.exit("usage: check_includes.py SOURCE_ROOT | --self-test")
    if not self_test():
        return 1
    files, problems = check(sys.argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f"FAIL: {len(problems)} includes cross the front-end boundary. A front end sees "
              "include/ (public API), mta/ (shared front-end code) and util/ (helpers shared "
              "with the library) only: make the helper public API (include/spfkit, spfkit_ "
              "name) or move it to mta/.")
        return 1
    print(f"{files} front-end files include only public and front-end headers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
