#!/usr/bin/env python3
"""dist_tune_ranks.py - ob.tune with the active ranks in its space.

Usage: dist_tune_ranks.py ODEBENCH MPIRUN HAVE_MPI RANKS SCENARIO_DIR
Runs `mpirun --oversubscribe -n RANKS odebench --ui none --out DIR
dist_tune_ranks.lua` with DIST_TUNE_DB naming a new tuning database, and
checks, as TAP: exit status 0 and the scenario's line of 6 checks; the
results rows of the tuning (kind "tune", label "dist_tune_ranks"), one per
configuration, each with cfg.ranks in 1..RANKS; the database's target
(`odebench tunedb export --json`) holds those evaluations under a key whose
params end in " mpi=RANKS" on several ranks and hold no " mpi=" on one, so
that runs of different sizes never share timings.
Exit 1 when a check fails, 77 (skipped) without MPI or mpirun.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def main():
    odebench, mpirun, have_mpi, ranks, sdir = sys.argv[1:6]
    if have_mpi != "1" or not mpirun:
        print("1..0 # SKIP built without MPI")
        return 77
    R = int(ranks)
    configs = 3 * 2 * (2 if R > 1 else 1)   # variants x blocks x ranks
    tmp = tempfile.mkdtemp(prefix="odb_tune_ranks_")
    db = os.path.join(tmp, "tune.db")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", DIST_TUNE_DB=db)
    env.pop("ODEBENCH_MPI_ALL_OUTPUT", None)
    out = os.path.join(tmp, "run")
    fails = 0

    def check(n, ok, what):
        nonlocal fails
        print("%s %d - %s" % ("ok" if ok else "not ok", n, what))
        fails += 0 if ok else 1

    try:
        p = subprocess.run([mpirun, "--oversubscribe", "-n", ranks, odebench,
                            "--ui", "none", "--out", out,
                            os.path.join(sdir, "dist_tune_ranks.lua")],
                           env=env, capture_output=True, text=True,
                           timeout=300)
        print("1..4")
        m = re.search(r"dist_tune_ranks: (\d+) checks passed on (\d+) rank",
                      p.stdout)
        check(1, p.returncode == 0, "mpirun -n %s dist_tune_ranks.lua ends "
              "with status 0 (got %d)" % (ranks, p.returncode))
        check(2, m is not None and m.group(1) == "6" and m.group(2) == ranks,
              "6 checks passed on %s rank(s)" % ranks)
        if p.returncode != 0 or not m:
            print("# " + (p.stdout + p.stderr).replace("\n", "\n# "))
        rows = []
        path = os.path.join(out, "results.json")
        if os.path.exists(path):
            with open(path) as f:
                rows = json.load(f).get("results", [])
        tune = [r for r in rows if r.get("kind") == "tune" and
                r.get("label") == "dist_tune_ranks"]
        seen = sorted({r.get("cfg.ranks") for r in tune}, key=str)
        check(3, len(tune) == configs and
              all(isinstance(r.get("cfg.ranks"), int) and
                  1 <= r["cfg.ranks"] <= R for r in tune),
              "%d results rows of the tuning, each with cfg.ranks in 1..%d "
              "(got %d rows, cfg.ranks %s)" % (configs, R, len(tune), seen))
        e = subprocess.run([odebench, "tunedb", "export", "--json", "--db",
                            db], capture_output=True, text=True, timeout=60)
        text = e.stdout if e.returncode == 0 else ""
        want = " mpi=%d" % R
        ok = e.returncode == 0 and "bruss2d" in text and (
            want in text if R > 1 else " mpi=" not in text)
        check(4, ok, "the tuning database's key %s (export status %d)"
              % ("holds '%s'" % want.strip() if R > 1 else
                 "holds no 'mpi='", e.returncode))
        if not ok:
            print("# " + (text[:2000] + e.stderr).replace("\n", "\n# "))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
