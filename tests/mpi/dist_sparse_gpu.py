#!/usr/bin/env python3
"""dist_sparse_gpu.py - matrices split over GPU ranks (backend = "cuda").

Usage: dist_sparse_gpu.py ODEBENCH MPIRUN HAVE_MPI RANKS SCENARIO_DIR
Runs `mpirun --oversubscribe -n RANKS odebench dist_sparse_gpu.lua` (which
raises, ending every rank with status 2, at the first refusal text, SpMV or
solve that differs from the one-process one) and checks, as TAP: exit
status 0 and rank 0's line saying how many checks passed on RANKS ranks;
then scenarios/mpi_krylov.lua --set backend=cuda on a small grid: a row per
solver and the halo path. Several ranks share the GPU where there is one.
Exit 77 (skipped) in a build without MPI or without mpirun, and where the
scenario says "dist_sparse_gpu: SKIP: no CUDA device (...)" after its
refusals passed (a build without CUDA, a machine without a device).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dist_driver as D  # noqa: E402

# checks of dist_sparse_gpu.lua with a device: 382 on one rank (six
# formats, the persistent BiCGStab on CSR and Bdia), on more 296 where
# the ranks have the link between their GPUs (the persistent BiCGStab's
# solves) and 268 where they do not (its refusals); the two refusals
# alone without a device
CHECKS = {1: 382}
CHECKS_LINKED = 296
CHECKS_MANY = 268
CHECKS_SKIP = 2


def checks(r):
    """The TAP lines, or the skip. A run that mpirun itself ends by a
    signal is tried again (docs/mpi.md)."""
    ranks = r.ranks
    p = r.run("run", r.scenario("dist_sparse_gpu.lua"), timeout=600, tries=3)
    m = D.passed("dist_sparse_gpu", p.stdout)
    skip = re.search(r"dist_sparse_gpu: SKIP: (.*)", p.stdout)
    if p.returncode == 0 and skip and m and int(m.group(1)) == CHECKS_SKIP:
        print("1..0 # SKIP %s (the refusals of backend = \"cuda\" passed)" % skip.group(1))
        return D.SKIP
    linked = "GPU peer copies, waits on the device" in p.stdout
    want = CHECKS.get(int(ranks), CHECKS_LINKED if linked else CHECKS_MANY)
    tap = D.Tap(3)

    def check(good, text, out):
        if not tap.ok(good, text):
            D.diag(out.stdout + out.stderr, 40)

    check(p.returncode == 0, "mpirun -n %s dist_sparse_gpu.lua ends with status 0 (got %d)"
          % (ranks, p.returncode), p)
    check(m is not None and int(m.group(1)) == want and m.group(2) == ranks,
          "%d checks passed on %s rank(s) (got %s)" % (want, ranks, m.group(0) if m else "none"), p)
    scen = os.path.normpath(os.path.join(r.sdir, "..", "..", "scenarios", "mpi_krylov.lua"))
    q = r.run("scen", scen, ["--set", "backend=cuda", "--set", "V=8", "--set", "k=2",
                             "--set", "reps=3", "--set", "solves=1", "--set", "formats=csr",
                             "--set", "patterns=b", "--set", "dist=planes", "--set", "large=0"],
              timeout=600, tries=3)
    rows = re.findall(r"^GH-b +planes +csr +\d+ .*\s(bicgstab|bicg_pk|pbicgstab|qmr) +\d+ ", q.stdout, re.M)
    halo = re.search(r"halo: (host buffers|CUDA-aware MPI|GPU peer copies, waits on the device|none \(one rank\))", q.stdout)
    # the persistent BiCGStab's row where it runs: one rank, or linked ranks
    pk = halo is not None and halo.group(1) in ("none (one rank)", "GPU peer copies, waits on the device")
    want_rows = ["bicgstab", "bicg_pk", "pbicgstab", "qmr"] if pk else ["bicgstab", "pbicgstab", "qmr"]
    check(q.returncode == 0 and rows == want_rows and halo is not None,
          "mpi_krylov.lua backend=cuda V=8: a row per solver and the halo path (got %s)" % rows, q)
    return tap.status()


if __name__ == "__main__":
    sys.exit(D.main(checks, "odb_dsgpu_", ODEBENCH_MPI_TIMEOUT="60"))
