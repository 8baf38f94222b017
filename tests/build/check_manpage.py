#!/usr/bin/env python3
"""Every exported function is documented in docs/libspfkit.3 (issue 8).

Usage: check_manpage.py MANPAGE MAP...

Each symbol of each linker version script (lib/spfkit.map,
lib/event/spfkit-event.map) needs, in the man page, its prototype
("name(" in the SYNOPSIS) and an entry of its own under FUNCTIONS (a
".B name", ".BR name" or ".BI name" line). Fails naming each symbol
missing either.
"""
import re
import sys


def exports(path):
    text = re.sub(r'/\*.*?\*/', '', open(path, encoding='utf-8').read(), flags=re.S)
    m = re.search(r'global:(.*?)local:', text, flags=re.S)
    if not m:
        sys.exit('%s: no global: ... local: section' % path)
    return [s.strip() for s in m.group(1).split(';') if s.strip()]


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    page = open(argv[1], encoding='utf-8').read()
    head, sep, functions = page.partition('\n.SH FUNCTIONS')
    if not sep:
        print('%s: no FUNCTIONS section' % argv[1])
        return 1
    functions = functions.split('\n.SH ', 1)[0]
    missing = []
    for mapfile in argv[2:]:
        for sym in exports(mapfile):
            why = []
            if not re.search(r'\b%s\(' % re.escape(sym), head):
                why.append('no prototype "%s(" in SYNOPSIS' % sym)
            if not re.search(r'^\.B[IR]?\s+"?%s\b' % re.escape(sym), functions, flags=re.M):
                why.append('no ".B %s" entry in FUNCTIONS' % sym)
            if why:
                missing.append('%s (%s): %s' % (sym, mapfile, '; '.join(why)))
    for line in missing:
        print('undocumented: ' + line)
    if missing:
        print('%d exported function(s) not documented in %s' % (len(missing), argv[1]))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
