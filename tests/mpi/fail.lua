-- Rank 1 raises; every rank must end with its message and status 2, and
-- no results file may appear.
local ob = require "odebench"
local r = ob.info { bandwidth = false }.rank
ob.metric("before", r)
if r == 1 then error("rank 1 gives up") end
ob.barrier()
ob.metric("after", r)
