#!/usr/bin/env python3
"""ncu_fp64.py - the generator's FP64 count of a GPU RK step beside ncu's.

For each variant and method, runs fp64_count.lua (one fixed step of
BRUSS2D, beside this file) under Nsight Compute, once a case so that every
generated kernel of the process (their names begin with k_) belongs to it,
and prints per component and step: ours (the solver row's fp64_per_step /
n) and ncu's DFMA, DADD and DMUL thread instructions summed over those
kernels, with their ratio. docs/gpu.md ("Checking the FP64 count") says
what a ratio away from 1 means.

    python3 scenarios/tools/ncu_fp64.py --odebench build/odebench --N 64
    python3 scenarios/tools/ncu_fp64.py --ncu /usr/local/cuda/bin/ncu \\
        --variants gpu_stream2d --methods bs3,dopri5

--parse FILE.csv prints the sums of an ncu --csv log (for a check by hand).
"""
import argparse
import csv
import io
import os
import subprocess
import sys
import tempfile

METRICS = {
    "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum": "dfma",
    "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum": "dadd",
    "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum": "dmul",
}
HERE = os.path.dirname(os.path.abspath(__file__))


def ncu_sums(text):
    """Sums of each metric over the rows of an ncu --csv log whose kernel
    name begins with k_ (the generated RK kernels); the launches counted."""
    sums = {k: 0.0 for k in METRICS.values()}
    launches = set()
    start = text.find('"ID"')   # ncu writes ==PROF== lines before the table
    if start < 0:
        return sums, 0
    for row in csv.DictReader(io.StringIO(text[start:])):
        name = row.get("Kernel Name", "")
        metric = METRICS.get(row.get("Metric Name", ""))
        if not metric or not name.startswith("k_"):
            continue
        value = row.get("Metric Value", "0").replace(",", "")
        sums[metric] += float(value)
        launches.add(row.get("ID"))
    return sums, len(launches)


def ours(stdout):
    """The fp64_count line of a run: (n, steps, per_step) or None."""
    for line in stdout.splitlines():
        if line.startswith("fp64_count ") and "per_step=" in line:
            kv = dict(w.split("=", 1) for w in line.split() if "=" in w)
            return int(kv["n"]), int(kv["steps"]), float(kv["per_step"])
    return None


def run_case(a, variant, method):
    """One case under ncu: our figures and ncu's sums."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "ncu.csv")
        cmd = [a.ncu, "--csv", "--log-file", log, "--kernel-name",
               "regex:^k_", "--metrics", ",".join(METRICS),
               a.odebench, os.path.join(HERE, "fp64_count.lua"),
               "--ui", "none", "--out", os.path.join(tmp, "run"),
               "--set", "N=%d" % a.N, "--set", "variants=" + variant,
               "--set", "methods=" + method]
        p = subprocess.run(cmd, capture_output=True, text=True)
        text = open(log).read() if os.path.exists(log) else ""
        return ours(p.stdout), ncu_sums(text), p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--odebench", default="odebench")
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--N", type=int, default=64)
    ap.add_argument("--variants", default="gpu_unfused,gpu_reference,"
                    "gpu_trapezoid,gpu_multiblock,gpu_stream2d,gpu_hexagonal")
    ap.add_argument("--methods", default="bs3,dopri5,verner65")
    ap.add_argument("--parse", metavar="CSV")
    a = ap.parse_args()
    if a.parse:
        sums, k = ncu_sums(open(a.parse).read())
        print("%d launches: dfma %.0f dadd %.0f dmul %.0f" %
              (k, sums["dfma"], sums["dadd"], sums["dmul"]))
        return 0
    print("%-15s %-9s %9s %9s %8s %8s %8s %7s" % (
        "variant", "method", "ours", "ncu", "dfma", "dadd", "dmul",
        "ncu/ours"))
    bad = 0
    for v in a.variants.split(","):
        for m in a.methods.split(","):
            o, (sums, k), p = run_case(a, v, m)
            if not o or k == 0:
                last = (p.stdout + p.stderr).strip().splitlines()[-1:] or [""]
                print("%-15s %-9s no figures: %s" % (v, m, last[0][:100]))
                bad += 1
                continue
            n, steps, per_step = o
            total = sums["dfma"] + sums["dadd"] + sums["dmul"]
            ours_c = per_step / n
            ncu_c = total / (n * steps)
            print("%-15s %-9s %9.2f %9.2f %8.2f %8.2f %8.2f %7s" % (
                v, m, ours_c, ncu_c, sums["dfma"] / (n * steps),
                sums["dadd"] / (n * steps), sums["dmul"] / (n * steps),
                "%.3f" % (ncu_c / ours_c) if ours_c > 0 else "-"))
    print("per component and step: ours = the generator's count "
          "(fp64_per_step / n); ncu = DFMA + DADD + DMUL thread "
          "instructions of the k_ kernels over n and the steps")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
