#!/usr/bin/env python3
"""registered.py - every test file on disk is run by the build.

meson's files() already fails the build when a listed test file is missing;
this is the other half: a test file that exists but is listed nowhere would
never run, and nobody would notice. For each folder, the files that look
like tests must be named in that folder's meson.build (or, for tests/unit,
in tests/meson.build, which lists them). Prints TAP; exit status 1 when one
is not listed.

Run: python3 tests/registered.py [SOURCE_ROOT]
"""
import os
import re
import sys

# (folder holding the files, file pattern, meson.build that lists them,
#  how a name appears there)
FOLDERS = [
    ("tests/unit", r"^test_(\w+)\.c$", "tests/meson.build"),
    ("tests/gpu", r"^test_(\w+)\.c$", "tests/gpu/meson.build"),
    ("tests/lua", r"^(\w+)_spec\.lua$", "tests/lua/meson.build"),
    ("tests/mpi", r"^(\w+)\.lua$", "tests/mpi/meson.build"),
]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    checks = []
    for folder, pattern, build in FOLDERS:
        path = os.path.join(root, folder)
        if not os.path.isdir(path):
            continue
        with open(os.path.join(root, build), encoding="utf-8") as fh:
            text = fh.read()
        listed = set(re.findall(r"'(\w+)'", text))
        listed |= set(re.findall(r"(\w+)\.(?:c|lua)'", text))
        missing = []
        for fn in sorted(os.listdir(path)):
            m = re.match(pattern, fn)
            if m and m.group(1) not in listed and fn not in text:
                missing.append(fn)
        checks.append(("every test in %s is listed in %s" % (folder, build),
                       missing))
    print("1..%d" % len(checks))
    bad = 0
    for i, (what, missing) in enumerate(checks, 1):
        print("%s %d - %s" % ("not ok" if missing else "ok", i, what))
        for m in missing:
            print("#   not listed: " + m)
        bad += bool(missing)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
