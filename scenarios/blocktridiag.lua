-- blocktridiag.lua: batched small dense matrices in the compact layout
-- (KokkosKernels' interleaved packs of VL matrices: K. Kim et al.,
-- "Designing vector-friendly compact BLAS and LAPACK kernels") and the
-- line-implicit block-tridiagonal solver built on them, on the CPU and on
-- the GPU, against the standard layout and the libraries.
--
-- For each block size B it measures
--   lu         batched LU without pivoting of many B x B matrices alone
--   solve      (GPU) batched solve with those factors
--   factor     block LU (block Thomas) of many lines of `length` block rows
--   btdsolve   the solve of those lines
-- in the standard and the compact layout; on the GPU in every kernel
-- variant (serial: a thread per matrix; serial2: a thread per two matrices
-- with 16-byte double2 accesses; team: a thread per row; stream, for the
-- lines: a block of threads per pack, several threads per line, fed by
-- bulk copies into shared memory block rows ahead -- the solve the factors
-- it needs, the factor each block row's blocks, every factor written out
-- once), against cuBLAS
-- (getrfBatched / getrsBatched, with partial pivoting as PyTorch and cuBLAS
-- do by default, and without) on the same matrices, and against PyTorch's
-- torch.linalg.lu_factor (peers/torch_lu.py, when python3 can import torch
-- and has a GPU). The lines have their own cuBLAS peer (variant "cublas"):
-- the same block LU and solve as cuBLAS batched calls per block row across
-- all lines (getrfBatched without pivots, trsmBatched for L^-1 C and
-- A U^-1, gemmStridedBatched for the Schur update; the solve's sweeps with
-- gemvStridedBatched and trsmBatched of one column) on a column-major copy
-- of the blocks made outside the timing. Per B the whole line work is
-- compared: ours (the best factor plus the best solve on one layout of the
-- data, any variants; also of any layouts) against cuBLAS's factor plus
-- solve, printed as "x cuBLAS" (above
-- 1: ours faster; the target is 3), also in <outdir>/blocktridiag_lines.csv
-- and the metric "gpu lines B<n> x_cublas".
--
-- Reported: matrices (or block rows) per second, GB/s of the bytes each op
-- must move at least (odb_dense_floor.h: every matrix or block read once and
-- written once where it changes -- an in-place LU keeps the first row of U,
-- A's own; for the line solve every factor block read once -- 3*length - 2
-- blocks per line, A_0 and C_last lying outside the matrix -- and the
-- right-hand side read once and the solution written once, the intermediate
-- y not counted; for the factor every block read once and its factor
-- written once, less the first rows of D_0 and of each C_r, which the
-- factorization leaves as they are), copy% (on the GPU: those bytes over
-- the time at the device-to-device copy bandwidth measured in this run),
-- the row's floor% (floor_pct: those bytes, the read ones at
-- the read bandwidth and the written ones at the write bandwidth derived
-- from the copy, measured in this run: the GPU's, one thread's on the CPU,
-- whose kernels run on one thread; a '*' marks a row above its floor, with
-- a footnote saying whether it ran in cache), the ratio
-- compact/standard (best variant of each), and ours over each library (above
-- 1: ours faster). The solves are timed on right-hand sides already in the
-- layout (the conversion is not timed); every time is the median of reps
-- (GPU: device events around the kernel alone). Rows also go to
-- <outdir>/blocktridiag.csv and to results (ob.metric).
--
--   odebench scenarios/blocktridiag.lua
--   odebench scenarios/blocktridiag.lua --set blocks=3,5,10 --set cpu=0
--   odebench scenarios/blocktridiag.lua --set cpu=0 --set blocks=3,5,7,10,15 \
--     --set peers=none
--   odebench scenarios/blocktridiag.lua --set gpu=0 --set rows=2^18
--
-- Without a GPU (or in a build without CUDA) only the CPU part runs, with a
-- note saying why.
local ob = require "odebench"
local report = require "odebench.report"

if not (ob.blocktridiag and ob.batched) then
  print("blocktridiag: ob.blocktridiag / ob.batched are not in this build; "
        .. "nothing to measure")
  return
end

local blocks    = ob.param("blocks", "3,5,7,9,10,15")
local rows      = ob.param("rows", 2^19)     -- CPU: block rows in all
local length    = ob.param("length", 64)     -- block rows per line
local reps      = ob.param("reps", 5)        -- CPU repetitions (median)
local cpu_bytes = ob.param("cpu_bytes", 2^28) -- CPU batched LU: matrix bytes
local gpu_bytes = ob.param("gpu_bytes", 2^29) -- GPU: matrix / block bytes
local gpu_reps  = ob.param("gpu_reps", 10)
local peers     = ob.param("peers", "torch")
local python    = ob.param("python", "python3")
local do_cpu    = ob.param("cpu", 1) ~= 0
local do_gpu    = ob.param("gpu", 1) ~= 0

local function split(s)
  local t = {}
  for x in tostring(s):gmatch("[^,%s]+") do t[#t + 1] = tonumber(x) or x end
  return t
end
local bs = split(blocks)

local info = ob.info { bandwidth = "now" }   -- the CPU floor measured in this run
local cpu_gbs = info.bandwidth and info.bandwidth.read_1t or nil
local gpu = do_gpu and info.gpu or nil
local gpu_gbs = gpu and gpu.read_gbs or nil
local gpu_copy = gpu and gpu.copy_gbs or nil
if do_gpu and not gpu then
  print("blocktridiag: no GPU here (the \"cuda\" backend is not registered: "
        .. "no CUDA in this build or no device); the CPU part only")
end
if gpu then
  print(string.format("GPU %s (cc %s, %d SMs): read bandwidth %.0f GB/s, "
                      .. "copy %.0f GB/s", gpu.name, gpu.cc, gpu.sm_count,
                      gpu_gbs or 0, gpu_copy or 0))
end
if cpu_gbs and do_cpu then
  print(string.format("CPU %s: read bandwidth %.1f GB/s (one thread)",
                      info.cpu.model, cpu_gbs))
end

-- {====== rows: printed, kept for the CSV and the ratios, metrics

local rows_out = {}
local best = {}      -- best[part.."/"..op.."/"..B][group] = seconds
local one_layout = {} -- ["gpu/"..B.."/compact VL4"][op] = { seconds, impl }

local HEAD = string.format("%-4s %-9s %3s %-26s %10s %12s %8s %6s %7s",
                           "part", "op", "B", "impl", "n", "per s", "GB/s",
                           "copy%", "floor%")
local function record(part, op, B, impl, group, n, r)
  local floor = r.floor_pct      -- the row's own (nil for an outside peer)
  -- the share of the GPU's copy bandwidth (bytes read + written per
  -- second), the figure the kernels of a streaming op are held to
  local copy = part == "gpu" and gpu_copy and gpu_copy > 0
               and 100 * r.gbs / gpu_copy or nil
  local row = { part = part, op = op, B = B, impl = impl, n = n,
                seconds = r.seconds, per_s = n / r.seconds, gbs = r.gbs,
                copy = copy, floor = floor, floor_note = r.floor_note }
  rows_out[#rows_out + 1] = row
  print(string.format("%-4s %-9s %3d %-26s %10d %12.4g %8.1f %6s %7s", part,
                      op, B, impl, n, row.per_s, r.gbs,
                      copy and string.format("%.1f", copy) or "-",
                      report.floor(r)))
  local key = string.format("%s/%s/%d", part, op, B)
  -- the best of each op on each layout of the data (layout and VL), for
  -- the whole line work on one layout
  local data = impl:match("^(%a+ VL%d+)")
  if part == "gpu" and data then
    local dk = string.format("gpu/%d/%s", B, data)
    one_layout[dk] = one_layout[dk] or {}
    local d = one_layout[dk]
    if not d[op] or r.seconds < d[op].seconds then
      d[op] = { seconds = r.seconds, impl = impl }
    end
  end
  best[key] = best[key] or {}
  if not best[key][group] or r.seconds < best[key][group].seconds then
    best[key][group] = { seconds = r.seconds, impl = impl, floor = floor,
                         copy = copy }
  end
  local mk = string.format("%s %s B%d %s", part, op, B, impl)
  ob.metric(mk .. " per_s", row.per_s)
  ob.metric(mk .. " gbs", r.gbs, "GB/s")
  if floor then ob.metric(mk .. " floor_pct", floor, "%") end
  if copy then ob.metric(mk .. " copy_pct", copy, "%") end
end

-- Ratios of one (part, op, B): compact/standard and ours over libraries.
local function ratios(part, op, B)
  local g = best[string.format("%s/%s/%d", part, op, B)]
  if not g or not g.compact then return end
  local c = g.compact
  local parts = {}
  local function vs(group, label)
    if g[group] then
      local x = g[group].seconds / c.seconds
      parts[#parts + 1] = string.format("%s %.2fx", label, x)
      ob.metric(string.format("%s %s B%d compact_over_%s", part, op, B,
                              group), x)
    end
  end
  vs("standard", "compact/standard")
  vs("cublas", "vs cuBLAS")
  vs("cublas_nopiv", "vs cuBLAS(nopiv)")
  vs("torch", "vs torch")
  vs("torch_nopiv", "vs torch(nopiv)")
  print(string.format("%-4s %-9s %3d best compact %s%s%s: %s", part, op, B,
                      c.impl, c.floor and string.format(" (%.1f%% of floor)",
                      c.floor) or "", c.copy and string.format(
                      ", %.1f%% of copy", c.copy) or "",
                      table.concat(parts, ", ")))
end

-- }======

-- {====== peers

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"

-- Runs peers/torch_lu.py once for every B; results by B, or nil and why.
local function torch_lu()
  local cmd = string.format("%s %speers/torch_lu.py --blocks %s --bytes %d "
    .. "--reps %d 2>&1", python, here, table.concat(bs, ","),
    math.floor(gpu_bytes), gpu_reps)
  local f = io.popen(cmd)
  if not f then return nil, "cannot start " .. python end
  local out = f:read("a")
  f:close()
  local res = {}
  for line in out:gmatch("[^\n]+") do
    if line:match('^{"peer": "torch"') then
      local r = {}
      for k, v in line:gmatch('"([%w_]+)": (%-?[%d%.eE%+%-]+)') do
        r[k] = tonumber(v)
      end
      for k, v in line:gmatch('"([%w_]+)": "([^"]*)"') do r[k] = v end
      if r.B then res[r.B] = r end
    end
  end
  if not next(res) then
    return nil, (out:match("([^\n]+)\n?$") or "no output"):sub(1, 160)
  end
  return res
end

-- }======

-- {====== CPU part

local function cpu_part(B)
  local lines = math.max(1, math.floor(rows / length))
  for _, lay in ipairs { "standard", "compact" } do
    local t = ob.blocktridiag { lines = lines, length = length, block = B,
                                layout = lay }
    local f = t:bench { op = "factor", reps = reps }
    local s = t:bench { op = "solve", reps = reps }
    local vl = t:info().vl
    t:close()
    local impl = string.format("%s VL%d", lay, vl)
    record("cpu", "factor", B, impl, lay, lines * length, f)
    record("cpu", "btdsolve", B, impl, lay, lines * length, s)
  end
  local n = math.max(1, math.floor(cpu_bytes / (8 * B * B)))
  for _, lay in ipairs { "standard", "compact" } do
    local m = ob.batched { n = n, block = B, layout = lay }
    m:random { seed = 1 }
    local r = m:bench { op = "lu", reps = reps }
    local impl = string.format("%s VL%d", lay, m:info().vl)
    m:close()
    record("cpu", "lu", B, impl, lay, n, r)
  end
  for _, op in ipairs { "factor", "btdsolve", "lu" } do ratios("cpu", op, B) end
end

-- }======

-- {====== GPU part

local VARIANTS = { "serial", "serial2", "team" }

-- Batched LU and solve: our variants in both layouts, cuBLAS, torch.
local function gpu_batched(B, torch)
  local n = math.max(1, math.floor(gpu_bytes / (8 * B * B)))
  for _, cfg in ipairs { { "compact", 16 }, { "compact", 32 },
                         { "standard", 1 } } do
    local lay, vl = cfg[1], cfg[2]
    local m = ob.batched { n = n, block = B, layout = lay, vl = vl,
                           backend = "cuda" }
    m:random { seed = 1 }
    for _, v in ipairs(VARIANTS) do
      local ok, r = pcall(m.bench, m, { op = "lu", reps = gpu_reps,
                                        variant = v })
      if ok then
        record("gpu", "lu", B, string.format("%s VL%d %s", lay, vl, v), lay,
               n, r)
      end
    end
    if vl ~= 32 then
      local r = m:bench { op = "solve", reps = gpu_reps }
      record("gpu", "solve", B, string.format("%s VL%d %s", lay, vl,
                                              r.variant), lay, n, r)
    end
    if lay == "standard" then    -- the libraries on the same matrices
      for _, v in ipairs { "cublas", "cublas_nopiv" } do
        local r = m:bench { op = "lu", reps = gpu_reps, variant = v }
        record("gpu", "lu", B, v, v, n, r)
      end
      local r = m:bench { op = "solve", reps = gpu_reps, variant = "cublas" }
      record("gpu", "solve", B, "cublas", "cublas", n, r)
    end
    m:close()
  end
  local tr = torch and torch[B]
  if tr then
    local bytes = (2 * B * B - B) * 8 * tr.N   -- as odb_batched_min_bytes
    record("gpu", "lu", B, "torch " .. (tr.version or ""), "torch", tr.N,
           { seconds = tr.seconds, gbs = bytes / tr.seconds * 1e-9 })
    if tr.seconds_nopiv and tr.seconds_nopiv > 0 then
      record("gpu", "lu", B, "torch pivot=False", "torch_nopiv", tr.N,
             { seconds = tr.seconds_nopiv,
               gbs = bytes / tr.seconds_nopiv * 1e-9 })
    end
  end
end

-- Block-tridiagonal lines: factor and solve, compact and standard.
-- stream (compact, VL 4/8/16, B <= 16, sm_90) streams the blocks through
-- shared memory with bulk copies, for the factor and for the solve.
-- "stream auto" is the plan the variant picks by itself
-- (odb_bgpu_btd_factor_stream, odb_bgpu_btd_solve_stream), "stream Tn"
-- fixes the threads per line (of the factor's row kernel), "stream tile
-- Tn" and "stream warp Tn" the factor's other kernels and their threads.
local function gpu_lines(B)
  local lines = math.max(1, math.floor(gpu_bytes / (length * 3 * B * B * 8)))
  -- the team kernels read a row per thread: fewer lanes per pack (VL)
  -- keep a row's elements in fewer sectors; VL is swept for them
  local cfgs = { { "compact", "serial", 16 }, { "compact", "serial2", 16 },
                 { "standard", "serial", 1 } }
  if B <= 16 then
    for _, vl in ipairs { 2, 4, 8, 16 } do
      cfgs[#cfgs + 1] = { "compact", "team", vl }
    end
    cfgs[#cfgs + 1] = { "standard", "team", 1 }
    -- stream: its automatic plan, then 1, 2 and 4 threads per line
    -- (threads share the block-vector products; 2 needs B >= 5 and VL 8
    -- or 16, 4 needs B >= 5 and VL 8)
    for _, vl in ipairs { 4, 8, 16 } do
      cfgs[#cfgs + 1] = { "compact", "stream", vl, true }   -- swept
    end
  end
  for _, cfg in ipairs(cfgs) do
    local lay, v, vl, sweep = cfg[1], cfg[2], cfg[3], cfg[4]
    local ok, t = pcall(ob.blocktridiag, { lines = lines, length = length,
                                           block = B, layout = lay, vl = vl,
                                           backend = "cuda", variant = v })
    if not ok then
      print(string.format("gpu  btdsolve  %3d %s VL%d %s: not run (%s)", B,
                          lay, vl, v, tostring(t)))
    else
      local impl = string.format("%s VL%d %s", lay, t:info().vl, v)
      if not sweep then
        local f = t:bench { op = "factor", reps = gpu_reps }
        record("gpu", "factor", B, impl, lay, lines * length, f)
        record("gpu", "btdsolve", B, impl, lay, lines * length,
               t:bench { op = "solve", reps = gpu_reps })
      else
        -- the stream factor: its automatic plan, then each kernel with
        -- each of its threads per line: the row kernel 1, 2, 4 and 8
        -- ("Tn": they share a block's rows and columns; VL times threads
        -- at most 32, a warp per pack), the tile kernel 16 and 32 ("tile
        -- Tn": a 2B x 2B elimination per step, its entries in registers,
        -- a line's threads across the pack's warps) and the warp kernel
        -- 8 (B <= 12), 16 and 32 ("warp Tn": the same elimination, a
        -- line's threads within one warp), VL times threads at most 256;
        -- from B = 9 also with one stage ("S1": room for more packs per
        -- SM)
        record("gpu", "factor", B, impl .. " auto", lay, lines * length,
               t:bench { op = "factor", reps = gpu_reps })
        local plans = {}
        for _, th in ipairs { 1, 2, 4, 8 } do
          if vl * th <= 32 then plans[#plans + 1] = { "row", th } end
        end
        for _, k in ipairs { "tile", "warp" } do
          for _, th in ipairs { 8, 16, 32 } do
            if vl * th <= 256 and (th > 8 or (k == "warp" and B <= 12)) then
              plans[#plans + 1] = { k, th }
            end
          end
        end
        for _, p in ipairs(plans) do
          local k, th = p[1], p[2]
          local name = impl .. (k == "row" and "" or " " .. k) .. " T" .. th
          record("gpu", "factor", B, name, lay, lines * length,
                 t:bench { op = "factor", reps = gpu_reps, kernel = k,
                           threads = th })
          if k ~= "row" and B >= 9 then
            record("gpu", "factor", B, name .. " S1", lay, lines * length,
                   t:bench { op = "factor", reps = gpu_reps, kernel = k,
                             threads = th, stages = 1 })
          end
        end
        -- the stream solve: its automatic plan, then 1, 2, 4 and 8
        -- threads per line (they share the block-vector products; more
        -- than one needs B >= 5 and VL times threads at most 32), on the
        -- same factored lines
        record("gpu", "btdsolve", B, impl .. " auto", lay, lines * length,
               t:bench { op = "solve", reps = gpu_reps })
        for _, th in ipairs { 1, 2, 4, 8 } do
          if th == 1 or (B >= 5 and vl * th <= 32) then
            record("gpu", "btdsolve", B, impl .. " T" .. th, lay,
                   lines * length, t:bench { op = "solve", reps = gpu_reps,
                                             threads = th })
          end
        end
      end
      t:close()
    end
  end
  -- the cuBLAS peer of the same lines (the blocks drawn in the compact
  -- layout as ours; cuBLAS works on its column-major copy of them)
  local ok, t = pcall(ob.blocktridiag, { lines = lines, length = length,
                                         block = B, layout = "compact",
                                         vl = 16, backend = "cuda",
                                         variant = "cublas" })
  if not ok then
    print(string.format("gpu  factor    %3d cublas: not run (%s)", B,
                        tostring(t)))
    return
  end
  record("gpu", "factor", B, "cublas getrf/trsm/gemm", "cublas",
         lines * length, t:bench { op = "factor", reps = gpu_reps })
  record("gpu", "btdsolve", B, "cublas gemv/trsm", "cublas", lines * length,
         t:bench { op = "solve", reps = gpu_reps })
  t:close()
end

-- The whole line work of B against cuBLAS (factor + solve; the ratio is
-- cuBLAS's time over ours): ours on one layout of the data (the best
-- factor plus the best solve of the same layout and VL, any variants:
-- what a user who lays the lines out once gets; the "x cuBLAS" figure and
-- metric), and the best factor plus the best solve of any layouts (two
-- layouts of the same lines, the bound of a user who changes layout
-- between them, the change not counted).
local lines_out = {}
local function lines_vs_cublas(B)
  local f = best[string.format("gpu/factor/%d", B)]
  local s = best[string.format("gpu/btdsolve/%d", B)]
  if not (f and s and f.cublas and s.cublas) then return end
  local function ours(g)
    local b
    for _, k in ipairs { "compact", "standard" } do
      if g[k] and (not b or g[k].seconds < b.seconds) then b = g[k] end
    end
    return b
  end
  local of, os = ours(f), ours(s)
  if not (of and os) then return end
  local one
  for dk, d in pairs(one_layout) do
    if dk:match("^gpu/(%d+)/") == tostring(B) and d.factor and d.btdsolve then
      local t = d.factor.seconds + d.btdsolve.seconds
      if not one or t < one.t then
        one = { t = t, f = d.factor, s = d.btdsolve }
      end
    end
  end
  if not one then return end
  local o = one.t
  local any = of.seconds + os.seconds
  local c = f.cublas.seconds + s.cublas.seconds
  local x = c / o
  print(string.format("gpu  lines     %3d ours on one layout: %s (%.4g ms) + "
                      .. "%s (%.4g ms) = %.4g ms; cuBLAS factor %.4g ms + "
                      .. "solve %.4g ms = %.4g ms: %.2fx cuBLAS (target 3x)",
                      B, one.f.impl, one.f.seconds * 1e3, one.s.impl,
                      one.s.seconds * 1e3, o * 1e3, f.cublas.seconds * 1e3,
                      s.cublas.seconds * 1e3, c * 1e3, x))
  print(string.format("gpu  lines     %3d ours on any layouts: %s (%.4g ms) "
                      .. "+ %s (%.4g ms) = %.4g ms: %.2fx cuBLAS", B,
                      of.impl, of.seconds * 1e3, os.impl, os.seconds * 1e3,
                      any * 1e3, c / any))
  ob.metric(string.format("gpu lines B%d x_cublas", B), x)
  ob.metric(string.format("gpu lines B%d x_cublas_any_layout", B), c / any)
  lines_out[#lines_out + 1] = { B = B, fi = one.f.impl, fs = one.f.seconds,
                                si = one.s.impl, ss = one.s.seconds,
                                cf = f.cublas.seconds, cs = s.cublas.seconds,
                                x = x, xa = c / any }
end

-- }======

local torch, why
if gpu and peers:find("torch") then
  torch, why = torch_lu()    -- first, while the device memory is free
  if not torch then print("torch peer not available: " .. tostring(why)) end
end

print(HEAD)
ob.progress(0, #bs, "block sizes")
for k, B in ipairs(bs) do
  if do_cpu then cpu_part(B) end
  if gpu then
    gpu_batched(B, torch)
    gpu_lines(B)
    for _, op in ipairs { "lu", "solve", "factor", "btdsolve" } do
      ratios("gpu", op, B)
    end
    lines_vs_cublas(B)
  end
  ob.progress(k, #bs, "block sizes")
end

local csv = io.open(ob.outdir() .. "/blocktridiag.csv", "w")
if csv then
  csv:write("part,op,B,impl,n,seconds,per_s,gbs,copy_pct,floor_pct,"
            .. "floor_note\n")
  for _, r in ipairs(rows_out) do
    csv:write(string.format("%s,%s,%d,%s,%d,%.6g,%.6g,%.6g,%s,%s,%s\n",
      r.part, r.op, r.B, r.impl, r.n, r.seconds, r.per_s, r.gbs,
      r.copy and string.format("%.2f", r.copy) or "",
      r.floor and string.format("%.2f", r.floor) or "", r.floor_note or ""))
  end
  csv:close()
end
if #lines_out > 0 then
  local lc = io.open(ob.outdir() .. "/blocktridiag_lines.csv", "w")
  if lc then
    lc:write("B,ours_factor,ours_factor_s,ours_solve,ours_solve_s,"
             .. "cublas_factor_s,cublas_solve_s,x_cublas,"
             .. "x_cublas_any_layout\n")
    for _, r in ipairs(lines_out) do
      lc:write(string.format("%d,%s,%.6g,%s,%.6g,%.6g,%.6g,%.4g,%.4g\n", r.B,
                             r.fi, r.fs, r.si, r.ss, r.cf, r.cs, r.x, r.xa))
    end
    lc:close()
  end
end
print("floor%: the row's floor_pct, the fewest bytes of the op at the read "
      .. "(and, for the written bytes, copy) bandwidth measured in this run "
      .. "over the time; ratios: the other's time over the best compact "
      .. "variant's (above 1: compact faster)")
for _, l in ipairs(report.floor_notes(rows_out)) do print(l) end
