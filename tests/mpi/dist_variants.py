#!/usr/bin/env python3
"""dist_variants.py - the distributed variants against one process.

Usage: dist_variants.py ODEBENCH MPIRUN HAVE_MPI RANKS SCENARIO_DIR
Runs `mpirun --oversubscribe -n RANKS odebench dist_variants.lua` (which
raises, ending every rank with status 2, at the first difference from the
plain variant or refusal text other than expected) and checks, as TAP: exit
status 0, and rank 0's line saying how many checks passed on RANKS ranks.
Exit 1 when either check fails, 77 (skipped) in a build without MPI or
without mpirun.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

CHECKS = 50   # the cases and refusals dist_variants.lua runs


def main():
    odebench, mpirun, have_mpi, ranks, sdir = sys.argv[1:6]
    if have_mpi != "1" or not mpirun:
        print("1..0 # SKIP built without MPI")
        return 77
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("ODEBENCH_MPI_ALL_OUTPUT", None)
    out = tempfile.mkdtemp(prefix="odb_dist_")
    p = subprocess.run([mpirun, "--oversubscribe", "-n", ranks, odebench,
                        "--ui", "none", "--out", os.path.join(out, "run"),
                        os.path.join(sdir, "dist_variants.lua")],
                       env=env, capture_output=True, text=True, timeout=600)
    shutil.rmtree(out, ignore_errors=True)
    m = re.search(r"dist_variants: (\d+) checks passed on (\d+) rank\(s\); "
                  r"largest differences: h (\S+), state (\S+) a step",
                  p.stdout)
    print("1..2")
    print("%s 1 - mpirun -n %s dist_variants.lua ends with status 0 (got %d)"
          % ("ok" if p.returncode == 0 else "not ok", ranks, p.returncode))
    ok = m is not None and int(m.group(1)) == CHECKS and m.group(2) == ranks
    print("%s 2 - %d checks passed on %s rank(s)" %
          ("ok" if ok else "not ok", CHECKS, ranks))
    if m:
        print("# largest differences from plain: h %s, state %s a step" %
              (m.group(3), m.group(4)))
    if p.returncode != 0 or not ok:
        for line in (p.stdout + p.stderr).splitlines()[:40]:
            print("# " + line)
        return 1     # the exit-code protocol: meson reads only the status
    return 0


if __name__ == "__main__":
    sys.exit(main())
