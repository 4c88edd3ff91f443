-- mpi_access_distance.lua: the distributed explicit RK variants on BRUSS2D
-- with a chosen row length, so that the access distance d = 2 Nx varies at
-- a fixed n = 2 N Nx. The pipelined variants (`pipe`, `mpi_P`) keep about
-- (s^2/2 + 4(s-1)) max(d, block) doubles in cache a rank, so d decides
-- whether their working set fits a core's L2; the sweep-per-stage ones
-- (`fused`, `mpi_N`) move the stage vectors through memory whatever d is.
-- Each variant runs `steps` fixed DOPRI5 steps, timed as the slowest rank
-- (median of 3 runs); rank 0 prints one line per variant. With one rank
-- the sequential `pipe` and `fused` run too (`seq=0`: not).
--
--   mpirun -n 16 odebench scenarios/mpi_access_distance.lua --set N=16384 --set Nx=512
--   odebench scenarios/mpi_access_distance.lua --set N=1024 --set Nx=256
local ob = require "odebench"

local N     = ob.param("N", 16384, "grid rows")
local Nx    = ob.param("Nx", 512, "grid points a row (d = 2 Nx)")
local vs    = ob.param("v", "mpi_P,mpi_N", "distributed variants, comma-separated")
local seq   = ob.param("seq", 1, "1: with one rank, also the sequential pipe and fused")
local steps = ob.param("steps", 4, "fixed steps a run")
local h     = 1e-6

local info = ob.info { bandwidth = false }
local R = info.ranks or 1
local p = ob.problem("bruss2d", { N = N, Nx = Nx })
local M = { warmup = 1, min_reps = 3, max_reps = 3, max_seconds = 60 }

local list = {}
if seq == 1 and R == 1 then list = { "pipe", "fused" } end
for v in tostring(vs):gmatch("[^,%s]+") do list[#list + 1] = v end
for _, v in ipairs(list) do
  local s <close> = ob.solver { problem = p, method = "dopri5", variant = v,
                                h = h }
  local r = s:integrate { t1 = steps * h, measure = M }
  if r.status ~= "ok" then
    error(string.format("%s: status %s", v, tostring(r.status)), 0)
  end
  if (info.rank or 0) == 0 then
    print(string.format("bruss2d N=%d Nx=%d n=%d d=%d R=%d %-6s block %6d "
      .. "%.4e s/step spread %.1f%%", N, Nx, 2 * N * Nx, 2 * Nx, R, v,
      s.block, r.time_per_step, 100 * r.spread))
  end
end
