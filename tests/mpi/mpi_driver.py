#!/usr/bin/env python3
"""mpi_driver.py - the SPMD run of odebench under mpirun (docs/mpi.md).

Usage: mpi_driver.py ODEBENCH MPIRUN HAVE_MPI RANKS SCENARIO_DIR
Runs `mpirun --oversubscribe -n RANKS odebench tests/mpi/<scenario>.lua`
and checks, as TAP lines:
  - every rank reports its rank and the size, and the collectives agree
    (ranks.lua asserts them itself);
  - stdout is rank 0's only, unless ODEBENCH_MPI_ALL_OUTPUT=1;
  - results.csv is written once, by rank 0: one header line, rank 0's row;
  - a failing rank (rank 1 raises, fail.lua) ends the run with exit status
    2 and its message, and no output directory is left;
  - a collective only rank 0 calls (timeout.lua) ends with the timeout
    message after ODEBENCH_MPI_TIMEOUT=3 s, naming the ranks that left;
  - SIGINT to mpirun (stop.lua) leaves rank 0's finished rows, once.
Exit 77 (skipped) in a build without MPI or without mpirun.
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

from stop_runs import signal_when

results = []


def check(what, ok, detail=""):
    results.append((what, bool(ok), detail))


def run(cmd, env, timeout=120):
    """Open MPI 4.1.4's mpirun itself now and then dies of SIGSEGV after an
    MPI_Abort (a bare C program calling MPI_Abort shows it too, with
    "ORTE_ERROR_LOG ... show_help.c"): such a run is tried again, twice at
    most."""
    for _ in range(3):
        p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                           timeout=timeout)
        if p.returncode >= 0:
            break
        out = cmd[cmd.index("--out") + 1]
        subprocess.run(["rm", "-rf", out])
    return p.returncode, p.stdout, p.stderr


def data_rows(csv):
    with open(csv, encoding="utf-8") as fh:
        lines = [l.rstrip("\n") for l in fh if not l.startswith("#")]
    return lines


def main():
    odebench, mpirun, have_mpi, ranks, sdir = sys.argv[1:6]
    n = int(ranks)
    if have_mpi != "1" or not mpirun:
        print("1..0 # SKIP built without MPI")
        return 77
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    env.pop("ODEBENCH_MPI_ALL_OUTPUT", None)
    base = [mpirun, "--oversubscribe", "-n", str(n), odebench, "--ui", "none"]
    tmp = tempfile.mkdtemp(prefix="odb_mpi_")

    # 1. ranks, collectives, output ownership
    out = os.path.join(tmp, "ranks")
    rc, so, se = run(base + ["--out", out, os.path.join(sdir, "ranks.lua")],
                     env)
    check("ranks.lua ends with status 0", rc == 0, se)
    for r in range(n):
        check("rank %d reports 'rank %d of %d' and finishes" % (r, r, n),
              ("rank %d of %d\n" % (r, n)) in se and
              ("rank %d done\n" % r) in se, se)
    check("stdout is rank 0's only", so == "stdout of rank 0\n", so)
    rows = data_rows(os.path.join(out, "results.csv"))
    check("results.csv: one header and rank 0's row",
          rows == ["kind,name,value", "metric,rank,0"], rows)
    with open(os.path.join(out, "results.csv"), encoding="utf-8") as fh:
        ctx = fh.read()
    check("the context names the ranks", "# mpi.ranks=%d\n" % n in ctx)
    check("'results in' is said once", se.count("odebench: results in") == 1,
          se)
    out2 = os.path.join(tmp, "ranks_all")
    rc, so, se = run(base + ["--out", out2, os.path.join(sdir, "ranks.lua")],
                     dict(env, ODEBENCH_MPI_ALL_OUTPUT="1"))
    check("ODEBENCH_MPI_ALL_OUTPUT=1 shows every rank's stdout",
          rc == 0 and sorted(so.splitlines()) ==
          ["stdout of rank %d" % r for r in range(n)], so)

    if n == 1:
        # a timeout that is not a number ends the program before anything
        rc, so, se = run(base + ["--out", os.path.join(tmp, "bad"),
                                 os.path.join(sdir, "ranks.lua")],
                         dict(env, ODEBENCH_MPI_TIMEOUT="soon"))
        check("ODEBENCH_MPI_TIMEOUT=soon ends with status 2 naming it",
              rc == 2 and "odebench: ODEBENCH_MPI_TIMEOUT: expected seconds "
              "in (0, 1e6], got 'soon'\n" in se, "rc=%d\n%s" % (rc, se))

    if n >= 2:
        # 2. a failing rank
        out = os.path.join(tmp, "fail")
        rc, so, se = run(base + ["--out", out, os.path.join(sdir, "fail.lua")],
                         env)
        check("a failing rank ends the run with status 2", rc == 2,
              "rc=%d\n%s" % (rc, se))
        check("the failing rank's message is shown",
              "odebench: rank 1: %s:6: rank 1 gives up" %
              os.path.join(sdir, "fail.lua") in se, se)
        check("no output directory is left", not os.path.exists(out))

        # 3. a collective only rank 0 calls
        out = os.path.join(tmp, "timeout")
        t0 = time.time()
        rc, so, se = run(base + ["--out", out,
                                 os.path.join(sdir, "timeout.lua")],
                         dict(env, ODEBENCH_MPI_TIMEOUT="3"))
        took = time.time() - t0
        left = ", ".join(str(r) for r in range(1, n))
        msg = ("odebench: rank 0: %s:5: MPI_Allreduce (ob.allreduce): timed "
               "out after 3 s (ODEBENCH_MPI_TIMEOUT) on rank 0 of %d; rank%s "
               "%s left the run without calling it" %
               (os.path.join(sdir, "timeout.lua"), n, "s" if n > 2 else "",
                left))
        check("the lone collective times out with status 2", rc == 2,
              "rc=%d\n%s" % (rc, se))
        check("the timeout message names the call and the ranks", msg in se,
              se)
        check("it ends after the timeout, not a hang (%.1f s)" % took,
              3 <= took < 60)
        check("no output directory is left", not os.path.exists(out))

    # 4. SIGINT to mpirun
    out = os.path.join(tmp, "stop")
    p = subprocess.Popen(base + ["--out", out, os.path.join(sdir, "stop.lua")],
                         env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    rc, so, se = signal_when(p, "running\n", signal.SIGINT, 0.5, 60)
    check("SIGINT to mpirun ends the run with a nonzero status",
          rc != 0, "rc=%d" % rc)
    csv = os.path.join(out, "results.csv")
    rows = data_rows(csv) if os.path.exists(csv) else []
    steps = [r for r in rows[1:]]
    check("the finished rows are written once, by rank 0",
          len(rows) >= 4 and rows[0] == "kind,name,value" and
          steps == ["metric,step,%d" % (i + 1) for i in range(len(steps))],
          "\n".join(rows[:5]) + "\n" + se)
    check("rank 0 says it stopped, once",
          se.count("odebench: stopped by SIG") == 1, se)

    print("1..%d" % len(results))
    failed = 0
    for i, (what, ok, detail) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, what))
        if not ok:
            failed += 1
            for l in str(detail).splitlines()[:20]:
                print("#   " + l)
    subprocess.run(["rm", "-rf", tmp])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
