-- tests/mpi/dist_arkode.lua: the distributed ARKODE peer arkode_mpi
-- (dist/ode/dist_arkode.c) against mpi_N on every rank of `mpirun -n R`
-- (R = 1..3; dist_variants.py runs it in builds that have the peer).
--
-- Each case integrates the same problem with mpi_N and with arkode_mpi
-- (the same tableau, tolerances and, with h, fixed steps) and compares the
-- whole state (s:state() gathers it on every rank). ARKODE forms every
-- linear combination in its own order (the one-process peer's notes in
-- core/ode/variants/arkode.c), so the two agree to rounding with fixed
-- steps (1e-12 relative) and, with adaptive steps, to the tolerance
-- (1e-6 relative: h drifts apart in its last digits, and the step counts
-- may differ by a few). Then the refusals, exactly. A mismatch raises an
-- error naming the case, which ends every rank with status 2.
local ob = require "odebench"

local info = ob.info()
local R = info.ranks or 1

local function fail(fmt, ...)
  error(string.format(fmt, ...), 0)
end

local checked, worst_h, worst_y = 0, 0, 0

local M1 = { warmup = 0, min_reps = 1, max_reps = 1 }

-- opts: h (fixed steps) or tol; t1 the end; restart: set_state halfway
-- (ARKODE is reset from the solver's state on every rank)
local function case(pname, params, method, opts)
  local label = string.format("%s(N=%d) %s %s", pname, params.N, method,
                              opts.h and ("h=" .. opts.h) or ("tol=" .. opts.tol))
  local p = ob.problem(pname, params)
  local function make(v)
    return ob.solver { problem = p, method = method, variant = v,
                       tol = opts.tol, h = opts.h }
  end
  local a <close> = make("mpi_N")
  local b <close> = make("arkode_mpi")
  local limit = opts.h and 1e-12 or 1e-6
  local function run(t1)
    local ra = a:integrate { t1 = t1, measure = M1 }
    local rb = b:integrate { t1 = t1, measure = M1 }
    if ra.status ~= "ok" or rb.status ~= "ok" then
      fail("%s: status %s, mpi_N %s", label, rb.status, ra.status)
    end
    if opts.h and ra.steps ~= rb.steps then
      fail("%s: %d fixed steps, mpi_N %d", label, rb.steps, ra.steps)
    end
    if math.abs(ra.steps - rb.steps) > 3 + ra.steps // 20 then
      fail("%s: %d steps, mpi_N %d", label, rb.steps, ra.steps)
    end
    local e = b:state():max_rel_err(a:state())
    worst_y = math.max(worst_y, e / math.max(ra.steps, 1))
    if e > limit then
      fail("%s: state off by %.3g relative at t = %g (limit %g)", label, e,
           t1, limit)
    end
    if not opts.h then
      local dh = math.abs(ra.h - rb.h) / ra.h
      worst_h = math.max(worst_h, dh)
    end
  end
  if opts.restart then
    run(opts.t1 / 2)
    local y = a:state()
    a:set_state(y, opts.t1 / 2)
    b:set_state(y, opts.t1 / 2)
  end
  run(opts.t1)
  checked = checked + 1
end

-- the refusal of arkode_mpi, exactly, as ob.solver raises it
local function refused(pname, params, method, want)
  local ok, err = pcall(ob.solver, { problem = ob.problem(pname, params),
                                     method = method, variant = "arkode_mpi" })
  if ok then fail("arkode_mpi on %s: expected the refusal '%s'", pname, want) end
  want = "bad argument #1 to 'odebench.solver' (" .. want .. ")"
  if tostring(err) ~= want then
    fail("arkode_mpi on %s: refused with '%s', expected '%s'", pname,
         tostring(err), want)
  end
  checked = checked + 1
end

-- BRUSS2D N = 16: n = 512, d = 32, blocks of 170..512 (interior and edges)
case("bruss2d", { N = 16 }, "dopri5", { tol = 1e-6, t1 = 1.0 })
case("bruss2d", { N = 16 }, "dopri5", { tol = 1e-8, t1 = 0.5, restart = true })
case("bruss2d", { N = 16 }, "dopri5", { h = 0.01, t1 = 0.2 })
-- rk4 and heun_euler: c_s = 1 without FSAL (SUNDIALS issue #311's
-- workaround, a reset every step)
case("bruss2d", { N = 16 }, "rk4", { h = 0.01, t1 = 0.2 })
case("bruss2d", { N = 16 }, "heun_euler", { tol = 1e-4, t1 = 0.3 })
-- STRING N = 30: n = 60, d = 3
case("string", { N = 30 }, "dopri5", { tol = 1e-7, t1 = 0.5 })
case("string", { N = 30 }, "bs3", { tol = 1e-7, t1 = 0.5, restart = true })
case("string", { N = 30 }, "dopri5", { h = 0.005, t1 = 0.2 })

refused("stars", { N = 3 }, "dopri5",
  "variant 'arkode_mpi' does not apply: arkode_mpi needs a limited access "
  .. "distance (d < n); stars(N=3) has d = n = 18: every f_j may read every "
  .. "component (mpi_A and mpi_S apply)")
refused("bruss2d", { N = 4 }, "radau1a5",
  "variant 'arkode_mpi' does not apply: arkode_mpi runs explicit RK methods "
  .. "only; 'radau1a5' is a PIRK corrector")
-- BRUSS2D N = 2: n = 8, d = 4: blocks of 8 and 4 on one and two ranks,
-- 3 and 2 on three
if 8 // R >= 4 then
  case("bruss2d", { N = 2 }, "dopri5", { tol = 1e-6, t1 = 0.5 })
else
  refused("bruss2d", { N = 2 }, "dopri5", string.format(
    "variant 'arkode_mpi' does not apply: arkode_mpi needs every rank's "
    .. "block at least as long as the access distance d = 4; bruss2d(N=2) "
    .. "has n = 8, and %d ranks give blocks of %d (mpi_X forwards halos over "
    .. "several ranks)", R, 8 // R))
end

print(string.format("dist_arkode: %d checks passed on %d rank(s); largest "
                    .. "differences: h %.3g, state %.3g a step", checked, R,
                    worst_h, worst_y))
