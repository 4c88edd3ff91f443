#!/usr/bin/env python3
"""dist_online_ranks.py - online tuning with the active ranks in its space.

Usage: dist_online_ranks.py ODEBENCH MPIRUN HAVE_MPI RANKS SCENARIO_DIR
Runs `mpirun --oversubscribe -n RANKS odebench --ui none --out DIR
dist_online_ranks.lua` and checks, as TAP: exit status 0 and the
scenario's line of 14 checks; the phase rows (kind "online", labels fixed,
adaptive, layout), each naming its winner's active ranks: opt.ranks in
1..RANKS, the winner text holding "ranks=<opt.ranks>" and variant the
winner's; the candidates' rows (kind "tune", strategy "online"), each with
cfg.ranks in 1..RANKS, every value 1..RANKS tried in each phase, and on 3
ranks layout's ranks=3 failed; the events (events.jsonl, kind tune_eval)
naming the candidates' ranks.
Exit 1 when a check fails, 77 (skipped) without MPI or mpirun.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

LABELS = ("fixed", "adaptive", "layout")


def main():
    odebench, mpirun, have_mpi, ranks, sdir = sys.argv[1:6]
    if have_mpi != "1" or not mpirun:
        print("1..0 # SKIP built without MPI")
        return 77
    R = int(ranks)
    tmp = tempfile.mkdtemp(prefix="odb_online_ranks_")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
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
                            os.path.join(sdir, "dist_online_ranks.lua")],
                           env=env, capture_output=True, text=True,
                           timeout=300)
        print("1..5")
        m = re.search(r"dist_online_ranks: (\d+) checks passed on (\d+) "
                      r"rank", p.stdout)
        check(1, p.returncode == 0, "mpirun -n %s dist_online_ranks.lua "
              "ends with status 0 (got %d)" % (ranks, p.returncode))
        check(2, m is not None and m.group(1) == "14" and m.group(2) == ranks,
              "14 checks passed on %s rank(s)" % ranks)
        if p.returncode != 0 or not m:
            print("# " + (p.stdout + p.stderr)[-3000:].replace("\n", "\n# "))
        rows = []
        path = os.path.join(out, "results.json")
        if os.path.exists(path):
            with open(path) as f:
                rows = json.load(f).get("results", [])
        phases = {r.get("label"): r for r in rows
                  if r.get("kind") == "online"}
        bad = []
        for lb in LABELS:
            r = phases.get(lb, {})
            k = r.get("opt.ranks")
            w = r.get("winner", "")
            if not (isinstance(k, int) and 1 <= k <= R and
                    ("ranks=%d" % k) in w.split() and
                    ("variant=%s" % r.get("variant")) in w.split()):
                bad.append("%s: winner %r, variant %r, opt.ranks %r"
                           % (lb, w, r.get("variant"), k))
        check(3, not bad, "the 3 phase rows name the winner's active ranks "
              "(opt.ranks in 1..%d, in the winner text)%s"
              % (R, "; " + "; ".join(bad) if bad else ""))
        cands = [r for r in rows if r.get("kind") == "tune" and
                 r.get("strategy") == "online"]
        seen = {lb: sorted({r.get("cfg.ranks") for r in cands
                            if r.get("label") == lb}, key=str)
                for lb in LABELS}
        failed = sorted((r.get("label"), r.get("cfg.ranks")) for r in cands
                        if r.get("status") != "ok")
        want_failed = [("layout", 3)] if R >= 3 else []
        check(4, all(seen[lb] == list(range(1, R + 1)) for lb in LABELS) and
              failed == want_failed,
              "the candidates' rows: cfg.ranks 1..%d in each phase (got %s); "
              "failed %s (want %s)" % (R, seen, failed, want_failed))
        names = set()
        ev = os.path.join(out, "events.jsonl")
        if os.path.exists(ev):
            with open(ev) as f:
                for line in f:
                    e = json.loads(line)
                    if e.get("kind") == "tune_eval":
                        k = re.search(r"ranks=(\d+)", e.get("name", ""))
                        names.add(int(k.group(1)) if k else None)
        check(5, names == set(range(1, R + 1)),
              "the tune_eval events name ranks 1..%d (got %s)"
              % (R, sorted(names, key=str)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
