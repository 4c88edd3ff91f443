-- autotune_pirk.lua: the thesis's self-adaptive solver (Kalinnik 2015,
-- Ch. 7.5, 8.4, 9.3) on BRUSS2D and CUSP with Radau IA(5) and Lobatto
-- IIIC(8): online tuning picks the variant and the block size during the
-- first steps of a real integration, then the winner runs the rest.
--
-- For each problem and method, on one space (variant x block, the thesis's
-- sequential pool, or with --set threads=P the parallel pool of Ch. 9):
--  1. exhaustive offline search: every valid configuration, `eval_steps`
--     fixed steps of the size an adaptive run settles on (after `probe`
--     adaptive steps of variant A from the initial value, whose state the
--     evaluations start from), warm-up and repetitions; this is the
--     yardstick. (The first adaptive step is no guide: for CUSP, whose
--     stiffness grows with N^2, it is 80 times the settled step and a fixed
--     step of it blows up.)
--  2. model-guided offline search (strategy "model"): how many evaluations
--     it needs (% of the exhaustive count) and how far its choice is from
--     the exhaustive best, judged by the exhaustive medians;
--  3. a run of `run_steps` adaptive steps of the exhaustive best from the
--     initial value, twice: once to find the time T1 it reaches, once timed
--     over [0, T1] (the baseline);
--  4. the self-adaptive run: ob.tune{strategy = "online", t1 = T1} from the
--     initial value, then s:integrate to T1 - the same steps as the
--     baseline. Reported: the online choice's distance from the exhaustive
--     best, by the exhaustive medians ("yard") and by the long runs (the
--     winner's seconds per step after tuning over the baseline's: "run"),
--     the tuning overhead in steps of the winner (thesis eq. 9.4) as a
--     percentage of `run_steps` steps, and the end-to-end difference to
--     the baseline run. The model's choice, when it differs from the
--     exhaustive best, also runs over [0, T1] for its "run" distance.
--  5. head to head ("pair"): the online choice (and the model's) against the
--     exhaustive best, both timed again with the same repetitions from the
--     probe's state. This is the gap the target (within 5%) is read from:
--     it is the only column where both sides are measured alike.
--
-- The exhaustive yardstick is a minimum over a hundred or more short,
-- noisy measurements, so it favours whichever configuration was lucky. The
-- long runs compare head to head over thousands of steps, but on a shared
-- virtual machine two runs of one configuration can differ by a quarter
-- (memory placement, neighbours on the host), so their columns show noise
-- as much as choice.
--
-- The full run (both problems, both methods, 2000 steps each, nothing
-- extrapolated) takes minutes on a small machine, most of it in the
-- exhaustive searches and the 2000-step runs.
--
--   odebench scenarios/autotune_pirk.lua
--   odebench scenarios/autotune_pirk.lua --set problems=bruss2d --set methods=radau1a5
--   odebench scenarios/autotune_pirk.lua --set threads=2 --set N=512
local ob = require "odebench"

local problems   = ob.param("problems", "bruss2d,cusp")
local methods    = ob.param("methods", "radau1a5,lobatto3c8")
local N          = ob.param("N", 256)          -- BRUSS2D: n = 2 N^2 = 131072
local cusp_N     = ob.param("cusp_N", 43690)   -- CUSP: n = 3 N = 131070
local threads    = ob.param("threads", 1)      -- 1: sequential pool
local run_steps  = ob.param("run_steps", 2000)
local eval_steps = ob.param("eval_steps", 2)   -- steps per offline evaluation
local probe      = ob.param("probe", 20)       -- adaptive steps before them
local tol        = ob.param("tol", 1e-6)
local verify     = ob.param("verify", true)    -- online: check every candidate
local warmup     = ob.param("warmup", 1)       -- online: untimed steps each
local timed      = ob.param("timed", 1)        -- online: timed steps each
local pair_reps  = ob.param("pair_reps", 15)   -- head to head: repetitions

local function split(s)
  local t = {}
  for w in tostring(s):gmatch("[^,%s]+") do t[#t + 1] = w end
  return t
end

-- The thesis's pools present in this build (Ch. 7/8 sequential, Ch. 9
-- parallel), and which of them are tiled, specialized, pipelined.
local seq = { "A", "E", "D", "Dblock", "PipeDe2m", "PipeDb2m", "PipeDb2mt",
              "PipeDb1m", "PipeDb1mt", "ppDb1m", "ppDb1mt" }
local par = { "par_A", "par_E", "par_EAblock", "par_D", "par_Dblock",
              "par_PipeDe2m", "par_PipeDb2m", "par_PipeDb2mt", "par_PipeDb1m",
              "par_PipeDb1mt", "par_ppDb1m", "par_ppDb1mt", "par_PipeDb1myl",
              "par_PipeDb1mtyl", "par_ppDb1myl", "par_ppDb1mtyl" }
local untiled = { A = true, E = true, D = true, PipeDe2m = true, par_A = true,
                  par_E = true, par_D = true, par_PipeDe2m = true }
local present = {}
for _, v in ipairs(ob.list().variants) do present[v.name] = true end

-- Block sizes from 16 to 16384: `per_octave` sizes per octave (b, 1.25b,
-- 1.5b, 1.75b for 4; b, 1.5b for 2), multiples of 8. The thesis's space is
-- every B in 1..n; this grid is the exhaustive search's sample of it (the
-- model's evaluations do not depend on it, the exhaustive count does).
local per_octave = ob.param("per_octave", 4)
local grid = {}
do
  local steps = per_octave >= 4 and { 1, 1.25, 1.5, 1.75 } or { 1, 1.5 }
  local b = 16
  while b <= 16384 do
    for _, f in ipairs(steps) do
      local v = math.floor(b * f / 8 + 0.5) * 8
      if v <= 16384 and v ~= grid[#grid] then grid[#grid + 1] = v end
    end
    b = b * 2
  end
end

local function make_problem(name)
  if name == "bruss2d" then return ob.problem("bruss2d", { N = N }) end
  return ob.problem(name, { N = cusp_N })
end

-- The space and its constraint: untiled variants take the smallest block
-- (they ignore it); sequential specialized ones need B >= d, the
-- pipelined ones at least m blocks (thesis 8.4.2).
local function space_of(p, m)
  local vs = {}
  for _, v in ipairs(threads > 1 and par or seq) do
    if present[v] then vs[#vs + 1] = v end
  end
  local space = { variant = vs, block = grid }
  if threads > 1 then space.threads = { threads } end
  local function where(c)
    local v = c.variant
    if untiled[v] then return c.block == grid[1] end
    if v:match("^PipeDb1m") or v:match("^ppDb1m") then
      if c.block < p.d then return false end
      if v:match("^pp") and p.n // c.block < m then return false end
    end
    return true
  end
  return space, where
end

local corrector_steps = { radau1a5 = 4, lobatto3c8 = 7 }
local measure = { warmup = 1, min_reps = 3, max_reps = 9, spread = 0.03 }

-- The exhaustive yardstick: median per step of each configuration.
local function yardstick(ex)
  local y = {}
  for _, e in ipairs(ex.evaluations) do
    if e.status == "ok" then y[e.config_str] = e.median / eval_steps end
  end
  return y
end

local function solver(p, method, variant, block)
  return ob.solver { problem = p, method = method, variant = variant, block = block,
                     tol = tol, threads = threads > 1 and threads or nil }
end

local function pct(x) return string.format("%.2f%%", 100 * x) end

-- Head to head ("pair"): the online choice c and the exhaustive best b are
-- timed again on their own, from the probe's state with the same fixed
-- steps, `pair_reps` repetitions each, in two rounds (b then c, c then b)
-- so that a drift of the machine falls on both. The yardstick's best is
-- the minimum over a hundred or more noisy medians, so a lucky measurement
-- there reads as a gap; here both get the same number of repetitions.
-- Returns c's median over b's minus 1, and 1 when the two are tied (their
-- difference lies within the larger relative spread).
local function head_to_head(s0, space, b, c, h)
  if b.variant == c.variant and b.block == c.block then return 0, true end
  local sum = {}
  for round = 1, 2 do
    local first, second = b, c
    if round == 2 then first, second = c, b end
    local function both(a, z) if a == z then return { a } end return { a, z } end
    local sp = { variant = both(first.variant, second.variant),
                 block = both(first.block, second.block) }
    if space.threads then sp.threads = space.threads end
    local r = ob.tune { target = s0, space = sp, strategy = "exhaustive",
                        where = function(x)
                          return (x.variant == first.variant and x.block == first.block)
                              or (x.variant == second.variant and x.block == second.block)
                        end,
                        steps = eval_steps, h = h, cache = "off",
                        measure = { warmup = 1, min_reps = pair_reps, max_reps = pair_reps },
                        label = "head to head" }
    for _, e in ipairs(r.evaluations) do
      if e.status == "ok" then
        local k = e.config.variant .. ":" .. e.config.block
        local t = sum[k] or { m = 0, sp = 0 }
        t.m, t.sp = t.m + e.median / 2, math.max(t.sp, e.spread or 0)
        sum[k] = t
      end
    end
  end
  local mb, mc = sum[b.variant .. ":" .. b.block], sum[c.variant .. ":" .. c.block]
  if not mb or not mc then return math.huge, false end
  local gap = mc.m / mb.m - 1
  return gap, math.abs(gap) <= math.max(mb.sp, mc.sp)
end

local summary = {}

for _, pname in ipairs(split(problems)) do
  for _, method in ipairs(split(methods)) do
    local p = make_problem(pname)
    local m = corrector_steps[method] or 1
    local space, where = space_of(p, m)
    local label = string.format("%s %s", p.label, method)
    io.write(string.format("\n== %s: n = %d, d = %d, %s pool%s\n", label, p.n, p.d,
                           threads > 1 and "parallel" or "sequential",
                           threads > 1 and (" on " .. threads .. " threads") or ""))

    -- 1. exhaustive (the yardstick) and 2. model-guided offline searches
    local s0 <close> = solver(p, method, "A")
    local h
    for _ = 1, probe do h = s0:step().h end
    local ex = ob.tune { target = s0, space = space, where = where, strategy = "exhaustive",
                         steps = eval_steps, h = h, cache = "off", measure = measure,
                         label = "exhaustive " .. label }
    local yard = yardstick(ex)
    local best = yard[ex.best_config]
    local mo = ob.tune { target = s0, space = space, where = where, strategy = "model",
                         steps = eval_steps, h = h, cache = "off", measure = measure,
                         label = "model " .. label }
    local model_gap = (yard[mo.best_config] or math.huge) / best - 1
    local model_frac = mo.stats.evals / ex.stats.evals
    io.write(string.format("exhaustive: %d evaluations (%d rejected), steps of h = %.3g, " ..
                           "best %s at %.3f ms/step\n", ex.stats.evals, ex.stats.rejected, h,
                           ex.best_config, 1e3 * best))
    io.write(string.format("model:      %d evaluations (%s of exhaustive), chose %s: %s " ..
                           "from the best\n", mo.stats.evals, pct(model_frac),
                           mo.best_config, pct(model_gap)))

    -- 3. the baseline: run_steps steps of the exhaustive best
    local bv, bb = ex.best.variant, ex.best.block
    local finder <close> = solver(p, method, bv, bb)
    for _ = 1, run_steps do finder:step() end
    local T1 = finder.t
    local base <close> = solver(p, method, bv, bb)
    local rb = base:integrate { t1 = T1, label = "baseline " .. label }

    -- 4. the self-adaptive run over the same interval
    local s <close> = solver(p, method, "A")
    local on = ob.tune { target = s, space = space, where = where, strategy = "online",
                         t1 = T1, cache = "off", verify = verify, steps = timed,
                         measure = { warmup = warmup }, label = "online " .. label }
    local o = on.online
    if s.t >= T1 then   -- nothing left to run with the winner
      error(string.format("run_steps = %d is too short for %s: the online tuner used the " ..
                          "whole interval (%d step attempts); set run_steps to at least %d",
                          run_steps, label, o.attempts, 2 * o.attempts), 0)
    end
    local rr = s:integrate { t1 = T1, label = "online rest " .. label }
    local steps_all = o.attempts + rr.steps
    local online_gap = (yard[o.winner] or math.huge) / best - 1
    local t_win = rr.seconds / rr.steps          -- the winner, steady state
    local t_base = rb.seconds / rb.steps
    local online_run = t_win / t_base - 1
    local model_run = 0
    if mo.best_config ~= ex.best_config then
      local sm <close> = solver(p, method, mo.best.variant, mo.best.block)
      local rm = sm:integrate { t1 = T1, label = "model choice " .. label }
      model_run = (rm.seconds / rm.steps) / t_base - 1
    end
    local over_steps = on.stats.seconds / t_win - o.attempts
    local function config_of(text)
      return { variant = text:match("variant=(%S+)"),
               block = tonumber(text:match("block=(%d+)")) }
    end
    local online_pair, online_tie = head_to_head(s0, space, ex.best, config_of(o.winner), h)
    local model_pair, model_tie = head_to_head(s0, space, ex.best, mo.best, h)
    local total = on.stats.seconds + rr.seconds
    local e2e = total / rb.seconds - 1
    io.write(string.format("online:     %d candidates evaluated in %d steps (%d attempts, " ..
                           "%d warm-up), %.3f s; chose %s: %s from the best (yard), %s " ..
                           "(run), %s%s (head to head)\n", o.evaluated, o.tuning_steps,
                           o.attempts, o.warmup_steps, on.stats.seconds, o.winner,
                           pct(online_gap), pct(online_run), pct(online_pair),
                           online_tie and ", tied" or ""))
    io.write(string.format("model head to head: %s%s\n", pct(model_pair),
                           model_tie and ", tied" or ""))
    io.write(string.format("            overhead %.1f steps of the winner = %s of %d steps " ..
                           "(verification %.1f of them, switching %.1f)\n", over_steps,
                           pct(over_steps / run_steps), run_steps,
                           o.verify_seconds / t_win, o.switch_seconds / t_win))
    io.write(string.format("run:        %d steps to t = %.4g: online %.3f s (tuning %.3f + " ..
                           "rest %.3f), baseline %.3f s (%d steps): %+.2f%% end to end\n",
                           steps_all, T1, total, on.stats.seconds, rr.seconds, rb.seconds,
                           rb.steps, 100 * e2e))
    ob.metric(label .. " online_gap_pct", 100 * online_gap, "%")
    ob.metric(label .. " online_gap_run_pct", 100 * online_run, "%")
    ob.metric(label .. " online_gap_pair_pct", 100 * online_pair, "%")
    ob.metric(label .. " model_gap_pair_pct", 100 * model_pair, "%")
    ob.metric(label .. " model_gap_run_pct", 100 * model_run, "%")
    ob.metric(label .. " online_overhead_pct", 100 * over_steps / run_steps, "%")
    ob.metric(label .. " online_end_to_end_pct", 100 * e2e, "%")
    ob.metric(label .. " model_gap_pct", 100 * model_gap, "%")
    ob.metric(label .. " model_evals_pct", 100 * model_frac, "%")
    summary[#summary + 1] = { label, online_gap, online_run, over_steps / run_steps, e2e,
                              model_gap, model_run, model_frac, o.winner, mo.best_config,
                              ex.best_config, online_pair, model_pair }
  end
end

io.write(string.format("\n%-26s %23s %9s %8s %23s %7s\n", "", "online gap", "overhead",
                       "end to", "model gap", "model"))
io.write(string.format("%-26s %7s %7s %7s %9s %8s %7s %7s %7s %7s   %s\n", "problem, method",
                       "yard", "run", "pair", "(" .. run_steps .. ")", "end", "yard", "run",
                       "pair", "evals", "online / model / exhaustive choice"))
local function p1(x) return x == math.huge and "inf" or string.format("%.1f%%", 100 * x) end
for _, r in ipairs(summary) do
  io.write(string.format("%-26s %7s %7s %7s %9s %+7.1f%% %7s %7s %7s %7s   %s / %s / %s\n",
                         r[1], p1(r[2]), p1(r[3]), p1(r[12]), p1(r[4]), 100 * r[5], p1(r[6]),
                         p1(r[7]), p1(r[13]), p1(r[8]), r[9]:gsub("variant=", ""),
                         r[10]:gsub("variant=", ""), r[11]:gsub("variant=", "")))
end
io.write("targets: online gap <= 5% (the head-to-head column \"pair\"), overhead <= 3% of " ..
         run_steps .. " steps, model gap <= 5% with <= 20% of the evaluations\n")
