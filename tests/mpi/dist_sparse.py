#!/usr/bin/env python3
"""dist_sparse.py - matrices split over ranks (dist/sparse) against one process.

Usage: dist_sparse.py ODEBENCH MPIRUN HAVE_MPI RANKS SCENARIO_DIR
Runs `mpirun --oversubscribe -n RANKS odebench dist_sparse.lua` (which raises,
ending every rank with status 2, at the first SpMV or solve that differs from
the one-process one) and checks, as TAP: exit status 0 and rank 0's line
saying how many checks passed on RANKS ranks; then dist_sparse_fail.lua (the
last rank raises inside a solve the others have entered): status 2 and that
rank's message; then scenarios/mpi_krylov.lua on a small grid: its table,
its rows with formats=bdia (slabs of planes), the solves a row makes (one
with budget=0, `solves` with a large budget)
and the refusal of solves=0. Exit 77 (skipped) in a build without MPI or without mpirun.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dist_driver as D  # noqa: E402

# checks of dist_sparse.lua: 457 on one rank (six formats), 351 on more
CHECKS = {1: 457}
CHECKS_MANY = 351


def checks(r):
    """dist_sparse.lua and dist_sparse_fail.lua (a failing rank: MPI_Abort)
    are run again when mpirun itself dies of a signal (docs/mpi.md); the
    runs of scenarios/mpi_krylov.lua are not."""
    ranks = r.ranks
    p = r.run("run", r.scenario("dist_sparse.lua"), tries=3)
    m = D.passed("dist_sparse", p.stdout)
    want = CHECKS.get(int(ranks), CHECKS_MANY)
    tap = D.Tap(9)
    tap.ok(p.returncode == 0, "mpirun -n %s dist_sparse.lua ends with status 0 (got %d)"
           % (ranks, p.returncode))
    ok = tap.ok(m is not None and int(m.group(1)) == want and m.group(2) == ranks,
                "%d checks passed on %s rank(s)" % (want, ranks))
    if p.returncode != 0 or not ok:
        D.diag(p.stdout + p.stderr, 40)
    out = r.out("fail")
    q = r.run("fail", r.scenario("dist_sparse_fail.lua"), tries=3)
    last = int(ranks) - 1
    msg = "D:bicgstab: tol must be in (0, 1), got 2"
    who = ("odebench: rank %d: " % last) if int(ranks) > 1 else "odebench: "
    tap.ok(q.returncode == 2, "a failing rank ends the run with status 2 (got %d)" % q.returncode)
    tap.ok(who + msg in q.stderr or (who in q.stderr and msg in q.stderr),
           "its message: %s...%s" % (who, msg))
    tap.ok(not os.path.exists(out) and "not reached" not in q.stdout,
           "no output directory, nothing past the error")
    if q.returncode != 2 or msg not in q.stderr:
        D.diag(q.stdout + q.stderr, 20)
    # the scenario, small: its table and the peer line
    scen = os.path.normpath(os.path.join(r.sdir, "..", "..", "scenarios", "mpi_krylov.lua"))
    p = r.run("scen", scen, ["--set", "V=4", "--set", "reps=2", "--set", "solves=1",
                             "--set", "formats=csr", "--set", "patterns=h",
                             "--set", "dist=planes", "--set", "peers=petsc"])
    rows = re.findall(r"^GH-h +planes csr +\d+ .*\s(bicgstab|pbicgstab|qmr) +\d+ ", p.stdout, re.M)
    tap.ok(p.returncode == 0 and rows == ["bicgstab", "pbicgstab", "qmr"]
           and ("PETSc peer: the PETSc peer is not in this build" in p.stdout
                or (re.search(r"^GH-h +planes aij +\d+ .*\spetsc_bcgs +\d+ ", p.stdout, re.M)
                    and "PETSc peer: KSPBCGS on the same rows and ranks" in p.stdout)),
           "scenarios/mpi_krylov.lua V=4: a row per solver and the PETSc peer's line (or row)")
    if p.returncode != 0 or len(rows) != 3:
        D.diag(p.stdout + p.stderr, 20)
    # Bdia on slabs of planes: its rows; by rows on several ranks, passed over
    p = r.run("bdia", scen, ["--set", "V=4", "--set", "reps=2", "--set", "solves=1",
                             "--set", "formats=bdia", "--set", "patterns=h",
                             "--set", "dist=planes,rows"])
    rows = re.findall(r"^GH-h +planes bdia +\d+ .*\s(bicgstab|pbicgstab|qmr) +\d+ ", p.stdout, re.M)
    over = "GH-h           rows   bdia  passed over: Bdia on %s ranks needs slabs of planes" % ranks
    rows_ok = len(re.findall(r"^GH-h +rows +bdia +\d+ ", p.stdout, re.M)) == 3
    tap.ok(p.returncode == 0 and rows == ["bicgstab", "pbicgstab", "qmr"]
           and (over in p.stdout if int(ranks) > 1 else rows_ok),
           "scenarios/mpi_krylov.lua formats=bdia: a row per solver on planes, rows %s"
           % ("passed over" if int(ranks) > 1 else "computed on one rank"))
    if p.returncode != 0 or len(rows) != 3:
        D.diag(p.stdout + p.stderr, 20)
    # the solves a row makes: the first always, more while under budget
    made = {}
    for budget in ("0", "1e9"):
        p = r.run("b" + budget, scen, ["--set", "V=4", "--set", "reps=1", "--set", "solves=2",
                                       "--set", "budget=" + budget, "--set", "formats=csr",
                                       "--set", "patterns=h", "--set", "dist=rows"])
        made[budget] = re.findall(r"^GH-h +rows +csr .*\s(?:bicgstab|pbicgstab|qmr) +\d+ .* (\d+)$",
                                  p.stdout, re.M)
        if p.returncode != 0:
            D.diag(p.stdout + p.stderr, 20)
    tap.ok(made["0"] == ["1"] * 3 and made["1e9"] == ["2"] * 3,
           "mpi_krylov.lua: one solve a solver with budget=0, solves=2 with budget=1e9 (got %s, %s)"
           % (made["0"], made["1e9"]))
    p = r.run("bad", scen, ["--set", "solves=0"])
    tap.ok(p.returncode == 2 and "solves: an integer >= 1 expected, got 0" in p.stderr,
           "mpi_krylov.lua solves=0: status 2 and the allowed values (got %d)" % p.returncode)
    return tap.status()


if __name__ == "__main__":
    sys.exit(D.main(checks, "odb_dsparse_", ODEBENCH_MPI_TIMEOUT="30"))
