-- mpi_tune.lua: the self-adaptive solver for distributed address spaces of
-- the PIRK autotuning thesis (Korch's group, §10.3): the tuner chooses the
-- distributed variant, the number of active ranks (the variants' option
-- `ranks`, docs/mpi.md) and the window block together, and its choice is
-- compared with the best of an exhaustive search over the same space.
--
-- At the R ranks it was started with (`mpirun -n R`), on BRUSS2D (`N`):
--  1. ob.tune with `strategy` (default "anneal", a budget of `budget` of
--     the space's configurations) over variants x ranks x blocks: the
--     tuner's choice;
--  2. ob.tune with "exhaustive" over the same space; its pass times each
--     configuration once and briefly, which at many ranks can misrank
--     configurations tens of % apart, so its `confirm` fastest (default 3)
--     are timed again, in turn over `rounds` rounds, and the one of least
--     median is the best;
--  3. both configurations measured again `rounds` times, alternating, each
--     time `steps` fixed steps with `measure` repetitions (each run timed as
--     its slowest rank): the times' medians with their spread, and the
--     ratio tuner / exhaustive per round, median and quartiles. Target:
--     within 5% (ratio <= 1.05).
-- Each search evaluates a configuration with `steps` fixed steps of h,
-- verified against plain on the same state; the objective is `objective`
-- (time, energy or edp, where the CPU's counters can be read).
--
-- The space: `variants` (default mpi_A,mpi_S,mpi_N,mpi_X,mpi_P), `ranks` (default
-- the powers of two up to R and R itself), `blocks` (window blocks of the
-- fused sweeps; empty: the solver's default, not tuned). A configuration
-- whose layout does not fit (mpi_N with blocks shorter than d on that
-- many ranks) fails and is never chosen.
--
--   mpirun -n 4 odebench scenarios/mpi_tune.lua --set N=256
--   mpirun -n 16 odebench scenarios/mpi_tune.lua --set N=1024 --set rounds=7
local ob = require "odebench"

local N         = ob.param("N", 256)               -- n = 2N^2
local method    = ob.param("method", "dopri5")
local variants  = ob.param("variants", "mpi_A,mpi_S,mpi_N,mpi_X,mpi_P")
local ranks_s   = ob.param("ranks", "")             -- "": 1, 2, 4, ..., R
local blocks_s  = ob.param("blocks", "1024,4096")
local strategy  = ob.param("strategy", "anneal")
local budget    = ob.param("budget", 0.5)           -- share of the space
local objective = ob.param("objective", "time")
local steps     = ob.param("steps", 5)
local h         = ob.param("h", 1e-6)
local rounds    = ob.param("rounds", 5)
local reps      = ob.param("reps", 5)
local seed      = ob.param("seed", 1)
local confirm   = ob.param("confirm", 3)        -- exhaustive picks re-timed

local info = ob.info { bandwidth = false }
local R = info.ranks or 1

local function list(s, numbers)
  local t = {}
  for x in tostring(s):gmatch("[^,%s]+") do
    t[#t + 1] = numbers and assert(math.tointeger(tonumber(x)),
                                   "not an integer: " .. x) or x
  end
  return t
end

local ranks = list(ranks_s, true)
if #ranks == 0 then
  for P = 1, R do
    if P == R or P & (P - 1) == 0 then ranks[#ranks + 1] = P end
  end
end
local space = { variant = list(variants), ranks = ranks }
local blocks = list(blocks_s, true)
if #blocks > 0 then space.block = blocks end
local size = #space.variant * #ranks * math.max(1, #blocks)

local p = ob.problem("bruss2d", { N = N })
local quick = { warmup = 1, min_reps = 3, max_reps = reps, max_seconds = 0.5 }

local function search(strat, label)
  local s <close> = ob.solver { problem = p, method = method,
                                variant = space.variant[1], h = h }
  local evals = strat == "exhaustive" and size
                or math.max(1, math.floor(budget * size + 0.5))
  local t = ob.tune { target = s, space = space, strategy = strat,
                      steps = steps, cache = "off", measure = quick,
                      objective = objective, seed = seed, label = label,
                      budget = { evals = evals } }
  assert(t.best, label .. ": no configuration passed")
  return t.best, t.best_config, #t.evaluations, t.evaluations
end

-- the solver of configuration c; one timed call of `steps` steps
local function time_of(c)
  local s <close> = ob.solver { problem = p, method = method,
                                variant = c.variant, h = h, block = c.block,
                                tiling = { ranks = c.ranks } }
  local row = s:integrate { t1 = s.t + steps * h, measure =
    { warmup = 1, min_reps = reps, max_reps = reps } }
  return row.median
end

local function quantile(t, q)
  local s = {}
  for i, x in ipairs(t) do s[i] = x end
  table.sort(s)
  local x = 1 + (#s - 1) * q
  local lo = math.floor(x)
  return s[lo] + (s[math.min(lo + 1, #s)] - s[lo]) * (x - lo)
end

local function summary(t)
  local med = quantile(t, 0.5)
  return med, quantile(t, 0.25), quantile(t, 0.75),
         med > 0 and (quantile(t, 0.75) - quantile(t, 0.25)) / med or 0
end

local tc, tcs, tn = search(strategy, "tuner")
local ec, ecs, en, evals = search("exhaustive", "exhaustive")

-- the exhaustive pass's `confirm` fastest, timed again in turn (the order
-- reversed every other round); the least median is the exhaustive best
local cands = {}
for _, e in ipairs(evals) do
  if e.status == "ok" then cands[#cands + 1] = e end
end
table.sort(cands, function(x, y) return x.median < y.median end)
for i = #cands, math.max(1, confirm) + 1, -1 do cands[i] = nil end
local pass_pick = ecs
if #cands > 1 then
  local times = {}
  for i = 1, #cands do times[i] = {} end
  for k = 1, rounds do
    for q = 1, #cands do
      local i = k % 2 == 1 and q or #cands + 1 - q
      times[i][#times[i] + 1] = time_of(cands[i].config)
    end
  end
  local best_i, best_m
  for i = 1, #cands do
    local m = quantile(times[i], 0.5)
    if not best_m or m < best_m then best_i, best_m = i, m end
  end
  ec, ecs = cands[best_i].config, cands[best_i].config_str
end
local tt, et, ratio = {}, {}, {}
for k = 1, rounds do
  local a, b
  if k % 2 == 1 then a = time_of(tc); b = time_of(ec)
  else b = time_of(ec); a = time_of(tc) end
  tt[k], et[k], ratio[k] = a, b, a / b
end

local tm, _, _, tsp = summary(tt)
local em, _, _, esp = summary(et)
local rm, r25, r75 = summary(ratio)
print(string.format("mpi_tune: bruss2d(N=%d) n = %d, %s, %d ranks; space "
  .. "%d configurations (variants %s; ranks %s%s)", N, p.n, method, R, size,
  table.concat(space.variant, ","), table.concat(ranks, ","),
  space.block and ("; blocks " .. table.concat(blocks, ",")) or ""))
print(string.format("  tuner (%s, %d evaluations): %s", strategy, tn, tcs))
print(string.format("    %.4g s for %d steps (spread %.1f%%, %d rounds)", tm,
                    steps, 100 * tsp, rounds))
print(string.format("  exhaustive (%d evaluations):      %s", en, ecs))
if #cands > 1 then
  print(string.format("    (its pass's %d fastest timed again over %d rounds;"
    .. " the pass alone picked %s)", #cands, rounds, pass_pick))
end
print(string.format("    %.4g s for %d steps (spread %.1f%%)", em, steps,
                    100 * esp))
print(string.format("  ratio tuner / exhaustive: %.3f (quartiles %.3f .. "
  .. "%.3f): %s", rm, r25, r75, rm <= 1.05 and "within 5%"
  or "more than 5% slower"))
ob.report { kind = "mpi_tune", label = "tuner/exhaustive", problem = "bruss2d",
            N = N, n = p.n, ranks = R, method = method, strategy = strategy,
            tuner_config = tcs, tuner_seconds = tm, tuner_spread = tsp,
            exhaustive_config = ecs, exhaustive_seconds = em,
            exhaustive_spread = esp, exhaustive_pass = pass_pick,
            confirmed = #cands, ratio = rm, ratio_p25 = r25,
            ratio_p75 = r75, evaluations = tn, space = size }
