-- tests/mpi/dist_ranks.lua: the ranks' figures of a distributed solve
-- (dist_ranks.py runs it under `mpirun -n 2` and reads rank 0's output).
-- One s:integrate of mpi_N, which every rank calls together, and one of
-- the plain variant, which gathers nothing: the row of the first names the
-- ranks and the slowest wait, that of the second neither.
local ob = require "odebench"

local R = ob.info().ranks or 1
local p = ob.problem("bruss2d", { N = 8 })
local M1 = { warmup = 0, min_reps = 1, max_reps = 1 }

local d <close> = ob.solver { problem = p, method = "rk4", variant = "mpi_N",
                              h = 0.01 }
local r = d:integrate { t1 = 0.3, measure = M1, label = "dist" }
if R > 1 then
  assert(r.ranks == R, "ranks " .. tostring(r.ranks))
  assert(r.wait_s_max >= 0, "wait_s_max " .. tostring(r.wait_s_max))
else
  assert(r.ranks == nil and r.wait_s_max == nil, "one rank: no ranks field")
end
local s <close> = ob.solver { problem = p, method = "rk4", variant = "plain",
                              h = 0.01 }
local q = s:integrate { t1 = 0.3, measure = M1, label = "plain" }
assert(q.ranks == nil and q.wait_s_max == nil, "plain: no ranks field")
print(string.format("dist_ranks: %d rank(s), %d steps", R, r.steps))
