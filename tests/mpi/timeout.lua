-- Only rank 0 calls a collective: it must end with the timeout message
-- naming the call (ODEBENCH_MPI_TIMEOUT=3 in the test), not hang.
local ob = require "odebench"
if ob.info { bandwidth = false }.rank == 0 then
  ob.allreduce(1)
end
