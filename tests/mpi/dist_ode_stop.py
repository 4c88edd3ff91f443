#!/usr/bin/env python3
"""dist_ode_stop.py - no request of a distributed ODE solver outlives its
vectors.

Usage: dist_ode_stop.py ODEBENCH MPIRUN HAVE_MPI RANKS SCENARIO_DIR
As TAP: dist_ode_stop.lua (mpi_A, mpi_S, mpi_N, mpi_X, mpi_P and
mpi_pirk_A, each checked against one process) under `mpirun --oversubscribe -n
RANKS` with the shared-memory single copy off (messages then travel in
fragments, delivered by whoever progresses MPI, MPI_Finalize included),
stopped with SIGTERM after 0.3, 0.9 and 1.6 s of its repeated sequence:
rank 0's checks line, "stopped by SIGTERM", no sanitizer report, segfault
or signal in any rank's output, and mpirun's status 0 or 1 (stop_runs.py,
shared with dist_sparse_stop.py). Exit 77 (skipped) in a build without
MPI or without mpirun.
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stop_runs import Tap, check_stops, stop_env  # noqa: E402


def main():
    odebench, mpirun, have_mpi, ranks, sdir = sys.argv[1:6]
    if have_mpi != "1" or not mpirun:
        print("1..0 # SKIP built without MPI")
        return 77
    tmp = tempfile.mkdtemp(prefix="odb_ostop_")
    tap = Tap(9)
    check_stops(tap, mpirun, ranks, odebench, os.path.join(sdir, "dist_ode_stop.lua"),
                "dist_ode_stop", 6, tmp, stop_env(), (0.3, 0.9, 1.6))
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if tap.bad else 0


if __name__ == "__main__":
    sys.exit(main())
