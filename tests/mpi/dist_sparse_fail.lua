-- tests/mpi/dist_sparse_fail.lua: the last rank gives D:bicgstab a bad
-- tolerance while the others enter the solve (its first reduction): the
-- failing rank ends every rank with its message (status 2), and nobody
-- waits for the timeout. dist_sparse.py checks the status and the text.
local ob = require "odebench"
local info = ob.info { bandwidth = false }
local D <close> = ob.matrix { dist = "planes", grid = { J = 3, H = 3, I = 4, k = 2, wells = 1 } }
local ones = {}
for i = 1, D:info().n do ones[i] = 1 end
local b = D:spmv(ones)
D:bicgstab { b = b, tol = info.rank == info.ranks - 1 and 2 or 1e-10 }
print("dist_sparse_fail: not reached")
