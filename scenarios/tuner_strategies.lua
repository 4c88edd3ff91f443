-- tuner_strategies.lua: exhaustive, random and annealing search on the same
-- space (a PIRK solver's variant x block size), compared by the evaluations
-- they use, the best configuration they find and the time they take.
--
-- The exhaustive search runs first and measures every valid configuration;
-- each other strategy then runs with a budget of a fraction of that count,
-- for several seeds. A strategy's choice is judged by the exhaustive
-- search's own median for the chosen configuration (one yardstick for
-- all, so that timing noise between runs does not flatter anyone): "gap" is
-- how much slower that is than the exhaustive best; a choice tied with the
-- exhaustive best (within its spread) counts as a hit. `odebench plot
-- RUN_DIR` draws the exhaustive search's median time per configuration as
-- a heatmap of variant against block size (space).
--
--   odebench scenarios/tuner_strategies.lua
--   odebench scenarios/tuner_strategies.lua --set N=256 --set fraction=0.2 --set seeds=5
local ob = require "odebench"

local N        = ob.param("N", 128)             -- BRUSS2D grid: n = 2 N^2
local method   = ob.param("method", "radau1a5")
local steps    = ob.param("steps", 2)           -- time steps per evaluation
local fraction = ob.param("fraction", 0.25)     -- budget of random/anneal
local seeds    = ob.param("seeds", 3)

local p = ob.problem("bruss2d", { N = N })
local s <close> = ob.solver { problem = p, method = method, variant = "A", tol = 1e-6 }

-- The thesis's sequential variants present in this build; the tiled ones
-- take a block size, the others ignore it (so one block size suffices).
local thesis = { "A", "E", "D", "Dblock", "PipeDe2m", "PipeDb2m", "PipeDb2mt",
                 "PipeDb1m", "PipeDb1mt", "ppDb1m", "ppDb1mt" }
local tiled = { Dblock = true, PipeDb2m = true, PipeDb2mt = true, PipeDb1m = true,
                PipeDb1mt = true, ppDb1m = true, ppDb1mt = true }
local present, variants = {}, {}
for _, v in ipairs(ob.list().variants) do present[v.name] = true end
for _, v in ipairs(thesis) do
  if present[v] then variants[#variants + 1] = v end
end

local space = { variant = variants, block = { pow2 = { 16, 4096 } } }
local function where(c) return tiled[c.variant] or c.block == 16 end
local measure = { warmup = 1, min_reps = 3, max_reps = 9, spread = 0.03 }

local function tune(strategy, budget, seed)
  return ob.tune { target = s, space = space, where = where, strategy = strategy,
                   budget = budget, seed = seed, steps = steps, cache = "off",
                   measure = measure, label = "strategies " .. p.label }
end

ob.plot { name = "space", kind = "heatmap", x = "cfg.block", y = "cfg.variant",
          z = "median", where = { strategy = "exhaustive" },
          title = string.format("%s, %s: median time of each configuration (exhaustive)",
                                p.label, method) }
local runs, nrun = 1 + 2 * seeds, 0
ob.progress(0, runs)

io.write(string.format("%s, %s, %d steps per evaluation\n", p.label, method, steps))
local ex = tune("exhaustive")
nrun = nrun + 1
ob.progress(nrun, runs, "exhaustive")
local yard = {}                   -- exhaustive median and spread per configuration
for _, e in ipairs(ex.evaluations) do
  if e.status == "ok" then yard[e.config_str] = e end
end
local best = yard[ex.best_config]
io.write(string.format("valid configurations: %d of %d; exhaustive best %s at %.4g s " ..
                       "(spread %.1f%%), tied with %d\n\n", ex.stats.valid,
                       math.floor(ex.stats.raw), ex.best_config, ex.best_median,
                       100 * ex.best_spread, #ex.tied_configs))

-- Gap of a chosen configuration on the exhaustive yardstick, and whether it
-- is tied with the exhaustive best there.
local function judge(config)
  local e = yard[config]
  if not e then return math.huge, false end
  local tied = math.abs(e.median - best.median) <=
               math.max(e.median * e.spread, best.median * best.spread)
  return e.median / best.median - 1, tied or config == ex.best_config
end

local budget = math.max(1, math.floor(fraction * ex.stats.valid + 0.5))
local rows = { { "exhaustive", 1, ex.stats.evals, 0, 1, ex.stats.seconds, ex.best_config } }
for _, strategy in ipairs { "random", "anneal" } do
  local evals, gaps, hits, secs, worst = 0, 0, 0, 0, nil
  for seed = 1, seeds do
    local r = tune(strategy, { evals = budget }, seed)
    nrun = nrun + 1
    ob.progress(nrun, runs, string.format("%s seed %d", strategy, seed))
    local gap, hit = judge(r.best_config)
    evals = evals + r.stats.evals
    gaps = gaps + gap
    hits = hits + (hit and 1 or 0)
    secs = secs + r.stats.seconds
    if not worst or gap > worst.gap then worst = { gap = gap, config = r.best_config } end
  end
  rows[#rows + 1] = { strategy, seeds, evals / seeds, gaps / seeds, hits / seeds,
                      secs / seeds, worst.config, worst.gap }
  ob.metric(strategy .. "_mean_gap_pct", 100 * gaps / seeds, "%")
  ob.metric(strategy .. "_hit_rate", hits / seeds)
end

io.write(string.format("%-10s %5s %8s %10s %8s %9s  %s\n", "strategy", "runs",
                       "evals", "mean gap", "hits", "seconds", "worst choice (gap)"))
for _, r in ipairs(rows) do
  io.write(string.format("%-10s %5d %8.1f %9.2f%% %7.0f%% %9.3f  %s%s\n", r[1], r[2],
                         r[3], 100 * r[4], 100 * r[5], r[6], r[7],
                         r[8] and string.format(" (%+.2f%%)", 100 * r[8]) or ""))
end
io.write(string.format("\nbudget of random and anneal: %d evaluations (%.0f%% of %d); " ..
                       "gap: the exhaustive median of the choice over the exhaustive " ..
                       "best; hit: tied with it\n", budget, 100 * fraction, ex.stats.valid))
