#!/usr/bin/env python3
"""dist_sparse_stop.py - no request of a DistMatrix outlives its buffers.

Usage: dist_sparse_stop.py ODEBENCH MPIRUN HAVE_MPI RANKS SCENARIO_DIR
Meant for the ASan build (ASAN_OPTIONS=detect_leaks=0, set by meson), where
a write into freed memory ends a rank with an AddressSanitizer report; in a
plain build such a write shows as a segfault or not at all. As TAP:
- dist_sparse_stop.lua (spmv, bicgstab, pbicgstab, qmr, bench, close on
  planes and rows, checked against one process) under `mpirun
  --oversubscribe -n RANKS` with the shared-memory single copy off (the
  halo then travels in fragments, delivered by whoever progresses MPI,
  MPI_Finalize included), stopped with SIGTERM after 0.5, 1.5 and 3 s of
  its repeated sequence: rank 0's checks line, "stopped by SIGTERM", and no
  sanitizer report, segfault or signal in any rank's output;
- dist_sparse_broken.lua (ODEBENCH_MPI_TIMEOUT=2): the last rank's
  neighbour times out in the halo wait and is refused the next SpMV and
  a solve, with their texts; status 0.
Exit 77 (skipped) in a build without MPI or without mpirun.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stop_runs import CRASH, Tap, check_stops, stop_env  # noqa: E402

REFUSED = ("an earlier exchange of this distributed matrix failed on rank %d; "
           "its messages no longer pair with the other ranks' (end the run)")


def main():
    odebench, mpirun, have_mpi, ranks, sdir = sys.argv[1:6]
    if have_mpi != "1" or not mpirun:
        print("1..0 # SKIP built without MPI")
        return 77
    env = stop_env()
    tmp = tempfile.mkdtemp(prefix="odb_dstop_")
    tap = Tap(11)
    check_stops(tap, mpirun, ranks, odebench, os.path.join(sdir, "dist_sparse_stop.lua"),
                "dist_sparse_stop", 10, tmp, env, (0.5, 1.5, 3.0))

    benv = dict(env, ODEBENCH_MPI_TIMEOUT="2", ODEBENCH_MPI_ALL_OUTPUT="1")
    p = subprocess.run([mpirun, "--oversubscribe", "-n", ranks, odebench, "--ui", "none",
                        "--out", os.path.join(tmp, "b"), os.path.join(sdir, "dist_sparse_broken.lua")],
                       env=benv, capture_output=True, text=True, timeout=120)
    q = int(ranks) - 2
    want = ["rank %d: first: D:spmv: MPI_Waitall (distributed SpMV halo): timed out after 2 s "
            "(ODEBENCH_MPI_TIMEOUT) on rank %d of %s" % (q, q, ranks),
            "rank %d: second: D:spmv: distributed SpMV: " % q + REFUSED % q,
            "rank %d: solve: D:bicgstab: Krylov solve: " % q + REFUSED % q]
    both = p.stdout + p.stderr
    tap.ok(p.returncode == 0 and all(w in p.stdout for w in want) and CRASH.search(both) is None,
           "the last rank's neighbour: the halo timeout, then the SpMV and the solve refused", both)
    refused = all(("rank %d: second: D:spmv: distributed SpMV: " % r + REFUSED % r) in p.stdout
                  for r in range(int(ranks) - 1))
    tap.ok(refused, "every rank that timed out is refused the next SpMV", both)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if tap.bad else 0


if __name__ == "__main__":
    sys.exit(main())
