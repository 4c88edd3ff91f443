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
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

CRASH = re.compile(r"AddressSanitizer|Failing at address|Segmentation fault|Signal: \d+|runtime error:")
REFUSED = ("an earlier exchange of this distributed matrix failed on rank %d; "
           "its messages no longer pair with the other ranks' (end the run)")


def stopped_run(mpirun, ranks, odebench, scen, out, env, delay):
    """Runs scen until rank 0 says "looping", waits delay s, sends SIGTERM."""
    cmd = [mpirun, "--oversubscribe", "--mca", "btl_vader_single_copy_mechanism", "none",
           "-n", ranks, odebench, "--ui", "none", "--out", out, scen]
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err_lines = []
    t0 = time.time()
    for line in p.stderr:
        err_lines.append(line)
        if "looping" in line or time.time() - t0 > 200:
            break
    time.sleep(delay)
    p.send_signal(signal.SIGTERM)
    try:
        so, se = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        so, se = p.communicate()
    return p.returncode, so, "".join(err_lines) + se


def main():
    odebench, mpirun, have_mpi, ranks, sdir = sys.argv[1:6]
    if have_mpi != "1" or not mpirun:
        print("1..0 # SKIP built without MPI")
        return 77
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               ODEBENCH_MPI_TIMEOUT="30")
    env.pop("ODEBENCH_MPI_ALL_OUTPUT", None)
    tmp = tempfile.mkdtemp(prefix="odb_dstop_")
    bad = 0
    n = 0
    print("1..11")

    def tap(good, text, dump=""):
        nonlocal bad, n
        n += 1
        bad += not good
        print("%s %d - %s" % ("ok" if good else "not ok", n, text))
        if not good and dump:
            for line in dump.splitlines()[:40]:
                print("# " + line)

    scen = os.path.join(sdir, "dist_sparse_stop.lua")
    for i, delay in enumerate((0.5, 1.5, 3.0)):
        rc, so, se = stopped_run(mpirun, ranks, odebench, scen, os.path.join(tmp, "s%d" % i), env, delay)
        both = so + se
        tap(re.search(r"dist_sparse_stop: 10 checks passed on %s rank\(s\)" % ranks, so) is not None
            and "odebench: stopped by SIGTERM" in se,
            "stopped after %.1f s: rank 0's 10 checks, then 'stopped by SIGTERM'" % delay, both)
        m = CRASH.search(both)
        tap(m is None, "stopped after %.1f s: no sanitizer report, segfault or signal (%s)"
            % (delay, m.group(0) if m else "none"), both)
        tap(rc in (0, 1), "stopped after %.1f s: mpirun's status %d is 0 or 1" % (delay, rc), both)

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
    tap(p.returncode == 0 and all(w in p.stdout for w in want) and CRASH.search(both) is None,
        "the last rank's neighbour: the halo timeout, then the SpMV and the solve refused", both)
    refused = all(("rank %d: second: D:spmv: distributed SpMV: " % r + REFUSED % r) in p.stdout
                  for r in range(int(ranks) - 1))
    tap(refused, "every rank that timed out is refused the next SpMV", both)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
