-- peer_arkode.lua: our explicit RK variants beside the peer, SUNDIALS
-- ARKODE's ERKStep, on BRUSS2D at an out-of-cache and a cache-resident size.
--
-- ARKODE gets our tableau (dopri5 by default) and our tolerance, and it
-- takes fixed steps of exactly the h our step-size controller picks (the
-- variant "arkode", core/ode/variants/arkode.c), so every variant takes the
-- same steps and the time per step compares like with like. For each size the
-- scenario finds the step size on the problem's first steps, integrates
-- `steps` steps' worth of time once to warm up and once measured, and prints
-- the time per step of each variant, ours over ARKODE's, and how far each
-- final state is from ARKODE's.
--
--   odebench scenarios/peer_arkode.lua                      -- N = 2000 and 64
--   odebench scenarios/peer_arkode.lua --set N=1000 --set steps=10
--   odebench scenarios/peer_arkode.lua --set variants=arkode,fused
--
-- Needs a build with the peer: meson setup build -Dpeers=enabled (SUNDIALS
-- ARKODE 6.x, Debian 12's libsundials-dev 6.4.1).
--
-- ARKODE's speed depends on how its library was compiled, and the log line
-- "arkode: SUNDIALS ... ERKStep from <library>" says which one ran. Debian
-- 12's libsundials 6.4.1 is built without optimization (-O0), which makes
-- ARKODE several times slower than it need be. For a fair comparison build
-- the same source (apt-get source sundials) with cmake -DCMAKE_BUILD_TYPE=
-- Release -DCMAKE_C_FLAGS=-march=native (our flags) into a prefix, and run
-- with LD_LIBRARY_PATH=<prefix>/lib: same soname and ABI, no rebuild.
local ob = require "odebench"

local N        = ob.param("N", 2000)        -- out of cache: n = 2 N^2
local Nc       = ob.param("Nc", 64)         -- cache-resident
local steps    = ob.param("steps", 20)      -- steps measured at N
local steps_c  = ob.param("steps_c", 2000)  -- steps measured at Nc
local method   = ob.param("method", "dopri5")
local tol      = ob.param("tol", 1e-6)
local variants = ob.param("variants", "arkode,plain,fused,pipe")

local function split(s)
  local t = {}
  for w in s:gmatch("[^,%s]+") do t[#t + 1] = w end
  return t
end

local have = {}
for _, v in ipairs(ob.list().variants) do have[v.name] = true end
if not have.arkode then
  io.write("peer_arkode: this build has no \"arkode\" variant: configure "
    .. "with -Dpeers=enabled (needs SUNDIALS ARKODE 6.x, Debian's "
    .. "libsundials-dev); nothing to compare.\n")
  return
end

-- The step size the controller settles on after the first steps.
local function step_size(p)
  local s <close> = ob.solver { problem = p, method = method, tol = tol,
                                variant = "fused" }
  local h = 0
  for _ = 1, 8 do h = s:step().h end
  return h
end

io.write(string.format("%s, tol %g, same steps for every variant "
  .. "(ARKODE takes fixed steps of our controller's h)\n", method, tol))
io.write(string.format("%6s %10s %8s  %-8s %6s %5s %11s %9s %10s\n", "N", "n",
  "MiB/vec", "variant", "steps", "rej", "s/step", "vs arkode",
  "state diff"))
for _, size in ipairs({ { N, steps }, { Nc, steps_c } }) do
  local n_grid, nsteps = size[1], size[2]
  local p = ob.problem("bruss2d", { N = n_grid })
  local span = nsteps * step_size(p)
  local ark_time, ark_state
  for _, v in ipairs(split(variants)) do
    local s <close> = ob.solver { problem = p, method = method, tol = tol,
                                  variant = v }
    s:integrate { t0 = 0, t1 = span / nsteps * 2, label = "warm-up " .. v }
    local r = s:integrate { t0 = 0, t1 = span, label = "N=" .. n_grid }
    local tps = r.time_per_step
    local rel, diff = "", ""
    if v == "arkode" then
      ark_time, ark_state = tps, s:state()
    elseif ark_time then
      rel = string.format("%.2fx", ark_time / tps)
      diff = string.format("%.1e", s:state():max_rel_err(ark_state))
    end
    io.write(string.format("%6d %10d %8.2f  %-8s %6d %5d %11.4e %9s %10s\n",
      n_grid, p.n, p.n * 8 / 2^20, v, r.steps, r.rejected, tps, rel, diff))
    if v ~= "arkode" and ark_time then
      ob.metric(string.format("speedup_vs_arkode_%s_N%d", v, n_grid),
                ark_time / tps)
    end
  end
end
io.write("vs arkode: ARKODE's time per step over the variant's "
  .. "(above 1: faster than ARKODE); state diff: max relative difference "
  .. "from ARKODE's final state\n")
io.write("ARKODE's speed depends on its build: the log's \"arkode: SUNDIALS "
  .. "... from\" line names the library (see this file's header)\n")
