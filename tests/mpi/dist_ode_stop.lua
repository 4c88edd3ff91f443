-- tests/mpi/dist_ode_stop.lua: the distributed ODE variants' exchanges
-- (mpi_A's gathers, mpi_S's, mpi_N's and mpi_X's halos, mpi_P's sweep,
-- mpi_pirk_A's corrector gathers), each checked once against one process
-- (plain; A for the PIRK corrector), then repeated until the run is stopped (dist_ode_stop.py
-- sends SIGTERM to mpirun once rank 0 has said "looping" on stderr). A
-- stop finds ranks inside those exchanges with their requests open on the
-- solvers' vectors; MPI must end before the vectors are freed, or
-- MPI_Finalize's progress reads and writes freed memory
-- (odb_dist_requests_open in dist/rt/odb_dist.h).
local ob = require "odebench"

local info = ob.info { bandwidth = false }
local R = info.ranks or 1
local p = ob.problem("bruss2d", { N = 96 })
local VARIANTS = { "mpi_A", "mpi_S", "mpi_N", "mpi_X", "mpi_P", "mpi_pirk_A" }
local checked = 0

local function run(v, t1)
  local m = v:match("pirk") and "radau1a5" or "dopri5"
  local s <close> = ob.solver { problem = p, method = m, variant = v, tol = 1e-6 }
  s:integrate { t0 = 0, t1 = t1 }
  return s:state(), m
end

for _, v in ipairs(VARIANTS) do
  local y, m = run(v, 0.01)
  local ref = m == "dopri5" and "plain" or "A"
  local one <close> = ob.solver { problem = p, method = m, variant = ref, tol = 1e-6 }
  one:integrate { t0 = 0, t1 = 0.01 }
  local e = y:max_rel_err(one:state())
  if not (e <= 1e-9) then error(string.format("%s: differs from %s by %g", v, ref, e), 0) end
  checked = checked + 1
end
print(string.format("dist_ode_stop: %d checks passed on %d rank(s)", checked, R))
if os.getenv("ODB_TEST_NO_LOOP") then return end
if info.rank == 0 then io.stderr:write("looping\n"); io.stderr:flush() end
while true do
  for _, v in ipairs(VARIANTS) do run(v, 0.02) end
end
