#!/usr/bin/env python3
"""Total every test case `make test` ran, over meson's testlog.json files.

A test executable that reports its own cases (cmocka's "[  PASSED  ] N
test(s)." / "[  FAILED  ] N test(s)", or our runners' "N passed, N
failed") counts those cases; any other test counts as one case. Prints
one line per build and the closing line "N passed, N failed".
Exit status 1 when anything failed or nothing ran.
"""
import json
import re
import sys

CMOCKA_PASSED = re.compile(r"^\[  PASSED  \] (\d+) test", re.M)
CMOCKA_FAILED = re.compile(r"^\[  FAILED  \] (\d+) test", re.M)
PLAIN = re.compile(r"^(\d+) passed, (\d+) failed", re.M)


def count(entry):
    # cmocka reports on stderr, our runners on stdout
    out = (entry.get("stdout") or "") + "\n" + (entry.get("stderr") or "")
    ok = entry.get("result") in ("OK", "EXPECTEDFAIL")
    plain = PLAIN.findall(out)
    if plain:
        passed, failed = (int(x) for x in plain[-1])
    elif CMOCKA_PASSED.search(out) or CMOCKA_FAILED.search(out):
        passed = sum(int(x) for x in CMOCKA_PASSED.findall(out))
        failed = sum(int(x) for x in CMOCKA_FAILED.findall(out))
    else:
        passed, failed = (1, 0) if ok else (0, 1)
    if not ok and failed == 0:
        failed = 1  # crashed or timed out after its own report
    return passed, failed


def main(paths):
    total_p = total_f = 0
    for path in paths:
        build_p = build_f = 0
        try:
            lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
        except OSError as e:
            print(f"{path}: {e.strerror}")
            total_f += 1
            continue
        for line in lines:
            if not line.strip():
                continue
            entry = json.loads(line)
            p, f = count(entry)
            if f:
                print(f"  FAILED: {entry.get('name')} ({entry.get('result')})")
            build_p += p
            build_f += f
        print(f"{path}: {build_p} passed, {build_f} failed")
        total_p += build_p
        total_f += build_f
    print(f"{total_p} passed, {total_f} failed")
    return 1 if total_f or not total_p else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
