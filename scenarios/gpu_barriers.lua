-- gpu_barriers.lua: the multi-block barriers of M. Korch and T. Werner,
-- "An in-depth introduction of multi-workgroup tiling for improving the
-- locality of explicit one-step methods for ODE systems with limited access
-- distance on GPUs" (section 4.3, Figure 6), on our GPU: throughput
-- (barriers per second) of n concurrent
-- barriers of m blocks each, every block passing its barrier `iters` times,
-- for barrier A (one atomic counter per barrier), B (a master block
-- gathering entered flags and setting exit flags) and C (cooperative
-- groups' grid sync, which spans the whole grid: n = 1 only). The same
-- barrier code runs in gpu_multiblock's tiles. Grids the device cannot
-- hold at once are skipped (the benchmark refuses them before launching).
--
--   odebench scenarios/gpu_barriers.lua
--   odebench scenarios/gpu_barriers.lua --set concurrent=1,10 --set threads=256
-- Rows go to <outdir>/gpu_barriers.csv and to results (ob.metric).
local ob = require "odebench"

local conc    = ob.param("concurrent", "1,10")
local threads = ob.param("threads", 256)
local iters   = ob.param("iters", 1000)
local kinds   = ob.param("kinds", "A,B,C")

local function split(s)
  local t = {}
  for w in tostring(s):gmatch("[^,%s]+") do t[#t + 1] = w end
  return t
end

local info = ob.info()
if not info.gpu then
  io.write("gpu_barriers: no GPU here (the \"cuda\" backend is not "
    .. "registered); nothing to measure.\n")
  return
end
local sms = info.gpu.sm_count
io.write(string.format("%s, %d SMs; %d threads per block, %d barriers per "
  .. "block and launch\n", info.gpu.name, sms, threads, iters))

local csv = io.open(ob.outdir() .. "/gpu_barriers.csv", "w")
csv:write("kind,concurrent,wg_per_barrier,threads,us_per_barrier,barriers_per_s\n")
io.write(string.format("%-4s %10s %8s %14s %16s\n", "kind", "concurrent",
  "blocks", "us/barrier", "barriers/s"))
local sizes = { 1, 2, 4, 8, 16, 32, 64, 96, 132, 160, 200, 264, 300, 396,
                528, 660, 792, 1056 }
for _, n in ipairs(split(conc)) do
  n = tonumber(n)
  for _, k in ipairs(split(kinds)) do
    if not (k == "C" and n ~= 1) then
      for _, m in ipairs(sizes) do
        local ok, r = pcall(ob.gpu_barrier, { kind = k, wg_per_barrier = m,
          concurrent = n, threads = threads, iters = iters })
        if ok then
          io.write(string.format("%-4s %10d %8d %14.3f %16.4g\n", k, n, m,
            r.us_per_barrier, r.per_second))
          csv:write(string.format("%s,%d,%d,%d,%.6g,%.6g\n", k, n, m, threads,
            r.us_per_barrier, r.per_second))
          ob.metric(string.format("barrier_%s_n%d_m%d_per_s", k, n, m),
                    r.per_second)
        elseif tostring(r):find("co%-resident") then
          break   -- larger groups do not fit either
        else
          io.write(string.format("%-4s %10d %8d failed: %s\n", k, n, m,
            tostring(r)))
        end
      end
    end
  end
end
csv:close()
io.write("us/barrier: one launch's time over its barriers; barriers/s: "
  .. "all concurrent barriers completed per second\n")
