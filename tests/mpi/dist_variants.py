#!/usr/bin/env python3
"""dist_variants.py - the distributed variants against one process.

Usage: dist_variants.py ODEBENCH MPIRUN HAVE_MPI RANKS SCENARIO_DIR
                        [SCENARIO CHECKS]
Runs `mpirun --oversubscribe -n RANKS odebench SCENARIO` (default
dist_variants.lua, the explicit RK variants, 64 checks; dist_pirk.lua the
PIRK corrector variants), which raises, ending every rank with status 2, at
the first difference from the one-process variant or refusal text other
than expected, and checks, as TAP: exit status 0, and rank 0's line saying
how many checks passed on RANKS ranks (with "; largest differences: h H,
state Y a step" after it where the scenario compares steps; dist_petsc.lua,
the PETSc peer, prints none). A scenario that prints fingerprint
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
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dist_driver as D  # noqa: E402


def fingerprints(stdout):
    """{case: 'steps hex'} of the lines 'fp <case> <steps> <hex>'."""
    fps = {}
    for line in stdout.splitlines():
        if line.startswith("fp "):
            case, steps, hexa = line[3:].rsplit(" ", 2)
            fps[case] = steps + " " + hexa
    return fps


def run(r, out, scenario, ranks):
    """(status, stdout, stderr) of one mpirun on ranks ranks."""
    p = r.run(out, scenario, timeout=600, ranks=ranks)
    return p.returncode, p.stdout, p.stderr


def checks(r):
    scenario = r.more[0] if r.more else "dist_variants.lua"
    want = int(r.more[1]) if len(r.more) > 1 else 64
    stem = scenario[:-len(".lua")]
    ranks = r.ranks
    path = r.scenario(scenario)
    rc, out, err = run(r, "run", path, ranks)
    if rc == 0 and ("%s: SKIP: " % stem) in out:
        print("1..0 # SKIP %s" % out.split("SKIP: ", 1)[1].splitlines()[0])
        return D.SKIP
    m = D.passed(stem, out, r"(?:; largest differences: h (\S+), state "
                 r"(\S+) a step)?")
    fps = fingerprints(out)
    tap = D.Tap(3 if fps else 2)
    tap.ok(rc == 0, "mpirun -n %s %s ends with status 0 (got %d)"
           % (ranks, scenario, rc))
    ok = tap.ok(m is not None and int(m.group(1)) == want and
                m.group(2) == ranks,
                "%d checks passed on %s rank(s)" % (want, ranks))
    if m and m.group(3):
        print("# largest differences from the one-process variant: h %s, "
              "state %s a step"
              % (m.group(3), m.group(4)))
    same = True
    if fps:
        rc1, out1, err1 = run(r, "one", path, "1")
        fps1 = fingerprints(out1)
        # cases that one rank has and R ranks do not (mpi_pirk_N where a
        # block is shorter than d) are refusals, checked by the scenario
        diff = [c for c in fps if fps1.get(c) != fps[c]]
        same = tap.ok(rc1 == 0 and not diff,
                      "the %d cases' steps and states on %s rank(s) are one "
                      "rank's bit for bit" % (len(fps), ranks))
        if rc1 != 0:
            print("# one rank: status %d" % rc1)
        for c in diff[:10]:
            print("# %s: %s on %s rank(s), %s on one" % (c, fps[c], ranks,
                                                        fps1.get(c)))
    if rc != 0 or not ok or not same:
        D.diag(out + err, 40)
    return tap.status()   # the exit-code protocol: meson reads the status


if __name__ == "__main__":
    sys.exit(D.main(checks, "odb_dist_", "built without MPI%s" % (
        " or without the arkode_mpi peer"
        if sys.argv[6:7] == ["dist_arkode.lua"] else "")))
