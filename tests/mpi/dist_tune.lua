-- tests/mpi/dist_tune.lua: ob.tune across the ranks of `mpirun -n R`
-- (dist_tune.py runs it for R = 1..3). Every rank tunes the distributed
-- variants and the window block of BRUSS2D; each run is timed as its
-- slowest rank (odb_tune_ranks in core/tune/odb_tuner.h), so every rank
-- must see the same medians and choose the same configuration. The energy
-- objectives are measured where the CPU's RAPL counters can be read and
-- refused with the reason where they cannot. A mismatch raises an error
-- naming it, which ends every rank with status 2.
local ob = require "odebench"

local info = ob.info { bandwidth = false }
local R, me = info.ranks or 1, info.rank or 0
local checked = 0

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local C = dofile(here .. "dist_check.lua")
local fail = C.fail

local p = ob.problem("bruss2d", { N = 24 })
local space = { variant = { "mpi_A", "mpi_S", "mpi_N", "mpi_X" },
                block = { 16, 64, 256 } }
local quick = { warmup = 1, min_reps = 3, max_reps = 9, max_seconds = 0.05,
                spread = 1e-9 }

-- the same choice and the same figures on every rank
local function same_on_all(t, what)
  local idx, sum = 0, 0
  for i, e in ipairs(t.evaluations) do
    if e.config_str == t.best_config then idx = i end
    sum = sum + (e.median or 0) + (e.reps or 0)
  end
  local lo = ob.allreduce({ idx, -idx, sum, -sum }, "max")
  if lo[1] ~= -lo[2] or lo[3] ~= -lo[4] then
    fail("%s: ranks differ: best %d..%d (here %s), figures %.17g..%.17g", what,
         -lo[2], lo[1], t.best_config, -lo[4], lo[3])
  end
  if idx == 0 then fail("%s: no best configuration", what) end
  checked = checked + 1
end

do
  local s <close> = ob.solver { problem = p, method = "dopri5", variant = "mpi_N",
                                h = 1e-4 }
  local t = ob.tune { target = s, space = space, steps = 2, cache = "off",
                      measure = quick, label = "dist_tune" }
  if #t.evaluations ~= 12 then
    fail("time: %d evaluations, expected 12", #t.evaluations)
  end
  same_on_all(t, "time")
end

-- energy and edp: measured, or refused with the reason on every rank
local function readable()
  local f = io.open("/sys/class/powercap/intel-rapl:0/energy_uj", "r")
  if not f then return false end
  local ok = f:read("n") ~= nil
  f:close()
  return ok
end
for _, obj in ipairs { "energy", "edp" } do
  local s <close> = ob.solver { problem = p, method = "dopri5", variant = "mpi_N",
                                h = 1e-4 }
  local ok, t = pcall(ob.tune, { target = s, space = space, steps = 2,
                                 cache = "off", measure = quick, objective = obj })
  if readable() then
    if not ok then fail("%s: refused although RAPL is readable: %s", obj, t) end
    same_on_all(t, obj)
  else
    local want = "objective '" .. obj .. "' refused: no CPU energy counter: "
    if ok or not tostring(t):find(want, 1, true) then
      fail("%s: expected the refusal '%s...', got %s", obj, want,
           ok and "a result" or tostring(t))
    end
    checked = checked + 1
  end
end

-- a bad objective names the allowed ones
do
  local s <close> = ob.solver { problem = p, method = "dopri5", variant = "mpi_N",
                                h = 1e-4 }
  local want = "field 'objective': 'watts' is not allowed (time, energy, edp)"
  local got = C.refusal(want, ob.tune, { target = s, space = space,
                                         objective = "watts" })
  if got ~= nil then
    fail("objective watts: expected '%s', got %s", want, got or "a result")
  end
  checked = checked + 1
end

-- the line dist_variants.py reads; a tuning has no step size or state to
-- compare with one process, so both differences are 0 by construction
print(string.format("dist_tune: %d checks passed on %d rank(s); largest "
                    .. "differences: h 0, state 0 a step", checked, R))
