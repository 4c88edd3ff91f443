-- tsm_roofline.lua: tall & skinny products on the GPU (D. Ernst, G. Hager,
-- J. Thies and G. Wellein, "Performance engineering for real and complex
-- tall & skinny matrix multiplication kernels on GPUs", 2020): C = A^T B
-- ("tsmttsm") and B = A C ("tsmm"),
-- A: K x M, B: K x N, row-major, real (d) and complex (z) double.
--
-- For each shape the generated kernel is tuned over the quick space
-- (ob.kernel; the tuning database keeps the result, so a second run starts
-- at once) and compared with cuBLAS (row-major data read as column-major
-- transposes) on the same matrices. Reported per shape: GFLOP/s of both,
-- the percentage of the roofline min(I * b, P): its memory part is the
-- row's floor (floor_pct: A and the second input read once at the read
-- bandwidth measured in this run, the output written once at the write
-- bandwidth derived from the copy; for A^T B, whose C is tiny, that is
-- I * b_read with I = flops / bytes), P the FP64 tensor-core peak measured
-- in this run (ob.info().gpu.fp64_tensor_gflops: DMMA chains at the clock
-- the card holds during those few milliseconds, gpu/rt/odb_fp64_peak.cu;
-- about 66.0 TFLOP/s on an H200 against the 67 of the data sheet; --set
-- fp64_peak=GFLOP/s gives another), and the speedup over cuBLAS (the
-- tuned kernel and cuBLAS run in turn, reps rounds, medians; a shape is
-- slower when cuBLAS wins more than three rounds in four, tied when it is
-- slower by the medians only).
-- The paper's Figures 3, 4, 15 and 23.
-- The configuration says which units multiply: the paper's FMA kernels
-- ("tm=.. tn=.." / "tpr=..") or the FP64 tensor cores ("mma=m8n8k4 ...");
-- "gauss=3m" marks complex kernels that multiply with Gauss's three real
-- products (6 MNK flops on the tensor cores; GFLOP/s here always count the
-- 8 MNK of the complex product, so such a kernel's percentage of the
-- compute roof can pass what the tensor cores execute).
-- The last lines count the shapes that meet the targets: at least
-- 90% of the roofline for M = N <= 32, 75% up to 64, never slower than
-- cuBLAS.
-- The card's conditions (ob.gpu_power through NVML, where the driver has
-- it): power limit, power draw, SM clock and what holds it back, at the
-- start and at the end; each row's SM clock while it and cuBLAS ran in
-- turn ("sm" column: the mean over samples every 2 ms, with the share of
-- samples at the power cap or a slowdown); and the clocks over the whole
-- run. At the 700 W cap of an H100 or H200 SXM a compute-bound FP64
-- kernel runs between 1.1 and 1.98 GHz, while the peak's short chains run
-- at the full clock (the clock each peak ran at is measured with it,
-- ob.info().gpu.fp64_tensor_mhz). So each row also gives its % of the roof
-- at the clock it held ("at sm": the peak times the row's mean SM clock
-- over the peak's, the tensor cores' rate a cycle being fixed), for ours
-- and for cuBLAS: the roof under the same power and clock conditions,
-- which the targets take where the clocks are known. cuBLAS above 100%
-- there would say that the scaled roof is wrong.
--
--   odebench scenarios/tsm_roofline.lua
--   odebench scenarios/tsm_roofline.lua --set widths=1,8,32 --set dtypes=d
--   odebench scenarios/tsm_roofline.lua --set widths=1-64 --set pairs=
--     (every M = N, the seed's figures; about 25 minutes with tuning)
--   odebench scenarios/tsm_roofline.lua --set space=full   (exhaustive)
local ob = require "odebench"
local report = require "odebench.report"

local widths  = ob.param("widths", "1,2,4,8,16,32,64,3,12,24,48") -- or 1-64
local pairs_  = ob.param("pairs", "4x16,16x4,32x8")       -- M x N, M ~= N
local dtypes  = ob.param("dtypes", "d,z")
local ops     = ob.param("ops", "tsmttsm,tsmm")
local rows    = ob.param("rows", 2^29)                   -- K = rows / M
local space   = ob.param("space", "quick")
local peak    = ob.param("fp64_peak", 0.0,                -- GFLOP/s
  "FP64 compute roof in GFLOP/s (0: the tensor-core peak measured in this run)")
local reps    = ob.param("reps", 9)

-- M = N widths: a list with ranges, checked before anything runs
local square = require("odebench.ranges").integers("widths", widths, 1, 64)

local gpu = ob.info().gpu
if not gpu then
  print("tsm_roofline: no GPU in this run; nothing to measure (scenarios/"
        .. "tsm_cpu.lua measures the CPU versions)")
  return
end
-- the compute roof: the given one, else the DMMA peak measured now, else
-- (a device without FP64 tensor cores) the DFMA peak
local peak_from, peak_mhz = "given", nil
if not (peak > 0) then
  peak = gpu.fp64_tensor_gflops or gpu.fp64_gflops or 0
  peak_mhz = gpu.fp64_tensor_gflops and gpu.fp64_tensor_mhz or gpu.fp64_mhz
  peak_from = gpu.fp64_tensor_gflops and "tensor cores (DMMA), measured now"
              or "FMA units (DFMA), measured now"
  if peak_mhz then
    peak_from = string.format("%s at %.0f MHz", peak_from, peak_mhz)
  end
end
if not (peak > 0) then
  error("tsm_roofline: no FP64 peak measured on " .. gpu.name
        .. "; give one with --set fp64_peak=GFLOP/s", 0)
end
print(string.format("%s: read bandwidth %.1f GB/s, copy %.1f GB/s, FP64 peak "
                    .. "%.0f GFLOP/s (%s)", gpu.name, gpu.read_gbs or 0,
                    gpu.copy_gbs or 0, peak, peak_from))
ob.metric("fp64_peak_gflops", peak, "GFLOP/s")
if peak_mhz then ob.metric("fp64_peak_mhz", peak_mhz, "MHz") end

-- One line of the card's power and clock now (NVML), or why there is none.
local function conditions(when)
  local p, why = ob.gpu_power()
  if not p then
    print(string.format("card %s: power and clocks unknown (%s)", when, why))
    return
  end
  print(string.format("card %s: power limit %.0f W, draw %.0f W, SM clock "
                      .. "%.0f of %.0f MHz (held back by: %s)", when,
                      p.limit_w, p.power_w, p.sm_mhz, p.sm_max_mhz,
                      p.reasons))
  ob.metric("card_" .. when .. "_power_w", p.power_w, "W")
  ob.metric("card_" .. when .. "_sm_mhz", p.sm_mhz, "MHz")
end
conditions("start")
-- the clocks over the whole run, sampled every 10 ms (nil without NVML)
local run_watch <close> = ob.gpu_watch(0.01)

local function split(s)
  local t = {}
  for x in tostring(s):gmatch("[^,]+") do t[#t + 1] = x end
  return t
end

local shapes = {}
for _, w in ipairs(square) do
  shapes[#shapes + 1] = { w, w }
end
for _, p in ipairs(split(pairs_)) do
  local m, n = p:match("(%d+)x(%d+)")
  shapes[#shapes + 1] = { tonumber(m), tonumber(n) }
end

print(string.format("%-7s %s %3s %3s %10s %9s %6s %6s %9s %6s %6s %6s  %s",
                    "op", "t", "M", "N", "K", "GFLOP/s", "roof", "at sm",
                    "cuBLAS", "roof", "at sm", "speedup", "configuration"))
-- x as a percentage of roof r, or a dash where r is unknown
local function pct(x, r)
  return r and string.format("%5.1f%%", 100 * x / r) or "     -"
end
local n, i = #shapes * #split(ops) * #split(dtypes), 0
local met, missed, slower, ties, notes = 0, {}, {}, {}, {}
ob.progress(0, n, "shapes")
for _, s in ipairs(shapes) do
  for _, op in ipairs(split(ops)) do
    for _, dt in ipairs(split(dtypes)) do
      local M, N = s[1], s[2]
      local K = math.floor(rows / math.max(M, N))
      local k = ob.kernel(op, { M = M, N = N, K = K, dtype = dt,
                                space = space })
      local info = k:info()
      local err = k:check()
      assert(err <= 1e-12, string.format("%s %s M=%d N=%d: %.2e from cuBLAS",
                                         op, dt, M, N, err))
      -- both in turn, so that both see the same clocks (at the power cap
      -- a compute-bound FP64 kernel's clock moves by 10-15%)
      local w = ob.gpu_watch(0.002)
      local _, g, _, gb, q, row = k:compare(reps)
      local clk = w and w:stop()
      local sm = "-"
      if clk and clk.samples > 0 then
        sm = string.format("%.0f MHz, %.0f%% capped", clk.sm_mean,
                           100 * clk.capped / clk.samples)
      end
      -- the roof as a time: the row's memory floor or the compute floor,
      -- at the peak's clock and (roof_sm) at the clock this row held
      local mem_s = (row.floor_pct or 0) / 100 * row.median
      local function roof_time(p)                -- seconds at compute peak p
        return math.max(mem_s, info.flops / (p * 1e9))
      end
      local roof_s = roof_time(peak)
      local roof = info.flops / roof_s * 1e-9       -- GFLOP/s
      local roof_sm
      if peak_mhz and clk and clk.samples > 0 then
        roof_sm = info.flops / roof_time(peak * clk.sm_mean / peak_mhz)
                  * 1e-9
      end
      local tag = string.format("%s_%s_%dx%d", op, dt, M, N)
      ob.metric(tag .. "_gflops", g, "GFLOP/s")
      ob.metric(tag .. "_roofline_pct", 100 * g / roof, "%")
      if roof_sm then
        ob.metric(tag .. "_roofline_sm_pct", 100 * g / roof_sm, "%")
        ob.metric(tag .. "_cublas_roofline_sm_pct", 100 * gb / roof_sm, "%")
      end
      ob.metric(tag .. "_cublas_gflops", gb, "GFLOP/s")
      ob.metric(tag .. "_speedup", g / gb, "x")
      if clk and clk.samples > 0 then
        ob.metric(tag .. "_sm_mhz", clk.sm_mean, "MHz")
      end
      -- the targets take the roof at the row's clock where it is known
      local target_roof = roof_sm or roof
      if M == N then
        local want = M <= 32 and 90 or 75
        if 100 * g / target_roof >= want then met = met + 1
        else missed[#missed + 1] = string.format("%s %s %d (%.0f%% < %d%%)",
                                                 op, dt, M,
                                                 100 * g / target_roof,
                                                 want) end
      end
      -- slower: cuBLAS won more than three rounds in four (the upper
      -- quartile of the rounds' speed-ups below 1); a tie: slower by the
      -- medians, but within the rounds' spread
      if q[3] < 1 then
        slower[#slower + 1] = string.format("%s %s %dx%d (%.3fx)", op, dt,
                                            M, N, g / gb)
      elseif g < gb then
        ties[#ties + 1] = string.format("%s %s %dx%d (%.3fx, rounds %.3f-%.3f)",
                                        op, dt, M, N, g / gb, q[1], q[3])
      end
      local mark = (row.floor_note and mem_s >= roof_s) and "*" or " "
      notes[#notes + 1] = mem_s >= roof_s and row or nil
      print(string.format("%-7s %s %3d %3d %10d %9.1f %5.1f%%%s%s %9.1f "
                          .. "%5.1f%% %s %6.2f  %s (%d evals, %d cached%s; "
                          .. "sm %s)", op,
                          dt, M, N, K, g, 100 * g / roof, mark,
                          pct(g, roof_sm), gb, 100 * gb / roof,
                          pct(gb, roof_sm), g / gb, info.config, info.evals,
                          info.cached,
                          (info.raced or 0) > 0 and string.format(
                            ", %d raced%s", info.raced, info.race_changed
                            and ", not the tuner's fastest" or "") or "",
                          sm))
      k:close()
      i = i + 1
      ob.progress(i, n, "shapes")
    end
  end
end
print(string.format("targets: %d square shapes at or above their roofline "
                    .. "target%s, %d below%s", met,
                    peak_mhz and " (the roof at each row's clock)" or "",
                    #missed,
                    #missed > 0 and (": " .. table.concat(missed, ", ")) or ""))
print(string.format("slower than cuBLAS: %d%s", #slower,
                    #slower > 0 and (": " .. table.concat(slower, ", ")) or ""))
print(string.format("tied with cuBLAS (slower by the medians, within the "
                    .. "rounds' quartiles): %d%s", #ties,
                    #ties > 0 and (": " .. table.concat(ties, ", ")) or ""))
for _, l in ipairs(report.floor_notes(notes)) do print(l) end
conditions("end")
local all = run_watch and run_watch:stop()
if all and all.samples > 0 then
  print(string.format("card over the run: SM clock %.0f-%.0f MHz (mean %.0f, "
                      .. "maximum %.0f), power up to %.0f W of %.0f W, %d of "
                      .. "%d samples at the power cap or a slowdown",
                      all.sm_min, all.sm_max, all.sm_mean, all.sm_max_mhz,
                      all.power_max, all.limit_w, all.capped, all.samples))
end
