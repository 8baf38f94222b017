#!/usr/bin/env python3
"""`meson setup -Dtests=false` needs neither cmocka nor libyaml (issue 8).

  check_notests.py MESON SOURCE_ROOT

Configures a scratch build with -Dtests=false and asks meson's own
introspection which dependencies it looked up and which targets it
made: no cmocka, no yaml-0.1, no test; the libraries and programs all
there.
"""
import json
import subprocess
import sys
import tempfile


def main():
    meson, src = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as tmp:
        b = tmp + "/b"
        p = subprocess.run([meson, "setup", "-Dtests=false", b, src],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stdout, p.stderr)
            print("FAIL: meson setup -Dtests=false")
            return 1

        def intro(what):
            out = subprocess.run([meson, "introspect", "--" + what, b], check=True,
                                 capture_output=True, text=True).stdout
            return json.loads(out)

        deps = {d["name"] for d in intro("dependencies")}
        targets = {t["name"] for t in intro("targets")}
        tests = [t["name"] for t in intro("tests")]
    problems = []
    for d in ("cmocka", "yaml-0.1"):
        if d in deps:
            problems.append(f"-Dtests=false still looks up {d}")
    if tests:
        problems.append(f"-Dtests=false still defines tests: {', '.join(sorted(tests)[:5])} ...")
    want = {"spfkit", "spfkit-event", "spfkit-policyd"} if "libevent" in deps else {"spfkit"}
    if not want <= targets:
        problems.append(f"-Dtests=false lacks targets: {', '.join(sorted(want - targets))}")
    for p in problems:
        print("FAIL:", p)
    if not problems:
        print(f"-Dtests=false: dependencies {', '.join(sorted(deps))}; {len(targets)} targets, no tests")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
