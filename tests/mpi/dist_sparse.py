#!/usr/bin/env python3
"""dist_sparse.py - matrices split over ranks (dist/sparse) against one process.

Usage: dist_sparse.py ODEBENCH MPIRUN HAVE_MPI RANKS SCENARIO_DIR
Runs `mpirun --oversubscribe -n RANKS odebench dist_sparse.lua` (which raises,
ending every rank with status 2, at the first SpMV or solve that differs from
the one-process one) and checks, as TAP: exit status 0 and rank 0's line
saying how many checks passed on RANKS ranks; then dist_sparse_fail.lua (the
last rank raises inside a solve the others have entered): status 2 and that
rank's message; then scenarios/mpi_krylov.lua on a small grid: its table,
the solves a row makes (one with budget=0, `solves` with a large budget)
and the refusal of solves=0. Exit 77 (skipped) in a build without MPI or without mpirun.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

# checks of dist_sparse.lua: 174 on one rank (six formats), 131 on more
CHECKS = {1: 174}
CHECKS_MANY = 131


def run(mpirun, ranks, odebench, out, scen, env):
    for _ in range(3):   # mpirun itself may die of a signal after MPI_Abort (docs/mpi.md)
        p = subprocess.run([mpirun, "--oversubscribe", "-n", ranks, odebench,
                            "--ui", "none", "--out", out, scen],
                           env=env, capture_output=True, text=True, timeout=300)
        if p.returncode >= 0:
            return p
    return p


def main():
    odebench, mpirun, have_mpi, ranks, sdir = sys.argv[1:6]
    if have_mpi != "1" or not mpirun:
        print("1..0 # SKIP built without MPI")
        return 77
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", ODEBENCH_MPI_TIMEOUT="30")
    env.pop("ODEBENCH_MPI_ALL_OUTPUT", None)
    tmp = tempfile.mkdtemp(prefix="odb_dsparse_")
    p = run(mpirun, ranks, odebench, os.path.join(tmp, "run"),
            os.path.join(sdir, "dist_sparse.lua"), env)
    m = re.search(r"dist_sparse: (\d+) checks passed on (\d+) rank\(s\)", p.stdout)
    want = CHECKS.get(int(ranks), CHECKS_MANY)
    print("1..8")
    bad = 0
    def tap(good, i, text):
        nonlocal bad
        bad += not good
        print("%s %d - %s" % ("ok" if good else "not ok", i, text))
    tap(p.returncode == 0, 1, "mpirun -n %s dist_sparse.lua ends with status 0 (got %d)"
        % (ranks, p.returncode))
    ok = m is not None and int(m.group(1)) == want and m.group(2) == ranks
    tap(ok, 2, "%d checks passed on %s rank(s)" % (want, ranks))
    if p.returncode != 0 or not ok:
        for line in (p.stdout + p.stderr).splitlines()[:40]:
            print("# " + line)
    out = os.path.join(tmp, "fail")
    q = run(mpirun, ranks, odebench, out, os.path.join(sdir, "dist_sparse_fail.lua"), env)
    last = int(ranks) - 1
    msg = "D:bicgstab: tol must be in (0, 1), got 2"
    who = ("odebench: rank %d: " % last) if int(ranks) > 1 else "odebench: "
    tap(q.returncode == 2, 3, "a failing rank ends the run with status 2 (got %d)" % q.returncode)
    tap(who + msg in q.stderr or (who in q.stderr and msg in q.stderr), 4, "its message: %s...%s" % (who, msg))
    tap(not os.path.exists(out) and "not reached" not in q.stdout, 5,
        "no output directory, nothing past the error")
    if q.returncode != 2 or msg not in q.stderr:
        for line in (q.stdout + q.stderr).splitlines()[:20]:
            print("# " + line)
    # the scenario, small: its table and the peer line
    scen = os.path.normpath(os.path.join(sdir, "..", "..", "scenarios", "mpi_krylov.lua"))
    p = subprocess.run([mpirun, "--oversubscribe", "-n", ranks, odebench, "--ui", "none",
                        "--out", os.path.join(tmp, "scen"), scen, "--set", "V=4", "--set", "reps=2",
                        "--set", "solves=1", "--set", "formats=csr", "--set", "patterns=h",
                        "--set", "dist=planes", "--set", "peers=petsc"],
                       env=env, capture_output=True, text=True, timeout=300)
    rows = re.findall(r"^GH-h +planes csr +\d+ .*\s(bicgstab|pbicgstab|qmr) +\d+ ", p.stdout, re.M)
    tap(p.returncode == 0 and rows == ["bicgstab", "pbicgstab", "qmr"]
        and "PETSc peer: not built (libpetsc-real-dev not installed)" in p.stdout, 6,
        "scenarios/mpi_krylov.lua V=4: a row per solver and the PETSc peer line")
    if p.returncode != 0 or len(rows) != 3:
        for line in (p.stdout + p.stderr).splitlines()[:20]:
            print("# " + line)
    # the solves a row makes: the first always, more while under budget
    made = {}
    for budget in ("0", "1e9"):
        p = subprocess.run([mpirun, "--oversubscribe", "-n", ranks, odebench, "--ui", "none",
                            "--out", os.path.join(tmp, "b" + budget), scen, "--set", "V=4",
                            "--set", "reps=1", "--set", "solves=2", "--set", "budget=" + budget,
                            "--set", "formats=csr", "--set", "patterns=h", "--set", "dist=rows"],
                           env=env, capture_output=True, text=True, timeout=300)
        made[budget] = re.findall(r"^GH-h +rows +csr .*\s(?:bicgstab|pbicgstab|qmr) +\d+ .* (\d+)$",
                                  p.stdout, re.M)
        if p.returncode != 0:
            for line in (p.stdout + p.stderr).splitlines()[:20]:
                print("# " + line)
    tap(made["0"] == ["1"] * 3 and made["1e9"] == ["2"] * 3, 7,
        "mpi_krylov.lua: one solve a solver with budget=0, solves=2 with budget=1e9 (got %s, %s)"
        % (made["0"], made["1e9"]))
    p = subprocess.run([mpirun, "--oversubscribe", "-n", ranks, odebench, "--ui", "none",
                        "--out", os.path.join(tmp, "bad"), scen, "--set", "solves=0"],
                       env=env, capture_output=True, text=True, timeout=300)
    tap(p.returncode == 2 and "solves: an integer >= 1 expected, got 0" in p.stderr, 8,
        "mpi_krylov.lua solves=0: status 2 and the allowed values (got %d)" % p.returncode)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
