-- blocktridiag.lua: the line-implicit block-tridiagonal solver (seeds/004,
-- KokkosKernels' compact layout) on the CPU: many independent lines of
-- `length` block rows with B x B blocks, block LU (block Thomas) factor and
-- solve, the compact (interleaved, VL lanes per pack) layout against the
-- standard one. Reported per block size: factorizations and solves per
-- second (block rows per second), GB/s of the bytes each must move, and the
-- ratio compact/standard. Skeleton: the GPU part and the library baselines
-- (cuBLAS/cuSOLVER batched, torch.linalg.lu_factor) are still to come.
--
--   odebench scenarios/blocktridiag.lua
--   odebench scenarios/blocktridiag.lua --set blocks=3,5,10 --set rows=2^20
local ob = require "odebench"

if not ob.blocktridiag then
  print("blocktridiag: ob.blocktridiag is not in this build; nothing to measure")
  return
end

local blocks = ob.param("blocks", "3,5,7,9,10,15")
local rows   = ob.param("rows", 2^19)   -- block rows in all (lines*length)
local length = ob.param("length", 64)   -- block rows per line
local reps   = ob.param("reps", 5)

local function split(s)
  local t = {}
  for x in tostring(s):gmatch("[^,]+") do t[#t + 1] = tonumber(x) end
  return t
end

-- Best of reps: factor (on fresh blocks each time) and solve seconds.
local function measure(lines, b, layout)
  local t = ob.blocktridiag{lines = lines, length = length, block = b,
                            layout = layout}
  local n = lines * length * b
  local rhs = ob.vector(n)
  for i = 1, n do rhs[i] = math.sin(i) end
  local tf, ts = math.huge, math.huge
  for r = 1, reps do
    t:random{seed = r}
    tf = math.min(tf, t:factor())
    local _, s = t:solve(rhs)
    ts = math.min(ts, s)
  end
  local info = t:info()
  t:close()
  return tf, ts, info
end

print(string.format("%3s %7s %-9s %3s %12s %8s %12s %8s", "B", "lines",
                    "layout", "VL", "factor/s", "GB/s", "solve/s", "GB/s"))
local bs = split(blocks)
ob.progress(0, #bs, "block sizes")
for k, b in ipairs(bs) do
  local lines = math.max(1, math.floor(rows / length))
  local per = {}
  for _, layout in ipairs{"standard", "compact"} do
    local tf, ts, info = measure(lines, b, layout)
    per[layout] = { tf = tf, ts = ts }
    local nrow = lines * length
    print(string.format("%3d %7d %-9s %3d %12.4g %8.2f %12.4g %8.2f", b,
                        lines, layout, info.vl, nrow / tf,
                        info.factor_bytes / tf * 1e-9, nrow / ts,
                        info.solve_bytes / ts * 1e-9))
    ob.metric(string.format("B%d %s factor_rows_per_s", b, layout), nrow / tf)
    ob.metric(string.format("B%d %s solve_rows_per_s", b, layout), nrow / ts)
    ob.metric(string.format("B%d %s factor_gbs", b, layout),
              info.factor_bytes / tf * 1e-9, "GB/s")
    ob.metric(string.format("B%d %s solve_gbs", b, layout),
              info.solve_bytes / ts * 1e-9, "GB/s")
  end
  ob.metric(string.format("B%d factor_compact_over_standard", b),
            per.standard.tf / per.compact.tf)
  ob.metric(string.format("B%d solve_compact_over_standard", b),
            per.standard.ts / per.compact.ts)
  ob.progress(k, #bs, "block sizes")
end
