-- Every rank says who it is (stderr: the other ranks' stdout is quiet),
-- checks the collectives against sums it can compute alone, and records
-- one row naming its rank; only rank 0's row may reach results.csv.
local ob = require "odebench"
local i = ob.info { bandwidth = false }
local r, n = i.rank, i.ranks
io.stderr:write(string.format("rank %d of %d\n", r, n))
print(string.format("stdout of rank %d", r))
assert(ob.allreduce(r + 1) == n * (n + 1) / 2, "allreduce sum")
assert(ob.allreduce(r, "max") == n - 1, "allreduce max")
assert(ob.allreduce(r, "min") == 0, "allreduce min")
local v = ob.allreduce({ 1, r, 2 * r })
assert(v[1] == n and v[2] == n * (n - 1) / 2 and v[3] == n * (n - 1), "list")
assert(ob.bcast(r == 0 and "from rank 0" or nil) == "from rank 0", "string")
assert(math.type(ob.bcast(r == n - 1 and 7 or 0.5, n - 1)) == "integer")
assert(ob.bcast(r == 0 and 2.5 or 0) == 2.5, "float")
assert(ob.bcast(r == 0) == true, "boolean")
ob.barrier()
ob.metric("rank", r)
io.stderr:write(string.format("rank %d done\n", r))
