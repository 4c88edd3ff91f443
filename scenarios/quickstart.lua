-- quickstart.lua: the first thing to run.
--
-- Integrates the 2-D Brusselator (BRUSS2D, n = 2 N^2 unknowns, access
-- distance 2N) from t = 0 to 1 with Dormand-Prince 5(4) at tolerance 1e-6 in
-- the fused CPU variant, checks the result against an independent
-- high-accuracy solution (Verner 6(5) at tolerance 1e-10), and prints the
-- steps, the time per step, the effective bandwidth and the row's % floor:
-- the least time of the solve (y read and ynew written once a step) at the
-- bandwidth this machine measured, over the time taken ('*' and a footnote
-- when above 100%: in cache when y and ynew fit the last-level cache).
--
--   odebench scenarios/quickstart.lua                 -- N = 128
--   odebench scenarios/quickstart.lua --set N=256     -- a larger grid
--   odebench scenarios/quickstart.lua --set variant=plain --set tol=1e-8
--   odebench scenarios/quickstart.lua --params       -- the parameters
--
-- Results go to runs/<date>-<time>-quickstart/results.{json,csv}.
local ob = require "odebench"

local N       = ob.param("N", 128, "grid points per side (n = 2 N^2)")
local variant = ob.param("variant", "fused", "CPU variant: fused, pipe or plain")
local tol     = ob.param("tol", 1e-6, "error tolerance of the adaptive steps")

local p = ob.problem("bruss2d", { N = N })
local s = ob.solver { problem = p, method = "dopri5", variant = variant, tol = tol }

local ref = ob.reference(p, { t0 = 0, t1 = 1, tol = 1e-10 })
local r = s:integrate { t0 = 0, t1 = 1, reference = ref }

ob.report(r)
assert(r.err < 1e-4, string.format("relative error %.3g is above 1e-4", r.err))
