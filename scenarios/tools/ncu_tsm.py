#!/usr/bin/env python3
"""ncu_tsm.py - the tuned tall & skinny kernel of one shape beside cuBLAS's, under ncu.

Three steps (docs/dense.md, "On the GPU"):

1. The pick: tsm_pick.lua (beside this file) under odebench gives the kernel
   tsm_roofline.lua chooses for the shape on this card (it tunes, or reads
   the tuning database that a roofline run filled), as a token such as
   m3w2x4g1r32s3lb0. --token skips this step.
2. One process of `test_tsm --roofline` restricted to that token and shape
   (ODB_TSM_TOKENS, ODB_TSM_WIDTHS, ODB_TSM_CASES; one timed run,
   ODB_TSM_REPS=1; no L2 flush between runs, ODEBENCH_TSM_NOFLUSH=1, so
   that every kernel but ours is cuBLAS's) runs under Nsight Compute,
   which profiles its first --launches kernels. Their order: ours on the
   verification rows, ours on K rows (two warm-ups, one timed run), then
   the race with cuBLAS (ours, cuBLAS's kernels, ours, ...).
3. The figures: ours is the first launch on K rows (the second of
   tsm_kernel), cuBLAS's the run of other kernels after ours' following
   launches (one call may launch a GEMM and a split-K reduction). Printed
   side by side: duration, SM clock, FP64 tensor-pipe and FP64-pipe
   utilization, DRAM throughput, occupancy, registers, and the warp stall
   reasons (cycles a warp waited per issued instruction, by reason).

Metric names differ between ncu versions and chips: the script asks
`ncu --query-metrics --chip CHIP` which of its candidates exist
(e.g. sm__pipe_tensor_op_dmma_cycles_active, the FP64 tensor pipe of
sm_80 and sm_90) and requests those.

    python3 scenarios/tools/ncu_tsm.py --odebench .device/bin/odebench \\
        --test-tsm .device/bin/test_tsm --op tsmttsm --dtype z --M 64 --N 64
    python3 scenarios/tools/ncu_tsm.py --token m3w2x4g1r32s3lb0 ...

--parse FILE.csv prints the table of a saved `ncu --csv --page raw` log;
--self-test checks the parsing on a made-up log.
"""
import argparse
import csv
import io
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OURS = "tsm_kernel"

# (label, candidate metric names: the first that ncu knows is used)
FIGURES = [
    ("duration (us)", ["gpu__time_duration.sum"]),
    ("SM clock (MHz)", ["smsp__cycles_elapsed.avg.per_second"]),
    ("FP64 tensor pipe (% active)",
     ["sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active",
      "sm__pipe_fp64_tensor_op_cycles_active.avg.pct_of_peak_sustained_active",
      "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"]),
    ("DMMA instructions",
     ["sm__inst_executed_pipe_tensor_op_dmma.sum",
      "smsp__inst_executed_pipe_tensor_op_dmma.sum"]),
    ("FP64 pipe (% active)",
     ["sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active"]),
    ("shared pipe (% active)",
     ["sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active"]),
    ("DRAM throughput (% of peak)",
     ["dram__throughput.avg.pct_of_peak_sustained_elapsed",
      "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"]),
    ("DRAM read (GB)", ["dram__bytes_read.sum"]),
    ("warps active (% of peak)",
     ["sm__warps_active.avg.pct_of_peak_sustained_active"]),
    ("registers a thread", ["launch__registers_per_thread"]),
    ("grid", ["launch__grid_size"]),
    ("block", ["launch__block_size"]),
]
STALLS = ["long_scoreboard", "short_scoreboard", "mio_throttle",
          "math_pipe_throttle", "barrier", "wait", "not_selected", "selected",
          "lg_throttle", "dispatch_stall", "no_instruction", "membar",
          "branch_resolving", "drain", "sleeping", "tex_throttle", "misc",
          "imc_miss"]
STALL_FMT = "smsp__average_warps_issue_stalled_%s_per_issue_active.ratio"
SCALE = {"gpu__time_duration.sum": ("nsecond", 1e-3),
         "smsp__cycles_elapsed.avg.per_second": ("hz", 1e-6),
         "dram__bytes_read.sum": ("byte", 1e-9)}


def candidates():
    """Every metric name the script may ask for."""
    names = [n for _, c in FIGURES for n in c]
    return names + [STALL_FMT % s for s in STALLS]


def known_metrics(ncu, chip):
    """The names ncu --query-metrics lists for chip (base names), or None
    when the query fails (then every candidate is asked for)."""
    p = subprocess.run([ncu, "--query-metrics", "--chip", chip],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None
    return set(w.split()[0] for w in p.stdout.splitlines() if w.strip())


def choose(known):
    """The metrics to request: per figure the first candidate ncu knows,
    and the stall reasons it knows."""
    def ok(name):
        return known is None or name.split(".")[0] in known
    out = []
    for _, cands in FIGURES:
        for c in cands:
            if ok(c):
                out.append(c)
                break
    out += [STALL_FMT % s for s in STALLS if ok(STALL_FMT % s)]
    return out


def launches(text):
    """The launches of an `ncu --csv --page raw` log in order: a list of
    (id, kernel name, {metric: (unit, value)})."""
    start = text.find('"ID"')   # ncu writes ==PROF== lines before the table
    if start < 0:
        return []
    rows = list(csv.reader(io.StringIO(text[start:])))
    if len(rows) < 2:
        return []
    head, units = rows[0], rows[1]
    col = {h: i for i, h in enumerate(head)}
    out = []
    for r in rows[2:]:
        if len(r) != len(head):
            continue
        name = r[col.get("Kernel Name", 0)]
        vals = {}
        for h, i in col.items():
            if "__" in h:
                vals[h] = (units[i] if i < len(units) else "", r[i])
        out.append((r[col.get("ID", 0)], name, vals))
    return out


def is_ours(name):
    return name == OURS or name.startswith(OURS + "(")


def pick(ls):
    """(ours, [cuBLAS's]) among the launches: ours the second launch of
    tsm_kernel (the first on K rows), cuBLAS's the other kernels launched
    right after ours' following launches."""
    ours_at = [i for i, l in enumerate(ls) if is_ours(l[1])]
    if len(ours_at) < 2:
        return None, []
    ours = ls[ours_at[1]]
    blas, i = [], ours_at[1] + 1
    while i < len(ls) and is_ours(ls[i][1]):   # the rest of ours' runs
        i += 1
    while i < len(ls) and not is_ours(ls[i][1]):
        blas.append(ls[i])
        i += 1
    return ours, blas


def number(unit_value, metric):
    """A metric's value as a float in the unit the table shows."""
    unit, v = unit_value
    try:
        x = float(v.replace(",", ""))
    except ValueError:
        return None
    want = SCALE.get(metric)
    if want:
        base = {"nsecond": 1.0, "usecond": 1e3, "msecond": 1e6,
                "hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9,
                "byte": 1.0, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9}
        x *= base.get(unit.lower(), 1.0) * want[1]
    return x


def table(ours, blas, metrics):
    """The lines of the side-by-side table."""
    cols = [("ours", ours)] + [("cuBLAS %d" % (j + 1) if len(blas) > 1
                                else "cuBLAS", b) for j, b in enumerate(blas)]
    lines = ["%-34s" % "" + "".join("%16s" % c for c, _ in cols)]
    for label, cands in FIGURES:
        m = next((c for c in cands if c in metrics), None)
        if not m:
            continue
        cells = []
        for _, l in cols:
            x = number(l[2][m], m) if m in l[2] else None
            cells.append("%16s" % ("-" if x is None else "%.4g" % x))
        lines.append("%-34s" % label + "".join(cells))
    lines.append("warp stalls (cycles per issued instruction):")
    for s in STALLS:
        m = STALL_FMT % s
        if m not in metrics:
            continue
        cells = []
        for _, l in cols:
            x = number(l[2][m], m) if m in l[2] else None
            cells.append("%16s" % ("-" if x is None else "%.3f" % x))
        lines.append("  %-32s" % s + "".join(cells))
    lines.append("kernels: ours %s; cuBLAS %s" % (
        ours[1][:60], ", ".join(b[1][:60] for b in blas) or "none found"))
    return lines


def run_pick(a):
    """Step 1: the token tsm_roofline.lua would use, from tsm_pick.lua."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [a.odebench, os.path.join(HERE, "tsm_pick.lua"), "--ui", "none",
               "--out", os.path.join(tmp, "run"), "--set", "op=" + a.op,
               "--set", "dtype=" + a.dtype, "--set", "M=%d" % a.M,
               "--set", "N=%d" % a.N, "--set", "space=" + a.space]
        p = subprocess.run(cmd, capture_output=True, text=True)
    for line in p.stdout.splitlines():
        m = re.match(r"tsm_pick .*token=(\S+)", line)
        if m:
            print(line)
            return m.group(1)
    sys.stderr.write("ncu_tsm: no pick from %s:\n%s%s" % (
        " ".join(cmd), p.stdout[-2000:], p.stderr[-2000:]))
    return None


def run_ncu(a, token, metrics):
    """Step 2: test_tsm --roofline on the token under ncu; the log."""
    env = dict(os.environ, ODB_TSM_TOKENS=token,
               ODB_TSM_WIDTHS="%dx%d" % (a.M, a.N),
               ODB_TSM_CASES="%s:%s" % (a.op, a.dtype), ODB_TSM_REPS="1",
               ODB_TSM_PRECOMPILE="0", ODEBENCH_TSM_NOFLUSH="1")
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "ncu.csv")
        cmd = [a.ncu, "--csv", "--page", "raw", "--log-file", log,
               "--launch-count", str(a.launches), "--metrics",
               ",".join(metrics), a.test_tsm, "--roofline"]
        print("running: " + " ".join(
            ["%s=%s" % (k, env[k]) for k in ("ODB_TSM_TOKENS", "ODB_TSM_WIDTHS",
                                             "ODB_TSM_CASES", "ODB_TSM_REPS",
                                             "ODB_TSM_PRECOMPILE",
                                             "ODEBENCH_TSM_NOFLUSH")] + cmd))
        sys.stdout.flush()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        text = open(log).read() if os.path.exists(log) else ""
    if a.save:
        with open(a.save, "w") as f:
            f.write(text)
    if not text:
        sys.stderr.write("ncu_tsm: ncu wrote no log:\n%s%s" % (
            p.stdout[-2000:], p.stderr[-2000:]))
    return text


def report(text, metrics=None):
    """Prints the table of a log; 0 when ours and cuBLAS were found."""
    ls = launches(text)
    ours, blas = pick(ls)
    if not ours:
        print("ncu_tsm: %d launches in the log, fewer than two of %s" % (
            len(ls), OURS))
        return 1
    if metrics is None:
        metrics = [m for m in candidates() if m in ours[2]]
    for line in table(ours, blas, metrics):
        print(line)
    return 0 if blas else 1


SELF_TEST_LOG = '''==PROF== Connected to process 1
"ID","Kernel Name","gpu__time_duration.sum","smsp__cycles_elapsed.avg.per_second","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"
"","","usecond","ghz",""
"0","tsm_kernel","12.5","1.98","0.5"
"1","tsm_kernel","6,100.0","1.50","0.4"
"2","tsm_kernel","6,050.0","1.40","0.4"
"3","tsm_kernel","6,000.0","1.40","0.4"
"4","tsm_kernel","6,000.0","1.40","0.4"
"5","sm90_xmma_gemm_z_splitK","5,900.0","1.45","0.2"
"6","splitKreduce_kernel","10.0","1.45","0.1"
"7","tsm_kernel","6,000.0","1.40","0.4"
'''


def self_test():
    """The parsing on SELF_TEST_LOG: ours the second launch, cuBLAS the
    two kernels after the next launch of ours, units converted."""
    ls = launches(SELF_TEST_LOG)
    ours, blas = pick(ls)
    ok = (len(ls) == 8 and ours[0] == "1" and
          [b[0] for b in blas] == ["5", "6"] and
          abs(number(ours[2]["gpu__time_duration.sum"],
                     "gpu__time_duration.sum") - 6100.0) < 1e-9 and
          abs(number(ours[2]["smsp__cycles_elapsed.avg.per_second"],
                     "smsp__cycles_elapsed.avg.per_second") - 1500.0) < 1e-6)
    print("%s 1 - the second tsm_kernel launch and the two cuBLAS kernels "
          "after the next one, in microseconds and MHz" % (
              "ok" if ok else "not ok"))
    lines = table(ours, blas, candidates())
    ok2 = (any(l.startswith("duration (us)") and "6100" in l and "5900" in l
               for l in lines) and
           any(l.strip().startswith("barrier") and "0.400" in l
               for l in lines))
    print("%s 2 - the table has the durations and the barrier stall of both"
          % ("ok" if ok2 else "not ok"))
    none = pick(launches(SELF_TEST_LOG.split('"2"')[0]))
    ok3 = none[0] is not None and none[1] == []
    print("%s 3 - a log that ends before cuBLAS gives ours and no cuBLAS"
          % ("ok" if ok3 else "not ok"))
    print("1..3")
    return 0 if ok and ok2 and ok3 else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--odebench", default="odebench")
    ap.add_argument("--test-tsm", default="test_tsm",
                    help="the test_tsm binary (a packed build: .device/bin)")
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--chip", default="gh100",
                    help="for ncu --query-metrics (gh100: H100 and H200)")
    ap.add_argument("--op", default="tsmttsm", choices=["tsmttsm", "tsmm"])
    ap.add_argument("--dtype", default="z", choices=["d", "z"])
    ap.add_argument("--M", type=int, default=64)
    ap.add_argument("--N", type=int, default=64)
    ap.add_argument("--space", default="quick", choices=["quick", "full"])
    ap.add_argument("--token", help="profile this configuration (no pick)")
    ap.add_argument("--launches", type=int, default=12,
                    help="kernels ncu profiles from the start (default 12)")
    ap.add_argument("--save", metavar="CSV", help="keep ncu's log")
    ap.add_argument("--parse", metavar="CSV")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if a.parse:
        return report(open(a.parse).read())
    if not (1 <= a.M <= 64 and 1 <= a.N <= 64):
        ap.error("--M and --N must be in 1..64, got %d and %d" % (a.M, a.N))
    if a.launches < 8:
        ap.error("--launches must be at least 8 (ours 4 times, then cuBLAS), "
                 "got %d" % a.launches)
    token = a.token or run_pick(a)
    if not token:
        return 1
    metrics = choose(known_metrics(a.ncu, a.chip))
    text = run_ncu(a, token, metrics)
    return report(text, metrics) if text else 1


if __name__ == "__main__":
    sys.exit(main())
