-- tests/mpi/dist_sparse.lua: matrices split over the ranks (dist/sparse)
-- against the one-process matrix and solvers, on every rank of
-- `mpirun -n R` (R = 1..4; dist_sparse.py runs it).
--
-- SpMV: the whole y of a DistMatrix equals the CSR SpMV of the whole
-- matrix to 1e-14 (relative to its largest entry) for every format that
-- splits (csr, ell, hyb; on one rank every format, Bdia included), GH-b
-- and GH-h grids with and without wells, slabs of one plane, grids with
-- fewer planes than ranks (ranks without rows), both splits, and a matrix
-- read from a Matrix Market file; Bdia on slabs of planes on every number
-- of ranks. Solvers: BiCGStab, pipelined BiCGStab
-- and QMR converge to the same tolerance as ob.krylov's one-process
-- solver, in a number of iterations within 2 of it (equal, with the same
-- history bit for bit, for BiCGStab on one rank). Refusals: their text.
-- A mismatch raises, which ends every rank with status 2.
local ob = require "odebench"

local info = ob.info { bandwidth = false }
local R = info.ranks or 1
local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local C = dofile(here .. "dist_check.lua")
local check, checked = C.checker()

local function xvec(n)
  local x = ob.vector(n)
  for i = 1, n do x[i] = math.sin(0.7 * i) + 0.25 end
  return x
end

local grids = {
  { J = 4, H = 3, I = 4, k = 2, wells = 2, pattern = "h" },
  { J = 3, H = 2, I = R, k = 3, wells = 1, pattern = "b" },     -- one plane a rank
  { J = 3, H = 3, I = R, k = 4, wells = 3, pattern = "h" },
  { J = 2, H = 2, I = 1, k = 1, wells = 0, pattern = "b" },     -- fewer planes than ranks
  { J = 5, H = 4, I = 6, k = 1, wells = 4, pattern = "h" },
  { J = 4, H = 4, I = 3, k = 2, wells = 0, pattern = "b" },
  -- many planes a rank: a rank builds only its planes and four on either
  -- side (lua/odb_lua_dsparse.c), so the rows of the far planes are empty
  -- there; GH-h with 9 cells a plane reaches two planes
  { J = 3, H = 3, I = 5 * R + 4, k = 2, wells = 3, pattern = "h" },
  { J = 4, H = 2, I = 4 * R + 9, k = 3, wells = 2, pattern = "b" },
}
local formats = R == 1 and { "csr", "bsr", "ell", "hyb", "dia", "bdia" } or { "csr", "ell", "hyb" }

for gi, gp in ipairs(grids) do
  local g = ob.reservoir(gp)
  local A = g:matrix("csr")
  local n = A:info().n
  local x = xvec(n)
  local y = A:spmv(x)
  for _, split in ipairs { "planes", "rows" } do
    for _, f in ipairs(formats) do
      local D <close> = ob.matrix { dist = split, grid = gp, format = f }
      local e = D:spmv(x):max_rel_err(y)
      check(e <= 1e-14, "grid %d %s %s: SpMV differs by %g", gi, split, f, e)
      check(D:info().nnz == A:info().nnz, "grid %d %s %s: %d nonzeros, the matrix has %d", gi, split, f,
            D:info().nnz, A:info().nnz)
    end
  end
  g:close()
end

-- Bdia on slabs of planes (dist/sparse/odb_dist_bdia.h): the SpMV equals
-- the CSR and the one-process Bdia SpMV to 1e-14 on GH-b and GH-h grids,
-- with wells, slabs of one plane, GH-h grids with an odd number of cells
-- a plane (a biased block reaches a cell of the plane two below or above:
-- a ghost from a rank that is not a neighbour) and ranks without planes;
-- the rank's rows are its slab's, in grid order
local slab_grids = {
  { J = 1, H = 1, I = R, k = 3, wells = 1, pattern = "h" },       -- a plane is one cell
  { J = 3, H = 1, I = R + 1, k = 4, wells = 1, pattern = "h" },   -- odd J*H
  { J = 3, H = 3, I = 2 * R, k = 2, wells = 2, pattern = "h" },
  -- slabs of 864 cells: a tile of 512 (odb_sparse.h's Bdia loop) in each
  { J = 12, H = 12, I = 6 * R, k = 3, wells = 2, pattern = "h" },
  { J = 12, H = 12, I = 6 * R, k = 5, wells = 1, pattern = "b" },
}
for _, gp in ipairs(grids) do slab_grids[#slab_grids + 1] = gp end
for gi, gp in ipairs(slab_grids) do
  local g = ob.reservoir(gp)
  local A, B = g:matrix("csr"), g:matrix("bdia")
  local x = xvec(A:info().n)
  local D <close> = ob.matrix { dist = "planes", grid = gp, format = "bdia" }
  local y = D:spmv(x)
  local e, eb = y:max_rel_err(A:spmv(x)), y:max_rel_err(B:spmv(x))
  check(e <= 1e-14 and eb <= 1e-14, "slab grid %d: Bdia SpMV differs by %g from CSR, %g from Bdia", gi, e, eb)
  local di = D:info()
  local planes = gp.I // R + ((info.rank or 0) < gp.I % R and 1 or 0)
  local JH = gp.J * gp.H
  check(di.format == "bdia" and di.nloc >= planes * JH * gp.k and di.nloc <= planes * JH * gp.k + gp.wells,
        "slab grid %d: rank's rows %d for %d planes of %d cells", gi, di.nloc, planes, JH)
  g:close()
end

-- a matrix from a file, split by rows balanced by nonzeros
do
  local gp = { J = 4, H = 3, I = 5, k = 2, wells = 3, pattern = "h" }
  local A = ob.reservoir(gp):matrix("csr")
  local name = ob.bcast(info.rank == 0 and os.tmpname() or nil)
  if info.rank == 0 then A:write(name) end
  ob.barrier()
  local x = xvec(A:info().n)
  for _, f in ipairs { "csr", "ell", "hyb" } do
    local D <close> = ob.matrix { dist = "rows", file = name, format = f }
    local e = D:spmv(x):max_rel_err(A:spmv(x))
    check(e <= 1e-14, "file %s: SpMV differs by %g", f, e)
  end
  local D <close> = ob.matrix { dist = "planes", file = name, grid = gp }
  check(D:spmv(x):max_rel_err(A:spmv(x)) <= 1e-14, "file on its grid's planes")
  local ok, msg = pcall(ob.matrix, { dist = "planes", file = name })
  check(not ok and msg:find('dist = "planes" needs the grid of the matrix', 1, true),
        "planes without a grid: %s", tostring(msg))
  ob.barrier()
  if info.rank == 0 then os.remove(name) end
end

-- an unstructured matrix from a file (random columns anywhere, fresh on
-- every run): each rank keeps only the rows its part and plan read
-- (odb_dsparse_trim), and the SpMV, the nonzero count and the solvers
-- still match the one-process matrix
do
  local seed = ob.bcast(info.rank == 0 and math.random(1, 1 << 30) or nil)
  local name = ob.bcast(info.rank == 0 and os.tmpname() or nil)
  local n = 331
  if info.rank == 0 then
    local rng, ents = seed, {}
    local function rnd() rng = (rng * 1103515245 + 12345) % 2147483648; return rng / 2147483648 end
    for i = 1, n do
      local cols = { [i] = true }
      for _ = 1, 5 do cols[1 + math.floor(rnd() * n)] = true end
      for j in pairs(cols) do
        ents[#ents + 1] = string.format("%d %d %.17g", i, j, i == j and 8 + rnd() or rnd() - 0.5)
      end
    end
    local fh = assert(io.open(name, "w"))
    fh:write("%%MatrixMarket matrix coordinate real general\n", string.format("%d %d %d\n", n, n, #ents))
    fh:write(table.concat(ents, "\n"), "\n")
    fh:close()
  end
  ob.barrier()
  local A1 = ob.matrix { file = name }
  local x = xvec(n)
  local b = A1:spmv(x)
  local ref = ob.krylov { A = A1, b = b, method = "bicgstab", tol = 1e-10 }
  local refq = ob.krylov { A = A1, b = b, method = "qmr", tol = 1e-10 }
  for _, f in ipairs { "csr", "ell", "hyb" } do
    local D <close> = ob.matrix { dist = "rows", file = name, format = f }
    local di = D:info()
    check(D:spmv(x):max_rel_err(b) <= 1e-14, "random file %s: SpMV differs", f)
    check(di.nnz == A1:info().nnz and ob.allreduce(di.nnz_local) == di.nnz,
          "random file %s: nonzeros %d, local sum %d, one process %d", f, di.nnz, ob.allreduce(di.nnz_local),
          A1:info().nnz)
    local r = D:bicgstab { b = b, tol = 1e-10 }
    local rq = D:qmr { b = b, tol = 1e-10 }
    check(r.converged and math.abs(r.iters - ref.iters) <= 2 and rq.converged and math.abs(rq.iters - refq.iters) <= 2,
          "random file %s: BiCGStab %d (one process %d), QMR %d (%d)", f, r.iters, ref.iters, rq.iters, refq.iters)
  end
  ob.barrier()
  if info.rank == 0 then os.remove(name) end
end

-- the solvers against ob.krylov's one-process solver
for gi, gp in ipairs { { J = 6, H = 5, I = 4, k = 2, wells = 2, pattern = "h" },
                       { J = 4, H = 4, I = 2 * R, k = 3, wells = 1, pattern = "b" },
                       { J = 3, H = 3, I = 5 * R + 9, k = 2, wells = 2, pattern = "h" } } do
  local g = ob.reservoir(gp)
  local A = g:matrix("csr")
  local b = A:spmv(xvec(A:info().n))
  local ref = {}
  for _, m in ipairs { "bicgstab", "qmr" } do
    ref[m] = ob.krylov { A = A, b = b, method = m, tol = 1e-10 }
    check(ref[m].converged, "grid %d: reference %s", gi, m)
  end
  for _, split in ipairs { "planes", "rows" } do
    for _, f in ipairs(split == "planes" and { "csr", "ell", "bdia" } or { "csr", "ell" }) do
      local D <close> = ob.matrix { dist = split, grid = gp, format = f }
      for _, m in ipairs { "bicgstab", "pbicgstab", "qmr" } do
        local r = D[m](D, { b = b, tol = 1e-10 })
        local rr = ref[m == "qmr" and "qmr" or "bicgstab"]
        check(r.converged and r.relres <= 1e-10 and r.relres_true <= 1e-9,
              "grid %d %s %s %s: %s relres %g true %g", gi, split, f, m, r.outcome, r.relres, r.relres_true)
        check(math.abs(r.iters - rr.iters) <= 2, "grid %d %s %s %s: %d iterations, one process %d",
              gi, split, f, m, r.iters, rr.iters)
        check(#r.history == r.iters + 1 or #r.history == r.iters + 2, "grid %d %s: history of %d for %d iterations",
              gi, m, #r.history, r.iters)
        if R == 1 and m ~= "pbicgstab" and f == "csr" then
          local same = #r.history == #rr.history
          for i = 1, #rr.history do same = same and r.history[i] == rr.history[i] end
          check(same, "grid %d %s: one rank's history differs from ob.krylov's", gi, m)
        end
      end
      local r = D:pbicgstab { b = b, tol = 1e-10, replace = 5 }
      check(r.converged and r.relres_true <= 1e-9, "pbicgstab replace=5: %s %g", r.outcome, r.relres_true)
      -- the persistent form is the GPU ranks'; refused before the solve's
      -- first collective, so the matrix stays usable
      local okp, mp = pcall(D.bicgstab, D, { b = b, impl = "persistent" })
      check(not okp and mp:find("impl persistent runs on GPU ranks (backend = \"cuda\")", 1, true),
            "persistent on CPU ranks: %s", tostring(mp))
      okp, mp = pcall(D.bicgstab, D, { b = b, impl = "fast" })
      check(not okp and mp:find('D:bicgstab: impl must be "fused"', 1, true), "impl refusal: %s", tostring(mp))
      check(D:bicgstab { b = b, tol = 1e-10, impl = "fused" }.converged, "grid %d %s %s: a solve after the refusals",
            gi, split, f)
    end
  end
  g:close()
end

-- stopping: maxit, with the one-process message
do
  local gp = { J = 6, H = 5, I = 4, k = 2, wells = 2, pattern = "h" }
  local A = ob.reservoir(gp):matrix("csr")
  local b = A:spmv(xvec(A:info().n))
  local D <close> = ob.matrix { dist = "planes", grid = gp }
  local r = D:bicgstab { b = b, tol = 1e-12, maxit = 3 }
  check(not r.converged and r.outcome == "maxit" and r.iters == 3 and
        r.message:find("BiCGStab: no convergence in 3 iterations", 1, true), "maxit: %s", tostring(r.message))
end

-- transpose = false: no A^T kept (less memory while it builds): the same
-- SpMV, BiCGStab as with it (the rows' local order may differ, so to
-- 1e-10 and the same iteration count), QMR refused naming the option, and
-- the option's type checked
do
  local gp = { J = 6, H = 5, I = 4, k = 2, wells = 2, pattern = "h" }
  local A = ob.reservoir(gp):matrix("csr")
  local x = xvec(A:info().n)
  local b = A:spmv(x)
  for _, f in ipairs { "csr", "bdia" } do
    local D <close> = ob.matrix { dist = "planes", grid = gp, format = f }
    local N <close> = ob.matrix { dist = "planes", grid = gp, format = f, transpose = false }
    check(N:spmv(x):max_rel_err(D:spmv(x)) <= 1e-14, "transpose = false %s: SpMV", f)
    local r, xr = D:bicgstab { b = b, tol = 1e-10 }
    local rn, xn = N:bicgstab { b = b, tol = 1e-10 }
    check(rn.converged and rn.iters == r.iters and xn:max_rel_err(xr) <= 1e-10,
          "transpose = false %s: BiCGStab %d iterations (%d with A^T), x off by %g", f, rn.iters, r.iters,
          xn:max_rel_err(xr))
    local ok, msg = pcall(N.qmr, N, { b = b, tol = 1e-10 })
    check(not ok and msg:find("D:qmr: the matrix was made with transpose = false", 1, true),
          "transpose = false %s: QMR refused: %s", f, tostring(msg))
  end
  local ok, msg = pcall(ob.matrix, { dist = "planes", grid = gp, transpose = "no" })
  check(not ok and msg:find("transpose", 1, true) and msg:find("boolean", 1, true),
        "transpose = \"no\" refused: %s", tostring(msg))
end

-- refusals
if R > 1 then
  local ok, msg = pcall(ob.matrix, { dist = "rows", grid = { J = 2, H = 2, I = 2, k = 2 }, format = "bsr" })
  check(not ok and msg:find("format 'bsr' is not split over ranks", 1, true), "bsr refusal: %s", tostring(msg))
  ok, msg = pcall(ob.matrix, { dist = "rows", grid = { J = 2, H = 2, I = 2, k = 2 }, format = "bdia" })
  check(not ok and msg:find(string.format("format 'bdia' on %d ranks: needs dist = \"planes\"", R), 1, true),
        "bdia by rows refusal: %s", tostring(msg))
end
local ok, msg = pcall(ob.matrix, { dist = "slabs", grid = { J = 2, H = 2, I = 2 } })
check(not ok and msg:find('dist must be "rows" or "planes", got "slabs"', 1, true), "dist refusal: %s", tostring(msg))
ok, msg = pcall(ob.matrix, { dist = "rows" })
check(not ok and msg:find("needs grid = {J=, H=, I=, k=, ...} or file", 1, true), "no matrix: %s", tostring(msg))
do
  local D <close> = ob.matrix { dist = "rows", grid = { J = 2, H = 2, I = 2, k = 1 } }
  ok, msg = pcall(D.spmv, D, { 1, 2 })
  check(not ok and msg:find("D:spmv: x has 2 entries, the matrix order is 8", 1, true), "short x: %s", tostring(msg))
  ok, msg = pcall(D.bicgstab, D, { b = { 1, 1, 1, 1, 1, 1, 1, 1 }, tol = 2 })
  check(not ok and msg:find("D:bicgstab: tol must be in (0, 1), got 2", 1, true), "tol: %s", tostring(msg))
end

print(string.format("dist_sparse: %d checks passed on %d rank(s)", checked(), R))
