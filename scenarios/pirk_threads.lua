-- pirk_threads.lua: how the parallel PIRK variants (Kalinnik's Tables 9.1
-- and 9.2) scale with the number of threads, and which one is best per n.
--
-- For each system size it runs every parallel variant with 1, 2, 4, ...
-- threads up to all cores (threads pinned one per core, data placed by
-- first touch), a few fixed steps each, and prints the time per step, the
-- speed-up over the best sequential variant at the same n, and the best
-- parallel variant per n. Needs a machine with many cores to be
-- interesting (the GPU machines have 16). `odebench plot RUN_DIR` draws
-- the speed-up against the threads per variant, one plot per n
-- (speedup_n<n>).
--
--   odebench scenarios/pirk_threads.lua
--   odebench scenarios/pirk_threads.lua --set N=2000 --set threads=1,4,16
--   odebench scenarios/pirk_threads.lua --set variants=par_PipeDb2mt,par_ppDb1mt
local ob = require "odebench"

local Ns      = ob.param("N", "1415")        -- bruss2d grid sizes: n = 2N^2 (1415: 4e6)
local method  = ob.param("method", "lobatto3c8")
local steps   = ob.param("steps", 2)
local threads = ob.param("threads", "")     -- default 1, 2, 4, ..., all cores
local only    = ob.param("variants", "")
local seqs    = ob.param("sequential", "A,D,PipeDb2mt,PipeDb1mt,ppDb1mt")

local function split(s)
  local t = {}
  for w in tostring(s):gmatch("[^,%s]+") do t[#t + 1] = w end
  return t
end

local cores = ob.info{ bandwidth = false }.cpu.cores
local counts = {}
if threads ~= "" then
  for _, c in ipairs(split(threads)) do counts[#counts + 1] = tonumber(c) end
else
  local c = 1
  while c < cores do counts[#counts + 1] = c; c = c * 2 end
  counts[#counts + 1] = cores
end

local par, want = {}, {}
for _, v in ipairs(split(only)) do want[v] = true end
for _, v in ipairs(ob.list().variants) do
  if v.name:match("^par_") and (only == "" or want[v.name]) then par[#par + 1] = v.name end
end
local present = {}
for _, v in ipairs(ob.list().variants) do present[v.name] = true end

local nseq = 0
for _, v in ipairs(split(seqs)) do
  if present[v] then nseq = nseq + 1 end
end
local total, done = #split(Ns) * (nseq + #par * #counts), 0
ob.progress(0, total)

for _, N in ipairs(split(Ns)) do
  local p = ob.problem("bruss2d", { N = tonumber(N) })
  ob.plot { name = "speedup_n" .. p.n, x = "threads", y = "speedup", group = "variant",
            where = { n = p.n, method = method }, logx = true,
            title = string.format("%s, %s: speed-up over the best sequential variant",
                                  p.label, method) }
  local probe <close> = ob.solver { problem = p, method = method, variant = "A", tol = 1e-6 }
  for _ = 1, 2 do probe:step() end
  local h = probe.h * 0.9
  io.write(string.format("\n%s n=%d, %s, h=%.3g, cores=%d\n", p.label, p.n, method, h, cores))
  -- the best sequential variant is the baseline for the speed-up
  local best_seq, best_seq_name = math.huge, "-"
  for _, v in ipairs(split(seqs)) do
    if present[v] then
      local ok, s = pcall(ob.solver, { problem = p, method = method, variant = v, h = h })
      if ok then
        s:set_state(probe:state(), probe.t)
        s:step(h)
        local r = s:integrate { t1 = s.t + steps * h, label = v .. " seq" }
        if r.time_per_step < best_seq then best_seq, best_seq_name = r.time_per_step, v end
        s:close()
      end
      done = done + 1
      ob.progress(done, total, string.format("n=%d %s sequential", p.n, v))
    end
  end
  io.write(string.format("best sequential: %s, %.4e s/step\n", best_seq_name, best_seq))
  io.write(string.format("  %-16s %7s %12s %9s\n", "variant", "threads", "s/step", "speedup"))
  local best = { tps = math.huge }
  for _, v in ipairs(par) do
    for _, th in ipairs(counts) do
      local ok, s = pcall(ob.solver, { problem = p, method = method, variant = v, h = h, threads = th })
      if ok then
        s:set_state(probe:state(), probe.t)
        s:step(h)
        local r = s:integrate { t1 = s.t + steps * h, label = v .. " p=" .. th }
        io.write(string.format("  %-16s %7d %12.4e %8.2fx\n", v, th, r.time_per_step,
                               best_seq / r.time_per_step))
        if th == counts[#counts] and r.time_per_step < best.tps then
          best = { v = v, tps = r.time_per_step }
        end
        s:close()
      else
        io.write(string.format("  %-16s %7d n/a: %s\n", v, th, tostring(s):sub(1, 80)))
      end
      done = done + 1
      ob.progress(done, total, string.format("n=%d %s p=%d", p.n, v, th))
    end
  end
  if best.v then
    io.write(string.format("best parallel variant at %d threads: %s, %.2fx over %s\n",
      counts[#counts], best.v, best_seq / best.tps, best_seq_name))
    ob.metric(string.format("n=%d best speedup", p.n), best_seq / best.tps)
  end
end
