-- gpu_stream2d_tune.lua: the tuner chooses gpu_stream2d's tiling for
-- BRUSS2D on this card, and says how far the variant's own (automatic)
-- plan is from it.
--
-- gpu_stream2d (docs/gpu.md, "gpu_stream2d: strips streamed through every
-- stage") picks its threads, rows, lag and carry from the stages, the
-- grid's width and a probe build's occupancy. For each method and grid
-- size N, ob.tune searches
--   threads  128, 256          a block's threads (the strip's width)
--   lag      1, 2              rows between consecutive stages
--   carry    1, 3 (lag 1), 0, 3 (lag 2)  centre rows kept in registers
--   cluster  1, 2              blocks that hand each other edge columns
--   rows     0 (automatic), 32, 64, 128  rows a block streams
--   wg       0 (the kernel's own)  the kernel's minimum resident blocks an
--            SM (__launch_bounds__): more blocks, fewer registers a thread
-- (lists: --set threads=, carry=, cluster=, rows=, wg=; what the variant
-- refuses, such as lag 1 without a centre row kept or a cluster at lag 2,
-- is skipped with its reason). Each configuration takes `steps` fixed
-- steps of h = 1/(8c + 10) with one synchronisation a run (sync = "call"),
-- timed by s:integrate (the median of its repeated runs), after a warm-up
-- run that also compiles the kernel. Its final state is compared with the
-- automatic plan's; a configuration that differs by more than 1e-12
-- (relative, largest component) is not timed. Evaluations go to the tuning
-- database (cache = "auto": keyed by the machine, the odebench version and
-- build, and the label with the method, N and steps), so a second run on
-- the same card answers from it.
--
--   odebench scenarios/gpu_stream2d_tune.lua
--   odebench scenarios/gpu_stream2d_tune.lua --set N=1024 --set methods=dopri5
--
-- Rows: results (the timed integrations, and kind "tune", one per
-- evaluation) and <outdir>/gpu_stream2d_tune.csv (one per method and N:
-- the automatic plan's and the tuner's time a step and configuration).
-- Without a GPU it says so and stops.
local ob = require "odebench"
local ranges = require "odebench.ranges"

local Ns       = ob.param("N", "1024,2896")
local methods  = ob.param("methods", "bs3,dopri5,verner65")
local steps    = ob.param("steps", 20)
local threads  = ob.param("threads", "128,256")
local carry1   = ob.param("carry", "1,3")      -- lag 1; lag 2 takes 0 and 3
local clusters = ob.param("cluster", "1,2")
local rowsl    = ob.param("rows", "0,32,64,128")
local wgl      = ob.param("wg", "0")
local cache    = ob.param("cache", "auto")
local strategy = ob.param("strategy", "exhaustive")

-- A parameter's list of whole numbers (odebench.ranges: "1,8,32" or
-- "1-4"), at least one.
local function ints(name, s, lo, hi)
  local t = ranges.integers(name, s, lo, hi)
  if #t == 0 then error(name .. ": give at least one value", 0) end
  return t
end
local function words(s)
  local t = {}
  for w in tostring(s):gmatch("[^,%s]+") do t[#t + 1] = w end
  return t
end

local NL = ints("N", Ns, 16, 65536)
local TL = ints("threads", threads, 32, 1024)
local CL = ints("carry", carry1, 1, 3)
local KL = ints("cluster", clusters, 1, 8)
local RL = ints("rows", rowsl, 0, 65536)
local WL = ints("wg", wgl, 0, 64)
steps = ints("steps", steps, 1, 100000)[1]

local info = ob.info()
local gpu = info.gpu
if not gpu then
  print("gpu_stream2d_tune: no GPU here (no CUDA in this build or no "
        .. "device); nothing to tune")
  return
end
print(string.format("GPU %s (cc %s, %d SMs): read bandwidth %.0f GB/s, copy "
                    .. "%.0f GB/s", gpu.name, gpu.cc, gpu.sm_count,
                    gpu.read_gbs or 0, gpu.copy_gbs or 0))

-- lag 2 keeps 0 or 3 centre rows (0: any 9-point stencil's layout)
local lag_carry = {}
for _, c in ipairs(CL) do lag_carry[#lag_carry + 1] = "1:" .. c end
lag_carry[#lag_carry + 1] = "2:0"
lag_carry[#lag_carry + 1] = "2:3"

local csv = {}
for _, N in ipairs(NL) do
  local p = ob.problem("bruss2d", { N = N })
  local h = 1 / (8 * 2e-3 * (N - 1) ^ 2 + 10)
  for _, m in ipairs(words(methods)) do
    local function solver(tiling)
      return ob.solver { problem = p, method = m, backend = "cuda",
                         variant = "gpu_stream2d", h = h, sync = "call",
                         tiling = tiling }
    end
    -- the automatic plan: its time a step and the state every
    -- configuration must reproduce
    local s = solver(nil)
    s:integrate { t0 = 0, t1 = 2 * h, label = "warm-up" }
    local auto = s:integrate { t0 = 0, t1 = steps * h, label = string.format(
      "%s gpu_stream2d N=%d automatic plan", m, N) }
    local ref = s:state()
    s:close()
    local spread = {}
    local function key(c)
      return string.format("%d %s %d %d %d", c.threads, c.lc, c.cluster,
                           c.rows, c.wg)
    end
    local t = ob.tune {
      label = string.format("gpu_stream2d %s bruss2d N=%d steps=%d", m, N,
                            steps),
      target = function(c)
        local lag, carry = c.lc:match("^(%d):(%d)$")
        local tiling = { threads = c.threads, lag = tonumber(lag),
                         carry = tonumber(carry), cluster = c.cluster }
        if c.rows > 0 then tiling.rows = c.rows end
        if c.wg > 0 then tiling.wg_per_sm = c.wg end
        local ok, sv = pcall(solver, tiling)
        if not ok then return nil, tostring(sv) end   -- refused: skipped
        local okr, r = pcall(function()
          sv:integrate { t0 = 0, t1 = 2 * h, label = "warm-up" }
          return sv:integrate { t0 = 0, t1 = steps * h, label = string.format(
            "%s gpu_stream2d N=%d %s", m, N, key(c)) }
        end)
        local err
        if okr then
          local y = sv:state()
          err = y:max_rel_err(ref)
          y:close()
        end
        sv:close()
        if not okr then return nil, tostring(r) end
        if err > 1e-12 then
          return nil, string.format("final state differs from the automatic "
                                    .. "plan's by %.3g (relative)", err)
        end
        spread[key(c)] = r.spread
        return r.time_per_step
      end,
      space = { threads = TL, lc = lag_carry, cluster = KL, rows = RL,
                wg = WL },
      where = function(c) return c.cluster == 1 or c.lc:sub(1, 1) == "1" end,
      strategy = strategy,
      cache = cache,
      verify = false,
      measure = { warmup = 0, min_reps = 1, max_reps = 1 },
    }
    local b = t.best
    local us, aus = t.best_median * 1e6, auto.time_per_step * 1e6
    local lag, carry = b.lc:match("^(%d):(%d)$")
    local skipped = t.stats.skipped + t.stats.failed + t.stats.rejected
    print(string.format("%-9s N=%-5d automatic plan %8.1f us a step (spread "
                        .. "%.1f%%)", m, N, aus, 100 * (auto.spread or 0)))
    print(string.format("%-9s %-7s tuner (%s, %d evaluations, %d from the "
                        .. "database, %d skipped): threads=%d lag=%s carry=%s "
                        .. "cluster=%d rows=%s wg=%s %8.1f us a step (spread "
                        .. "%s), %.3fx the automatic plan's speed", "", "",
                        strategy, t.stats.evals, t.stats.cached, skipped,
                        b.threads, lag, carry, b.cluster,
                        b.rows > 0 and tostring(b.rows) or "auto",
                        b.wg > 0 and tostring(b.wg) or "auto", us,
                        spread[key(b)] and string.format("%.1f%%",
                          100 * spread[key(b)]) or "from the database",
                        aus / us))
    ob.metric(string.format("stream2d %s N%d auto us", m, N), aus, "us")
    ob.metric(string.format("stream2d %s N%d tuned us", m, N), us, "us")
    csv[#csv + 1] = { method = m, N = N, auto_us = aus, tuned_us = us,
                      threads = b.threads, lag = lag, carry = carry,
                      cluster = b.cluster, rows = b.rows, wg = b.wg,
                      evals = t.stats.evals }
    ref:close()
  end
  p:close()
end

local cols = { "method", "N", "auto_us", "tuned_us", "threads", "lag", "carry",
               "cluster", "rows", "wg", "evals" }
require("odebench.report").write_csv(ob.outdir() .. "/gpu_stream2d_tune.csv",
                                      cols, csv)
