#!/usr/bin/env python3
"""dist_variants.py - the distributed variants against one process.

Usage: dist_variants.py ODEBENCH MPIRUN HAVE_MPI RANKS SCENARIO_DIR
                        [SCENARIO CHECKS]
Runs `mpirun --oversubscribe -n RANKS odebench SCENARIO` (default
dist_variants.lua, the explicit RK variants, 50 checks; dist_pirk.lua the
PIRK corrector variants), which raises, ending every rank with status 2, at
the first difference from the one-process variant or refusal text other
than expected, and checks, as TAP: exit status 0, and rank 0's line saying
how many checks passed on RANKS ranks. A scenario that prints fingerprint
lines ("fp <case> <steps> <hex>": every step's t and h and the final state,
bit for bit) is run with one rank too, and its lines under RANKS ranks must
be the same, case for case (steps and fingerprint).
Exit 1 when a check fails, 77 (skipped) in a build without MPI or without
mpirun (HAVE_MPI 0; meson passes 0 for dist_arkode.lua also in a build
without the arkode_mpi peer, and for dist_gpu.lua in one without CUDA), or
when the scenario prints "<stem>: SKIP: <why>" (dist_gpu.lua on a machine
without a CUDA device).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def run(odebench, mpirun, ranks, scenario, env):
    """(status, stdout, stderr) of one mpirun."""
    out = tempfile.mkdtemp(prefix="odb_dist_")
    try:
        p = subprocess.run([mpirun, "--oversubscribe", "-n", ranks, odebench,
                            "--ui", "none", "--out", os.path.join(out, "run"),
                            scenario],
                           env=env, capture_output=True, text=True,
                           timeout=600)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return p.returncode, p.stdout, p.stderr


def fingerprints(stdout):
    """{case: 'steps hex'} of the lines 'fp <case> <steps> <hex>'."""
    fps = {}
    for line in stdout.splitlines():
        if line.startswith("fp "):
            case, steps, hexa = line[3:].rsplit(" ", 2)
            fps[case] = steps + " " + hexa
    return fps


def main():
    odebench, mpirun, have_mpi, ranks, sdir = sys.argv[1:6]
    scenario = sys.argv[6] if len(sys.argv) > 6 else "dist_variants.lua"
    checks = int(sys.argv[7]) if len(sys.argv) > 7 else 50
    stem = scenario[:-len(".lua")]
    if have_mpi != "1" or not mpirun:
        print("1..0 # SKIP built without MPI%s" %
              (" or without the arkode_mpi peer"
               if scenario == "dist_arkode.lua" else ""))
        return 77
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("ODEBENCH_MPI_ALL_OUTPUT", None)
    path = os.path.join(sdir, scenario)
    rc, out, err = run(odebench, mpirun, ranks, path, env)
    if rc == 0 and ("%s: SKIP: " % stem) in out:
        print("1..0 # SKIP %s" % out.split("SKIP: ", 1)[1].splitlines()[0])
        return 77
    m = re.search(re.escape(stem) +
                  r": (\d+) checks passed on (\d+) rank\(s\); "
                  r"largest differences: h (\S+), state (\S+) a step", out)
    fps = fingerprints(out)
    print("1..3" if fps else "1..2")
    print("%s 1 - mpirun -n %s %s ends with status 0 (got %d)"
          % ("ok" if rc == 0 else "not ok", ranks, scenario, rc))
    ok = m is not None and int(m.group(1)) == checks and m.group(2) == ranks
    print("%s 2 - %d checks passed on %s rank(s)" %
          ("ok" if ok else "not ok", checks, ranks))
    if m:
        print("# largest differences from the one-process variant: h %s, "
              "state %s a step"
              % (m.group(3), m.group(4)))
    same = True
    if fps:
        rc1, out1, err1 = run(odebench, mpirun, "1", path, env)
        fps1 = fingerprints(out1)
        # cases that one rank has and R ranks do not (mpi_pirk_N where a
        # block is shorter than d) are refusals, checked by the scenario
        diff = [c for c in fps if fps1.get(c) != fps[c]]
        same = rc1 == 0 and not diff
        print("%s 3 - the %d cases' steps and states on %s rank(s) are one "
              "rank's bit for bit" % ("ok" if same else "not ok", len(fps),
                                      ranks))
        if rc1 != 0:
            print("# one rank: status %d" % rc1)
        for c in diff[:10]:
            print("# %s: %s on %s rank(s), %s on one" % (c, fps[c], ranks,
                                                        fps1.get(c)))
    if rc != 0 or not ok or not same:
        for line in (out + err).splitlines()[:40]:
            print("# " + line)
        return 1     # the exit-code protocol: meson reads only the status
    return 0


if __name__ == "__main__":
    sys.exit(main())
