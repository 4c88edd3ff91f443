#!/usr/bin/env python3
"""dist_tune_ranks.py - ob.tune with the active ranks in its space.

Usage: dist_tune_ranks.py ODEBENCH MPIRUN HAVE_MPI RANKS SCENARIO_DIR
Runs `mpirun --oversubscribe -n RANKS odebench --ui none --out DIR
dist_tune_ranks.lua` with DIST_TUNE_DB naming a new tuning database, and
checks, as TAP: exit status 0 and the scenario's line of 7 checks; the
results rows of the tuning (kind "tune", label "dist_tune_ranks"), one per
configuration, each with cfg.ranks in 1..RANKS; the database's target
(`odebench tunedb export --json`) holds those evaluations under a key whose
params end in " mpi=RANKS" on several ranks and hold no " mpi=" on one, so
that runs of different sizes never share timings.
Exit 1 when a check fails, 77 (skipped) without MPI or mpirun.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dist_driver as D  # noqa: E402


def checks(r):
    R = int(r.ranks)
    configs = 3 * 2 * (2 if R > 1 else 1)   # variants x blocks x ranks
    db = r.out("tune.db")
    p = r.run("run", r.scenario("dist_tune_ranks.lua"),
              env=D.mpi_env(DIST_TUNE_DB=db))
    tap = D.Tap(4)
    m = D.passed("dist_tune_ranks", p.stdout)
    tap.ok(p.returncode == 0, "mpirun -n %s dist_tune_ranks.lua ends "
           "with status 0 (got %d)" % (r.ranks, p.returncode))
    tap.ok(m is not None and m.group(1) == "7" and m.group(2) == r.ranks,
           "7 checks passed on %s rank(s)" % r.ranks)
    if p.returncode != 0 or not m:
        D.diag(p.stdout + p.stderr)
    rows = []
    path = os.path.join(r.out("run"), "results.json")
    if os.path.exists(path):
        with open(path) as f:
            rows = json.load(f).get("results", [])
    tune = [x for x in rows if x.get("kind") == "tune" and
            x.get("label") == "dist_tune_ranks"]
    seen = sorted({x.get("cfg.ranks") for x in tune}, key=str)
    tap.ok(len(tune) == configs and
           all(isinstance(x.get("cfg.ranks"), int) and
               1 <= x["cfg.ranks"] <= R for x in tune),
           "%d results rows of the tuning, each with cfg.ranks in 1..%d "
           "(got %d rows, cfg.ranks %s)" % (configs, R, len(tune), seen))
    e = subprocess.run([r.odebench, "tunedb", "export", "--json", "--db",
                        db], capture_output=True, text=True, timeout=60)
    text = e.stdout if e.returncode == 0 else ""
    want = " mpi=%d" % R
    ok = e.returncode == 0 and "bruss2d" in text and (
        want in text if R > 1 else " mpi=" not in text)
    tap.ok(ok, "the tuning database's key %s (export status %d)"
           % ("holds '%s'" % want.strip() if R > 1 else
              "holds no 'mpi='", e.returncode))
    if not ok:
        D.diag(text[:2000] + e.stderr)
    return tap.status()


if __name__ == "__main__":
    sys.exit(D.main(checks, "odb_tune_ranks_"))
