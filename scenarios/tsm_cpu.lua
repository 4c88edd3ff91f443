-- tsm_cpu.lua: the tall & skinny products on the CPU (the CPU versions of
-- the kernels of Ernst, Hager, Thies and Wellein, "Performance engineering
-- for real and complex tall & skinny matrix multiplication kernels on
-- GPUs"; core/dense/odb_tsm_cpu.c): C = A^T B ("tsmttsm") and
-- B = A C ("tsmm"), A: K x M, B: K x N, row-major, real (d) and complex (z).
--
-- Per shape: GFLOP/s of the threaded version (ob.kernel with backend
-- "cpu", threads: one per core), the percentage of its roofline min(I * b,
-- P), and the speed-up over the plain loop (one thread, the rows streamed
-- in order: C += A[k]^T B[k], B[k] = A[k] C), both run in turn on the same
-- matrices, reps rounds, medians (the speed-up is the ratio of the
-- medians, printed with its range from the quartiles). The memory roof is
-- the row's floor (floor_pct: A and the second input read once at the read
-- bandwidth of the kernel's thread count, measured at the start of this
-- run, the output written once at the write bandwidth derived from the
-- copy: I * b_read for A^T B, whose C is tiny); P is the FP64 multiply-add
-- peak of one core times the threads. A '*' marks a floor passed (footnote).
-- Each product is checked against the reference triple loop first.
--
--   odebench scenarios/tsm_cpu.lua
--   odebench scenarios/tsm_cpu.lua --set widths=1,8,32 --set dtypes=d
--   odebench scenarios/tsm_cpu.lua --set widths=5-9 --set ops=tsmm
local ob = require "odebench"
local report = require "odebench.report"

local widths = ob.param("widths", "1,2,4,8,16,32,64")   -- or 1-64
local dtypes = ob.param("dtypes", "d,z")
local ops    = ob.param("ops", "tsmttsm,tsmm")
local mib    = ob.param("mib", 256)      -- MiB of A and B (or B) per shape
local reps   = ob.param("reps", 5)
local threads = ob.param("threads", 0)   -- 0: one per core
-- the CPU versions take any width; checked before anything is measured
local square = require("odebench.ranges").integers("widths", widths, 1, 4096)

local info = ob.info { bandwidth = "now" }   -- the floor measured in this run
local bw = info.bandwidth
local cores = info.cpu.cores
local peak = bw.peak_gflops_1t * cores
print(string.format("%s, %d cores: read %.1f GB/s, copy %.1f GB/s (%d threads), "
                    .. "FP64 peak %.1f GFLOP/s (%.1f a core)", info.cpu.model,
                    cores, bw.read_all, bw.copy_all, bw.threads_all, peak,
                    bw.peak_gflops_1t))

local function split(s)
  local t = {}
  for x in tostring(s):gmatch("[^,]+") do t[#t + 1] = x end
  return t
end

print(string.format("%-7s %s %3s %3s %10s %3s %9s %6s %9s %8s %s", "op", "t",
                    "M", "N", "K", "thr", "GFLOP/s", "roof", "plain", "speedup",
                    "q1/q3"))
local list, notes = {}, {}
for _, w in ipairs(square) do
  for _, op in ipairs(split(ops)) do
    for _, dt in ipairs(split(dtypes)) do
      list[#list + 1] = { op, dt, w }
    end
  end
end
ob.progress(0, #list, "shapes")
for i, c in ipairs(list) do
  local op, dt, w = c[1], c[2], c[3]
  local bytes_row = (dt == "z" and 16 or 8) * (op == "tsmttsm" and 2 * w or w + w)
  local K = math.max(1, math.floor(mib * 2^20 / bytes_row))
  local k <close> = ob.kernel(op, { M = w, N = w, K = K, dtype = dt,
                                    backend = "cpu", threads = threads })
  local kinfo = k:info()
  local err = k:check()
  assert(err <= 1e-12, string.format("%s %s %d: %.2e from the reference",
                                     op, dt, w, err))
  -- q: the speed-up over the plain loop, the ratio of the medians q[2]
  -- with the range q[1]..q[3] from the quartiles (plain q1 / ours q3 to
  -- plain q3 / ours q1), which holds it
  local _, g, _, gp, q, row = k:compare(reps)
  local mem_s = (row.floor_pct or 0) / 100 * row.median
  local roof_s = math.max(mem_s, kinfo.flops / (bw.peak_gflops_1t
                                                * kinfo.threads * 1e9))
  local roof = math.min(kinfo.flops / roof_s * 1e-9, peak)   -- GFLOP/s
  local mark = (row.floor_note and mem_s >= roof_s) and "*" or " "
  notes[#notes + 1] = mem_s >= roof_s and row or nil
  local tag = string.format("%s_%s_%d", op, dt, w)
  ob.metric(tag .. "_gflops", g, "GFLOP/s")
  ob.metric(tag .. "_roofline_pct", 100 * g / roof, "%")
  ob.metric(tag .. "_plain_gflops", gp, "GFLOP/s")
  ob.metric(tag .. "_speedup", q[2], "x")
  print(string.format("%-7s %s %3d %3d %10d %3d %9.2f %5.1f%%%s%9.2f %7.2fx "
                      .. "%.2f-%.2f", op, dt, w, w, K, kinfo.threads, g,
                      100 * g / roof, mark, gp, q[2], q[1], q[3]))
  ob.progress(i, #list, "shapes")
end
for _, l in ipairs(report.floor_notes(notes)) do print(l) end
