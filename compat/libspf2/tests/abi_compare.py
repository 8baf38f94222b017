#!/usr/bin/env python3
"""abi_compare.py DEBIAN_DUMP OURS_DUMP: run both abi_dump builds and
want the same listing (sizes, offsets, enum values, constants)."""
import subprocess
import sys


def run(exe):
    return subprocess.run([exe], check=True, capture_output=True, text=True).stdout.splitlines()


def main():
    deb, ours = run(sys.argv[1]), run(sys.argv[2])
    if len(deb) < 100:
        print(f"Debian listing has only {len(deb)} lines")
        return 1
    bad = 0
    for i, (a, b) in enumerate(zip(deb, ours)):
        if a != b:
            print(f"line {i + 1}: got {b!r}, want {a!r} (Debian libspf2-dev)")
            bad += 1
    if len(deb) != len(ours):
        print(f"got {len(ours)} lines, want {len(deb)}")
        bad += 1
    print(f"{len(deb)} ABI facts compared, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
