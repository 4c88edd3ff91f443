-- tests/mpi/dist_petsc.lua: the PETSc peer of the distributed Krylov
-- solvers (dist/sparse/odb_dist_petsc.c) on every rank of `mpirun -n R`
-- (dist_variants.py runs it; a build without the peer skips). On GH-h and
-- GH-b grids split in planes and by rows, with b = A x for a fresh x:
-- PETSc's BiCGStab (KSPBCGS) and QMRCGStab (KSPQMRCGS) converge to tol with
-- the true residual within 10 tol, and BiCGStab takes as many iterations as
-- ours (D:bicgstab, the same algorithm without a preconditioner) give or
-- take 2; the refusals.
local ob = require "odebench"

local info = ob.info { bandwidth = false }
local R = info.ranks or 1
local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local C = dofile(here .. "dist_check.lua")
local check, checked = C.checker()

do   -- a build without the peer refuses it, and says so
  local ok, msg = pcall(ob.matrix, { dist = "rows", grid = { J = 2, H = 2, I = 2, k = 1 }, petsc = true })
  if not ok and tostring(msg):find("the PETSc peer is not in this build", 1, true) then
    io.write("dist_petsc: SKIP: " .. tostring(msg) .. "\n")
    return
  end
  check(ok, "petsc = true: %s", tostring(msg))
end

local tol = 1e-10
local seed = os.time() % 1000
for gi, gp in ipairs { { J = 6, H = 5, I = 4, k = 2, wells = 2, pattern = "h" },
                       { J = 6, H = 6, I = 2 * R, k = 3, wells = 1, pattern = "b" } } do
  local A = ob.reservoir(gp):matrix("csr")
  local n = A:info().n
  local x = ob.vector(n)
  for i = 1, n do x[i] = 1 + ((i * 7919 + seed) % 1000) / 1000 end
  local b = A:spmv(x)
  for _, d in ipairs { "planes", "rows" } do
    local D <close> = ob.matrix { dist = d, grid = gp, petsc = true }
    local o = D:bicgstab { b = b, tol = tol }
    local p = D:petsc { b = b, tol = tol }
    check(p.converged and p.method == "bcgs" and p.outcome:find("CONVERGED", 1, true)
          and p.relres <= tol and p.relres_true <= 10 * tol and p.ranks == R and p.seconds > 0,
          "grid %d %s: PETSc bcgs %s %s relres %g true %g", gi, d, tostring(p.converged), p.outcome,
          p.relres, p.relres_true)
    check(math.abs(p.iters - o.iters) <= 2 and o.relres <= tol,
          "grid %d %s: PETSc %d iterations (relres %g), ours %d (%g)", gi, d, p.iters, p.relres,
          o.iters, o.relres)
    local q = D:petsc { b = b, tol = tol, method = "qmrcgs", maxit = 200 }
    check(q.converged and q.method == "qmrcgs" and q.relres_true <= 10 * tol,
          "grid %d %s: PETSc qmrcgs %s true %g", gi, d, q.outcome, q.relres_true)
  end
end

do   -- the refusals
  local gp = { J = 2, H = 2, I = 2, k = 1 }
  local D <close> = ob.matrix { dist = "rows", grid = gp, petsc = true }
  local b = { 1, 1, 1, 1, 1, 1, 1, 1 }
  C.refused("method", 'D:petsc: method must be "bicgstab" or "qmrcgs", got "gmres"', D.petsc, D,
            { b = b, method = "gmres" })
  C.refused("tol", "D:petsc: tol must be in (0, 1), got 2", D.petsc, D, { b = b, tol = 2 })
  C.refused("short b", "D:petsc: b has 2 entries, the matrix order is 8", D.petsc, D, { b = { 1, 2 } })
  local E <close> = ob.matrix { dist = "rows", grid = gp }
  C.refused("no petsc", "D:petsc: the matrix was made without petsc = true", E.petsc, E, { b = b })
  C.refused("petsc type", "petsc", ob.matrix, { dist = "rows", grid = gp, petsc = "yes" })
  check(true, "refusals")
end

if checked() ~= 14 then C.fail("%d checks, expected 14", checked()) end
if info.rank == 0 then
  print(string.format("dist_petsc: %d checks passed on %d rank(s)", checked(), R))
end
