#!/usr/bin/env python3
"""`spfkit tree` beyond the golden tests (issue 10 item 2).

    tree_tests.py SPFKIT ZONE dot       every fixture domain's --dot is accepted by dot
    tree_tests.py SPFKIT ZONE svg       --svg (spfkit's own drawing, no dot needed) writes a
                                        whole SVG file; every fixture's picture is at most
                                        1920 px wide, text >= 12 px inside it; colours where
                                        a limit breaks and only there; escaping
    tree_tests.py SPFKIT ZONE html      --html: a self-contained page per fixture; lint's
                                        findings beside their boxes and in a table; the
                                        flatten proposal, or why there is none
    tree_tests.py SPFKIT GEN_CORPUS svg-corpus
                                        the same on the benchmark corpus's largest tree
    tree_tests.py SPFKIT ZONE output    --output writes what stdout gets, or nothing (exit 70)
    tree_tests.py SPFKIT GEN_CORPUS count [--domains N]
                                        the root's worst-case lookups and voids equal
                                        lint's on the benchmark corpus

Graphviz is a test dependency (the Makefile's TEST_DEPS): a missing dot
fails the dot tests, it does not skip them.
"""
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL " + msg)
    sys.exit(1)


def report(bad, ok):
    """Print every complaint and exit 1, or print the ok line: 0."""
    for b in bad:
        print("FAIL " + b)
    if bad:
        sys.exit(1)
    print(ok)
    return 0


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


def svg_problems(svg, name):
    """What makes SVG text unreadable or too wide: a list of complaints."""
    bad = []
    m = re.search(r'<svg [^>]*width="(\d+)" height="(\d+)" viewBox="0 0 (\d+) (\d+)"', svg)
    if m is None:
        return ["%s: no <svg width height viewBox>" % name]
    width = int(m.group(1))
    if width > 1920 or int(m.group(3)) != width:
        bad.append("%s: %d px wide (at most 1920)" % (name, width))
    sizes = [int(x) for x in re.findall(r'font-size="(\d+)"', svg)]
    if not sizes or min(sizes) < 12:
        bad.append("%s: font sizes %s (at least 12 px)" % (name, sorted(set(sizes))))
    # every line of text ends inside the picture: monospace, at most 0.6 em a character
    for x, size, attrs, text in re.findall(
            r'<text x="(\d+)" y="\d+" font-size="(\d+)"([^>]*)>([^<]*)</text>', svg):
        shown = html.unescape(text)
        right = int(x) if 'text-anchor="end"' in attrs else int(x) + len(shown) * 0.6 * int(size)
        if right > width:
            bad.append("%s: text past the right edge: %r" % (name, shown[:80]))
            break
    if re.search(r"\d{20,}", svg):
        bad.append("%s: a number of 20 digits or more" % name)
    if re.search(r"\b\d+/\d+ ", re.sub(r"(ip[46]:|a:|mx:|a/|mx/)\S+", "", svg)):
        bad.append("%s: a count written N/M" % name)
    return bad


def svg_of(spfkit, zone, domain):
    p = subprocess.run([spfkit, "tree", "--zone", zone, "--svg", domain], capture_output=True,
                       timeout=120)
    if p.returncode not in (0, 2) or not p.stdout.startswith(b"<?xml"):
        fail("tree --svg %s: exit %d: %s" % (domain, p.returncode, p.stderr))
    return p.stdout.decode("utf-8")


def node_classes(svg):
    return re.findall(r'<g class="node (\w+)"', svg)


def test_svg(spfkit, zone):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "chain.svg")
        # spfkit draws it itself: no Graphviz in PATH is needed
        env = dict(os.environ, PATH=tmp)
        p = subprocess.run([spfkit, "tree", "--zone", zone, "--svg", "--output", out,
                            "chain.example"], capture_output=True, timeout=60, env=env)
        if p.returncode != 0 or p.stdout:
            fail("tree --svg --output: exit %d, stdout %r: %s" % (p.returncode, p.stdout, p.stderr))
        svg = open(out, "rb").read()
        if b"<svg" not in svg or not svg.rstrip().endswith(b"</svg>") or b"chain.example" not in svg:
            fail("tree --svg --output: not a whole SVG of the tree")
        if sorted(os.listdir(tmp)) != ["chain.svg"]:
            fail("tree --svg left files behind: %s" % os.listdir(tmp))
        p = subprocess.run([spfkit, "tree", "--zone", zone, "--svg", "chain.example"],
                           capture_output=True, timeout=60)
        if p.returncode != 0 or p.stdout != svg:
            fail("tree --svg to stdout: exit %d, not the bytes of --output: %s"
                 % (p.returncode, p.stderr))
    bad = []
    for d in zone_domains(zone):
        bad += svg_problems(svg_of(spfkit, zone, d), d)
    # colour where a limit breaks, none where none does
    chain = svg_of(spfkit, zone, "chain.example")
    if set(node_classes(chain)) != {"ok"} or 'class="edge over' in chain:
        bad.append("chain.example (4 lookups): coloured as over a limit: %s" % node_classes(chain))
    over = svg_of(spfkit, zone, "over.example")
    if node_classes(over)[0] != "over" or "beyond" not in node_classes(over) \
            or 'stroke="#c62828" stroke-width="3"' not in over:
        bad.append("over.example (15 lookups): the path over the limit is not red: %s"
                   % node_classes(over))
    if "15 lookups" not in over or "the lookup count goes from 0 to 15" not in over:
        bad.append("over.example: its cost (15 lookups) is not shown")
    voids = svg_of(spfkit, zone, "voids.example")
    if node_classes(voids) != ["voids", "voids"] or "void-heavy" not in voids:
        bad.append("voids.example (2 void lookups): not marked void-heavy: %s"
                   % node_classes(voids))
    if node_classes(svg_of(spfkit, zone, "voids3.example")) != ["over"]:
        bad.append("voids3.example (3 void lookups): not over the limit")
    multi = svg_of(spfkit, zone, "multi.example")
    if "v=spf1 ip4:198.51.100.7 ~all" not in multi or "record 2 of 2" not in multi:
        bad.append("multi.example: its second record is not shown")
    hostile = svg_of(spfkit, zone, "hostile.example")
    if "\\xe2\\x80\\x9csmart" not in hostile or "&lt;b&gt;" not in hostile:
        bad.append("hostile.example: bytes not escaped as \\xNN and XML entities")
    return report(bad, "svg: file and stdout equal, no dot needed; widths, fonts, colours and "
                       "escaping ok")


def html_of(spfkit, zone, args):
    p = subprocess.run([spfkit, "tree", "--zone", zone, "--html"] + args, capture_output=True,
                       timeout=120)
    if p.returncode not in (0, 2) or not p.stdout.startswith(b"<!DOCTYPE html>"):
        fail("tree --html %s: exit %d: %s" % (args, p.returncode, p.stderr))
    return p.returncode, p.stdout.decode("utf-8")


def test_html(spfkit, zone):
    """--html: self-contained; findings beside their boxes; the flatten proposal or why not."""
    bad = []
    for d in zone_domains(zone):
        _, page = html_of(spfkit, zone, [d])
        urls = set(re.findall(r"\w+://[^\s\"'<>]*", page)) - {"http://www.w3.org/2000/svg"}
        if re.search(r"<script|<link|<iframe|<img|\bsrc=|url\(|@import", page, re.I) or urls:
            bad.append("%s: not self-contained: %s" % (d, sorted(urls)))
        if not page.rstrip().endswith("</html>") or page.count("<svg") != 1:
            bad.append("%s: not one whole page with one picture" % d)
        bad += svg_problems(page[page.index("<svg"):page.index("</svg>") + 6]
                            .replace("<svg ", '<svg ', 1), d + " (html)")
    status, page = html_of(spfkit, zone, ["over.example"])
    if status != 2:
        bad.append("over.example --html: exit %d, want 2 as the text output" % status)
    lint = subprocess.run([spfkit, "lint", "--zone", zone, "over.example"], capture_output=True,
                          text=True).stdout
    said = re.search(r"^summary: (.*)$", lint, re.M)
    if said is None or "<p>spfkit lint: %s.</p>" % said.group(1) not in page:
        bad.append("over.example --html: the page's count of findings is not spfkit lint's (%s)"
                   % (said.group(1) if said else "no summary from lint"))
    column = re.findall(r'<g class="findings" id="findings-(\d+)">(.*?)</g>', page, re.S)
    beside = {n: body for n, body in column}
    # lookups-over-10 is about over.example: beside the root's box (node 0)
    if "lookups-over-10" not in beside.get("0", ""):
        bad.append("over.example: lookups-over-10 not beside the root's box")
    if "lookups-over-10" not in page[page.index('id="findings"'):]:
        bad.append("over.example: lookups-over-10 not in the findings table")
    if 'id="flatten-zone"' not in page or "over.example. 600 IN TXT" not in page \
            or "<b>0</b> flattened" not in page:
        bad.append("over.example: no flatten proposal (0 lookups after)")
    _, page = html_of(spfkit, zone, ["multi.example"])
    if 'id="flatten-none"' not in page or "multiple-records" not in page \
            or "v=spf1 ip4:198.51.100.7 ~all" not in page:
        bad.append("multi.example: no refusal naming multiple-records, or its second record "
                   "not shown")
    _, page = html_of(spfkit, zone, ["--record", "v=spf1 include:chain.example -all"])
    if "flattening needs the domain" not in page:
        bad.append("--record without --domain: the page does not say why there is no proposal")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "t.html")
        p = subprocess.run([spfkit, "tree", "--zone", zone, "--html", "--output", out,
                            "chain.example"], capture_output=True, timeout=60)
        if p.returncode != 0 or p.stdout or open(out).read() != html_of(spfkit, zone,
                                                                         ["chain.example"])[1]:
            bad.append("--html --output: exit %d, not the bytes of stdout" % p.returncode)
    return report(bad, "html: every fixture's page self-contained, findings beside boxes, "
                       "proposals")


def test_svg_corpus(spfkit, gen):
    """The benchmark corpus's largest tree (most records) fits 1920 px at >= 12 px text."""
    with tempfile.TemporaryDirectory() as tmp:
        zone, _, linted = corpus_linted(spfkit, gen, tmp, [])
        largest = max(linted, key=lambda r: (r["lookups"]["records"], r["domain"]))
        d, records = largest["domain"], largest["lookups"]["records"]
        svg = svg_of(spfkit, zone, d)
        bad = svg_problems(svg, d)
        if len(node_classes(svg)) < records:
            bad.append("%s: %d boxes for %d records" % (d, len(node_classes(svg)), records))
        if largest["lookups"]["dns_terms"] > 10 and "over" not in node_classes(svg):
            bad.append("%s: %d lookups and no box coloured over the limit"
                       % (d, largest["lookups"]["dns_terms"]))
        w = re.search(r'<svg [^>]*width="(\d+)"', svg)
        return report(bad, "largest corpus tree %s: %d records, %d lookups: SVG %s px wide, "
                      "fonts %s px" % (d, records, largest["lookups"]["dns_terms"],
                                       w.group(1) if w else "?",
                                       sorted(set(int(x) for x in
                                                  re.findall(r'font-size="(\d+)"', svg)))))


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


def corpus_linted(spfkit, gen, tmp, args):
    """The corpus made in TMP (gen_corpus.py ARGS), its query domains and lint's report
    of each: (zone, domains, reports)."""
    subprocess.run([sys.executable, gen, "--out", tmp] + args, check=True, capture_output=True)
    zone = os.path.join(tmp, "bench.zone")
    sys.path.insert(0, os.path.dirname(os.path.abspath(gen)))
    sys.dont_write_bytecode = True  # nothing written into the source tree
    import gen_corpus  # its reader of its queries.txt
    domains = gen_corpus.query_domains(os.path.join(tmp, "queries.txt"))
    listing = os.path.join(tmp, "domains")
    with open(listing, "w") as f:
        f.write("".join(d + "\n" for d in domains))
    p = subprocess.run([spfkit, "lint", "--zone", zone, "--json", "--batch", listing],
                       capture_output=True, text=True, timeout=600)
    linted = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    if len(linted) != len(domains):
        fail("lint --batch: %d reports for %d domains" % (len(linted), len(domains)))
    return zone, domains, linted


def test_count(spfkit, gen, ndomains):
    with tempfile.TemporaryDirectory() as tmp:
        zone, domains, linted = corpus_linted(spfkit, gen, tmp,
                                              ["--domains", ndomains, "--queries", "2000"])
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
    if what == "html":
        return test_html(spfkit, arg)
    if what == "svg-corpus":
        return test_svg_corpus(spfkit, arg)
    if what == "count":
        n = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--domains" else "300"
        return test_count(spfkit, arg, n)
    fail("unknown test %s" % what)
    return 1


if __name__ == "__main__":
    sys.exit(main())
