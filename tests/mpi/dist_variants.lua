-- tests/mpi/dist_variants.lua: the distributed variants mpi_A, mpi_S,
-- mpi_N, mpi_X, mpi_P against the plain variant of one process, on every rank
-- of `mpirun -n R` (R = 1..4; dist_variants.py runs it).
--
-- Each case steps a plain solver (which computes every component on every
-- rank, alone) and a distributed one side by side and checks, step by
-- step: the same accept/reject counts, the whole state (s:state() gathers
-- it on every rank) within 1e-13 relative per step taken, and the step
-- size within 1e-10 relative. All of it bit for bit with fixed steps and
-- with one rank: the error norm's partial sums are the only thing R ranks
-- add in another order. That rounding (1e-16 of the norm) reaches the
-- state only through h, but the norm of the estimate e = h sum e_i F_i is
-- a difference of close numbers: a state 1e-16 off moves it by up to
-- 1e-11 relative (bs3 on STRING), and h by a third of that. Then one
-- s:integrate of each gives the same step count. A mismatch raises an
-- error naming the case, which ends every rank with status 2.
local ob = require "odebench"

local info = ob.info()
local R = info.ranks or 1

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local C = dofile(here .. "dist_check.lua")
local fail = C.fail

local checked, worst_h, worst_y = 0, 0, 0

-- opts: h (fixed steps) or tol; t1 the end; exact: differences must be 0
local function case(pname, params, method, variant, opts)
  local label = string.format("%s%s %s %s %s", pname,
    params.N and ("(N=" .. params.N .. ")") or "", method, variant,
    opts.h and ("h=" .. opts.h) or ("tol=" .. opts.tol))
  local p = ob.problem(pname, params)
  local function make(v, block, streaming)
    return ob.solver { problem = p, method = method, variant = v,
                       tol = opts.tol, h = opts.h, block = block,
                       streaming = streaming }
  end
  local a <close> = make("plain")
  local b <close> = make(variant, opts.block, opts.streaming)
  if opts.block and b.block ~= opts.block then
    fail("%s: block %d, asked for %d", label, b.block, opts.block)
  end
  local exact = opts.h ~= nil or R == 1
  local r = C.side_by_side(a, b, { label = label, ref = "plain", h = opts.h,
    t1 = opts.t1, exact = exact, h_tol = 1e-10, with_t = true,
    t_tol = 1e-13, every = 7, y_tol = 1e-13 })
  worst_h = math.max(worst_h, r.dh)
  worst_y = math.max(worst_y, r.y_step)
  -- one integrate call each from the same start: the same step count
  C.integrate_alike(a, b, { label = label, ref = "plain", t1 = opts.t1,
                            exact = exact, y_tol = 1e-13 })
  checked = checked + 1
end

-- the refusal of variant v, exactly, as ob.solver raises it
local function refused(pname, params, v, want)
  C.refused(v .. " on " .. pname, want, ob.solver,
            { problem = ob.problem(pname, params), method = "dopri5",
              variant = v })
  checked = checked + 1
end

local all = { "mpi_A", "mpi_S", "mpi_N", "mpi_X", "mpi_P" }

for _, v in ipairs(all) do
  -- BRUSS2D N = 8: n = 128, d = 16, blocks of 32..128 (interior and edges)
  case("bruss2d", { N = 8 }, "dopri5", v, { tol = 1e-6, t1 = 1.0 })
  case("bruss2d", { N = 8 }, "rk4", v, { h = 0.01, t1 = 0.3 })
  -- STRING N = 10: n = 20, d = 3
  case("string", { N = 10 }, "bs3", v, { tol = 1e-7, t1 = 0.5 })
  case("string", { N = 10 }, "heun_euler", v, { tol = 1e-4, t1 = 0.5 })
  case("string", { N = 10 }, "dopri5", v, { h = 0.005, t1 = 0.2 })
  -- MEDAKZO N = 6: n = 12, d = 2; over its stop at t = 5 (the step size
  -- chosen again from the whole state after it)
  case("medakzo", { N = 6 }, "dopri5", v, { tol = 1e-6, t1 = 5.5 })
  case("medakzo", { N = 6 }, "rk4", v, { h = 0.01, t1 = 0.5 })
end

-- S, N and X run the fused variant's sweeps on a block's interior: BRUSS2D
-- N = 16 (n = 512, d = 32) with a window block of 8 moves the window many
-- times across each interior; streaming stores, and rk4 (no FSAL: the
-- last stage's F stays in the window)
for _, v in ipairs { "mpi_S", "mpi_N", "mpi_X" } do
  case("bruss2d", { N = 16 }, "dopri5", v, { tol = 1e-6, t1 = 0.5, block = 8 })
  case("bruss2d", { N = 16 }, "rk4", v, { h = 0.01, t1 = 0.1, block = 16,
                                          streaming = "on" })
  case("bruss2d", { N = 16 }, "bs3", v, { tol = 1e-5, t1 = 0.3, block = 24,
                                          streaming = "on" })
end

-- mpi_P runs the pipe variant's sweep on a block with halos of s d: BRUSS2D
-- N = 16 (n = 512, d = 32) in blocks of 32 (every ring wraps; stage l
-- recomputed (s-1-l) d beyond a block of 128..512), N = 24 with a block
-- of 40 (raised to d = 48) and of 100 (not dividing the rank's block);
-- heun_euler (two stages, no ring), verner65 (eight stages, no FSAL)
case("bruss2d", { N = 16 }, "dopri5", "mpi_P", { tol = 1e-6, t1 = 0.5,
                                                 block = 32 })
case("bruss2d", { N = 16 }, "rk4", "mpi_P", { h = 0.01, t1 = 0.1,
                                              block = 32 })
case("bruss2d", { N = 24 }, "verner65", "mpi_P", { tol = 1e-7, t1 = 0.3,
                                                   block = 48 })
case("bruss2d", { N = 24 }, "bs3", "mpi_P", { tol = 1e-5, t1 = 0.3,
                                              block = 104 })
case("bruss2d", { N = 16 }, "heun_euler", "mpi_P", { tol = 1e-4, t1 = 0.2,
                                                     block = 32 })
refused("stars", { N = 3 }, "mpi_P", "variant 'mpi_P' does not apply: mpi_P "
        .. "needs a method of 2 or more stages and a limited access distance "
        .. "(d < n); stars(N=3) has n = 18, d = 18 (mpi_S applies to any)")

-- BRUSS2D N = 3: n = 18, d = 6: four ranks hold blocks of 5 and 4, so
-- mpi_X forwards halos over two ranks and mpi_N does not apply
case("bruss2d", { N = 3 }, "dopri5", "mpi_X", { tol = 1e-6, t1 = 1.0 })
case("bruss2d", { N = 3 }, "rk4", "mpi_X", { h = 0.01, t1 = 0.2 })
case("bruss2d", { N = 3 }, "dopri5", "mpi_S", { tol = 1e-6, t1 = 1.0 })
if 18 // R >= 6 then
  case("bruss2d", { N = 3 }, "dopri5", "mpi_N", { tol = 1e-6, t1 = 1.0 })
else
  refused("bruss2d", { N = 3 }, "mpi_N", string.format(
    "variant 'mpi_N' does not apply: mpi_N needs every rank's block at least "
    .. "as long as the access distance d = 6; bruss2d(N=3) has n = 18, and "
    .. "%d ranks give blocks of %d (mpi_X forwards halos over several ranks)",
    R, 18 // R))
end

-- STARS N = 3: n = 18, d = n: A and S (S receives everything), not N or X
for _, v in ipairs { "mpi_A", "mpi_S" } do
  case("stars", { N = 3 }, "dopri5", v, { tol = 1e-6, t1 = 0.2 })
  case("stars", { N = 3 }, "rk4", v, { h = 0.01, t1 = 0.1 })
end
for _, v in ipairs { "mpi_N", "mpi_X" } do
  refused("stars", { N = 3 }, v, string.format(
    "variant '%s' does not apply: %s needs a limited access distance (d < n); "
    .. "stars(N=3) has d = n = 18: every f_j may read every component "
    .. "(mpi_A and mpi_S apply)", v, v))
end


-- s:checkpoint writes the whole state (and F_0 under FSAL), gathered
-- first: the plain variant restarts from it on the same state, bit for
-- bit, and continues as the distributed one does (each rank writes its
-- own file)
for _, v in ipairs { "mpi_S", "mpi_X", "mpi_P" } do
  local file = os.tmpname()
  local p = ob.problem("string", { N = 10 })
  local a <close> = ob.solver { problem = p, method = "dopri5", variant = v,
                                tol = 1e-7 }
  for _ = 1, 5 do a:step() end
  a:checkpoint(file)
  local b <close> = ob.solver { problem = p, method = "dopri5",
                                variant = "plain", tol = 1e-7,
                                restart = file }
  os.remove(file)
  local e0 = b:state():max_rel_err(a:state())
  for _ = 1, 5 do a:step(); b:step() end
  local e = b:state():max_rel_err(a:state())
  if e0 ~= 0 or e > (R == 1 and 0 or 1e-12) then
    fail("%s: plain restarted from its checkpoint: off by %.3g at the "
         .. "restart, %.3g five steps on", v, e0, e)
  end
  checked = checked + 1
end

-- s:integrate with a measure that stops on the time budget: the ranks
-- repeat the same number of runs (each run's time is the slowest rank's),
-- so none waits alone in an exchange the others never start
do
  local p = ob.problem("bruss2d", { N = 8 })
  local s <close> = ob.solver { problem = p, method = "dopri5",
                                variant = "mpi_N", tol = 1e-6 }
  local row = s:integrate { t1 = 0.5, measure = { warmup = 0, min_reps = 1,
    max_reps = 1000, max_seconds = 0.02, target_spread = 1e-9 } }
  local reps = ob.allreduce and ob.allreduce(row.reps, "max") or row.reps
  if row.status ~= "ok" or reps ~= row.reps then
    fail("integrate on a time budget: status %s, %d runs here, %d "
         .. "on another rank", row.status, row.reps, reps)
  end
  checked = checked + 1
end

print(string.format("dist_variants: %d checks passed on %d rank(s); largest "
                    .. "differences: h %.2g, state %.2g a step", checked, R,
                    worst_h, worst_y))
