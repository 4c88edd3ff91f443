-- tests/mpi/dist_sparse_gpu.lua: matrices split over GPU ranks
-- (ob.matrix{..., backend = "cuda"}, dist/sparse/odb_dist_gpu.h) against
-- the one-process CPU matrix and solvers, on every rank of `mpirun -n R`
-- (R = 1..3; dist_sparse_gpu.py runs it). Several ranks may share one GPU.
--
-- Refusals first, on every machine: a backend other than "cpu" or "cuda",
-- and backend = "cuda" on a rank without the "cuda" backend (a build
-- without CUDA, a machine without a device): the error names the argument,
-- the rank and the reason. Without a device the scenario then prints
-- "dist_sparse_gpu: SKIP: ..." and ends.
--
-- With a device: the whole y of a GPU DistMatrix equals the CPU CSR SpMV
-- of the whole matrix to 1e-14 (relative to its largest entry) for csr,
-- ell, hyb and bdia on slabs of planes (every format on one rank), on GH-b and GH-h grids with and
-- without wells, slabs of one plane, fewer planes than ranks (ranks
-- without rows), both splits, and a Matrix Market file; BiCGStab,
-- pipelined BiCGStab and QMR converge to the same tolerance as ob.krylov's
-- one-process solver in a number of iterations within 2 of it; info,
-- results and D:bench name the backend and the halo path, and results
-- where the scalar work ran (control). The persistent BiCGStab (impl =
-- "persistent") against the one-process solver on fresh random right-hand
-- sides, with its refusals. A mismatch
-- raises, which ends every rank with status 2.
local ob = require "odebench"

local info = ob.info { bandwidth = false }
local R = info.ranks or 1
local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local C = dofile(here .. "dist_check.lua")
local LINKED = "halo: GPU peer copies, waits on the device"
local check, checked = C.checker()

local function xvec(n)
  local x = ob.vector(n)
  for i = 1, n do x[i] = math.sin(0.7 * i) + 0.25 end
  return x
end

-- refusals
local tiny = { J = 2, H = 2, I = 2, k = 1 }
local ok, msg = pcall(ob.matrix, { dist = "rows", grid = tiny, backend = "tpu" })
check(not ok and msg:find('ob.matrix: backend must be "cpu" or "cuda", got "tpu"', 1, true),
      "backend refusal: %s", tostring(msg))
ok, msg = pcall(ob.matrix, { dist = "rows", grid = tiny, backend = "cuda" })
local have = ob.allreduce(ok and 1 or 0, "min") == 1
if not have then
  if not ok then
    check(msg:find('ob.matrix: backend = "cuda" is not available on rank ' .. (info.rank or 0) .. " (cuda: ", 1, true),
          "no device refusal: %s", tostring(msg))
  end
  print(string.format("dist_sparse_gpu: %d checks passed on %d rank(s)", checked(), R))
  print("dist_sparse_gpu: SKIP: no CUDA device (" .. tostring(msg):gsub("^.*%((cuda: .*)%)$", "%1") .. ")")
  return
end
msg:close()

local grids = {
  { J = 4, H = 3, I = 4, k = 2, wells = 2, pattern = "h" },
  { J = 3, H = 2, I = R, k = 3, wells = 1, pattern = "b" },     -- one plane a rank
  { J = 3, H = 3, I = R, k = 4, wells = 3, pattern = "h" },
  { J = 2, H = 2, I = 1, k = 1, wells = 0, pattern = "b" },     -- fewer planes than ranks
  { J = 5, H = 4, I = 6, k = 1, wells = 4, pattern = "h" },
  { J = 8, H = 8, I = 8, k = 4, wells = 4, pattern = "b" },     -- V=8, k=4: the scenario's shape
}
local formats = R == 1 and { "csr", "bsr", "ell", "hyb", "dia", "bdia" } or { "csr", "ell", "hyb", "bdia" }

for gi, gp in ipairs(grids) do
  local g = ob.reservoir(gp)
  local A = g:matrix("csr")
  local n = A:info().n
  local x = xvec(n)
  local y = A:spmv(x)
  for _, split in ipairs { "planes", "rows" } do
    for _, f in ipairs(formats) do
      if f ~= "bdia" or R == 1 or split == "planes" then   -- Bdia on ranks: slabs of planes
        local D <close> = ob.matrix { dist = split, grid = gp, format = f, backend = "cuda" }
        local e = D:spmv(x):max_rel_err(y)
        check(e <= 1e-14, "grid %d %s %s: GPU SpMV differs by %g", gi, split, f, e)
        local e2 = D:spmv(x):max_rel_err(y)          -- the same matrix again
        check(e2 <= 1e-14, "grid %d %s %s: second GPU SpMV differs by %g", gi, split, f, e2)
      end
    end
  end
  g:close()
end

-- a matrix from a file
do
  local gp = { J = 4, H = 3, I = 5, k = 2, wells = 3, pattern = "h" }
  local A = ob.reservoir(gp):matrix("csr")
  local name = ob.bcast(info.rank == 0 and os.tmpname() or nil)
  if info.rank == 0 then A:write(name) end
  ob.barrier()
  local x = xvec(A:info().n)
  for _, f in ipairs { "csr", "ell" } do
    local D <close> = ob.matrix { dist = "rows", file = name, format = f, backend = "cuda" }
    local e = D:spmv(x):max_rel_err(A:spmv(x))
    check(e <= 1e-14, "file %s: GPU SpMV differs by %g", f, e)
  end
  ob.barrier()
  if info.rank == 0 then os.remove(name) end
end

-- info, bench
do
  local D <close> = ob.matrix { dist = "planes", grid = grids[1], backend = "cuda" }
  local di = D:info()
  print("dist_sparse_gpu: " .. tostring(di.halo))   -- the driver's count depends on it
  check(di.backend == "cuda" and (di.halo == "halo: host buffers" or di.halo == "halo: CUDA-aware MPI"
                                  or di.halo == LINKED or (R == 1 and di.halo == "halo: none (one rank)"))
        and di.device_bytes > 0, "info: %s %s %s", tostring(di.backend), tostring(di.halo), tostring(di.device_bytes))
  local sec, st = D:bench { reps = 3 }
  check(sec > 0 and st.reps == 3 and st.copy_bw_sum > 0 and st.read_bw_sum > 0 and st.halo == di.halo,
        "bench: %g s, copy_bw_sum %s, read_bw_sum %s, %s", sec, tostring(st.copy_bw_sum),
        tostring(st.read_bw_sum), tostring(st.halo))
  local Dc <close> = ob.matrix { dist = "planes", grid = grids[1] }
  check(Dc:info().backend == "cpu" and Dc:info().halo == nil, "a CPU DistMatrix says cpu")
end

-- the solvers against ob.krylov's one-process solver; BiCGStab and QMR
-- keep their scalar work on the device on one rank and on linked ranks
-- (every rank a GPU of its own: the halo path says so), unless
-- ODEBENCH_GPU_LINK=off; the pipelined BiCGStab always on the host
local function control(D, m)
  if m == "pbicgstab" or os.getenv("ODEBENCH_GPU_LINK") == "off" then return "host" end
  return (R == 1 or D:info().halo == LINKED) and "device" or "host"
end

for gi, gp in ipairs { { J = 6, H = 5, I = 4, k = 2, wells = 2, pattern = "h" },
                       { J = 4, H = 4, I = 2 * R, k = 3, wells = 1, pattern = "b" } } do
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
      local D <close> = ob.matrix { dist = split, grid = gp, format = f, backend = "cuda" }
      for _, m in ipairs { "bicgstab", "pbicgstab", "qmr" } do
        local r, x = D[m](D, { b = b, tol = 1e-10 })
        local rr = ref[m == "qmr" and "qmr" or "bicgstab"]
        check(r.converged and r.relres <= 1e-10 and r.relres_true <= 1e-9,
              "grid %d %s %s %s: %s relres %g true %g", gi, split, f, m, r.outcome, r.relres, r.relres_true)
        check(math.abs(r.iters - rr.iters) <= 2, "grid %d %s %s %s: %d iterations, one process %d",
              gi, split, f, m, r.iters, rr.iters)
        check(#r.history == r.iters + 1 or #r.history == r.iters + 2, "grid %d %s: history of %d for %d iterations",
              gi, m, #r.history, r.iters)
        check(r.backend == "cuda" and r.halo ~= nil and r.control == control(D, m),
              "grid %d %s: result backend %s, control %s", gi, m, tostring(r.backend), tostring(r.control))
        local e = A:spmv(x):max_rel_err(b)
        check(e <= 1e-8, "grid %d %s %s %s: A x differs from b by %g", gi, split, f, m, e)
      end
      local r = D:pbicgstab { b = b, tol = 1e-10, replace = 5 }
      check(r.converged and r.relres_true <= 1e-9, "pbicgstab replace=5: %s %g", r.outcome, r.relres_true)
    end
  end
  g:close()
end

-- the persistent form (impl = "persistent"): each rank's whole BiCGStab in
-- one kernel, the halo and the sums over the ranks exchanged by the kernel
-- on linked ranks (CSR), CSR or Bdia on one rank; on fresh random right-
-- hand sides against the one-process solver; the fused solver and the
-- SpMV of the same matrix after it still pair their exchanges (the
-- kernel's count continues the link's)
do
  local seed = ob.bcast(info.rank == 0 and math.random(1, 1 << 30) or nil)
  for gi, gp in ipairs { { J = 6, H = 5, I = 4, k = 2, wells = 2, pattern = "h" },
                         { J = 8, H = 8, I = 2 * R, k = 4, wells = 4, pattern = "b" } } do
    local g = ob.reservoir(gp)
    local A = g:matrix("csr")
    local n = A:info().n
    local xt = ob.vector(n)
    for i = 1, n do xt[i] = math.sin(0.37 * i + seed % 1000) + 0.5 end
    local b = A:spmv(xt)
    local ref = ob.krylov { A = A, b = b, method = "bicgstab", tol = 1e-10 }
    for _, split in ipairs { "planes", "rows" } do
      for _, f in ipairs(R == 1 and { "csr", "bdia" } or { "csr", "ell" }) do
        local D <close> = ob.matrix { dist = split, grid = gp, format = f, backend = "cuda" }
        local linkedD = R == 1 or D:info().halo == LINKED
        local ok2, r, x = pcall(D.bicgstab, D, { b = b, tol = 1e-10, impl = "persistent" })
        if f == "ell" then
          check(not ok2 and tostring(r):find("persistent BiCGStab on " .. R .. " GPU ranks takes CSR", 1, true),
                "persistent ell refusal: %s", tostring(r))
        elseif not linkedD then
          check(not ok2 and tostring(r):find("needs the link between the GPUs of one host", 1, true),
                "persistent without the link: %s", tostring(r))
        else
          check(ok2, "grid %d %s %s persistent: %s", gi, split, f, tostring(r))
          check(r.converged and r.relres <= 1e-10 and r.relres_true <= 1e-9 and r.impl == "persistent"
                and r.control == "device",
                "grid %d %s %s persistent: %s relres %g true %g impl %s", gi, split, f, r.outcome, r.relres,
                r.relres_true, tostring(r.impl))
          check(math.abs(r.iters - ref.iters) <= 2, "grid %d %s %s persistent: %d iterations, one process %d",
                gi, split, f, r.iters, ref.iters)
          check(#r.history == r.iters + 1 or #r.history == r.iters + 2, "persistent: history of %d for %d",
                #r.history, r.iters)
          local e = A:spmv(x):max_rel_err(b)
          check(e <= 1e-8, "grid %d %s %s persistent: A x differs from b by %g", gi, split, f, e)
          -- the fused solver and the SpMV after it: the exchanges still pair
          local e2 = D:spmv(xt):max_rel_err(b)
          check(e2 <= 1e-14, "grid %d %s %s: SpMV after the persistent solve differs by %g", gi, split, f, e2)
          local r2 = D:bicgstab { b = b, tol = 1e-10 }
          check(r2.converged and r2.impl ~= "persistent" and math.abs(r2.iters - r.iters) <= 2,
                "grid %d %s %s: fused after persistent: %s, %d iterations against %d", gi, split, f,
                r2.outcome, r2.iters, r.iters)
          local r3 = D:bicgstab { b = b, tol = 1e-12, maxit = 3, impl = "persistent" }
          check(not r3.converged and r3.outcome == "maxit" and r3.iters == 3, "persistent maxit: %s %d",
                r3.outcome, r3.iters)
        end
      end
    end
    g:close()
  end
  -- fewer planes than ranks: a rank without rows refuses on every rank
  if R > 1 then
    local g1 = { J = 3, H = 3, I = 1, k = 1, wells = 0, pattern = "b" }
    local D1 <close> = ob.matrix { dist = "planes", grid = g1, backend = "cuda" }
    local b1 = xvec(D1:info().n)
    local ok1, m1 = pcall(D1.bicgstab, D1, { b = b1, impl = "persistent" })
    check(not ok1 and m1:find("every rank must hold 1 .. 2^31 - 1 rows", 1, true), "no rows: %s", tostring(m1))
    check(D1:bicgstab { b = b1, tol = 1e-10 }.converged, "the fused solver after the refusal")
  end
  local gp = { J = 4, H = 3, I = 2, k = 1, wells = 0, pattern = "b" }
  local D <close> = ob.matrix { dist = "planes", grid = gp, backend = "cuda" }
  local bb = xvec(D:info().n)
  local ok3, m3 = pcall(D.bicgstab, D, { b = bb, impl = "one kernel" })
  check(not ok3 and m3:find('D:bicgstab: impl must be "fused"', 1, true), "impl refusal: %s", tostring(m3))
  ok3, m3 = pcall(D.qmr, D, { b = bb, impl = "persistent" })
  check(not ok3 and m3:find("impl", 1, true), "qmr takes no impl: %s", tostring(m3))
  local Dc <close> = ob.matrix { dist = "planes", grid = gp }
  ok3, m3 = pcall(Dc.bicgstab, Dc, { b = bb, impl = "persistent" })
  check(not ok3 and m3:find("impl persistent runs on GPU ranks", 1, true), "CPU refusal: %s", tostring(m3))
end

-- stopping: maxit, with the one-process message
do
  local gp = { J = 6, H = 5, I = 4, k = 2, wells = 2, pattern = "h" }
  local A = ob.reservoir(gp):matrix("csr")
  local b = A:spmv(xvec(A:info().n))
  local D <close> = ob.matrix { dist = "planes", grid = gp, backend = "cuda" }
  local r = D:bicgstab { b = b, tol = 1e-12, maxit = 3 }
  check(not r.converged and r.outcome == "maxit" and r.iters == 3 and
        r.message:find("BiCGStab: no convergence in 3 iterations", 1, true), "maxit: %s", tostring(r.message))
end

print(string.format("dist_sparse_gpu: %d checks passed on %d rank(s)", checked(), R))
