#!/usr/bin/env python3
"""Total every test case `make test` ran, over meson's testlog.json files.

    test-summary.py [--since STAMP] TESTLOG.json...

A test executable that reports its own cases (cmocka's "[  PASSED  ] N
test(s)." / "[  FAILED  ] N test(s)" / "[  SKIPPED ] N test(s)", or our
runners' "N passed, N failed[, N skipped]") counts those cases; any other
test counts as one case. A test meson records as SKIP (exit status 77)
is skipped, not failed. Prints one line per build and the closing line
"N passed, N failed", with ", N skipped" only when something was skipped.

A log that cannot be read counts as a failure: meson died before writing
it. With --since, so does a log older than the file STAMP (touched when
the run began): it is the log of an earlier run, and is not read.

Exit status 1 when anything failed, a log is missing or stale, or
nothing passed.
"""
import json
import os
import re
import sys

CMOCKA_PASSED = re.compile(r"^\[  PASSED  \] (\d+) test", re.M)
CMOCKA_FAILED = re.compile(r"^\[  FAILED  \] (\d+) test", re.M)
CMOCKA_SKIPPED = re.compile(r"^\[  SKIPPED \] (\d+) test", re.M)
PLAIN = re.compile(r"^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?", re.M)


def count(entry):
    """(passed, failed, skipped) cases of one meson test."""
    result = entry.get("result")
    if result == "SKIP":
        return 0, 0, 1
    # cmocka reports on stderr, our runners on stdout
    out = (entry.get("stdout") or "") + "\n" + (entry.get("stderr") or "")
    ok = result in ("OK", "EXPECTEDFAIL")
    plain = PLAIN.findall(out)
    if plain:
        passed, failed, skipped = (int(x or 0) for x in plain[-1])
    elif CMOCKA_PASSED.search(out) or CMOCKA_FAILED.search(out):
        passed = sum(int(x) for x in CMOCKA_PASSED.findall(out))
        failed = sum(int(x) for x in CMOCKA_FAILED.findall(out))
        skipped = sum(int(x) for x in CMOCKA_SKIPPED.findall(out))
    else:
        passed, failed, skipped = (1, 0, 0) if ok else (0, 1, 0)
    if not ok and failed == 0:
        failed = 1  # crashed or timed out after its own report
    return passed, failed, skipped


def tally(p, f, s):
    line = f"{p} passed, {f} failed"
    return line + f", {s} skipped" if s else line


def read_log(path, since):
    """The log's lines, or None after printing why it does not count."""
    try:
        if since is not None and os.stat(path).st_mtime_ns < since:
            print(f"{path}: older than this run (meson did not write it), not read")
            return None
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()
    except OSError as e:
        print(f"{path}: {e.strerror}")
        return None


def build_totals(lines):
    p = f = s = 0
    for line in lines:
        if not line.strip():
            continue
        entry = json.loads(line)
        ep, ef, es = count(entry)
        if ef:
            print(f"  FAILED: {entry.get('name')} ({entry.get('result')})")
        elif es and not ep:
            print(f"  SKIPPED: {entry.get('name')}")
        p, f, s = p + ep, f + ef, s + es
    return p, f, s


def main(argv):
    since, paths = None, argv
    if len(argv) >= 2 and argv[0] == "--since":
        try:
            since = os.stat(argv[1]).st_mtime_ns
        except OSError as e:
            print(f"{argv[1]}: {e.strerror} (the stamp of --since)")
            return 1
        paths = argv[2:]
    total_p = total_f = total_s = 0
    for path in paths:
        lines = read_log(path, since)
        if lines is None:
            total_f += 1
            continue
        p, f, s = build_totals(lines)
        print(f"{path}: {tally(p, f, s)}")
        total_p, total_f, total_s = total_p + p, total_f + f, total_s + s
    print(tally(total_p, total_f, total_s))
    return 1 if total_f or not total_p else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
