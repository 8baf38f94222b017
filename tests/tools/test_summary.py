#!/usr/bin/env python3
"""Tests of tools/test-summary.py, the closing line of `make test`.

    test_summary.py TEST_SUMMARY_PY

Each case writes crafted meson testlog.json files into a fresh
directory, runs the summary over them and compares its last line and
exit status with what the case wants. Prints "N passed, N failed" (so
the summary counts these cases) and exits 1 when any case failed.
"""
import json
import os
import subprocess
import sys
import tempfile

SUMMARY = None  # path of tools/test-summary.py, from argv


def entry(name, result, stdout="", stderr=""):
    return {"name": name, "result": result, "stdout": stdout, "stderr": stderr}


def write_log(path, entries, mtime=None):
    with open(path, "w", encoding="utf-8") as f:
        for e in entries:
            f.write(json.dumps(e) + "\n")
    if mtime is not None:
        os.utime(path, (mtime, mtime))


def run(args):
    p = subprocess.run([sys.executable, SUMMARY] + args, capture_output=True, text=True,
                       check=False)
    lines = p.stdout.splitlines()
    return p.returncode, lines[-1] if lines else "", p.stdout


def want(name, got, last, status):
    """got is run()'s triple; returns an error text or None."""
    rc, line, out = got
    if line != last or (rc != 0) != (status != 0):
        return (f"{name}: got exit {rc} and last line {line!r}, want exit {status} "
                f"and {last!r}\n--- output\n{indent(out)}")
    return None


def indent(text):
    # nested "N passed, N failed" lines must not start a line of our own
    # output: the summary would take the last one as this test's count
    return "".join("    " + line + "\n" for line in text.splitlines())


def case_plain_counts(d):
    log = os.path.join(d, "testlog.json")
    write_log(log, [entry("a", "OK"), entry("b", "OK", stdout="4 passed, 0 failed\n")])
    return want("plain counts", run([log]), "5 passed, 0 failed", 0)


def case_skip_is_skipped(d):
    # meson's result for exit status 77; CI runs as root and skips nothing
    log = os.path.join(d, "testlog.json")
    write_log(log, [entry("a", "OK"), entry("needs-root", "SKIP", stderr="SKIP: not root\n")])
    return want("skip", run([log]), "1 passed, 0 failed, 1 skipped", 0)


def case_cmocka_skipped_cases(d):
    log = os.path.join(d, "testlog.json")
    err = ("[  PASSED  ] 3 test(s).\n[  SKIPPED ] 2 test(s), listed below:\n"
           "[  SKIPPED ] one\n[  SKIPPED ] two\n")
    write_log(log, [entry("unit", "OK", stderr=err)])
    return want("cmocka skipped", run([log]), "3 passed, 0 failed, 2 skipped", 0)


def case_failure_fails(d):
    log = os.path.join(d, "testlog.json")
    write_log(log, [entry("a", "OK"), entry("b", "FAIL"), entry("c", "SKIP")])
    return want("failure", run([log]), "1 passed, 1 failed, 1 skipped", 1)


def case_missing_log_fails(d):
    good = os.path.join(d, "good.json")
    write_log(good, [entry("a", "OK")])
    missing = os.path.join(d, "never-written", "testlog.json")
    return want("missing log", run([good, missing]), "1 passed, 1 failed", 1)


def case_old_log_not_read(d):
    # meson died before writing this run's log: the last run's log is
    # still there, all green; it must not count as this run's
    stamp = os.path.join(d, "started")
    with open(stamp, "w", encoding="utf-8"):
        pass
    old = os.path.join(d, "testlog.json")
    write_log(old, [entry("a", "OK"), entry("b", "OK")], mtime=os.stat(stamp).st_mtime - 3600)
    got = run(["--since", stamp, old])
    err = want("old log", got, "0 passed, 1 failed", 1)
    if err is None and "older than" not in got[2]:
        err = f"old log: the output does not say the log is older than the run\n{indent(got[2])}"
    return err


def case_new_log_read(d):
    stamp = os.path.join(d, "started")
    with open(stamp, "w", encoding="utf-8"):
        pass
    os.utime(stamp, (os.stat(stamp).st_mtime - 60,) * 2)
    log = os.path.join(d, "testlog.json")
    write_log(log, [entry("a", "OK")])
    return want("new log", run(["--since", stamp, log]), "1 passed, 0 failed", 0)


def case_nothing_ran_fails(d):
    log = os.path.join(d, "testlog.json")
    write_log(log, [])
    return want("empty log", run([log]), "0 passed, 0 failed", 1)


CASES = [case_plain_counts, case_skip_is_skipped, case_cmocka_skipped_cases,
         case_failure_fails, case_missing_log_fails, case_old_log_not_read,
         case_new_log_read, case_nothing_ran_fails]


def main(argv):
    global SUMMARY
    if len(argv) != 2:
        print("usage: test_summary.py TEST_SUMMARY_PY", file=sys.stderr)
        return 2
    SUMMARY = argv[1]
    passed = failed = 0
    for case in CASES:
        with tempfile.TemporaryDirectory() as d:
            err = case(d)
        if err is None:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {err}", file=sys.stderr)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
