-- bruss2d_cpu.lua: how fast each explicit RK method and CPU variant runs
-- BRUSS2D, from cache-resident sizes to several times the last-level cache,
-- measured against this machine's memory bandwidth.
--
-- For each grid size, method and variant it takes a fixed number of fixed
-- steps (after one warm-up step) and reports the time per step, the
-- effective bandwidth (the bytes the variant counts it moves over the
-- time), the row's floor% (floor_pct: the fewest bytes any variant must
-- move, y read and ynew written once a step, at the one-thread read and
-- write bandwidth `odebench info` measured; both variants run on one core;
-- a '*' marks a row above its floor, with a footnote: in cache when y and
-- ynew fit the last-level cache), and how much faster the fused and pipe
-- variants are than the plain loop.
-- `odebench plot RUN_DIR` draws GB/s and % of the floor against n per
-- method and variant (gbs_vs_n, floor_pct_vs_n).
--
--   odebench scenarios/bruss2d_cpu.lua                        -- all sizes
--   odebench scenarios/bruss2d_cpu.lua --set max_mult=1       -- up to 1x LLC
--   odebench scenarios/bruss2d_cpu.lua --set methods=dopri5 --set steps=10
local ob = require "odebench"
local report = require "odebench.report"

local steps    = ob.param("steps", 5)        -- measured steps per run
local max_mult = ob.param("max_mult", 4.0)    -- largest working set / LLC
local methods  = ob.param("methods", "heun_euler,bs3,rk4,dopri5,verner65")
local variants = ob.param("variants", "plain,fused,pipe")

local function split(s)
  local t = {}
  for w in s:gmatch("[^,%s]+") do t[#t + 1] = w end
  return t
end

local info = ob.info { bandwidth = "now" }   -- the floor measured in this run
local l2, llc = 0, 0
for _, c in ipairs(info.caches) do
  if c.level == 2 then l2 = c.size end
  if c.size * c.count > llc then llc = c.size * c.count end
end
if l2 == 0 then l2 = 1 << 20 end
if llc == 0 then llc = 32 << 20 end
local bw = info.bandwidth
io.write(string.format("machine: %s, L2 %.1f MiB, LLC %.0f MiB; one thread "
  .. "reads %.1f GB/s, copies %.1f GB/s\n", info.cpu.model, l2 / 2^20,
  llc / 2^20, bw.read_1t, bw.copy_1t))

-- Grid sizes whose DOPRI5 working set (9 vectors of n = 2N^2 doubles) goes
-- from half the L2 cache up to max_mult times the last-level cache.
local sizes, ws = {}, l2 / 2
while true do
  local N = math.max(8, math.floor(math.sqrt(ws / (9 * 8 * 2))))
  sizes[#sizes + 1] = N
  if ws >= max_mult * llc then break end
  ws = math.min(ws * 4, max_mult * llc)
end

ob.plot { name = "gbs_vs_n", x = "n", y = "gbs", group = { "method", "variant" },
          logx = true, title = "BRUSS2D on one core: effective bandwidth against n" }
ob.plot { name = "floor_pct_vs_n", x = "n", y = "floor_pct", group = { "method", "variant" },
          logx = true, title = "BRUSS2D on one core: % of the bandwidth floor against n" }

local total, done, rows = #sizes * #split(methods) * #split(variants), 0, {}
ob.progress(0, total)
io.write(string.format("%6s %10s %8s  %-10s %-6s %10s %6s %8s %7s %8s\n", "N", "n",
  "MiB/step", "method", "var", "s/step", "+-", "GB/s", "floor%", "speedup"))
for _, N in ipairs(sizes) do
  local p = ob.problem("bruss2d", { N = N })
  -- a step well inside every method's stability region: |h lambda| <= 1
  local c = 2e-3 * (N - 1) ^ 2
  local h = 1 / (8 * c + 10)
  for _, m in ipairs(split(methods)) do
    local plain_r
    for _, v in ipairs(split(variants)) do
      local s <close> = ob.solver { problem = p, method = m, variant = v, h = h }
      s:step(h)                                        -- warm-up
      local r = s:integrate { t1 = s.t + steps * h, label = "N=" .. N }
      local tps = r.time_per_step
      if v == "plain" then plain_r = r end
      -- the speed-up over plain is a ratio of medians; where the two are
      -- within each other's spread ((q3 - q1) / median) it says "tied"
      local speedup = ""
      if v ~= "plain" and plain_r then
        speedup = report.tied(plain_r.time_per_step, plain_r.spread, tps, r.spread)
                  and "tied" or string.format("%.2fx", plain_r.time_per_step / tps)
      end
      rows[#rows + 1] = r
      io.write(string.format("%6d %10d %8.1f  %-10s %-6s %10.3e %5.1f%% %8.2f %7s %8s\n",
        N, p.n, r.bytes / r.steps / 2^20, m, v, tps, 100 * r.spread,
        r.gbs, report.floor(r), speedup))
      done = done + 1
      ob.progress(done, total, string.format("N=%d %s/%s", N, m, v))
    end
  end
end
for _, l in ipairs(report.floor_notes(rows)) do print(l) end
