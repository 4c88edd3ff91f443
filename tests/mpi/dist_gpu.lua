-- tests/mpi/dist_gpu.lua: the GPU ranks, mpi_gpu_stream2d
-- (dist/ode/dist_gpu.c), on every rank of `mpirun -n R` (R = 1..4;
-- dist_variants.py runs it). Several ranks share the one GPU of a
-- single-GPU machine: that is the correctness run.
--
-- Against gpu_stream2d on the whole grid, stepped side by side on every
-- rank: with fixed steps the state bit for bit (a rank's own rows are
-- computed by the same generated code, cell for cell, as the whole grid's:
-- the S halo rows a side absorb the slab's mirrored ends); with adaptive
-- steps the same accept/reject counts at every step, h within 1e-13
-- relative (the norm adds the same squares in another order: the ranks'
-- own rows, then exactly over the ranks) and the state within 1e-13
-- relative per step. The refusals: a rank with fewer rows than the
-- method's stages, and a problem with no cell source; the halos' path
-- (peer copies, or MPI's under ODEBENCH_GPU_HALO=mpi). Without a CUDA
-- device the scenario says so and dist_variants.py reports a skip.
local ob = require "odebench"

local info = ob.info { bandwidth = false }
local R = info.ranks or 1

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local C = dofile(here .. "dist_check.lua")
local fail, rel = C.fail, C.rel

if not info.gpu then
  io.write("dist_gpu: SKIP: no CUDA device\n")
  return
end

local checked, worst_h, worst_y = 0, 0, 0

-- BRUSS2D of N rows of Nx points (rows != columns, so a slip of one for
-- the other shows), stepped to t1 by both.
local function case(params, method, opts)
  local label = string.format("bruss2d(N=%d,Nx=%d) %s %s%s", params.N,
    params.Nx, method, opts.h and ("h=" .. opts.h) or ("tol=" .. opts.tol),
    opts.tiling and " tiled" or "")
  local p = ob.problem("bruss2d", params)
  local function make(v)
    return ob.solver { problem = p, method = method, variant = v,
                       backend = "cuda", tol = opts.tol, h = opts.h,
                       h0 = opts.h0, tiling = opts.tiling, sync = "step" }
  end
  local a <close> = make("gpu_stream2d")
  local b <close> = make("mpi_gpu_stream2d")
  local exact = opts.h ~= nil
  local steps = 0
  while a.t < opts.t1 do
    local ra, rb = a:step(opts.h), b:step(opts.h)
    steps = steps + 1
    if ra.accepted ~= rb.accepted or ra.rejected ~= rb.rejected then
      fail("%s: step %d: accepted/rejected %d/%d, gpu_stream2d %d/%d", label,
           steps, rb.accepted, rb.rejected, ra.accepted, ra.rejected)
    end
    local dh = rel(ra.h, rb.h)
    worst_h = math.max(worst_h, dh)
    if (exact and dh ~= 0) or dh > 1e-13 * steps then
      fail("%s: step %d: h %.17g, gpu_stream2d %.17g", label, steps, rb.h,
           ra.h)
    end
    if steps % 5 == 0 or a.t >= opts.t1 then
      local e = b:state():max_rel_err(a:state())
      worst_y = math.max(worst_y, e / steps)
      if (exact and e ~= 0) or e > 1e-13 * steps then
        fail("%s: step %d: state off by %.3g relative", label, steps, e)
      end
    end
  end
  if steps < 3 then fail("%s: only %d steps", label, steps) end
  checked = checked + 1
end

-- Whole integrate calls with the step controller on the device (sync =
-- "call", adaptive) or one sync a call (fixed h), against gpu_stream2d's
-- own: with the link (a GPU of its own for each rank, one host) the
-- ranks' GPUs sum the norm and exchange the halos on the device, and the
-- run must take the same steps with the state within 1e-12 relative a
-- step (bit for bit for fixed h); without it (ranks sharing a GPU)
-- adaptive steps with the controller on the device are refused and fixed
-- ones run with the hosts' exchanges.
local function case_call(params, method, opts)
  local label = string.format("bruss2d(N=%d,Nx=%d) %s %s sync=call",
    params.N, params.Nx, method, opts.h and ("h=" .. opts.h)
    or ("tol=" .. opts.tol))
  local p = ob.problem("bruss2d", params)
  local function make(v)
    return ob.solver { problem = p, method = method, variant = v,
                       backend = "cuda", tol = opts.tol, h = opts.h,
                       h0 = opts.h0, sync = "call",
                       tiling = v ~= "gpu_stream2d" and opts.tiling or nil }
  end
  local a <close> = make("gpu_stream2d")
  local b <close> = make("mpi_gpu_stream2d")
  -- the path of the solver just made
  local linked = (ob.gpu_halo_path() or ""):find("on the device", 1, true)
  if R > 1 and not linked and not opts.h then
    C.refused(label, "cannot use here", b.integrate, b, { t1 = opts.t1 })
  else
    C.integrate_alike(a, b, { label = label, ref = "gpu_stream2d",
                              t1 = opts.t1, exact = opts.h ~= nil,
                              y_tol = 1e-12 })
  end
  checked = checked + 1
end

local function refused(pname, params, method, want)
  C.refused(pname, want, ob.solver, { problem = ob.problem(pname, params),
                                      method = method, backend = "cuda",
                                      variant = "mpi_gpu_stream2d" })
  checked = checked + 1
end

local grid = { N = 40, Nx = 24 }
case(grid, "rk4", { h = 1e-3, t1 = 0.02 })
case(grid, "dopri5", { h = 1e-3, t1 = 0.02 })
case(grid, "verner65", { h = 1e-3, t1 = 0.02 })
case(grid, "bs3", { tol = 1e-6, h0 = 1e-3, t1 = 0.05 })
case(grid, "dopri5", { tol = 1e-7, h0 = 1e-3, t1 = 0.05 })
case(grid, "verner65", { tol = 1e-8, h0 = 1e-3, t1 = 0.05 })
-- narrow strips of 32 threads (several strips a row) at lag 2
case({ N = 40, Nx = 70 }, "dopri5", { h = 1e-3, t1 = 0.01,
                                      tiling = { threads = 32, lag = 2 } })
case({ N = 40, Nx = 70 }, "bs3", { tol = 1e-6, h0 = 1e-3, t1 = 0.03,
                                   tiling = { threads = 32, lag = 2 } })

case_call(grid, "dopri5", { h = 1e-3, t1 = 0.02 })
case_call(grid, "bs3", { tol = 1e-6, h0 = 1e-3, t1 = 0.05 })
case_call(grid, "verner65", { tol = 1e-8, h0 = 1e-3, t1 = 0.05 })
case_call({ N = 64, Nx = 40 }, "dopri5", { tol = 1e-7, h0 = 1e-4, t1 = 0.2 })
-- halos for one step, and for as many as the rows allow
case_call({ N = 64, Nx = 40 }, "bs3", { tol = 1e-6, h0 = 1e-4, t1 = 0.1,
                                        tiling = { halo_steps = 1 } })
case_call({ N = 64, Nx = 40 }, "bs3", { h = 1e-4, t1 = 3e-3,
                                        tiling = { halo_steps = 16 } })
C.refused("halo_steps 0", "'tiling.halo_steps': must be in 1..16", ob.solver,
  { problem = ob.problem("bruss2d", grid), method = "bs3", backend = "cuda",
    variant = "mpi_gpu_stream2d", tiling = { halo_steps = 0 } })
checked = checked + 1

if R == 1 then   -- one rank: no halo, every row its own
  case({ N = 8, Nx = 8 }, "dopri5", { tol = 1e-6, h0 = 1e-3, t1 = 0.05 })
else
  refused("bruss2d", { N = 8 }, "dopri5", string.format(
    "mpi_gpu_stream2d: 8 grid rows over %d ranks leave a rank %d rows, fewer "
    .. "than the 7 halo rows a step of dopri5 takes from each neighbour; use "
    .. "at most 1 rank(s)", R, 8 // R))
end
refused("medakzo", { N = 6 }, "dopri5", "mpi_gpu_stream2d needs a 2-D grid "
        .. "problem with a cell source (BRUSS2D, or ob.problem{grid=, "
        .. "cell_source=}); medakzo(N=6) has none")

-- the halos' path: peer copies on one host, unless ODEBENCH_GPU_HALO=mpi
-- asks for MPI's (tests/mpi/meson.build runs both)
do
  local path = ob.gpu_halo_path() or ""
  local want = R == 1 and "none (one rank)"
               or os.getenv("ODEBENCH_GPU_HALO") == "mpi" and "MPI"
               or "peer copies (CUDA IPC"
  if not path:find(want, 1, true) and
     not (want == "MPI" and path:find("host buffers", 1, true)) then
    fail("halo path '%s', expected '%s'", path, want)
  end
  checked = checked + 1
  if info.rank == 0 then io.write("dist_gpu: halos: " .. path .. "\n") end
end
refused("bruss2d", { N = 16 }, "radau2a5",
        "mpi_gpu_stream2d runs explicit RK methods only")

-- what the neighbours map (y, ynew, the mailboxes) is freed once they
-- have closed it (dist/rt/odb_dist_ipc.h), not kept: twelve solvers made
-- and closed in turn leave the GPU's free memory within three solvers'
-- y and ynew a rank (the last ones may still wait for a neighbour; with
-- ranks sharing one GPU, every rank's count there), where keeping them
-- would take twelve
do
  local p = ob.problem("bruss2d", { N = 2048, Nx = 2048 })
  local vec = p.n * 8
  local function once()
    local s <close> = ob.solver { problem = p, method = "bs3", backend = "cuda",
                                  variant = "mpi_gpu_stream2d", h = 1e-7 }
    s:step(1e-7)
  end
  once()
  ob.barrier()
  local free0 = ob.info { bandwidth = false }.gpu.mem_free_bytes
  for _ = 1, 12 do
    once()
    ob.barrier()
  end
  local free1 = ob.info { bandwidth = false }.gpu.mem_free_bytes
  if free0 - free1 > 3 * 2 * vec * R then
    fail("12 mpi_gpu_stream2d solvers made and closed left %.0f MB less "
      .. "free GPU memory (%.0f MB a solver's y and ynew, %d rank(s))",
      (free0 - free1) / 1e6, 2 * vec / 1e6, R)
  end
  checked = checked + 1
end

if checked ~= 20 then fail("%d checks, expected 20", checked) end
if info.rank == 0 then
  io.write(string.format("dist_gpu: %d checks passed on %d rank(s); largest "
    .. "differences: h %.3g, state %.3g a step\n", checked, R, worst_h,
    worst_y))
end
