#!/usr/bin/env python3
"""registered.py - every test file on disk is run by the build.

meson's files() already fails the build when a listed test file is missing;
this is the other half: a test file that exists but is listed nowhere would
never run, and nobody would notice. For each folder, the files that look
like tests must be named in the meson.build that lists them: the C tests
of the folders that mirror the sources (tests/core/..., tests/ui, and the
generator tests under tests/gpu/) in tests/meson.build, those that need a
GPU in tests/gpu/meson.build. Prints TAP; exit status 1 when one
is not listed.

Run: python3 tests/registered.py [SOURCE_ROOT]
"""
import os
import re
import sys

# (folder holding the files, file pattern, the meson.build files of which
#  one must list each). The generator tests under tests/gpu/ode and
#  tests/gpu/rt need no device and are in tests/meson.build; the tests that
#  need one, in tests/gpu/meson.build.
C_TEST = r"^test_(\w+)\.c$"
UNIT = ("tests/meson.build",)
GPU = ("tests/gpu/meson.build",)
# tests/mpi: every scenario but the helpers named *_check.lua, which the
# scenarios load with dofile (dist_check.lua) and which run nothing alone.
MPI_SCENARIO = r"^(?!\w+_check\.lua$)(\w+)\.lua$"
FOLDERS = [
    ("tests/core/rt", C_TEST, UNIT),
    ("tests/core/io", C_TEST, UNIT),
    ("tests/core/ode", C_TEST, UNIT),
    ("tests/core/tune", C_TEST, UNIT),
    ("tests/core/dense", C_TEST, UNIT),
    ("tests/core/sparse", C_TEST, UNIT),
    ("tests/ui", C_TEST, UNIT),
    ("tests/gpu", C_TEST, GPU),
    ("tests/gpu/rt", C_TEST, UNIT + GPU),
    ("tests/gpu/ode", C_TEST, UNIT + GPU),
    ("tests/gpu/sparse", C_TEST, GPU),
    ("tests/gpu/dense", C_TEST, GPU),
    ("tests/lua", r"^(\w+)_spec\.lua$", ("tests/lua/meson.build",)),
    ("tests/mpi", MPI_SCENARIO, ("tests/mpi/meson.build",)),
]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    checks = []
    for folder, pattern, builds in FOLDERS:
        path = os.path.join(root, folder)
        if not os.path.isdir(path):
            continue
        texts = []
        for build in builds:
            with open(os.path.join(root, build), encoding="utf-8") as fh:
                texts.append(fh.read())
        text = "\n".join(texts)
        listed = set(re.findall(r"'(\w+)'", text))
        listed |= set(re.findall(r"(\w+)\.(?:c|lua)'", text))
        missing = []
        for fn in sorted(os.listdir(path)):
            m = re.match(pattern, fn)
            if m and m.group(1) not in listed and fn not in text:
                missing.append(fn)
        checks.append(("every test in %s is listed in %s"
                       % (folder, " or ".join(builds)), missing))
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
