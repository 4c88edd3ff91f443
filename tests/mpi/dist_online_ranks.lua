-- tests/mpi/dist_online_ranks.lua: online tuning (ob.tune{strategy =
-- "online"}, the self-adaptive solver of the PIRK autotuning thesis's
-- §10.3) choosing the distributed variant and its active ranks (the
-- option `ranks`) while it integrates BRUSS2D, on every rank of
-- `mpirun -n R` (dist_online_ranks.py runs it for R = 1, 2, 3 and checks
-- the results rows it leaves). Every rank times each step as the slowest
-- rank (odb_tune_ranks), so every rank must see the same figures, switch
-- at the same steps and choose the same configuration; the state must be
-- the one-process plain variant's (integrated to the tuning phase's end,
-- where the phase lands on a step, then on): fixed steps within 1e-13
-- relative a step (the distributed variants compute plain's stages),
-- adaptive steps within the tolerance rtol (their exact error norm
-- differs from plain's running sum by a few ulps, and from one variant to
-- the next, so the step sizes may part: 7e-11 over 24 steps seen on 2
-- ranks). A
-- candidate whose layout does not fit on its active ranks fails with the
-- reason and is never chosen; a value of ranks above R and an option no
-- variant declares are refused with the exact message. A mismatch raises
-- an error naming it, which ends every rank with status 2.
local ob = require "odebench"

local info = ob.info { bandwidth = false }
local R = info.ranks or 1
local checked, worst = 0, 0

local function fail(fmt, ...) error(string.format(fmt, ...), 0) end
local function check(ok, fmt, ...)
  if not ok then fail(fmt, ...) end
  checked = checked + 1
end

-- largest |a - b| over the largest |b|, component by component
local function rel_diff(a, b)
  local num, den = 0, 0
  for i = 1, #b do
    local d = math.abs(a[i] - b[i])
    if d ~= d then d = math.huge end
    num = math.max(num, d)
    den = math.max(den, math.abs(b[i]))
  end
  return den > 0 and num / den or num
end

local all = {}
for P = 1, R do all[#all + 1] = P end
local space = { variant = { "mpi_A", "mpi_N", "mpi_X" }, ranks = all }

-- the same winner, evaluations and figures on every rank
local function same_on_all(t, what)
  local idx, sum = 0, 0
  for i, e in ipairs(t.evaluations) do
    if e.config_str == t.online.winner then idx = i end
    sum = sum + (e.median or 0)
  end
  local n, steps = #t.evaluations, t.online.tuning_steps
  local v = ob.allreduce({ idx, -idx, sum, -sum, n, -n, steps, -steps },
                         "max")
  check(idx > 0 and v[1] == -v[2] and v[3] == -v[4] and v[5] == -v[6] and
        v[7] == -v[8], "%s: ranks differ: winner %d..%d (here %s), figures "
        .. "%.17g..%.17g, evaluations %d..%d, steps %d..%d", what, -v[2],
        v[1], t.online.winner, -v[4], v[3], -v[6], v[5], -v[8], v[7])
end

-- the solver runs the winner: its variant and its active ranks
local function runs_winner(s, t, what)
  local variant = t.online.winner:match("variant=(%S+)")
  local ranks = tonumber(t.online.winner:match("ranks=(%d+)"))
  local opt = t.online.options.ranks
  check(variant == s.variant and ranks and opt == ranks and ranks >= 1 and
        ranks <= R, "%s: winner '%s', the solver runs %s with ranks %s "
        .. "(1..%d)", what, t.online.winner, s.variant, tostring(opt), R)
end

-- online tuning of s over sp to t1, the rest to t2; against plain
local function case(what, p, opts, sp, t1, t2, tol)
  local s <close> = ob.solver { problem = p, method = "dopri5",
                                variant = opts.variant or "mpi_N",
                                h = opts.h, tol = opts.tol,
                                tiling = opts.tiling }
  local t = ob.tune { target = s, strategy = "online", t1 = t1, steps = 2,
                      space = sp, verify = "full", label = what }
  same_on_all(t, what)
  runs_winner(s, t, what)
  s:integrate { t1 = t2 }
  local a <close> = ob.solver { problem = p, method = "dopri5",
                                variant = "plain", h = opts.h, tol = opts.tol }
  -- plain stops at t1 too, where the tuning phase ends on a step
  local steps = a:integrate({ t1 = t1 }).steps + a:integrate({ t1 = t2 }).steps
  local d = rel_diff(s:state(), a:state())
  check(s.t == a.t and d <= tol(steps), "%s: state differs from plain's by "
        .. "%.3g at t = %.17g (plain %.17g)", what, d, s.t, a.t)
  if opts.h then worst = math.max(worst, d / steps) end
  return t
end

local bruss = ob.problem("bruss2d", { N = 16 })   -- n = 512, d = 32
case("fixed", bruss, { h = 1e-4 }, space, 3e-3, 5e-3,
     function(steps) return 1e-13 * steps end)
case("adaptive", bruss, { tol = 1e-8 }, space, 1, 1.5,
     function() return 1e-8 end)

-- BRUSS2D N = 2 (n = 8, d = 4): mpi_N fits on 1 and 2 active ranks, not
-- on 3 (blocks 3, 3, 2 < d); that candidate fails, is never chosen, and
-- the solver goes on with the variant it ran before
do
  local tiny = ob.problem("bruss2d", { N = 2 })
  local t = case("layout", tiny, { h = 1e-3, tiling = { ranks = 1 } },
                 { variant = { "mpi_N" }, ranks = all }, 0.02, 0.03,
                 function(steps) return 1e-13 * steps end)
  local failed, want = 0, "setup: variant 'mpi_N' does not apply: mpi_N "
    .. "needs every rank's block at least as long as the access distance "
    .. "d = 4; bruss2d(N=2) has n = 8, and 3 ranks give b"
  for _, e in ipairs(t.evaluations) do
    if e.status ~= "ok" then
      if not (e.config_str == "variant=mpi_N ranks=3" and
              (e.message or ""):find(want, 1, true)) then
        fail("layout: %s %s: %s", e.config_str, e.status, e.message or "")
      end
      failed = failed + 1
    end
  end
  check(failed == (R >= 3 and 1 or 0) and
        not t.online.winner:find("ranks=3", 1, true),
        "layout: %d candidates failed (want %d), winner %s", failed,
        R >= 3 and 1 or 0, t.online.winner)
end

-- refusals, before anything runs
local function refused(want, t)
  local ok, err = pcall(ob.tune, t)
  check(not ok and tostring(err):find(want, 1, true), "expected the refusal "
        .. "'%s', got %s", want, ok and "a result" or tostring(err))
end
do
  local s <close> = ob.solver { problem = bruss, method = "dopri5",
                                variant = "mpi_N", h = 1e-4 }
  refused(string.format("field 'space': parameter 'ranks': variant 'mpi_A': "
    .. "option 'ranks' must be in 0..%d, got %d", R, R + 1),
    { target = s, strategy = "online", t1 = 1e-3,
      space = { variant = { "mpi_A", "mpi_N" }, ranks = { 1, R + 1 } } })
  refused(string.format("field 'space': parameter 'ranks': variant 'mpi_N': "
    .. "option 'ranks' must be in 0..%d, got %d", R, R + 1),
    { target = s, strategy = "online", t1 = 1e-3,
      space = { ranks = { R + 1 } } })
  refused("field 'space': unknown parameter 'ranks' for a solver target "
    .. "(allowed: variant, block, threads); no variant of the space "
    .. "declares an option 'ranks'",
    { target = s, strategy = "online", t1 = 1e-3,
      space = { variant = { "plain", "fused" }, ranks = { 1 } } })
  check(s.t == 0, "the refusals left the solver at t = %g", s.t)
end

print(string.format("dist_online_ranks: %d checks passed on %d rank(s); "
                    .. "largest differences: h 0, state %.3g a step",
                    checked, R, worst))
