-- blocktridiag_tune.lua: the tuner chooses the plan of the GPU stream
-- factor of block-tridiagonal lines (block LU without pivoting of many
-- lines of `length` block rows, each B x B; the compact layout of K. Kim
-- et al., "Designing vector-friendly compact BLAS and LAPACK kernels").
--
-- For each block size B the same lines are laid out three times, with VL
-- = 4, 8 and 16 lines a pack, and ob.tune searches the plan space
--   vl       4, 8, 16               the layout (lines a pack)
--   kernel   row, tile, warp        odb_btd_factor_stream.cu
--   threads  1, 2, 4, 8, 16, 32     threads per line
--   stages   0 (automatic), 1, 2, 3 shared-memory stages of the ring
-- less what the kernels refuse (row: VL*threads <= 32 and threads <= 8;
-- tile: 16 or 32; warp: 8 for B <= 12, 16 or 32; both VL*threads <= 256),
-- each configuration timed by t:bench (device events around the factor
-- alone, fresh random blocks every run, not timed). The tuner's choice is
-- printed beside the automatic plan of each VL (the plan the variant
-- takes by itself), with GB/s of the fewest bytes and their share of the
-- copy bandwidth measured in this run. Evaluations go to the tuning
-- database (cache = "auto": keyed by the machine, the odebench version
-- and build, the label with B, the length and the lines), so a second run
-- on the same card answers from it. Every plan's factors are checked
-- against the CPU's by test_batched_gpu; this scenario times them.
--
--   odebench scenarios/blocktridiag_tune.lua
--   odebench scenarios/blocktridiag_tune.lua --set blocks=9,14 --set cache=off
--
-- Rows: results (kind "tune", one per evaluation) and
-- <outdir>/blocktridiag_tune.csv (one per B: the tuner's plan and each
-- VL's automatic plan). Without a GPU it says so and stops.
local ob = require "odebench"
local ranges = require "odebench.ranges"

local blocks    = ob.param("blocks", "9,12,15")
local length    = ob.param("length", 64)       -- block rows per line
local gpu_bytes = ob.param("gpu_bytes", 2^29)  -- bytes of blocks per layout
local reps      = ob.param("reps", 5)          -- factor runs per timing
local cache     = ob.param("cache", "auto")    -- tuning database
local strategy  = ob.param("strategy", "exhaustive")

-- the stream factor's block sizes, 2..16 ("9,12,15" or "9-15")
local bs = ranges.integers("blocks", blocks, 2, 16)
if #bs == 0 then error("blocks: give at least one block size (2..16)", 0) end

if not ob.blocktridiag then
  print("blocktridiag_tune: ob.blocktridiag is not in this build; nothing to tune")
  return
end
local info = ob.info { bandwidth = "now" }
local gpu = info.gpu
if not gpu then
  print("blocktridiag_tune: no GPU here (no CUDA in this build or no device); "
        .. "nothing to tune")
  return
end
local copy = gpu.copy_gbs
print(string.format("GPU %s (cc %s, %d SMs): copy bandwidth %.0f GB/s",
                    gpu.name, gpu.cc, gpu.sm_count, copy))

local VLS = { 4, 8, 16 }
local csv = {}
for _, B in ipairs(bs) do
  local lines = math.max(1, math.floor(gpu_bytes / (length * 3 * B * B * 8)))
  local objs = {}
  for _, vl in ipairs(VLS) do
    objs[vl] = ob.blocktridiag { lines = lines, length = length, block = B,
                                 layout = "compact", vl = vl,
                                 backend = "cuda", variant = "stream" }
  end
  -- each VL's automatic plan first: its GB/s, and the fewest bytes of one
  -- factor (the same at every VL), which the tuner's seconds divide
  local auto, bytes = {}, nil
  for _, vl in ipairs(VLS) do
    auto[vl] = objs[vl]:bench { op = "factor", reps = reps }
    bytes = auto[vl].gbs * 1e9 * auto[vl].seconds
  end
  local function bench(c)
    return objs[c.vl]:bench { op = "factor", reps = reps, kernel = c.kernel,
                              threads = c.threads, stages = c.stages }
  end
  local t = ob.tune {
    label = string.format("btd_factor B=%d length=%d lines=%d", B, length,
                          lines),
    target = function(c)
      local ok, r = pcall(bench, c)
      if not ok then return nil, tostring(r) end   -- refused: skipped
      return r.seconds
    end,
    space = { vl = VLS, kernel = { "row", "tile", "warp" },
              threads = { 1, 2, 4, 8, 16, 32 }, stages = { 0, 1, 2, 3 } },
    where = function(c)
      local vt = c.vl * c.threads
      if c.kernel == "row" then return c.threads <= 8 and vt <= 32 end
      if c.kernel == "tile" then return c.threads >= 16 and vt <= 256 end
      return (c.threads >= 16 or (c.threads == 8 and B <= 12)) and vt <= 256
    end,
    strategy = strategy,
    cache = cache,
    verify = false,
    measure = { warmup = 0, min_reps = 3, max_reps = 3 },
  }
  local function gbs(sec) return bytes / sec / 1e9 end
  local best = t.best
  print(string.format("B %2d: %d lines of %d; the tuner (%s, %d evaluations, "
                      .. "%d from the database): vl=%d kernel=%s threads=%d "
                      .. "stages=%d, %.1f GB/s, %.1f%% of copy (spread %.1f%%, "
                      .. "%d tied)", B, lines, length, strategy, t.stats.evals,
                      t.stats.cached, best.vl, best.kernel, best.threads,
                      best.stages, gbs(t.best_median),
                      100 * gbs(t.best_median) / copy, 100 * t.best_spread,
                      #t.tied_configs))
  local row = { B = B, lines = lines, vl = best.vl, kernel = best.kernel,
                threads = best.threads, stages = best.stages,
                gbs = gbs(t.best_median),
                copy_pct = 100 * gbs(t.best_median) / copy }
  for _, vl in ipairs(VLS) do
    local r = auto[vl]
    print(string.format("      automatic plan at VL %2d: %.1f GB/s, %.1f%% of "
                        .. "copy (%.2fx the tuner's time)", vl, r.gbs,
                        100 * r.gbs / copy, r.seconds / t.best_median))
    row["auto_vl" .. vl .. "_gbs"] = r.gbs
    ob.metric(string.format("btd factor B%d auto VL%d gbs", B, vl), r.gbs, "GB/s")
  end
  ob.metric(string.format("btd factor B%d tuned gbs", B), row.gbs, "GB/s")
  csv[#csv + 1] = row
  for _, vl in ipairs(VLS) do objs[vl]:close() end
end

local cols = { "B", "lines", "vl", "kernel", "threads", "stages", "gbs",
               "copy_pct", "auto_vl4_gbs", "auto_vl8_gbs", "auto_vl16_gbs" }
require("odebench.report").write_csv(ob.outdir() .. "/blocktridiag_tune.csv",
                                      cols, csv, "%.6g")
