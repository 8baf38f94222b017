#!/usr/bin/env python3
"""`spfkit tree` beyond the golden tests (issue 10 item 2).

    tree_tests.py SPFKIT ZONE dot       every fixture domain's --dot is accepted by dot
    tree_tests.py SPFKIT ZONE svg       --svg --output writes a whole SVG file; without
                                        dot in PATH, exit 69 naming apt-get install graphviz
    tree_tests.py SPFKIT ZONE output    --output writes what stdout gets, or nothing (exit 70)
    tree_tests.py SPFKIT GEN_CORPUS count [--domains N]
                                        the root's worst-case lookups and voids equal
                                        lint's on the benchmark corpus

Graphviz is a test dependency (the Makefile's TEST_DEPS): a missing dot
fails the dot and svg tests, it does not skip them.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL " + msg)
    sys.exit(1)


def zone_domains(zone):
    """The owners of the zone's TXT records (one $ORIGIN, as tests/cli/tree.zone)."""
    origin, out = "", []
    for line in open(zone, encoding="utf-8", errors="replace"):
        if line.startswith("$ORIGIN"):
            origin = line.split()[1]
        elif line[:1] not in ("", " ", ";", "$", "\n") and " TXT " in line:
            owner = line.split()[0]
            name = origin if owner == "@" else owner + "." + origin
            if name.rstrip(".") not in out:
                out.append(name.rstrip("."))
    return out


def find_dot():
    dot = shutil.which("dot")
    if dot is None:
        fail("dot is not installed: `make test` installs graphviz (TEST_DEPS)")
    return dot


def test_dot(spfkit, zone):
    dot = find_dot()
    domains = zone_domains(zone)
    for d in domains:
        p = subprocess.run([spfkit, "tree", "--zone", zone, "--dot", d], capture_output=True,
                           timeout=60)
        if p.returncode not in (0, 2) or not p.stdout.startswith(b"digraph"):
            fail("%s: tree --dot exit %d: %s" % (d, p.returncode, p.stderr))
        q = subprocess.run([dot, "-Tsvg"], input=p.stdout, capture_output=True, timeout=60)
        if q.returncode != 0 or q.stderr:
            fail("%s: dot refused the graph (exit %d): %s" % (d, q.returncode, q.stderr))
    print("%d graphs accepted by dot" % len(domains))
    return 0


def test_svg(spfkit, zone):
    find_dot()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "chain.svg")
        p = subprocess.run([spfkit, "tree", "--zone", zone, "--svg", "--output", out,
                            "chain.example"], capture_output=True, timeout=60)
        if p.returncode != 0 or p.stdout:
            fail("tree --svg --output: exit %d, stdout %r: %s" % (p.returncode, p.stdout, p.stderr))
        svg = open(out, "rb").read()
        if b"<svg" not in svg or not svg.rstrip().endswith(b"</svg>") or b"chain.example" not in svg:
            fail("tree --svg --output: not a whole SVG of the tree")
        if sorted(os.listdir(tmp)) != ["chain.svg"]:
            fail("tree --svg left files behind: %s" % os.listdir(tmp))
        p = subprocess.run([spfkit, "tree", "--zone", zone, "--svg", "chain.example"],
                           capture_output=True, timeout=60)
        if p.returncode != 0 or b"<svg" not in p.stdout:
            fail("tree --svg to stdout: exit %d: %s" % (p.returncode, p.stderr))
        # no dot in PATH: a clear message, exit 69, and no output file
        env = dict(os.environ, PATH=tmp)
        p = subprocess.run([spfkit, "tree", "--zone", zone, "--svg", "--output",
                            os.path.join(tmp, "none.svg"), "chain.example"],
                           capture_output=True, timeout=60, env=env)
        if p.returncode != 69 or b"apt-get install graphviz" not in p.stderr:
            fail("tree --svg without dot: exit %d: %s" % (p.returncode, p.stderr))
        if os.path.exists(os.path.join(tmp, "none.svg")):
            fail("tree --svg without dot created the output file")
    print("svg: file, stdout and missing-dot cases ok")
    return 0


def test_output(spfkit, zone):
    """--output: the same bytes as stdout, and nothing at all when it cannot be written."""
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in ([], ["--json"], ["--dot"]):
            out = os.path.join(tmp, "tree.out")
            p = subprocess.run([spfkit, "tree", "--zone", zone, "chain.example"] + fmt,
                               capture_output=True, timeout=60)
            q = subprocess.run([spfkit, "tree", "--zone", zone, "chain.example", "--output", out]
                               + fmt, capture_output=True, timeout=60)
            if q.returncode != p.returncode or q.stdout or open(out, "rb").read() != p.stdout:
                fail("--output %s: exit %d, not the bytes of stdout" % (fmt, q.returncode))
            os.unlink(out)
        missing = os.path.join(tmp, "no-such-dir", "tree.out")
        p = subprocess.run([spfkit, "tree", "--zone", zone, "chain.example", "--output", missing],
                           capture_output=True, timeout=60)
        if p.returncode != 70 or os.listdir(tmp):
            fail("--output into a missing directory: exit %d, files %s" % (p.returncode,
                                                                          os.listdir(tmp)))
    print("output: text, json and dot files as stdout; unwritable: exit 70, no file")
    return 0


def domains_of(queries):
    seen = []
    for line in open(queries, encoding="ascii"):
        parts = line.split()
        if len(parts) < 3 or "@" not in parts[1]:
            continue
        d = parts[1].rsplit("@", 1)[1].lower()
        if d not in seen:
            seen.append(d)
    return seen


def test_count(spfkit, gen, ndomains):
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, gen, "--out", tmp, "--domains", ndomains,
                        "--queries", "2000"], check=True, capture_output=True)
        zone = os.path.join(tmp, "bench.zone")
        domains = domains_of(os.path.join(tmp, "queries.txt"))
        listing = os.path.join(tmp, "domains")
        with open(listing, "w") as f:
            f.write("".join(d + "\n" for d in domains))
        p = subprocess.run([spfkit, "lint", "--zone", zone, "--json", "--batch", listing],
                           capture_output=True, text=True, timeout=600)
        linted = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
        if len(linted) != len(domains):
            fail("lint --batch: %d reports for %d domains" % (len(linted), len(domains)))
        bad = 0
        for d, lr in zip(domains, linted):
            p = subprocess.run([spfkit, "tree", "--zone", zone, "--json", d],
                               capture_output=True, text=True, timeout=60)
            if p.returncode not in (0, 2):
                fail("tree %s: exit %d: %s" % (d, p.returncode, p.stderr))
            tr = json.loads(p.stdout)
            root, c = tr["tree"], lr["lookups"]
            got = (root["lookups"]["subtree"], root["void_lookups"]["ipv4_subtree"],
                   root["void_lookups"]["ipv6_subtree"], tr["total"]["dns_terms"])
            want = (c["dns_terms"], c["void_lookups_ipv4"], c["void_lookups_ipv6"], c["dns_terms"])
            if got != want:
                bad += 1
                print("FAIL %s: tree (root terms, voids v4, v6, total) %s, lint %s\n  record: %s"
                      % (d, got, want, lr["record"]))
            here = sum_here(root)
            if here != root["lookups"]["subtree"]:
                bad += 1
                print("FAIL %s: the nodes' own lookups add up to %d, the root's subtree %d"
                      % (d, here, root["lookups"]["subtree"]))
        print("%d corpus domains: tree and lint compared, %d differences" % (len(domains), bad))
        return 1 if bad or not domains else 0


def sum_here(node):
    """Lookups of every node shown, expanding repeated nodes by their subtree count."""
    if node["repeated"]:
        return node["lookups"]["subtree"]
    return node["lookups"]["here"] + sum(sum_here(c) for c in node["children"])


def main():
    spfkit, arg, what = sys.argv[1], sys.argv[2], sys.argv[3]
    if what == "dot":
        return test_dot(spfkit, arg)
    if what == "svg":
        return test_svg(spfkit, arg)
    if what == "output":
        return test_output(spfkit, arg)
    if what == "count":
        n = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--domains" else "300"
        return test_count(spfkit, arg, n)
    fail("unknown test %s" % what)
    return 1


if __name__ == "__main__":
    sys.exit(main())
