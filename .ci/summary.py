#!/usr/bin/env python3
"""Prints 'N passed, N failed, N skipped' from one or more meson testlog.json
files (one JSON object per line), counting each meson test once. A log
that is missing (its build failed before any test ran) counts as one
failure, so the line never hides a broken build."""
import json
import os
import sys

passed = failed = skipped = 0
for path in sys.argv[1:]:
    if not os.path.exists(path):
        print(f"summary: {path} is missing: no test of it ran", file=sys.stderr)
        failed += 1
        continue
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            result = json.loads(line).get("result", "")
            if result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:
                failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
