-- tests/mpi/dist_active.lua: the option `ranks` of the distributed
-- variants (the active ranks: the components split over the first
-- `ranks` ranks only, the others holding none), on every rank of
-- `mpirun -n R` (dist_variants.py runs it for R = 1, 3, 4).
--
-- For P = 1, 2, 3 active ranks: where P <= R, mpi_N, mpi_A, mpi_X, mpi_P
-- (explicit RK, against plain on one process) and mpi_pirk_N, mpi_pirk_A (PIRK,
-- against A on one process) on BRUSS2D and STRING are stepped side by side
-- with the one-process variant on every rank, with the tolerances of
-- dist_variants.lua and dist_pirk.lua: fixed steps bit for bit; adaptive
-- steps the same accept/reject counts, h within 1e-10 relative, the state
-- within 1e-13 relative a step (explicit RK: the error norm's partial
-- sums of P ranks; PIRK: the exact norm, the difference from A's running
-- sum). Where P > R the option is refused with the range. The layout
-- checks apply to the active ranks: BRUSS2D N = 3 (n = 18, d = 6) on 3 or
-- 4 ranks is too small for mpi_N on all of them, not on 2. The number of
-- checks is the same for every R. A mismatch raises an error naming the
-- case, which ends every rank with status 2.
local ob = require "odebench"

local info = ob.info { bandwidth = false }
local R = info.ranks or 1

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local C = dofile(here .. "dist_check.lua")

local checked, worst_h, worst_y = 0, 0, 0

-- variant on P active ranks against ref (plain or A) on one process
local function case(pname, params, method, variant, P, opts)
  local label = string.format("%s(N=%d) %s %s ranks=%d %s", pname, params.N,
    method, variant, P, opts.h and ("h=" .. opts.h) or ("tol=" .. opts.tol))
  local p = ob.problem(pname, params)
  local ref = variant:find("pirk", 1, true) and "A" or "plain"
  local a <close> = ob.solver { problem = p, method = method, variant = ref,
                                tol = opts.tol, h = opts.h }
  local b <close> = ob.solver { problem = p, method = method,
                                variant = variant, tol = opts.tol,
                                h = opts.h, tiling = { ranks = P } }
  local r = C.side_by_side(a, b, { label = label, ref = ref, h = opts.h,
    t1 = opts.t1, exact = opts.h ~= nil, h_tol = 1e-10, every = 5,
    y_tol = 1e-13 })
  worst_h = math.max(worst_h, r.dh)
  worst_y = math.max(worst_y, r.y_step)
  -- one integrate call each from the same start: the same step count
  C.integrate_alike(a, b, { label = label, ref = ref, t1 = opts.t1 })
  checked = checked + 1
end

-- ob.solver{...} refused with exactly want (a substring of the error)
local function refused(what, want, t)
  C.refused(what, want, ob.solver, t)
  checked = checked + 1
end

local bruss = { N = 8 }    -- n = 128, d = 16
local string10 = { N = 10 }   -- n = 20, d = 3
for P = 1, 3 do
  if P <= R then
    for _, v in ipairs { "mpi_N", "mpi_A", "mpi_X" } do
      case("bruss2d", bruss, "dopri5", v, P, { tol = 1e-6, t1 = 0.5 })
      case("string", string10, "bs3", v, P, { tol = 1e-7, t1 = 0.3 })
      case("string", string10, "rk4", v, P, { h = 0.005, t1 = 0.1 })
    end
    for _, v in ipairs { "mpi_pirk_N", "mpi_pirk_A" } do
      case("bruss2d", bruss, "radau2a5", v, P, { tol = 1e-6, t1 = 0.5 })
      case("string", string10, "lobatto3c8", v, P, { h = 0.005, t1 = 0.05 })
    end
    -- mpi_P: halos of s d from the active neighbours (STRING's n = 20
    -- with DOPRI5's s d = 21: every active rank receives the whole state)
    case("bruss2d", bruss, "dopri5", "mpi_P", P, { tol = 1e-6, t1 = 0.5 })
    case("string", string10, "dopri5", "mpi_P", P, { h = 0.005, t1 = 0.1 })
  else
    -- 15 checks, as the branch above
    for _, v in ipairs { "mpi_N", "mpi_A", "mpi_X", "mpi_S", "mpi_P",
                         "mpi_pirk_N", "mpi_pirk_A", "mpi_pirk_X",
                         "mpi_pirk_S" } do
      local m = v:find("pirk", 1, true) and "radau2a5" or "dopri5"
      refused(v .. " ranks=" .. P, string.format(
        "field 'tiling.ranks': must be in 0..%d, got %d", R, P),
        { problem = ob.problem("bruss2d", bruss), method = m, variant = v,
          tiling = { ranks = P } })
    end
    for _ = 1, 6 do checked = checked + 1 end
  end
end

-- one more than the run's ranks, and below 0, are refused with the range
for _, P in ipairs { R + 1, -1 } do
  refused("mpi_N ranks=" .. P, string.format(
    "field 'tiling.ranks': must be in 0..%d, got %d", R, P),
    { problem = ob.problem("bruss2d", bruss), method = "dopri5",
      variant = "mpi_N", tiling = { ranks = P } })
end
refused("mpi_N ranks=1.5", "field 'tiling.ranks': must be an integer, got 1.5",
        { problem = ob.problem("bruss2d", bruss), method = "dopri5",
          variant = "mpi_N", tiling = { ranks = 1.5 } })

-- the layout on the active ranks: BRUSS2D N = 3 (n = 18, d = 6) gives
-- blocks of 6 on 3 ranks and of 4 on 4, so mpi_N applies on all ranks of
-- 3, on 2 active of 4, not on all of 4; N = 2 (n = 8, d = 4) on 3 active
-- ranks gives blocks of 2
local b3 = ob.problem("bruss2d", { N = 3 })
if R >= 2 then
  case("bruss2d", { N = 3 }, "dopri5", "mpi_N", 2, { tol = 1e-6, t1 = 0.5 })
else
  checked = checked + 1
end
if R == 4 then
  refused("mpi_N on 4 ranks", "variant 'mpi_N' does not apply: mpi_N needs "
    .. "every rank's block at least as long as the access distance d = 6; "
    .. "bruss2d(N=3) has n = 18, and 4 ranks give blocks of 4 (mpi_X "
    .. "forwards halos over several ranks)",
    { problem = b3, method = "dopri5", variant = "mpi_N" })
  refused("mpi_pirk_N on 3 active ranks of 4", "variant 'mpi_pirk_N' does "
    .. "not apply: mpi_pirk_N needs every active rank's block at least as "
    .. "long as the access distance d = 4; bruss2d(N=2) has n = 8, and 3 "
    .. "active ranks of 4 (option ranks) give blocks of 2 (mpi_pirk_X "
    .. "forwards halos over several ranks)",
    { problem = ob.problem("bruss2d", { N = 2 }), method = "radau2a5",
      variant = "mpi_pirk_N", tiling = { ranks = 3 } })
else
  checked = checked + 2
end

print(string.format("dist_active: %d checks passed on %d rank(s); largest "
                    .. "differences: h %.2g, state %.2g a step", checked, R,
                    worst_h, worst_y))
