-- tests/mpi/dist_pirk.lua: the distributed PIRK corrector variants
-- mpi_pirk_A, mpi_pirk_S, mpi_pirk_N, mpi_pirk_X on every rank of
-- `mpirun -n R` (R = 1..4; dist_variants.py runs it, and runs it with one
-- rank too).
--
-- Against one process of the same variant, bit for bit: the error norm is
-- the exact sum over all ranks rounded once (dist_norm_all), so R ranks
-- take the same steps, h for h, and reach the same state. Each case
-- prints a line "fp <case> <steps> <fingerprint>" (FNV-1a over the bits
-- of every step's t and h and of the final state); dist_variants.py
-- checks the lines of R ranks equal those of one rank.
--
-- Against the thesis variant A of one process (pirk_A.c), stepped side by
-- side on every rank: the same accept/reject counts at every step; with
-- fixed steps the same h and state bit for bit (per component the
-- distributed variants sum as A does); with adaptive steps the norm
-- differs from A's running sum by that sum's rounding, which the
-- controller and the estimate e = dEta^(m) - dEta^(m-1) (a difference of
-- close numbers) magnify, more with every step: h and t within 1e-10
-- relative per step taken, the state within 1e-11 (at most 3e-11 and
-- 3e-12 seen). Then one s:integrate of each gives the same step count. A
-- mismatch raises an error naming the case, which ends every rank with
-- status 2.
local ob = require "odebench"

local info = ob.info { bandwidth = false }
local R = info.ranks or 1

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local C = dofile(here .. "dist_check.lua")
local fail = C.fail

local checked, worst_h, worst_y = 0, 0, 0

-- opts: h (fixed steps) or tol; t1 the end; m corrector steps (nil: the
-- method's default); vsA = false: only the fingerprint and the final
-- state within 1e-5 of A's (a stop that the last step before must hit
-- makes that step as short as 5 - t, so A's and this t, a rounding
-- apart, give steps that differ far more than the rounding)
local function case(pname, params, method, variant, opts)
  local label = string.format("%s%s %s %s %s%s t1=%g", pname,
    params.N and ("(N=" .. params.N .. ")") or "", method, variant,
    opts.h and ("h=" .. opts.h) or ("tol=" .. opts.tol),
    opts.m and (" m=" .. opts.m) or "", opts.t1)
  local p = ob.problem(pname, params)
  local function make(v)
    return ob.solver { problem = p, method = method, variant = v,
                       tol = opts.tol, h = opts.h, m = opts.m }
  end
  local a <close> = make("A")
  local b <close> = make(variant)
  local exact = opts.h ~= nil
  local vsA = opts.vsA ~= false
  local r = C.side_by_side(a, b, { label = label, ref = "A", h = opts.h,
    t1 = opts.t1, exact = exact, with_t = true, fingerprint = true,
    h_tol = vsA and 1e-10 or nil, h_per_step = true,
    t_tol = vsA and 1e-10 or nil, every = vsA and 5 or nil, y_tol = 1e-11 })
  if vsA then worst_h = math.max(worst_h, r.dh_step) end
  worst_y = math.max(worst_y, r.y_step)
  local fp = r.fp
  for _, x in ipairs(b:state():totable()) do fp = C.fnv(fp, x) end
  print(string.format("fp %s %d %016x", label, r.steps, fp))
  if not vsA then   -- the fingerprint, and the end near A's
    local e = b:state():max_rel_err(a:state())
    if e > 1e-5 then fail("%s: state off by %.3g relative", label, e) end
    checked = checked + 1
    return
  end
  -- one integrate call each from the same start: the same step count
  C.integrate_alike(a, b, { label = label, ref = "A", t1 = opts.t1,
                            exact = exact, y_tol = 1e-11 })
  checked = checked + 1
end

-- the refusal of variant v for method, exactly, as ob.solver raises it
local function refused(pname, params, method, v, want)
  C.refused(v .. " on " .. pname, want, ob.solver,
            { problem = ob.problem(pname, params), method = method,
              variant = v })
  checked = checked + 1
end

local all = { "mpi_pirk_A", "mpi_pirk_S", "mpi_pirk_N", "mpi_pirk_X" }

for _, v in ipairs(all) do
  -- BRUSS2D N = 8: n = 128, d = 16, blocks of 32..128 (interior and edges)
  case("bruss2d", { N = 8 }, "radau2a5", v, { tol = 1e-6, t1 = 1.0 })
  case("bruss2d", { N = 8 }, "lobatto3c8", v, { h = 0.01, t1 = 0.1 })
  -- STRING N = 10: n = 20, d = 3
  case("string", { N = 10 }, "radau1a5", v, { tol = 1e-7, t1 = 0.5 })
  case("string", { N = 10 }, "radau2a5", v, { tol = 1e-5, t1 = 0.5, m = 2 })
  case("string", { N = 10 }, "lobatto3c8", v, { h = 0.005, t1 = 0.1 })
  -- MEDAKZO N = 6: n = 12, d = 2; up to and over its stop at t = 5 (the
  -- step size chosen again from the whole state after it)
  case("medakzo", { N = 6 }, "radau2a5", v, { tol = 1e-6, t1 = 4.5 })
  case("medakzo", { N = 6 }, "radau2a5", v,
       { tol = 1e-6, t1 = 5.5, vsA = false })
  case("medakzo", { N = 6 }, "radau1a5", v, { h = 0.01, t1 = 0.3 })
end

-- BRUSS2D N = 3: n = 18, d = 6: four ranks hold blocks of 5 and 4, so
-- mpi_pirk_X forwards halos over two ranks and mpi_pirk_N does not apply
case("bruss2d", { N = 3 }, "radau2a5", "mpi_pirk_X", { tol = 1e-6, t1 = 1.0 })
case("bruss2d", { N = 3 }, "lobatto3c8", "mpi_pirk_X", { h = 0.01, t1 = 0.1 })
case("bruss2d", { N = 3 }, "radau2a5", "mpi_pirk_S", { tol = 1e-6, t1 = 1.0 })
if 18 // R >= 6 then
  case("bruss2d", { N = 3 }, "radau2a5", "mpi_pirk_N",
       { tol = 1e-6, t1 = 1.0 })
else
  refused("bruss2d", { N = 3 }, "radau2a5", "mpi_pirk_N", string.format(
    "variant 'mpi_pirk_N' does not apply: mpi_pirk_N needs every rank's "
    .. "block at least as long as the access distance d = 6; bruss2d(N=3) "
    .. "has n = 18, and %d ranks give blocks of %d (mpi_pirk_X forwards "
    .. "halos over several ranks)", R, 18 // R))
end

-- STARS N = 3: n = 18, d = n: A and S (S receives everything), not N or X
for _, v in ipairs { "mpi_pirk_A", "mpi_pirk_S" } do
  case("stars", { N = 3 }, "radau2a5", v, { tol = 1e-6, t1 = 0.2 })
  case("stars", { N = 3 }, "lobatto3c8", v, { h = 0.01, t1 = 0.05 })
end
for _, v in ipairs { "mpi_pirk_N", "mpi_pirk_X" } do
  refused("stars", { N = 3 }, "radau2a5", v, string.format(
    "variant '%s' does not apply: %s needs a limited access distance "
    .. "(d < n); stars(N=3) has d = n = 18: every f_j may read every "
    .. "component (mpi_pirk_A and mpi_pirk_S apply)", v, v))
end

-- explicit RK methods are the mpi_* variants' (dist_erk.c)
for _, v in ipairs(all) do
  refused("string", { N = 10 }, "dopri5", v, string.format(
    "variant '%s' does not apply: %s runs PIRK correctors only; 'dopri5' "
    .. "is an explicit RK method (mpi_%s runs it)", v, v, v:sub(-1)))
end

-- s:checkpoint writes the whole state, gathered first: A restarts from
-- it on the same state, bit for bit, and continues as the distributed
-- one does (each rank writes its own file)
for _, v in ipairs { "mpi_pirk_S", "mpi_pirk_X" } do
  local file = os.tmpname()
  local p = ob.problem("string", { N = 10 })
  local a <close> = ob.solver { problem = p, method = "radau2a5",
                                variant = v, tol = 1e-7 }
  for _ = 1, 5 do a:step() end
  a:checkpoint(file)
  local b <close> = ob.solver { problem = p, method = "radau2a5",
                                variant = "A", tol = 1e-7, restart = file }
  os.remove(file)
  local e0 = b:state():max_rel_err(a:state())
  for _ = 1, 5 do a:step(); b:step() end
  local e = b:state():max_rel_err(a:state())
  if e0 ~= 0 or e > 1e-11 then
    fail("%s: A restarted from its checkpoint: off by %.3g at the "
         .. "restart, %.3g five steps on", v, e0, e)
  end
  checked = checked + 1
end

print(string.format("dist_pirk: %d checks passed on %d rank(s); largest "
                    .. "differences: h %.2g, state %.2g a step", checked, R,
                    worst_h, worst_y))
