-- fp64_count.lua: one fixed step of BRUSS2D on each GPU variant and method,
-- printing the FP64 instructions (DFMA, DADD, DMUL) the generator counts
-- for it, per step and per component: the figures that ncu_fp64.py
-- (beside this file) checks against ncu's counters of the same step
-- (docs/gpu.md, "Checking the FP64 count"). Each solve is one run of one
-- step (measure: no warm-up, one run) from the initial value, which
-- evaluates stage 0 also for FSAL methods, so the count is the solver
-- row's fp64_per_step of that step.
--
--   odebench scenarios/tools/fp64_count.lua --set N=64
--   odebench scenarios/tools/fp64_count.lua --set variants=gpu_stream2d --set methods=dopri5
local ob = require "odebench"

local N        = ob.param("N", 64)
local methods  = ob.param("methods", "bs3,dopri5,verner65")
local variants = ob.param("variants", "gpu_unfused,gpu_reference,gpu_trapezoid,gpu_multiblock,gpu_stream2d,gpu_hexagonal")

local function split(s)
  local t = {}
  for w in s:gmatch("[^,%s]+") do t[#t + 1] = w end
  return t
end

local info = ob.info()
if not info.gpu then
  io.write("fp64_count: no GPU here (the \"cuda\" backend is not "
    .. "registered); nothing to count.\n")
  return
end

local p = ob.problem("bruss2d", { N = N })
local h = 1 / (8 * 2e-3 * (N - 1) ^ 2 + 10)
for _, m in ipairs(split(methods)) do
  for _, v in ipairs(split(variants)) do
    local ok, s = pcall(ob.solver, { problem = p, method = m,
                                     backend = "cuda", variant = v, h = h })
    if not ok then
      io.write(string.format("fp64_count %s %s refused: %s\n", v, m,
                             tostring(s):sub(1, 150)))
    else
      local r = s:integrate { t0 = 0, t1 = h, label = string.format(
        "fp64_count %s %s N=%d", m, v, N),
        measure = { warmup = 0, min_reps = 1, max_reps = 1 } }
      -- one line a case, read by ncu_fp64.py: key=value after the names
      io.write(string.format("fp64_count %s %s n=%d steps=%d per_step=%.17g "
        .. "per_comp=%.6f\n", v, m, p.n, r.steps, r.fp64_per_step or 0,
        (r.fp64_per_step or 0) / p.n))
      s:close()
    end
  end
end
