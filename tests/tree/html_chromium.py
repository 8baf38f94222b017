#!/usr/bin/env python3
"""Issue 31: `spfkit tree --html` rendered by a real browser, Debian's
headless Chromium (package chromium, installed here through
tests/mta/harness.py, outside any namespace).

usage: html_chromium.py SPFKIT ZONE

The page of over.example (tests/cli/tree.zone: 15 lookups, so findings,
red boxes and a flatten proposal) is checked as a file first: one
self-contained document (no script, no link, no URL but the SVG
namespace). Then Chromium, with the network off for it (--host-resolver-rules
maps every name nowhere, --proxy-server to a closed port), takes a
screenshot, which must not be blank (several colours, a share of pixels
off the background), and dumps the DOM it rendered, which must hold the
node names, the finding ids beside their boxes and the proposal.
"""
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mta"))
import harness  # noqa: E402

DOMAIN = "over.example"
NODES = ["over.example", "chain.example", "_spf.provider.example", "_mail.provider.example",
         "_v6.provider.example"]
FINDINGS = ["lookups-over-10", "duplicate-include"]


def fail(msg):
    print("FAIL " + msg)
    sys.exit(1)


def png_pixels(data):
    """(width, height, rows of RGB(A) tuples) of an 8-bit RGB or RGBA PNG, no interlace."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("the screenshot is not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    width, height, depth, colour, _, _, interlace = hdr
    if depth != 8 or colour not in (2, 6) or interlace:
        fail("screenshot PNG of a kind this test does not read: %s" % (hdr,))
    bpp = 3 if colour == 2 else 4
    raw, stride, prev, rows = zlib.decompress(idat), width * bpp, bytearray(width * bpp), []
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def check_screenshot(path):
    width, height, bpp, rows = png_pixels(open(path, "rb").read())
    colours, counts = set(), {}
    for row in rows[::4]:
        for x in range(0, width * bpp, bpp * 4):
            px = row[x:x + 3]
            colours.add(px)
            counts[px] = counts.get(px, 0) + 1
    total = sum(counts.values())
    background = max(counts.values())
    if len(colours) < 4 or total - background < total // 100:
        fail("the screenshot looks blank: %d colours, %d of %d sampled pixels off the background"
             % (len(colours), total - background, total))
    # the red of the boxes over the limit is on the screen
    reds = sum(n for px, n in counts.items() if px[0] > 150 and px[1] < 80 and px[2] < 80)
    if reds == 0:
        fail("no red in the screenshot of a tree over the limit")
    print("screenshot %dx%d: %d colours sampled, %d%% off the background, %d red"
          % (width, height, len(colours), 100 * (total - background) // total, reds))


def chromium(args, tmp):
    cmd = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-extensions", "--user-data-dir=" + os.path.join(tmp, "profile"),
           "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
           "--window-size=1920,1400"] + args
    env = dict(os.environ, HOME=tmp)
    p = subprocess.run(cmd, capture_output=True, timeout=120, env=env)
    if p.returncode != 0:
        fail("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr[-800:]))
    return p.stdout.decode("utf-8", "replace")


def main():
    spfkit, zone = sys.argv[1], sys.argv[2]
    harness.ensure_packages("chromium")
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "tree.html")
        p = subprocess.run([spfkit, "tree", "--zone", zone, "--html", "--output", page, DOMAIN],
                           capture_output=True, timeout=60)
        if p.returncode != 2 or p.stdout:
            fail("tree --html --output: exit %d (want 2: over the limit): %s"
                 % (p.returncode, p.stderr))
        text = open(page, encoding="utf-8").read()
        urls = set(re.findall(r"\w+://[^\s\"'<>]*", text)) - {"http://www.w3.org/2000/svg"}
        if re.search(r"<script|<link|<iframe|<img|\bsrc=|url\(|@import", text, re.I) or urls:
            fail("the page is not self-contained: %s" % (sorted(urls) or "script/link/src"))
        url = "file://" + page
        chromium(["--screenshot=" + os.path.join(tmp, "shot.png"), url], tmp)
        check_screenshot(os.path.join(tmp, "shot.png"))
        dom = chromium(["--dump-dom", url], tmp)
        missing = [n for n in NODES + FINDINGS if n not in dom]
        if missing:
            fail("not in the rendered DOM: %s" % missing)
        # each finding stands beside the box of its record
        for f in FINDINGS:
            m = re.search(r'<g class="findings" id="findings-(\d+)">((?:(?!</g>).)*)' + re.escape(f),
                          dom, re.S)
            if m is None:
                fail("finding %s is not in a findings column beside a box" % f)
        if '<g class="node over" id="node-0">' not in dom:
            fail("the root is not drawn over the limit in the rendered DOM")
        if 'id="flatten-zone"' not in dom or "over.example. " not in dom:
            fail("no flatten proposal in the rendered DOM")
        print("chromium rendered %s: nodes %s, findings %s and the proposal in the DOM"
              % (DOMAIN, len(NODES), FINDINGS))


if __name__ == "__main__":
    main()
