#!/usr/bin/env python3
"""dist_ranks.py - the ranks' figures of a distributed solve in events.jsonl
and results.json.

Usage: dist_ranks.py ODEBENCH MPIRUN HAVE_MPI RANKS SCENARIO_DIR
Runs `mpirun --oversubscribe -n RANKS odebench --ui none --out DIR
dist_ranks.lua` and checks, as TAP: exit status 0; every line of
DIR/events.jsonl carries "rank": 0 (only rank 0 records); the "ranks"
records of the mpi_N solve are RANKS, one a rank in rank order, each with
"ranks": RANKS, a positive steps_per_s and a wait_s >= 0; the row of that
solve in results.json has ranks = RANKS and wait_s_max >= 0, the largest
wait_s; the plain solve's row has neither.
Exit 1 when a check fails, 77 (skipped) without MPI or mpirun.
"""
import json
import os
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
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("ODEBENCH_MPI_ALL_OUTPUT", None)
    tmp = tempfile.mkdtemp(prefix="odb_ranks_")
    out = os.path.join(tmp, "run")
    fails = 0

    def check(n, ok, what):
        nonlocal fails
        print("%s %d - %s" % ("ok" if ok else "not ok", n, what))
        fails += 0 if ok else 1

    try:
        p = subprocess.run([mpirun, "--oversubscribe", "-n", ranks, odebench,
                            "--ui", "none", "--out", out,
                            os.path.join(sdir, "dist_ranks.lua")],
                           env=env, capture_output=True, text=True,
                           timeout=300)
        print("1..5")
        check(1, p.returncode == 0, "mpirun -n %s dist_ranks.lua ends with "
              "status 0 (got %d)" % (ranks, p.returncode))
        if p.returncode != 0:
            print("# " + p.stderr.replace("\n", "\n# "))
        lines = []
        path = os.path.join(out, "events.jsonl")
        if os.path.exists(path):
            with open(path) as f:
                lines = [json.loads(l) for l in f if l.strip()]
        check(2, len(lines) > 1 and all(l.get("rank") == 0 for l in lines),
              "every line of events.jsonl has \"rank\": 0 (%d lines)"
              % len(lines))
        rk = [l for l in lines if l.get("kind") == "ranks"]
        ok = (len(rk) == R and
              [l.get("of_rank") for l in rk] == list(range(R)) and
              all(l.get("ranks") == R and l.get("steps_per_s", 0) > 0 and
                  l.get("wait_s", -1) >= 0 and
                  l.get("name") == "bruss2d/rk4/mpi_N" for l in rk))
        check(3, ok, "%d ranks records of bruss2d/rk4/mpi_N, one a rank, "
              "with steps_per_s > 0 and wait_s >= 0 (got %s)"
              % (R, json.dumps(rk)))
        rows = []
        path = os.path.join(out, "results.json")
        if os.path.exists(path):
            with open(path) as f:
                rows = json.load(f).get("results", [])
        dist = [r for r in rows if r.get("label") == "dist"]
        plain = [r for r in rows if r.get("label") == "plain"]
        waits = [l.get("wait_s", -1) for l in rk]
        ok = (len(dist) == 1 and dist[0].get("ranks") == R and
              dist[0].get("wait_s_max", -1) >= 0 and
              (not waits or abs(dist[0]["wait_s_max"] - max(waits)) <=
               1e-9 * max(1.0, max(waits))))
        check(4, ok, "the mpi_N row has ranks = %d and wait_s_max >= 0, the "
              "largest wait_s (got %s)" % (R, json.dumps(dist)))
        check(5, len(plain) == 1 and "ranks" not in plain[0] and
              "wait_s_max" not in plain[0],
              "the plain row has no ranks or wait_s_max")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
