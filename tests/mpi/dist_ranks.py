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
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dist_driver as D  # noqa: E402


def checks(r):
    R = int(r.ranks)
    p = r.run("run", r.scenario("dist_ranks.lua"))
    tap = D.Tap(5)
    tap.ok(p.returncode == 0, "mpirun -n %s dist_ranks.lua ends with "
           "status 0 (got %d)" % (r.ranks, p.returncode))
    if p.returncode != 0:
        D.diag(p.stderr)
    lines = []
    path = os.path.join(r.out("run"), "events.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            lines = [json.loads(l) for l in f if l.strip()]
    tap.ok(len(lines) > 1 and all(l.get("rank") == 0 for l in lines),
           "every line of events.jsonl has \"rank\": 0 (%d lines)"
           % len(lines))
    rk = [l for l in lines if l.get("kind") == "ranks"]
    ok = (len(rk) == R and
          [l.get("of_rank") for l in rk] == list(range(R)) and
          all(l.get("ranks") == R and l.get("steps_per_s", 0) > 0 and
              l.get("wait_s", -1) >= 0 and
              l.get("name") == "bruss2d/rk4/mpi_N" for l in rk))
    tap.ok(ok, "%d ranks records of bruss2d/rk4/mpi_N, one a rank, "
           "with steps_per_s > 0 and wait_s >= 0 (got %s)"
           % (R, json.dumps(rk)))
    rows = []
    path = os.path.join(r.out("run"), "results.json")
    if os.path.exists(path):
        with open(path) as f:
            rows = json.load(f).get("results", [])
    dist = [x for x in rows if x.get("label") == "dist"]
    plain = [x for x in rows if x.get("label") == "plain"]
    waits = [l.get("wait_s", -1) for l in rk]
    ok = (len(dist) == 1 and dist[0].get("ranks") == R and
          dist[0].get("wait_s_max", -1) >= 0 and
          (not waits or abs(dist[0]["wait_s_max"] - max(waits)) <=
           1e-9 * max(1.0, max(waits))))
    tap.ok(ok, "the mpi_N row has ranks = %d and wait_s_max >= 0, the "
           "largest wait_s (got %s)" % (R, json.dumps(dist)))
    tap.ok(len(plain) == 1 and "ranks" not in plain[0] and
           "wait_s_max" not in plain[0],
           "the plain row has no ranks or wait_s_max")
    return tap.status()


if __name__ == "__main__":
    sys.exit(D.main(checks, "odb_ranks_"))
