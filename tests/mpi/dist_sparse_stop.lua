-- tests/mpi/dist_sparse_stop.lua: a DistMatrix's whole sequence (D:spmv,
-- D:bicgstab, D:pbicgstab, D:qmr, D:bench, D:close) on slabs of planes
-- and on rows, checked against one process, then repeated until the run
-- is stopped (dist_sparse_stop.py sends SIGTERM to mpirun once rank 0 has
-- said "looping" on stderr). A stop finds ranks inside halo exchanges and
-- reductions whose requests it leaves open; their buffers must be the
-- matrix's own and outlive lua_close, or MPI_Finalize's progress writes a
-- late message into freed memory (odb_dist_sparse.h, "Buffers under a
-- request"). The halo messages (9 KiB a plane) exceed the shared-memory
-- eager limit, so they travel in fragments after the receive is posted.
local ob = require "odebench"

local info = ob.info { bandwidth = false }
local R = info.ranks or 1
local gp = { J = 24, H = 24, I = 8, k = 2, wells = 2, pattern = "b", seed = 1 }
local A = ob.reservoir(gp):matrix("csr")
local n = A:info().n
local x = ob.vector(n)
for i = 1, n do x[i] = math.sin(0.3 * i) + 1 end
local y = A:spmv(x)
local checked = 0

local function check(ok, fmt, ...)
  if not ok then error(string.format(fmt, ...), 0) end
  checked = checked + 1
end

local function sequence(strict)
  for _, split in ipairs { "planes", "rows" } do
    local D <close> = ob.matrix { dist = split, grid = gp, format = "csr" }
    local e = D:spmv(x):max_rel_err(y)
    if strict then check(e <= 1e-14, "%s: SpMV differs by %g", split, e) end
    for _, m in ipairs { "bicgstab", "pbicgstab", "qmr" } do
      local r, sol = D[m](D, { b = y, tol = 1e-10 })
      if strict then
        check(r.converged and r.relres_true <= 1e-9 and sol:max_rel_err(x) <= 1e-6,
              "%s %s: %s, true residual %g", split, m, r.outcome, r.relres_true)
      end
    end
    local sec, st = D:bench { reps = 3 }
    if strict then check(sec > 0 and st.reps == 3, "%s: bench %g s, %d reps", split, sec, st.reps) end
    D:close()
  end
end

sequence(true)
print(string.format("dist_sparse_stop: %d checks passed on %d rank(s)", checked, R))
if os.getenv("ODB_TEST_NO_LOOP") then return end
if info.rank == 0 then io.stderr:write("looping\n"); io.stderr:flush() end
while true do sequence(false) end
