-- reservoir_bicgstab.lua: BiCGStab and QMR on reservoir matrices
-- (M. A. Al-Mouhamed and A. H. Khan, "SpMV and BiCG-Stab optimization for
-- a class of hepta-diagonal-sparse matrices on GPU", Figure 9 and section
-- 7.4): the generalized hepta-diagonal
-- matrix GH of a cubic V x V x V grid with k components per cell, solved to
-- a relative residual of tol by every implementation of ob.krylov:
--
--   cusparse    one cuSPARSE/cuBLAS call per operation (CSR)
--   fused       our SpMV (Bdia or CSR) + fused vector kernels
--   persistent  the paper's in-kernel solver, one kernel for the whole solve,
--               with each inter-block barrier: lock, lockfree, wss (WS-S,
--               with the delay `delay` ns)
--   cpu         the reference (only for V <= cpu_max)
--
-- Reported per grid, method and implementation: iterations and time to
-- tolerance (ms) of a solve to tol; time per iteration (us) of a second
-- solve of exactly `its` iterations (tol 1e-300, no stagnation stop), so
-- that it does not rest on a dozen iterations; the ratio of the cusparse time per
-- iteration to this one (the persistent/cusparse speedup), the iteration in
-- SpMVs (time of one SpMV of the same kind measured in the same run), and
-- the row's floor% (floor_pct of the fixed-iteration solve: the fewest
-- bytes of its iterations, odb_krylov_min_bytes -- A twice, or A and A^T,
-- and the vectors the recurrences carry between their dot products -- the
-- read ones at the read bandwidth of this run and the written ones at the
-- write bandwidth derived from the copy; a '*' marks a row above its
-- floor, with a footnote).
--
-- V (also accepted as sizes) and k take comma-separated lists, so a sweep
-- too long for one run splits into subsets (--set V=96,128 --set k=8).
--
--   odebench scenarios/reservoir_bicgstab.lua
--   odebench scenarios/reservoir_bicgstab.lua --set V=20,64 --set k=2,8
--   odebench scenarios/reservoir_bicgstab.lua --set methods=bicgstab --set syncs=wss --set delay=200
--
-- A matrix of one's own: --set file=a.mtx (Matrix Market, ob.matrix) is
-- solved instead of the grids, with b = A x for x = 1 (so the solution is
-- known), by the CPU reference and, where there is a GPU, every
-- implementation above in the formats that apply to it (Bdia needs the grid
-- a matrix comes from and is listed with that reason). The same two solves
-- and columns as for a grid; relres_true is |b - A x| / |b| recomputed from
-- the returned x.
--
--   odebench scenarios/reservoir_bicgstab.lua --set file=a.mtx --set tol=1e-8
local ob = require "odebench"
local report = require "odebench.report"

local sizes   = ob.param("V", ob.param("sizes", "20,32,41,51,64,96,128"))
local ks      = ob.param("k", "4")
local wells   = ob.param("wells", 0)
local pattern = ob.param("pattern", "b")
local tol     = ob.param("tol", 1e-10)
local maxit   = ob.param("maxit", 2000)
local its     = ob.param("its", 100)              -- iterations of the per-iteration timing
local methods = ob.param("methods", "bicgstab,qmr")
local impls   = ob.param("impls", "cusparse,fused,persistent")
local formats = ob.param("formats", "bdia,csr")   -- fused and persistent BiCGStab
local syncs   = ob.param("syncs", "lock,lockfree,wss")
local delay   = ob.param("delay", 0)
local grid    = ob.param("grid", 0)               -- persistent blocks (0: automatic)
local block   = ob.param("block", 256)
local grain   = ob.param("grain", 0)              -- persistent Bdia rows of a cell per thread: 1, 2, 4 or k (0: chosen)
local cpu_max = ob.param("cpu_max", 20)
local file    = ob.param("file", "")              -- a Matrix Market file instead of the grids

local gpu = ob.info { bandwidth = false }.gpu and ob.info().gpu
if not gpu and file == "" then
  print("reservoir_bicgstab: no GPU in this run (or a build without CUDA); nothing to measure")
  return
end

local function split(s)
  local t = {}
  for x in tostring(s):gmatch("[^,%s]+") do t[#t + 1] = x end
  return t
end

-- The implementations to run for one method: {impl, format, sync}.
local function plan(method, V)
  local runs = {}
  for _, impl in ipairs(split(impls)) do
    if impl == "cpu" then
      -- below
    elseif impl == "cusparse" then
      runs[#runs + 1] = { impl = "cusparse", fmt = "csr" }
    else
      for _, f in ipairs(split(formats)) do
        if method == "bicgstab" or f == "csr" then
          if impl == "persistent" then
            for _, s in ipairs(split(syncs)) do runs[#runs + 1] = { impl = impl, fmt = f, sync = s } end
          else
            runs[#runs + 1] = { impl = impl, fmt = f }
          end
        end
      end
    end
  end
  if not gpu then runs = {} end
  if V <= cpu_max then table.insert(runs, 1, { impl = "cpu", fmt = "csr" }) end
  return runs
end

if file ~= "" then
  print(string.format("%s; %s, tol %g", file, gpu and string.format("%s: read bandwidth %.1f GB/s", gpu.name,
                      gpu.read_gbs or 0) or "no GPU in this run: the CPU reference only", tol))
else
  print(string.format("%s: read bandwidth %.1f GB/s; k=%s, wells=%d, GH-%s, tol %g", gpu.name,
                      gpu.read_gbs or 0, ks, wells, pattern, tol))
end
print(string.format("%2s %4s %9s %-8s %-10s %-4s %-8s %5s %9s %9s %7s %6s %6s %s", "k", "V", "n", "method",
                    "impl", "fmt", "sync", "iters", "us/iter", "ms", "xcusp", "xSpMV", "floor", "relres_true"))

local grids, floor_rows = {}, {}
if file ~= "" then
  grids[1] = { file = file, k = 0, V = 0 }
else
  for _, kstr in ipairs(split(ks)) do
    for _, vstr in ipairs(split(sizes)) do grids[#grids + 1] = { k = tonumber(kstr), V = tonumber(vstr) } end
  end
end
ob.progress(0, #grids, "grids")
for iv, gd in ipairs(grids) do
  local V, k = gd.V, gd.k
  local kv = gd.file and "file" or string.format("k%d V%d", k, V)   -- metric prefix
  local g, mats, b, n
  if gd.file then
    -- the user's matrix in the formats that apply; b = A 1
    mats = { csr = ob.matrix { file = gd.file } }
    n = mats.csr:info().n
    print(string.format("%s: n = %d, nnz = %d", gd.file, n, mats.csr:info().nnz))
    local keep = {}
    for _, f in ipairs(split(formats)) do
      if f ~= "csr" then
        local ok, M = pcall(mats.csr.convert, mats.csr, f)
        if ok then mats[f] = M else print(string.format("  %s does not apply: %s", f, tostring(M))) end
      end
      if mats[f] then keep[#keep + 1] = f end
    end
    formats = table.concat(keep, ",")
    local one = ob.vector(n)
    for i = 1, n do one[i] = 1 end
    b = mats.csr:spmv(one)
  else
    g = ob.reservoir { J = V, H = V, I = V, k = k, wells = wells, pattern = pattern, seed = 1 }
    mats = { csr = g:matrix("csr") }
    for _, f in ipairs(split(formats)) do mats[f] = mats[f] or g:matrix(f) end
    b = g:rhs(mats.csr)
    n = g:info().n
  end
  local spmv = {}       -- seconds of one SpMV per impl/format, measured once
  for _, method in ipairs(split(methods)) do
    local base                      -- cusparse seconds per iteration
    for _, r in ipairs(plan(method, V)) do
      local key = r.impl .. "/" .. r.fmt
      local want_spmv = r.impl ~= "cpu" and spmv[key] == nil
      local opts = { A = mats[r.fmt], b = b, method = method, impl = r.impl, sync = r.sync,
                     delay = delay, grid = grid > 0 and grid or nil, block = block,
                     grain = grain > 0 and r.fmt == "bdia" and grain or nil,
                     tol = tol, maxit = maxit, spmv = want_spmv }
      local res = ob.krylov(opts)
      if want_spmv then spmv[key] = res.spmv_seconds end
      opts.tol, opts.maxit, opts.stagnation, opts.spmv = 1e-300, its, its + 1, false
      local fixed = ob.krylov(opts)
      local t = fixed.seconds_per_iter
      if r.impl == "cusparse" then base = t end
      floor_rows[#floor_rows + 1] = fixed
      local name = string.format("%s %s %s %s%s", kv, method, r.impl, r.fmt, r.sync and (" " .. r.sync) or "")
      print(string.format("%2d %4d %9d %-8s %-10s %-4s %-8s %5d %9.1f %9.3f %7s %6s %6s %.2g%s", k, V, n, method,
                          r.impl, r.fmt, r.sync or "-", res.iters, t * 1e6, res.seconds * 1e3,
                          base and string.format("%.2f", base / t) or "-",
                          spmv[key] and string.format("%.2f", t / spmv[key]) or "-",
                          report.floor(fixed, "%.0f%%"),
                          res.relres_true, res.converged and "" or ("  " .. res.outcome)))
      if r.impl == "persistent" then
        -- stream (evict-first values), call (SpMV as a called function) and
        -- tuned (chosen by running the candidates) where the binding reports them
        local function flag(v) return v == nil and "?" or (v == true or v == 1) and "1" or "0" end
        print(string.format("%75s grid %d x %d (co-resident max %d), grain %d, stream %s, call %s, tuned %s, " ..
                            "range vectors in %s", "", res.grid, res.block, res.max_grid, res.grain,
                            flag(res.stream), flag(res.call), flag(res.tuned),
                            res.rv_shared and "shared memory" or "global memory"))
      end
      ob.metric(name .. " us_per_iter", t * 1e6, "us")
      ob.metric(name .. " ms_to_tol", res.seconds * 1e3, "ms")
      ob.metric(name .. " iters", res.iters)
      if base and r.impl ~= "cusparse" then ob.metric(name .. " speedup_vs_cusparse", base / t) end
    end
  end
  for key, s in pairs(spmv) do
    print(string.format("%2d %4d %9d SpMV %-20s %9.1f us", k, V, n, key, s * 1e6))
    ob.metric(string.format("%s spmv %s us", kv, key), s * 1e6, "us")
  end
  for _, A in pairs(mats) do A:close() end
  if g then g:close() end
  ob.progress(iv, #grids, "grids")
end
for _, l in ipairs(report.floor_notes(floor_rows)) do print(l) end
