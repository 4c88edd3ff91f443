-- reservoir_spmv.lua: SpMV of the generalized hepta-diagonal reservoir
-- matrices on the GPU in every storage format against cuSPARSE
-- (M. A. Al-Mouhamed and A. H. Khan, "SpMV and BiCG-Stab optimization for
-- a class of hepta-diagonal-sparse matrices on GPU", Figures 7-8).
--
-- Cubic grids V x V x V (J = H = I = V), k components per cell, patterns
-- GH-b ("b") and GH-h ("h"), no wells by default. For each grid every
-- format is built on the host (CSR assembled, BSR (k x k), ELL, HYB, DIA
-- converted from it, Bdia built from the grid), copied to the GPU
-- (A:gpu()), its launch options tuned (D:tune: block size and grain, and
-- for Bdia the paper's cooperative shared-memory load of x, section 6.1,
-- two cells per thread with 16-byte loads (pair), and evict-first loads of
-- the values (stream); gpu/sparse/odb_sparse_gpu.h),
-- checked against the CPU CSR product, and timed (D:bench: reps
-- back-to-back runs in 5 batches with device events between batches, the
-- median of the batch means; no L2 flush between runs, so grids whose
-- matrix fits in the 50 MB L2 run from it); cuSPARSE CSR (cusparseSpMV)
-- and BSR (the faster of cusparseDbsrmv and the generic BSR SpMV) are timed
-- in the same run on the same matrices.
--
-- Reported per implementation: microseconds per SpMV, GFLOP/s = 2 nnz / t,
-- GB/s counting the values, x and y once (8 (nnz + 2n) bytes; the same for
-- every format, so GB/s compares times), the row's floor% (floor_pct: the
-- fewest bytes of the format's SpMV -- its arrays, x and y once,
-- odb_sparse_min_bytes -- the read ones at the read bandwidth measured in
-- this run and y at the write bandwidth derived from the copy; a '*' marks
-- a row above its floor, with a footnote), and the speedup of each of ours
-- over cuSPARSE CSR and BSR. Targets: Bdia >= 85% of its floor for
-- V >= 64, >= 1.5x cuSPARSE CSR and >= 1.2x cuSPARSE BSR.
-- Matrices that do not fit (host limit host_gb, or the device) are skipped
-- with a note. Without a GPU the scenario says so and ends (exit 0).
-- V, k, patterns and formats take comma-separated lists, so a sweep too
-- long for one run splits into subsets. The host side (assembly, format
-- conversions, the CPU check product) is threaded (core/sparse/par.c), so
-- even the largest grids build in well under a minute on a many-core host.
-- Rows go to results (ob.metric) and to <outdir>/reservoir_spmv.csv.
--
-- Lua API used (lua/odb_lua_sparse.c): grid:matrix(fmt), A:convert(fmt,
-- {bs=}), A:gpu() -> D, D:tune{reps=} -> seconds, config, D:bench{impl=
-- "ours"|"cusparse", reps=} -> seconds per SpMV, D:spmv(x [, impl]),
-- D:info(), D:close(); grid:matrix(fmt, {backend="cuda"}) gives D directly.
--
--   odebench scenarios/reservoir_spmv.lua                       (full sweep)
--   odebench scenarios/reservoir_spmv.lua --set V=64 --set k=4  (one size)
--   odebench scenarios/reservoir_spmv.lua --set V=96,128 --set k=8 (a subset)
--   odebench scenarios/reservoir_spmv.lua --set V=32 --set patterns=h \
--            --set formats=csr,bdia --set wells=4
--
-- A matrix of one's own: --set file=a.mtx (Matrix Market, ob.matrix) runs
-- on it instead of the grids, on the CPU (A:bench, in every format) and on
-- the GPU where there is one (as above). Each format is converted from the
-- file's CSR (bs: the BSR block size); one that does not apply (DIA of a
-- matrix that is not banded, Bdia, which needs the grid a matrix comes
-- from) is listed with the reason. Every product is checked against the
-- CPU CSR product. Rows go to <outdir>/reservoir_spmv_file.csv.
--
--   odebench scenarios/reservoir_spmv.lua --set file=a.mtx --set bs=4
local ob = require "odebench"
local report = require "odebench.report"

local Vs       = ob.param("V", "20,32,41,51,64,96,128")
local ks       = ob.param("k", "2,4,8")
local pats     = ob.param("patterns", "b,h")
local formats  = ob.param("formats", "csr,bsr,ell,hyb,dia,bdia")
local wells    = ob.param("wells", 0)
local reps     = ob.param("reps", 20)
local tune_reps = ob.param("tune_reps", 5)
local check    = ob.param("check", true)
local host_gb  = ob.param("host_gb", 0.0)     -- 0: no limit on host matrices
local seed     = ob.param("seed", 1)
local csv_path = ob.param("csv", "")         -- "": <outdir>/reservoir_spmv.csv
local file     = ob.param("file", "")        -- a Matrix Market file instead of the grids
local bs       = ob.param("bs", 4)           -- file: the BSR block size
local threads  = ob.param("threads", 0)      -- file: CPU threads of A:bench (0: one per core)

local function split(s)
  local t = {}
  for x in tostring(s):gmatch("[^,%s]+") do t[#t + 1] = x end
  return t
end

-- The user's matrix: every format on the CPU, and on the GPU where present.
local function run_file()
  local A = ob.matrix { file = file }
  local ai = A:info()
  local n, nnz = ai.n, ai.nnz
  local x = ob.vector(n)
  for i = 1, n do x[i] = math.sin(i) + i / n end
  local y0 = A:spmv(x)                       -- the CSR reference
  local gpu = ob.info { bandwidth = false }.gpu and ob.info().gpu
  print(string.format("%s: n = %d, nnz = %d, values, x and y %.1f MB%s", file, n, nnz,
                      8 * (nnz + 2 * n) / 1e6,
                      gpu and string.format("; GPU %s, read bandwidth %.1f GB/s", gpu.name,
                                            gpu.read_gbs or 0)
                          or "; no GPU in this run: CPU only"))
  local path = csv_path ~= "" and csv_path or (ob.outdir() .. "/reservoir_spmv_file.csv")
  local csv = io.open(path, "w")
  if csv then csv:write("file,n,nnz,backend,impl,format,us,gflops,gbs,floor_pct,floor_note,device_bytes,config\n") end
  print(string.format("  %-8s %-14s %9s %9s %8s %7s  %s", "backend", "impl", "us", "GFLOP/s", "GB/s",
                      "floor%", "configuration"))
  local floor_rows = {}
  local function emit(backend, name, fmt, t, devb, cfg, row)
    local us, gflops, gbs = t * 1e6, 2 * nnz / t / 1e9, 8 * (nnz + 2 * n) / t / 1e9
    floor_rows[#floor_rows + 1] = row
    print(string.format("  %-8s %-14s %9.1f %9.1f %8.1f %7s  %s", backend, name, us, gflops, gbs,
                        report.floor(row), cfg))
    if csv then
      csv:write(string.format("%s,%d,%d,%s,%s,%s,%.3f,%.2f,%.2f,%.2f,%s,%d,%s\n", file, n, nnz, backend, name, fmt,
                              us, gflops, gbs, row.floor_pct or 0, row.floor_note or "", devb, cfg))
    end
    ob.metric(string.format("file_%s_%s_us", backend, name), us, "us")
    ob.metric(string.format("file_%s_%s_gbs", backend, name), gbs, "GB/s")
  end
  local skipped = {}
  for _, f in ipairs(split(formats)) do
    local ok, M = true, A
    if f ~= "csr" then ok, M = pcall(A.convert, A, f, { bs = bs, max_bytes = host_limit }) end
    if not ok then
      skipped[#skipped + 1] = string.format("%s: %s", f, tostring(M))
    else
      local err = M:spmv(x):max_rel_err(y0)
      assert(err <= 1e-12, string.format("%s: CPU %s SpMV differs from CSR by %.2e", file, f, err))
      local t, row = M:bench { reps = reps, threads = threads }
      emit("cpu", f, f, t, M:info().bytes, "threads=" .. row.threads, row)
      if gpu then
        local okd, D = pcall(M.gpu, M)
        if not okd then
          skipped[#skipped + 1] = string.format("%s on the GPU: %s", f, tostring(D))
        else
          local _, cfg = D:tune { reps = tune_reps }
          err = D:spmv(x):max_rel_err(y0)
          assert(err <= 1e-12, string.format("%s: GPU %s SpMV differs from the CPU by %.2e", file, f, err))
          local tg, rg = D:bench { reps = reps }
          emit("cuda", f, f, tg, D:info().bytes, cfg, rg)
          if f == "csr" or f == "bsr" then
            err = D:spmv(x, "cusparse"):max_rel_err(y0)
            assert(err <= 1e-12, string.format("%s: cuSPARSE %s differs from the CPU by %.2e", file, f, err))
            local tc, rc = D:bench { impl = "cusparse", reps = reps }
            emit("cuda", "cusparse_" .. f, f, tc, D:info().bytes, D:info().cusparse, rc)
          end
          D:close()
        end
      end
      if M ~= A then M:close() end
    end
    collectgarbage()
  end
  for _, l in ipairs(report.floor_notes(floor_rows)) do print(l) end
  if csv then
    csv:close()
    print("rows in " .. path)
  end
  if #skipped > 0 then
    print("formats that do not apply:")
    for _, s in ipairs(skipped) do print("  " .. s) end
  end
  A:close()
end

local host_limit = host_gb > 0 and math.floor(host_gb * 2^30) or nil
if file ~= "" then
  run_file()
  return
end

local probe = ob.info { bandwidth = false }.gpu
if not probe then
  print("reservoir_spmv: no GPU in this run (or a build without CUDA); nothing to measure")
  return
end
local gpu = ob.info().gpu
print(string.format("%s: %d SMs, %.1f GiB, read bandwidth %.1f GB/s, copy %.1f GB/s "
                    .. "(read + write)", gpu.name, gpu.sm_count, gpu.mem_bytes / 2^30,
                    gpu.read_gbs or 0, gpu.copy_gbs or 0))

local path = csv_path ~= "" and csv_path or (ob.outdir() .. "/reservoir_spmv.csv")
local csv = io.open(path, "w")
if csv then
  csv:write("V,k,pattern,wells,n,nnz,impl,format,us,gflops,gbs,floor_pct,floor_note,"
            .. "speedup_vs_cusparse_csr,speedup_vs_cusparse_bsr,device_bytes,config\n")
else
  print("reservoir_spmv: cannot write " .. path .. "; CSV rows skipped")
end

local fmts = split(formats)
local cases = {}
for _, V in ipairs(split(Vs)) do
  for _, k in ipairs(split(ks)) do
    for _, p in ipairs(split(pats)) do
      cases[#cases + 1] = { V = tonumber(V), k = tonumber(k), p = p }
    end
  end
end

local notes, floor_rows = {}, {}
local done = 0
ob.progress(0, #cases, "grids")

-- One measured implementation: table row, CSV row, metrics.
local function emit(c, n, nnz, name, fmt, t, cs, devb, cfg, row)
  local us = t * 1e6
  local gflops = 2 * nnz / t / 1e9
  local gbs = 8 * (nnz + 2 * n) / t / 1e9
  local pct = row.floor_pct or 0      -- the row's own floor (odb_floor.h)
  local vs_csr = cs.csr and cs.csr / t or 0
  local vs_bsr = cs.bsr and cs.bsr / t or 0
  floor_rows[#floor_rows + 1] = row
  print(string.format("  %-14s %9.1f %9.1f %8.1f %7s %7.2f %7.2f  %s", name, us, gflops,
                      gbs, report.floor(row), vs_csr, vs_bsr, cfg))
  if csv then
    csv:write(string.format("%d,%d,%s,%d,%d,%d,%s,%s,%.3f,%.2f,%.2f,%.2f,%s,%.3f,%.3f,%d,%s\n",
                            c.V, c.k, c.p, wells, n, nnz, name, fmt, us, gflops, gbs, pct,
                            row.floor_note or "", vs_csr, vs_bsr, devb, cfg))
    csv:flush()
  end
  local tag = string.format("V%d_k%d_%s_%s", c.V, c.k, c.p, name)
  ob.metric(tag .. "_us", us, "us")
  ob.metric(tag .. "_gbs", gbs, "GB/s")
  ob.metric(tag .. "_floor_pct", pct, "%")
  if name == "bdia" then
    if cs.csr then ob.metric(tag .. "_vs_cusparse_csr", vs_csr) end
    if cs.bsr then ob.metric(tag .. "_vs_cusparse_bsr", vs_bsr) end
  end
end

for _, c in ipairs(cases) do
  local g = ob.reservoir { J = c.V, H = c.V, I = c.V, k = c.k, wells = wells,
                           pattern = c.p, seed = seed }
  local info = g:info()
  local label = string.format("V=%d k=%d GH-%s wells=%d", c.V, c.k, c.p, wells)
  local ok, A = pcall(g.matrix, g, "csr", { max_bytes = host_limit })
  if not ok then
    notes[#notes + 1] = label .. ": skipped (" .. tostring(A) .. ")"
    print(notes[#notes])
  else
    local n, nnz = info.n, A:info().nnz
    local y0, x
    if check then y0, x = g:rhs(A) end
    print(string.format("%s: n = %d, nnz = %d, values, x and y %.1f MB", label, n, nnz,
                        8 * (nnz + 2 * n) / 1e6))
    print(string.format("  %-14s %9s %9s %8s %7s %7s %7s  %s", "impl", "us", "GFLOP/s",
                        "GB/s", "floor%", "/csCSR", "/csBSR", "configuration"))
    local rows, cs = {}, {}
    for _, f in ipairs(fmts) do
      local okm, M
      if f == "csr" then okm, M = true, A
      elseif f == "bdia" then okm, M = pcall(g.matrix, g, "bdia", { max_bytes = host_limit })
      else okm, M = pcall(A.convert, A, f, { bs = c.k, max_bytes = host_limit }) end
      local okd, D
      if okm then okd, D = pcall(M.gpu, M) else okd, D = false, M end
      if M and okm and f ~= "csr" then M:close() end
      if not okd then
        notes[#notes + 1] = string.format("%s %s: skipped (%s)", label, f, tostring(D))
        print("  " .. notes[#notes])
      else
        local _, cfg = D:tune { reps = tune_reps }
        if check then
          local err = D:spmv(x):max_rel_err(y0)
          assert(err <= 1e-12, string.format("%s %s: GPU SpMV differs from the CPU by %.2e",
                                             label, f, err))
        end
        local t, row = D:bench { reps = reps }
        rows[#rows + 1] = { name = f, fmt = f, t = t, devb = D:info().bytes, cfg = cfg,
                            row = row }
        if f == "csr" or f == "bsr" then
          if check then
            local err = D:spmv(x, "cusparse"):max_rel_err(y0)
            assert(err <= 1e-12, string.format("%s cuSPARSE %s differs from the CPU by %.2e",
                                               label, f, err))
          end
          local tc, rc = D:bench { impl = "cusparse", reps = reps }
          cs[f] = tc
          rows[#rows + 1] = { name = "cusparse_" .. f, fmt = f, t = tc, devb = D:info().bytes,
                              cfg = D:info().cusparse, row = rc }
        end
        D:close()
      end
      collectgarbage()
    end
    for _, r in ipairs(rows) do emit(c, n, nnz, r.name, r.fmt, r.t, cs, r.devb, r.cfg, r.row) end
    A:close()
  end
  g:close()
  collectgarbage()
  done = done + 1
  ob.progress(done, #cases, "grids")
end

if csv then
  csv:close()
  print("rows in " .. path)
end
if #notes > 0 then
  print("skipped:")
  for _, s in ipairs(notes) do print("  " .. s) end
end
for _, l in ipairs(report.floor_notes(floor_rows)) do print(l) end
