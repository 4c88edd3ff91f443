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
import shutil
import subprocess
import sys
import tempfile

# checks of dist_sparse_gpu.lua with a device: 283 on one rank (six
# formats), 211 on more; the two refusals alone without one
CHECKS = {1: 283}
CHECKS_MANY = 211
CHECKS_SKIP = 2


def run(args, env):
    for _ in range(3):   # mpirun itself may die of a signal after MPI_Abort (docs/mpi.md)
        p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
        if p.returncode >= 0:
            return p
    return p


def main():
    odebench, mpirun, have_mpi, ranks, sdir = sys.argv[1:6]
    if have_mpi != "1" or not mpirun:
        print("1..0 # SKIP built without MPI")
        return 77
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", ODEBENCH_MPI_TIMEOUT="60")
    env.pop("ODEBENCH_MPI_ALL_OUTPUT", None)
    tmp = tempfile.mkdtemp(prefix="odb_dsgpu_")
    base = [mpirun, "--oversubscribe", "-n", ranks, odebench, "--ui", "none"]
    p = run(base + ["--out", os.path.join(tmp, "run"), os.path.join(sdir, "dist_sparse_gpu.lua")], env)
    m = re.search(r"dist_sparse_gpu: (\d+) checks passed on (\d+) rank\(s\)", p.stdout)
    skip = re.search(r"dist_sparse_gpu: SKIP: (.*)", p.stdout)
    if p.returncode == 0 and skip and m and int(m.group(1)) == CHECKS_SKIP:
        print("1..0 # SKIP %s (the refusals of backend = \"cuda\" passed)" % skip.group(1))
        shutil.rmtree(tmp, ignore_errors=True)
        return 77
    want = CHECKS.get(int(ranks), CHECKS_MANY)
    print("1..3")
    bad = 0

    def tap(good, i, text, out=None):
        nonlocal bad
        bad += not good
        print("%s %d - %s" % ("ok" if good else "not ok", i, text))
        if not good and out is not None:
            for line in (out.stdout + out.stderr).splitlines()[:40]:
                print("# " + line)

    tap(p.returncode == 0, 1, "mpirun -n %s dist_sparse_gpu.lua ends with status 0 (got %d)"
        % (ranks, p.returncode), p)
    tap(m is not None and int(m.group(1)) == want and m.group(2) == ranks, 2,
        "%d checks passed on %s rank(s) (got %s)" % (want, ranks, m.group(0) if m else "none"), p)
    scen = os.path.normpath(os.path.join(sdir, "..", "..", "scenarios", "mpi_krylov.lua"))
    q = run(base + ["--out", os.path.join(tmp, "scen"), scen, "--set", "backend=cuda", "--set", "V=8",
                    "--set", "k=2", "--set", "reps=3", "--set", "solves=1", "--set", "formats=csr",
                    "--set", "patterns=b", "--set", "dist=planes", "--set", "large=0"], env)
    rows = re.findall(r"^GH-b +planes +csr +\d+ .*\s(bicgstab|pbicgstab|qmr) +\d+ ", q.stdout, re.M)
    halo = re.search(r"halo: (host buffers|CUDA-aware MPI)", q.stdout)
    tap(q.returncode == 0 and rows == ["bicgstab", "pbicgstab", "qmr"] and halo is not None, 3,
        "mpi_krylov.lua backend=cuda V=8: a row per solver and the halo path", q)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
