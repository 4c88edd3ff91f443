-- tests/mpi/dist_sparse_broken.lua: the last rank leaves the run without
-- the SpMV the others enter. Its neighbours' halo waits time out
-- (ODEBENCH_MPI_TIMEOUT=2), and their matrix is then refused: its
-- cancelled receives leave the messages of the ranks out of pair. Every
-- rank prints what it saw (dist_sparse_stop.py reads every rank's output,
-- ODEBENCH_MPI_ALL_OUTPUT=1): the last rank's neighbour R-2 times out in
-- the halo wait, the other ranks in the gather of y (D:spmv returns the
-- whole y, a collective); each is then refused the next SpMV and a solve.
local ob = require "odebench"
local info = ob.info { bandwidth = false }
local gp = { J = 24, H = 24, I = 8, k = 2, wells = 2, pattern = "b", seed = 1 }
local D <close> = ob.matrix { dist = "planes", grid = gp }
local x = ob.vector(D:info().n)
for i = 1, #x do x[i] = 1 end
D:spmv(x)                                      -- every rank: a working exchange
if info.rank == info.ranks - 1 then return end
local ok, msg = pcall(D.spmv, D, x)
print(string.format("rank %d: first: %s", info.rank, ok and "ok" or msg))
ok, msg = pcall(D.spmv, D, x)
print(string.format("rank %d: second: %s", info.rank, ok and "ok" or msg))
if not ok then                                 -- a broken matrix: refused at once
  ok, msg = pcall(D.bicgstab, D, { b = x })
  print(string.format("rank %d: solve: %s", info.rank, ok and "ok" or msg))
end
