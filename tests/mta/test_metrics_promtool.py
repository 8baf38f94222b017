#!/usr/bin/env python3
"""Issue 29: the exposition mta/metrics.c writes, every family counted
into, passes Prometheus's own checker (`promtool check metrics`, Debian's
prometheus package): the syntax, and its lint (counter names end in
_total, units in base units, HELP and TYPE on every family).

usage: test_metrics_promtool.py TEST_MTA_METRICS
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def main():
    harness.ensure_packages("prometheus")
    text = subprocess.run([sys.argv[1], "--dump"], check=True, capture_output=True).stdout
    for family in (b"spfkit_checks_total", b"spfkit_actions_total", b"spfkit_dns_queries_total",
                   b"spfkit_dns_duration_seconds", b"spfkit_check_duration_seconds",
                   b"spfkit_dns_cache_hits_total", b"spfkit_record_memo_answers_total",
                   b"spfkit_connections_open", b"spfkit_requests_in_flight",
                   b"spfkit_refused_total", b"spfkit_protocol_errors_total",
                   b"spfkit_build_info"):
        assert b"# TYPE " + family + b" " in text, "no family %s in:\n%s" % (family, text)
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True)
    out = (r.stdout + r.stderr).decode(errors="replace")
    # promtool prints nothing and exits 0 when the text is clean; lint
    # problems exit 3 and are printed, syntax errors exit 1
    if r.returncode != 0 or out.strip():
        sys.exit("promtool check metrics: exit %d\n%s\n--- the text:\n%s"
                 % (r.returncode, out, text.decode(errors="replace")))
    print("promtool check metrics: clean (%d lines)" % text.count(b"\n"))


if __name__ == "__main__":
    main()
