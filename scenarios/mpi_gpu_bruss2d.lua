-- scenarios/mpi_gpu_bruss2d.lua: BRUSS2D on GPU ranks (mpi_gpu_stream2d,
-- dist/ode/dist_gpu.c: slabs of rows, one GPU a rank, halo rows K S deep
-- exchanged once every K steps) against gpu_stream2d on one GPU of the
-- same machine, in one run:
--
--   mpirun -n 2 odebench scenarios/mpi_gpu_bruss2d.lua
--   odebench scenarios/mpi_gpu_bruss2d.lua --set N=1024 --set steps=50
--
-- (`mpirun -n 2 odebench scenarios/gpu_bruss2d.lua` runs this too.) Each
-- rank takes the GPU of its local rank (odb_kernels_register_on); with
-- more ranks than GPUs they share. Per N and method:
--  - fixed steps (h as gpu_bruss2d.lua takes it): µs a step of the R GPU
--    ranks and of gpu_stream2d on rank 0's GPU alone, both with one sync
--    a run (sync = call; the one GPU's fastest), and of the one GPU with
--    the norm back every step (sync = step); the speed-up of R GPUs over
--    one; the final states of the two compared (the largest relative
--    difference; the GPU ranks compute each cell as one GPU does, so 0 is
--    expected);
--  - adaptive steps (tol): µs an attempt of both, each with its default
--    controller: for the ranks on the devices where each rank has a GPU
--    of its own (the GPUs sum the norm across the ranks), else on the
--    hosts (the norm summed over the ranks every attempt); for the one GPU
--    on the device (its fastest); and the step counts.
-- Times are medians over `reps` timed runs after a warm-up, with the
-- spread (q3 - q1 over the median); the ranks' time is the slowest
-- rank's. The halo path says whether the MPI library took device buffers
-- (CUDA-aware) or the halos went through pinned host buffers.
local ob = require "odebench"

local Ns      = ob.param("N", "4096,5792")
local methods = ob.param("methods", "bs3,dopri5,verner65")
local steps   = ob.param("steps", 100)
local tol     = ob.param("tol", 1e-6)
local reps    = ob.param("reps", 5)
-- the GPU ranks' option halo_steps (0: the variant's default)
local halo_steps = ob.param("halo_steps", 0)

local info = ob.info()
local R, me = info.ranks or 1, info.rank or 0
local gpu = info.gpu
if not gpu then
  io.write("mpi_gpu_bruss2d: no GPU here (the \"cuda\" backend is not "
    .. "registered); nothing to measure.\n")
  return
end
local present = {}
for _, v in ipairs(ob.list().variants) do present[v.name] = true end
if not present.mpi_gpu_stream2d then
  io.write("mpi_gpu_bruss2d: this build has no mpi_gpu_stream2d (it needs "
    .. "MPI and CUDA)\n")
  return
end

local function split(s)
  local t = {}
  for w in tostring(s):gmatch("[^,%s]+") do t[#t + 1] = w end
  return t
end

local M = { warmup = 1, min_reps = reps, max_reps = reps, max_seconds = 120 }

-- A solver's timed integrate from 0 to t1; the result, or nil and why.
local function timed(p, m, v, o, t1, label)
  local ok, s = pcall(ob.solver, { problem = p, method = m, variant = v,
                                   backend = "cuda", h = o.h, tol = o.tol,
                                   h0 = o.h0, sync = o.sync,
                                   tiling = o.tiling })
  if not ok then return nil, tostring(s) end
  local r = s:integrate { t0 = 0, t1 = t1, measure = M, label = label }
  local y = s:state()
  s:close()
  if r.status ~= "ok" then return nil, "status " .. tostring(r.status) end
  return r, y
end

-- every rank's card's copy bandwidth, measured by that rank
local bw = {}
for k = 1, R do bw[k] = k - 1 == me and (gpu.copy_gbs or 0) or 0 end
bw = ob.allreduce(bw)
for k = 1, R do bw[k] = string.format("%.0f", bw[k]) end
io.write(string.format("%s, %d rank(s) (GPU ranks: each the GPU of its local "
  .. "rank), copy bandwidth of each rank's card %s GB/s\n", gpu.name, R,
  table.concat(bw, ", ")))

for _, N in ipairs(split(Ns)) do
  N = math.tointeger(tonumber(N))
  local p = ob.problem("bruss2d", { N = N })
  local c = 2e-3 * (N - 1) ^ 2
  local h = 1 / (8 * c + 10)
  for _, m in ipairs(split(methods)) do
    io.write(string.format("\nBRUSS2D N=%d (n=%d), %s\n", N, p.n, m))
    -- fixed steps: the R GPU ranks, then rank 0's GPU alone
    local t1 = steps * h
    local ranks_tiling = halo_steps > 0 and { halo_steps = halo_steps } or nil
    local rr, yr = timed(p, m, "mpi_gpu_stream2d", { h = h, sync = "call",
      tiling = ranks_tiling }, t1,
      string.format("%s mpi_gpu_stream2d N=%d R=%d fixed", m, N, R))
    if not rr then
      io.write("  mpi_gpu_stream2d: " .. tostring(yr) .. "\n")
    else
      local one, one_step, diff = 0, 0, -1
      if me == 0 then
        local r1, y1 = timed(p, m, "gpu_stream2d", { h = h, sync = "call" },
          t1, string.format("%s gpu_stream2d N=%d one GPU fixed", m, N))
        local r2 = timed(p, m, "gpu_stream2d", { h = h, sync = "step" }, t1,
          string.format("%s gpu_stream2d N=%d one GPU fixed sync=step", m, N))
        one = r1 and r1.time_per_step or 0
        one_step = r2 and r2.time_per_step or 0
        if r1 then diff = yr:max_rel_err(y1) end
      end
      one, one_step, diff = ob.bcast(one), ob.bcast(one_step), ob.bcast(diff)
      ob.barrier()
      local tps = rr.time_per_step
      io.write(string.format("  fixed h=%.4g, %d steps: %d GPU rank(s) %.1f µs "
        .. "a step (spread %.1f%%); one GPU %.1f µs (one sync), %.1f µs "
        .. "(sync=step); speed-up %.2fx (%.2fx over sync=step); final state "
        .. "off by %.3g relative; halos: %s\n", h, steps, R, tps * 1e6,
        100 * rr.spread, one * 1e6, one_step * 1e6, one / tps,
        one_step / tps, diff, ob.gpu_halo_path() or "?"))
      ob.metric(string.format("%s N=%d R=%d fixed speedup", m, N, R), one / tps)
      ob.metric(string.format("%s N=%d R=%d fixed state diff", m, N, R), diff)
    end
    -- adaptive: first step h, the same span
    if m ~= "rk4" then
      local ta = 12 * steps * h
      local ra, why = timed(p, m, "mpi_gpu_stream2d", { tol = tol, h0 = h,
        tiling = ranks_tiling },
        ta, string.format("%s mpi_gpu_stream2d N=%d R=%d adaptive", m, N, R))
      local one, osteps = 0, 0
      if me == 0 then
        local r1 = timed(p, m, "gpu_stream2d", { tol = tol, h0 = h,
          sync = "call" }, ta, string.format("%s gpu_stream2d N=%d one GPU "
          .. "adaptive", m, N))
        one = r1 and r1.seconds / r1.steps or 0
        osteps = r1 and r1.steps or 0
      end
      one, osteps = ob.bcast(one), ob.bcast(osteps)
      ob.barrier()
      if ra then
        local tpa = ra.seconds / ra.steps
        local on = (R == 1 or (ob.gpu_halo_path() or ""):find("on the device",
          1, true)) and "the devices" or "the hosts"
        io.write(string.format("  adaptive tol=%g: %d GPU rank(s) %.1f µs an "
          .. "attempt (%d attempts, controller on %s); one GPU %.1f µs (%d "
          .. "attempts, controller on the device); speed-up %.2fx\n", tol, R,
          tpa * 1e6, ra.steps, on, one * 1e6, osteps, one / tpa))
        ob.metric(string.format("%s N=%d R=%d adaptive speedup", m, N, R),
                  one / tpa)
      else
        io.write("  adaptive: " .. tostring(why) .. "\n")
      end
    end
  end
end
