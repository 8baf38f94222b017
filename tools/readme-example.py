#!/usr/bin/env python3
"""Fail unless README.md quotes examples/check.c verbatim in a ```c block."""
import re
import sys

readme, example = (open(p, encoding="utf-8").read() for p in sys.argv[1:3])
blocks = re.findall(r"```c\n(.*?)```", readme, re.S)
if example in blocks:
    print("1 passed, 0 failed")
    sys.exit(0)
print("README.md does not quote examples/check.c verbatim in a ```c block")
print("0 passed, 1 failed")
sys.exit(1)
