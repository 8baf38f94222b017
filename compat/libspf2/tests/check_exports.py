#!/usr/bin/env python3
"""check_exports.py OUR_SO [DEBIAN_SO]: libspf2.so.2's dynamic symbols.

Wants SONAME libspf2.so.2; every name the consumers need (Exim 4.96's 29
functions, the others of issue 12, the log handler globals) exported;
nothing but SPF_* names; no symbol versions (Debian's libspf2-2 has
none); and, when Debian's library is there, no name it lacks.
"""
import subprocess
import sys

NEEDED = """
SPF_dns_cache_new SPF_dns_rr_dup SPF_dns_rr_new_init SPF_error_code SPF_error_errorp
SPF_error_message SPF_get_lib_version SPF_request_free SPF_request_new
SPF_request_query_fallback SPF_request_query_mailfrom SPF_request_set_env_from
SPF_request_set_helo_dom SPF_request_set_ipv4_str SPF_request_set_ipv6_str
SPF_response_errcode SPF_response_free SPF_response_get_header_comment
SPF_response_get_received_spf SPF_response_get_smtp_comment SPF_response_message
SPF_response_messages SPF_response_result SPF_server_free SPF_server_new_dns
SPF_server_set_explanation SPF_server_set_rec_dom SPF_strerror SPF_strresult
SPF_server_new SPF_strreason SPF_request_set_ipv4 SPF_request_set_ipv6
SPF_request_query_rcptto SPF_response_get_received_spf_value SPF_response_reason
SPF_server_set_localpolicy SPF_dns_free SPF_dns_rr_free SPF_dns_resolv_new
SPF_error_handler SPF_warning_handler SPF_info_handler SPF_debug_handler
""".split()


def dynsyms(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def main():
    ours = sys.argv[1]
    problems = []
    dyn = subprocess.run(["readelf", "-dW", ours], check=True, capture_output=True,
                         text=True).stdout
    if "Library soname: [libspf2.so.2]" not in dyn:
        problems.append("SONAME is not libspf2.so.2")
    vers = subprocess.run(["readelf", "-VW", ours], check=True, capture_output=True,
                          text=True).stdout
    if "Version definition section" in vers:
        problems.append("symbol versions defined (Debian's libspf2-2 has none)")
    syms = dynsyms(ours)
    for name in NEEDED:
        if name not in syms:
            problems.append(f"{name} not exported")
    for name in sorted(syms):
        if not name.startswith("SPF_"):
            problems.append(f"{name} exported (only SPF_* may be)")
    if len(sys.argv) > 2:
        try:
            debian = dynsyms(sys.argv[2])
        except (subprocess.CalledProcessError, FileNotFoundError):
            debian = None
        if debian:
            for name in sorted(syms - debian):
                problems.append(f"{name} exported but not by Debian's libspf2")
            print(f"{len(syms)} exported; Debian's libspf2 exports {len(debian)}; "
                  f"not provided: {' '.join(sorted(debian - syms))}")
    for p in problems:
        print("FAIL", p)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
