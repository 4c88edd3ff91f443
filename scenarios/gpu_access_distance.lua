-- gpu_access_distance.lua: the access-distance study of M. Korch and
-- T. Werner, "An in-depth introduction of multi-workgroup tiling for
-- improving the locality of explicit one-step methods for ODE systems with
-- limited access distance on GPUs" (section 5, Figures 10, 11, 14, 15, 16),
-- on our GPU. BRUSS2D with Nx = d/2 points along the
-- fast index (access distance d) and N rows chosen so that n = 2 N Nx
-- stays near 16 * 2^20; one fixed step at a time of Bogacki-Shampine 3(2)
-- and Verner 6(5) with every GPU variant, gpu_multiblock over its tile
-- configurations (threads, components and blocks per thread, concurrent
-- tiles, barrier, stride), and gpu_stream2d (which tiles the grid in two
-- dimensions instead of along the index, so its halo is s columns and s
-- rows whatever d is) over threads per block, rows a pass and rows per
-- block. Printed:
-- time per step, the speedup of the best tiled configuration over
-- gpu_reference, the best configuration, and the best of each. The
-- configurations are searched by the tuner (ob.tune, exhaustive), each one
-- verified against gpu_reference first; the evaluations are kept in the
-- tuning database, so the next run with the same d reuses them.
--
--   odebench scenarios/gpu_access_distance.lua
--   odebench scenarios/gpu_access_distance.lua --set d=32,1024,32768 --set methods=verner65
--   odebench scenarios/gpu_access_distance.lua --set sweep=small
--   odebench scenarios/gpu_access_distance.lua --set d=32,128 --set variants=gpu_hexagonal,gpu_trapezoid
-- Rows go to <outdir>/gpu_access_distance.csv (one per run) and results.
local ob = require "odebench"

local dlist   = ob.param("d", "32,128,512,2048,8192,32768,131072,524288")
local methods = ob.param("methods", "bs3,verner65")
local steps   = ob.param("steps", 10)
-- steps a call while tuning (each call also pays its launches and the error
-- norm's copy; one step a call let that overhead reorder close configurations)
local tsteps  = ob.param("tune_steps", 4)
local target  = ob.param("n", 16 * 2^20)
local sweep   = ob.param("sweep", "small")  -- small | full
local cache   = ob.param("cache", "auto")   -- tuning database: auto, off, path
-- the tiled variants whose configurations are tuned (all by default)
local only    = ob.param("variants", "gpu_multiblock,gpu_stream2d,gpu_hexagonal,gpu_trapezoid")

local function split(s)
  local t = {}
  for w in tostring(s):gmatch("[^,%s]+") do t[#t + 1] = w end
  return t
end

local info = ob.info()
if not info.gpu then
  io.write("gpu_access_distance: no GPU here (the \"cuda\" backend is not "
    .. "registered); nothing to measure.\n")
  return
end
local floor_gbs = info.gpu.copy_gbs

-- The tile configurations tried for gpu_multiblock (nil: the defaults of
-- equation (8)).
local configs = { {} }
for _, th in ipairs(sweep == "small" and { 256 } or { 128, 256, 512 }) do
  for _, k in ipairs(sweep == "small" and { { 1, 2 }, { 2, 2 } }
                     or { { 1, 1 }, { 1, 2 }, { 2, 2 }, { 2, 4 } }) do
    for _, tiles in ipairs(sweep == "small" and { 0 } or { 0, 1, 4, 16 }) do
      for _, bar in ipairs(sweep == "small" and { "A" } or { "A", "B" }) do
        configs[#configs + 1] = { threads = th, comps = k[1], blocks = k[2],
          tiles = tiles > 0 and tiles or nil, barrier = bar }
      end
    end
  end
end
-- single-block tiles (one block per tile: __syncthreads as the barrier)
for _, k in ipairs{ { 2, 4 }, { 4, 4 }, { 2, 8 } } do
  for _, th in ipairs{ 128, 256 } do
    configs[#configs + 1] = { threads = th, comps = k[1], blocks = k[2],
                              wg_per_tile = 1 }
  end
end
if sweep ~= "small" then
  configs[#configs + 1] = { barrier = "C" }
  configs[#configs + 1] = { stride = "A" }
  configs[#configs + 1] = { stride = "C" }
  configs[#configs + 1] = { persistent = false }
end

-- gpu_stream2d's configurations: skew 2 (one barrier a pass; the default)
-- by threads per block and rows per block, and by the stencil's centre
-- rows kept in registers (carry 0..3 two rows behind, lag 2; 1 and 2 also
-- one row behind, lag 1, whose 3 rows are the default on BRUSS2D's star
-- stencil), skew 1 (a barrier a stage) by threads, rows a pass (band) and
-- rows per block; 0: the variant's choice
local s2d_configs = {}
for _, th in ipairs(sweep == "small" and { 0, 64, 128, 256 } or { 0, 32, 64, 128, 256 }) do
  for _, rows in ipairs(sweep == "small" and { 0 } or { 0, 24, 96 }) do
    s2d_configs[#s2d_configs + 1] = { variant = "gpu_stream2d",
      threads = th > 0 and th or nil, rows = rows > 0 and rows or nil }
  end
end
for _, carry in ipairs{ 0, 1, 2, 3 } do   -- centre rows kept in registers
  s2d_configs[#s2d_configs + 1] = { variant = "gpu_stream2d", carry = carry,
                                    lag = 2 }
  if carry > 0 and carry < 3 then   -- one row behind, the stages in order
    s2d_configs[#s2d_configs + 1] = { variant = "gpu_stream2d", carry = carry,
                                      lag = 1 }
  end
end
for _, th in ipairs(sweep == "small" and { 0, 64, 256 } or { 0, 32, 64, 128, 256 }) do
  for _, band in ipairs(sweep == "small" and { 0, 1, 3 } or { 0, 1, 2, 3 }) do
    for _, rows in ipairs(sweep == "small" and { 0 } or { 0, 24, 96 }) do
      s2d_configs[#s2d_configs + 1] = { variant = "gpu_stream2d", skew = 1,
        threads = th > 0 and th or nil, band = band > 0 and band or nil,
        rows = rows > 0 and rows or nil }
    end
  end
end

-- Single-block tiles of a height across the stages (Korch and Werner,
-- Figure 4):
-- gpu_hexagonal at heights 2, 4, 8, 14 and 16 (2 s for Bogacki-Shampine,
-- Dormand-Prince and Verner 6(5): two kernels, no stage written in full;
-- heights above 2 s are refused; more in the full sweep) and gpu_trapezoid
-- in rows of 2 and 3 stages. Widths are given by their window, the width
-- plus d on each side: 1024, 2048 or 4096 components (more in the full
-- sweep), so that the power-of-two threads of a tile own equal shares of
-- it (at d = 32 a window of 1024 is a width of 960); nil is the variant's
-- default. The full sweep adds odd and even hexagons of different widths
-- (Figure 15). Tiles narrower than (2 G - 1) d or over shared memory are
-- refused, so these only run at small d, as in the paper.
local function width_of(win, d) return win - 2 * d end
local hex_windows = sweep == "small" and { 0, 1024, 2048, 4096 }
                    or { 0, 1024, 1536, 2048, 3072, 4096, 6144, 8192 }
local function hex_configs(d)
  local list = {}
  for _, ht in ipairs(sweep == "small" and { 2, 4, 8, 14, 16 } or { 2, 4, 6, 8, 12, 14, 16 }) do
    for _, win in ipairs(hex_windows) do
      local w = win > 0 and width_of(win, d) or nil
      if not w or w > 0 then
        list[#list + 1] = { variant = "gpu_hexagonal", height = ht, width = w }
        if sweep ~= "small" and w and width_of(win // 2, d) > 0 then
          list[#list + 1] = { variant = "gpu_hexagonal", height = ht, width = w,
                              width2 = width_of(win // 2, d) }
        end
      end
    end
  end
  -- threads a tile: one cell each, or two
  for _, ht in ipairs{ 8, 16 } do
    for _, win in ipairs{ 1024, 2048 } do
      for _, th in ipairs{ 256, 512 } do
        if width_of(win, d) > 0 then
          list[#list + 1] = { variant = "gpu_hexagonal", height = ht,
                              width = width_of(win, d), threads = th }
        end
      end
    end
  end
  for _, ht in ipairs{ 2, 3 } do
    list[#list + 1] = { variant = "gpu_trapezoid", height = ht }
  end
  return list
end

local tags = { gpu_stream2d = "s2d", gpu_hexagonal = "hex",
               gpu_trapezoid = "trap" }

local function cfg_name(c)
  local t = {}
  if c.variant then t[1] = tags[c.variant] end
  if next(c) == nil then return "default" end
  for _, k in ipairs{ "threads", "comps", "blocks", "wg_per_tile", "tiles",
                      "barrier", "stride", "skew", "carry", "lag", "band", "rows",
                      "height", "width", "width2" } do
    if c[k] then t[#t + 1] = k .. "=" .. tostring(c[k]) end
  end
  if c.persistent == false then t[#t + 1] = "one-group-per-tile" end
  if #t == 1 then t[2] = "default" end
  return table.concat(t, " ")
end

-- The configuration as a tuner value (no blanks, '=' or ',').
local function cfg_key(c)
  return (cfg_name(c):gsub("=", ":"):gsub(" ", "/"))
end

-- Seconds per step of variant v (tiling t), or nil and the reason.
local function time_step(p, m, v, t, h)
  local ok, s = pcall(ob.solver, { problem = p, method = m, backend = "cuda",
                                   variant = v, h = h, tol = 1e-6, tiling = t })
  if not ok then return nil, tostring(s):gsub("^.-%((.*)%)$", "%1") end
  local ok2, r = pcall(function()
    s:integrate { t0 = 0, t1 = 2 * h }
    return s:integrate { t0 = 0, t1 = steps * h }
  end)
  s:close()
  if not ok2 then return nil, tostring(r) end
  return r.time_per_step
end

local csv = io.open(ob.outdir() .. "/gpu_access_distance.csv", "w")
csv:write("method,d,N,Nx,n,variant,config,us_per_step,floor_pct\n")
io.write(string.format("%-9s %8s %10s %-15s %10s %7s  %s\n", "method", "d",
  "n", "variant", "us/step", "floor%", "config"))
for _, ds in ipairs(split(dlist)) do
  local d = tonumber(ds)
  local nx = math.max(2, math.floor(d / 2))
  local N = math.max(2, math.floor(target / (2 * nx) + 0.5))
  local p = ob.problem("bruss2d", { N = N, Nx = nx })
  local c = 2e-3 * (N - 1) ^ 2
  local h = 1 / (8 * c + 10)
  local floor_s = floor_gbs and 2 * p.n * 8 / (floor_gbs * 1e9)
  for _, m in ipairs(split(methods)) do
    local function row(v, cname, t)
      local fl = floor_s and string.format("%.1f", 100 * floor_s / t) or "-"
      io.write(string.format("%-9s %8d %10d %-15s %10.1f %7s  %s\n", m, p.d,
        p.n, v, t * 1e6, fl, cname))
      csv:write(string.format("%s,%d,%d,%d,%d,%s,%s,%.6g,%s\n", m, p.d, N, nx,
        p.n, v, cname, t * 1e6, fl))
    end
    local ref = nil
    for _, v in ipairs{ "gpu_reference", "gpu_trapezoid" } do
      local t, why = time_step(p, m, v, nil, h)
      if t then
        row(v, "-", t)
        if v == "gpu_reference" then ref = t end
      else
        io.write(string.format("%-9s %8d %10d %-15s refused: %s\n", m, p.d,
          p.n, v, tostring(why):sub(1, 110)))
      end
    end
    -- The tile configurations through the tuner: every one is verified
    -- against gpu_reference after two steps (1e-12) before it is timed, and
    -- every evaluation goes to the tuning database, so a second run with
    -- the same d reuses them instead of tuning again.
    local names, by_name = {}, {}
    local wanted = {}
    for _, v in ipairs(split(only)) do wanted[v] = true end
    for _, list in ipairs{ configs, s2d_configs, hex_configs(p.d) } do
      for _, cf in ipairs(list) do
        if wanted[cf.variant or "gpu_multiblock"] then
          names[#names + 1] = cfg_key(cf)
          by_name[cfg_key(cf)] = cf
        end
      end
    end
    if #names == 0 then
      error("variants: none of '" .. only .. "' is a tiled variant (allowed: "
        .. "gpu_multiblock, gpu_stream2d, gpu_hexagonal, gpu_trapezoid)", 0)
    end
    local solvers = {}
    local function solver_for(name)
      if solvers[name] == nil then
        local cf, t = by_name[name], {}
        for k, v in pairs(cf) do if k ~= "variant" then t[k] = v end end
        local ok, s = pcall(ob.solver, { problem = p, method = m,
          backend = "cuda", variant = cf.variant or "gpu_multiblock", h = h,
          tol = 1e-6, tiling = t })
        solvers[name] = ok and s or false
        if not ok then error(tostring(s), 0) end
      end
      if solvers[name] == false then error("refused", 0) end
      return solvers[name]
    end
    local ref_state
    do
      local s = ob.solver { problem = p, method = m, backend = "cuda",
                            variant = "gpu_reference", h = h }
      s:integrate { t0 = 0, t1 = 2 * h }
      ref_state = s:state()
      s:close()
    end
    local tr = ob.tune {
      target = function(c)   -- nil and the reason: a refused configuration
        local ok, s = pcall(solver_for, c.cfg)
        if not ok then return nil, tostring(s):sub(1, 200) end
        local r = s:integrate { t0 = 0, t1 = tsteps * h }
        return r.seconds / tsteps
      end,
      space = { cfg = names },
      verify = function(c)
        local ok, s = pcall(solver_for, c.cfg)
        if not ok then return true, 0, 1e-12 end   -- the target says why
        s:integrate { t0 = 0, t1 = 2 * h }
        local e = s:state():max_rel_err(ref_state)
        return e <= 1e-12, e, 1e-12
      end,
      label = string.format("tiled %s %s sweep=%s", m, p.label, sweep),
      cache = cache,
      measure = { max_seconds = 0.5 },
    }
    for _, s in pairs(solvers) do if s then s:close() end end
    local best_of = {}
    for _, ev in ipairs(tr.evaluations) do
      if ev.median then
        local v = by_name[ev.config.cfg].variant or "gpu_multiblock"
        csv:write(string.format("%s,%d,%d,%d,%d,%s,%s,%.6g,\n",
          m, p.d, N, nx, p.n, v, ev.config.cfg, ev.median * 1e6))
        if not best_of[v] or ev.median < best_of[v].median then best_of[v] = ev end
      end
    end
    io.write(string.format("%-9s %8d tuner: %d configurations, %d evaluated "
      .. "now, %d from the tuning database, %d rejected\n", m, p.d,
      tr.stats.valid, tr.stats.measured, tr.stats.cached,
      tr.stats.rejected + tr.stats.failed))
    for _, v in ipairs{ "gpu_multiblock", "gpu_stream2d", "gpu_hexagonal",
                        "gpu_trapezoid" } do
      local ev = best_of[v]
      if ev then row(v, "best of " .. v .. ": " .. ev.config.cfg, ev.median) end
    end
    if tr.best then
      -- the best configuration timed as gpu_reference was: steps steps in
      -- one call (the tuner times tune_steps steps a call, which also
      -- counts each call's launch and error-norm overhead)
      local bcf = by_name[tr.best.cfg]
      local bv = bcf.variant or "gpu_multiblock"
      local bt = {}
      for k, v in pairs(bcf) do if k ~= "variant" then bt[k] = v end end
      local best = time_step(p, m, bv, bt, h) or tr.best_median
      row(bv, "best, " .. steps .. " steps a call: " .. tr.best.cfg, best)
      if ref then
        io.write(string.format("%-9s %8d speedup of the best tiling over "
          .. "gpu_reference: %.2f\n", m, p.d, ref / best))
        ob.metric(string.format("%s_d%d_tiled_speedup", m, p.d), ref / best)
      end
    end
  end
  p:close()
end
csv:close()
