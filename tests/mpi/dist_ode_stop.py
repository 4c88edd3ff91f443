#!/usr/bin/env python3
"""dist_ode_stop.py - no request of a distributed ODE solver outlives its
vectors.

Usage: dist_ode_stop.py ODEBENCH MPIRUN HAVE_MPI RANKS SCENARIO_DIR
As TAP: dist_ode_stop.lua (mpi_A, mpi_S, mpi_N, mpi_X, mpi_P and
mpi_pirk_A, each checked against plain) under `mpirun --oversubscribe -n
RANKS` with the shared-memory single copy off (messages then travel in
fragments, delivered by whoever progresses MPI, MPI_Finalize included),
stopped with SIGTERM after 0.3, 0.9 and 1.6 s of its repeated sequence:
rank 0's checks line, "stopped by SIGTERM", no sanitizer report, segfault
or signal in any rank's output, and mpirun's status 0 or 1. The runner is
dist_sparse_stop.py's. Exit 77 (skipped) in a build without MPI or
without mpirun.
"""
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dist_sparse_stop import CRASH, stopped_run  # noqa: E402


def main():
    odebench, mpirun, have_mpi, ranks, sdir = sys.argv[1:6]
    if have_mpi != "1" or not mpirun:
        print("1..0 # SKIP built without MPI")
        return 77
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               ODEBENCH_MPI_TIMEOUT="30")
    env.pop("ODEBENCH_MPI_ALL_OUTPUT", None)
    tmp = tempfile.mkdtemp(prefix="odb_ostop_")
    bad = 0
    n = 0
    print("1..9")

    def tap(good, text, dump=""):
        nonlocal bad, n
        n += 1
        bad += not good
        print("%s %d - %s" % ("ok" if good else "not ok", n, text))
        if not good and dump:
            for line in dump.splitlines()[:40]:
                print("# " + line)

    scen = os.path.join(sdir, "dist_ode_stop.lua")
    for i, delay in enumerate((0.3, 0.9, 1.6)):
        rc, so, se = stopped_run(mpirun, ranks, odebench, scen, os.path.join(tmp, "o%d" % i), env, delay)
        both = so + se
        tap(re.search(r"dist_ode_stop: 6 checks passed on %s rank\(s\)" % ranks, so) is not None
            and "odebench: stopped by SIGTERM" in se,
            "stopped after %.1f s: rank 0's 6 checks, then 'stopped by SIGTERM'" % delay, both)
        m = CRASH.search(both)
        tap(m is None, "stopped after %.1f s: no sanitizer report, segfault or signal (%s)"
            % (delay, m.group(0) if m else "none"), both)
        tap(rc in (0, 1), "stopped after %.1f s: mpirun's status %d is 0 or 1" % (delay, rc), both)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
