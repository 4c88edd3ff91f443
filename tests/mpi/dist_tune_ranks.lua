-- tests/mpi/dist_tune_ranks.lua: ob.tune choosing the variant, the window
-- block and the active ranks (the variants' option `ranks`) together on
-- every rank of `mpirun -n R` (dist_tune_ranks.py runs it for R = 1, 3,
-- and checks the results rows and the tuning database it leaves at
-- $DIST_TUNE_DB). Checks here: every configuration of the space is
-- evaluated once and ok (each verified against plain); every rank chooses
-- the same one, whose ranks lies in 1..R; a time budget ends the search at
-- the same evaluation on every rank; a value above R (offline and
-- online) and an option no variant of the space declares are refused
-- with the reason. A mismatch raises an error naming it, which
-- ends every rank with status 2.
local ob = require "odebench"

local info = ob.info { bandwidth = false }
local R, me = info.ranks or 1, info.rank or 0
local checked = 0

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local C = dofile(here .. "dist_check.lua")
local fail = C.fail

local p = ob.problem("bruss2d", { N = 16 })
local ranks = { 1 }
if R > 1 then ranks[#ranks + 1] = R end
local space = { variant = { "mpi_A", "mpi_N", "mpi_X" }, ranks = ranks,
                block = { 64, 256 } }
local quick = { warmup = 1, min_reps = 3, max_reps = 9, max_seconds = 0.05,
                spread = 1e-9 }
local db = os.getenv("DIST_TUNE_DB") or "off"

do
  local s <close> = ob.solver { problem = p, method = "dopri5",
                                variant = "mpi_N", h = 1e-4 }
  local t = ob.tune { target = s, space = space, steps = 2, cache = db,
                      measure = quick, label = "dist_tune_ranks" }
  local want = 3 * #ranks * 2
  local ok = 0
  for _, e in ipairs(t.evaluations) do
    if e.status == "ok" then ok = ok + 1 end
  end
  if #t.evaluations ~= want or ok ~= want then
    fail("%d evaluations, %d ok, expected %d", #t.evaluations, ok, want)
  end
  checked = checked + 1
  local best = t.best and t.best.ranks
  if not best or best < 1 or best > R then
    fail("the choice %s has ranks %s, not in 1..%d", tostring(t.best_config),
         tostring(best), R)
  end
  checked = checked + 1
  local idx = 0
  for i, e in ipairs(t.evaluations) do
    if e.config_str == t.best_config then idx = i end
  end
  local lo = ob.allreduce({ idx, -idx }, "max")
  if lo[1] ~= -lo[2] then
    fail("ranks choose different configurations: %d..%d", -lo[2], lo[1])
  end
  checked = checked + 1
end

-- a time budget ends the search at the same evaluation on every rank (the
-- slowest rank's elapsed time decides, so that a rank whose clock is just
-- short of the budget does not start an evaluation the others skip)
do
  local s <close> = ob.solver { problem = ob.problem("bruss2d", { N = 64 }),
                                method = "dopri5", variant = "mpi_N",
                                h = 1e-5 }
  local t = ob.tune { target = s, space = space, steps = 2, cache = "off",
                      measure = quick, budget = { seconds = 0.05 },
                      label = "dist_tune_ranks budget" }
  local n = #t.evaluations
  local v = ob.allreduce({ n, -n }, "max")
  if v[1] ~= -v[2] or n < 1 then
    fail("a time budget ended the search after %d..%d evaluations across "
         .. "the ranks (here %d)", -v[2], v[1], n)
  end
  checked = checked + 1
end

-- refusals
local function refused(want, t)
  local got = C.refusal(want, ob.tune, t)
  if got ~= nil then
    fail("expected the refusal '%s', got %s", want, got or "a result")
  end
  checked = checked + 1
end
do
  local s <close> = ob.solver { problem = p, method = "dopri5",
                                variant = "mpi_N", h = 1e-4 }
  refused(string.format("field 'space': parameter 'ranks': variant 'mpi_A': "
    .. "option 'ranks' must be in 0..%d, got %d", R, R + 1),
    { target = s, space = { variant = { "mpi_A", "mpi_N" },
                            ranks = { 1, R + 1 } } })
  refused("field 'space': unknown parameter 'tile' for a solver target "
    .. "(allowed: variant, block, threads); no variant of the space "
    .. "declares an option 'tile'",
    { target = s, space = { variant = { "mpi_A", "plain" }, tile = { 1 } } })
  refused(string.format("field 'space': parameter 'ranks': variant 'mpi_N': "
    .. "option 'ranks' must be in 0..%d, got %d", R, R + 1),
    { target = s, strategy = "online", t1 = 1e-3,
      space = { ranks = { R + 1 } } })
end

print(string.format("dist_tune_ranks: %d checks passed on %d rank(s); "
                    .. "largest differences: h 0, state 0 a step", checked, R))
