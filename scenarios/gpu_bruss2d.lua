-- gpu_bruss2d.lua: the headline GPU comparison. BRUSS2D with N = 2896
-- (n = 2 N^2 = 16.8 million doubles, 134 MB a vector), one explicit RK
-- step with Bogacki-Shampine 3(2), Dormand-Prince 5(4) and Verner 6(5):
-- our GPU variants beside JAX (jit) and PyTorch (torch.compile) running the
-- same RHS and the same step with the same tableau on the same GPU.
--
-- For each method it takes `steps` fixed steps of h = 1/(8c + 10),
-- c = alpha (N-1)^2 (inside every method's stability region), from the
-- initial value, after a warm-up (adaptive="off" leaves out the adaptive
-- lines below). Every step computes the error norm and brings it to the
-- host, as an adaptive step with the controller on the host must (the peers
-- synchronise the same way); the line below each row is the same run with
-- one synchronisation per run (ours: sync = "call"), with its ratios to the
-- peers' such runs. Then adaptive integrations over 12 x steps x h
-- (tolerance tol, first step h), per attempt: ours with the step controller
-- on the device (sync = "call": no host round trip; gpu_multiblock has
-- none) and on the host (sync = "step"), against JAX running the same
-- controller in one jitted lax.while_loop. It prints the
-- time per step, GB/s (the bytes the variant must move over the time), the
-- share of the floor (reading y and writing ynew once, 8 n bytes each: y at
-- the read bandwidth measured in this run and ynew at the write bandwidth
-- derived from the copy, taken from our first solve row's floor_pct, which
-- the floor routine of odb_floor.h computes), the FP64 floor (the
-- step's FP64 instructions as the generator counts them, at the DFMA peak
-- measured in this run: ob.info().gpu.fp64_gflops), the share of the
-- roofline (the larger floor over the time; docs/gpu.md, "the compute
-- roof") and the ratio to each peer. The peers' final state is checked against ours by its sum.
-- Where the driver's NVML is present, a line under each of our variants
-- gives the SM clock and the power draw sampled while its fixed steps ran
-- (ob.gpu_watch): a long run (--set steps=4000) meets the card's power
-- limit, which lowers the clock.
--
--   odebench scenarios/gpu_bruss2d.lua
--   odebench scenarios/gpu_bruss2d.lua --set N=1024 --set methods=dopri5
--   odebench scenarios/gpu_bruss2d.lua --set peers=none
--
-- Peers run when `python3` can import jax / torch (scenarios/peers/*.py);
-- otherwise the table says why they are missing.
--
-- Under `mpirun -n R` (R > 1) it runs the GPU ranks' comparison instead,
-- scenarios/mpi_gpu_bruss2d.lua (mpi_gpu_stream2d on R GPUs against
-- gpu_stream2d on one).
local ob = require "odebench"

if (ob.info { bandwidth = false }.ranks or 1) > 1 then
  local dir = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
  return dofile(dir .. "mpi_gpu_bruss2d.lua")
end

local N        = ob.param("N", 2896)
local steps    = ob.param("steps", 20)
local methods  = ob.param("methods", "bs3,dopri5,verner65")
local variants = ob.param("variants", "gpu_unfused,gpu_reference,gpu_trapezoid,gpu_multiblock,gpu_stream2d,gpu_hexagonal,gpu_onchip")
local peers    = ob.param("peers", "jax,torch")
local python   = ob.param("python", "python3")
local tol      = ob.param("tol", 1e-6)
local adapt    = ob.param("adaptive", "on")   -- "off": no adaptive rows

local function split(s)
  local t = {}
  for w in s:gmatch("[^,%s]+") do t[#t + 1] = w end
  return t
end

local info = ob.info()
local gpu = info.gpu
if not gpu then
  io.write("gpu_bruss2d: no GPU here (the \"cuda\" backend is not "
    .. "registered); nothing to measure.\n")
  return
end
local have = {}
for _, v in ipairs(ob.list().variants) do have[v.name] = v.backend end

local p = ob.problem("bruss2d", { N = N })
local n = p.n
local c = 2e-3 * (N - 1) ^ 2
local h = 1 / (8 * c + 10)
local t1a = 12 * steps * h   -- the adaptive runs' span, first step h
local floor_bytes = 2 * n * 8
local floor_s      -- a step's floor, from the first solve row (fixed steps)
io.write(string.format("%s (cc %s, %d SMs), read bandwidth %.0f GB/s, copy "
  .. "%.0f GB/s; BRUSS2D N=%d, n=%d (%.0f MB a vector), h=%.4g, %d steps\n",
  gpu.name, gpu.cc, gpu.sm_count, gpu.read_gbs or 0, gpu.copy_gbs or 0, N, n,
  n * 8 / 1e6, h, steps))
if gpu.fp64_gflops then
  io.write(string.format("FP64 peak (measured): %.0f GFLOP/s DFMA = %.0f G "
    .. "instructions/s%s%s; fp64 us: a step's counted FP64 instructions at "
    .. "it\n", gpu.fp64_gflops, gpu.fp64_gflops / 2, gpu.fp64_mhz
      and string.format(" at %.0f MHz", gpu.fp64_mhz) or "",
    gpu.fp64_tensor_gflops
      and string.format(" (tensor cores, unused here: %.0f GFLOP/s)",
                        gpu.fp64_tensor_gflops) or ""))
end

-- The directory of this scenario (the peers live in peers/ beside it).
local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"

-- Runs a peer; returns its result table or nil and the reason.
local function run_peer(name, method)
  local cmd = string.format("%s %speers/%s_rk.py --method %s --N %d "
    .. "--h %.17g --steps %d --tol %.17g --t1 %.17g 2>&1", python, here,
    name, method, N, h, steps, tol, adapt == "off" and 0 or t1a)
  local f = io.popen(cmd)
  if not f then return nil, "cannot start " .. python end
  local out = f:read("a")
  f:close()
  local line = out:match("(%{\"peer\".-%})%s*$")
  if not line then
    local last = out:match("([^\n]+)\n?$") or "no output"
    return nil, last:sub(1, 120)
  end
  local r = {}
  for k, v in line:gmatch("\"([%w_]+)\": (%-?[%d%.eE%+%-]+)") do
    r[k] = tonumber(v)
  end
  for k, v in line:gmatch("\"([%w_]+)\": \"([^\"]*)\"") do r[k] = v end
  return r
end

-- Adaptive integrations from 0 to t1a (tolerance tol, first step h) on
-- variant v: with the step controller on the device (sync = "call"; every
-- GPU variant but gpu_multiblock has it) and on the host (sync = "step":
-- the norm back every attempt). Each after a warm-up run; the figures per
-- attempt.
local function adaptive_runs(m, v)
  local out = {}
  for _, sync in ipairs({ "call", "step" }) do
    local ok, sv = pcall(ob.solver, { problem = p, method = m,
                                      backend = "cuda", variant = v,
                                      tol = tol, h0 = h, sync = sync })
    if ok then
      sv:integrate { t0 = 0, t1 = t1a / 4, label = "warm-up " .. v }
      local r = sv:integrate { t0 = 0, t1 = t1a, label = string.format(
        "%s %s N=%d adaptive sync=%s", m, v, N, sync) }
      out[sync] = { tpa = r.seconds / r.steps, steps = r.steps,
                    rejected = r.rejected }
      sv:close()
    end
  end
  return out
end

-- Runs f() with the GPU's clocks and power sampled every 2 ms by a thread
-- (ob.gpu_watch; nothing where the driver's NVML is missing); returns f's
-- result and the samples' summary, merged into acc when given.
local function watched(f, acc)
  local w = ob.gpu_watch(0.002)
  local r = f()
  local c = w and w:stop()
  if not (c and c.samples > 0) then return r, acc end
  if not acc then return r, c end
  local n = acc.samples + c.samples
  acc.sm_mean = (acc.sm_mean * acc.samples + c.sm_mean * c.samples) / n
  acc.samples, acc.capped = n, acc.capped + c.capped
  acc.sm_min = math.min(acc.sm_min, c.sm_min)
  acc.sm_max = math.max(acc.sm_max, c.sm_max)
  acc.power_max = math.max(acc.power_max, c.power_max)
  return r, acc
end

-- Sum of the solver's state (the peers report theirs).
local function state_sum(s)
  local v, sum = s:state(), 0
  for i = 1, #v do sum = sum + v[i] end
  return sum
end

io.write(string.format("%-9s %-14s %11s %8s %7s %8s %6s %8s %8s %10s\n",
  "method", "impl", "us/step", "GB/s", "floor%", "fp64 us", "roof%", "vs jax",
  "vs torch", "sum diff"))
for _, m in ipairs(split(methods)) do
  local rows, peer_res = {}, {}
  for _, v in ipairs(split(variants)) do
    local ok, s = false, nil
    if have[v] == "cuda" then
      ok, s = pcall(ob.solver, { problem = p, method = m, backend = "cuda",
                                 variant = v, h = h, tol = tol })
      if not ok then   -- e.g. a trapezoid tile that d makes too large
        io.write(string.format("%-9s %-14s refused: %s\n", m, v,
          tostring(s):gsub("^.-does not apply: ", ""):sub(1, 150)))
      end
    end
    if ok then
      s:integrate { t0 = 0, t1 = 3 * h, label = "warm-up " .. v }
      local r, clk = watched(function()
        return s:integrate { t0 = 0, t1 = steps * h,
                             label = string.format("%s %s N=%d", m, v, N) }
      end)
      if not floor_s and r.floor_pct then
        -- every fixed step reads y and writes ynew once: the row's floor
        -- over its steps is steps times a step's
        floor_s = r.floor_pct / 100 * r.time_per_step
        io.write(string.format("floor: read y + write ynew = %.0f MB (%s) "
          .. "= %.1f us per step\n", floor_bytes / 1e6, r.floor_bw, floor_s * 1e6))
      end
      rows[#rows + 1] = { name = v, tps = r.time_per_step, gbs = r.gbs,
                          sum = peers ~= "none" and state_sum(s) or nil,
                          ours = true, fp64_s = r.fp64_floor_s,
                          roof = r.roofline_pct }
      s:close()
      -- the same steps with the error norm read back once a run
      local sa = ob.solver { problem = p, method = m, backend = "cuda",
                             variant = v, h = h, tol = tol, sync = "call" }
      sa:integrate { t0 = 0, t1 = 3 * h, label = "warm-up " .. v }
      local ra
      ra, clk = watched(function()
        return sa:integrate { t0 = 0, t1 = steps * h,
          label = string.format("%s %s N=%d sync=call", m, v, N) }
      end, clk)
      rows[#rows].async, rows[#rows].clk = ra.time_per_step, clk
      sa:close()
      if adapt ~= "off" then
        rows[#rows].adaptive = adaptive_runs(m, v)
      end
    end
  end
  for _, pn in ipairs(split(peers)) do
    if pn ~= "none" then
      local r, why = run_peer(pn, m)
      if r and r.time_per_step then
        peer_res[pn] = r
        rows[#rows + 1] = { name = pn .. " " .. (r.version or ""),
                            tps = r.time_per_step, sum = r.checksum,
                            async = r.time_per_step_async }
      else
        io.write(string.format("%-9s %-14s not available: %s\n", m, pn, why))
      end
    end
  end
  local ref_sum = rows[1] and rows[1].sum
  for _, r in ipairs(rows) do
    local fl = floor_s and string.format("%.1f", 100 * floor_s / r.tps) or "-"
    local vj = peer_res.jax and string.format("%.2fx", peer_res.jax.time_per_step / r.tps) or "-"
    local vt = peer_res.torch and string.format("%.2fx", peer_res.torch.time_per_step / r.tps) or "-"
    local sd = (ref_sum and r.sum) and string.format("%.1e",
      math.abs(r.sum - ref_sum) / math.abs(ref_sum)) or "-"
    -- the FP64 floor of a step and the roofline: the larger floor over
    -- the time (the solve row's roofline_pct)
    local f64 = r.fp64_s and string.format("%.1f", r.fp64_s * 1e6) or "-"
    local rf = r.roof and string.format("%.1f", r.roof) or "-"
    io.write(string.format("%-9s %-14s %11.1f %8s %7s %8s %6s %8s %8s %10s\n",
      m, r.name, r.tps * 1e6, r.gbs and string.format("%.0f", r.gbs) or "-",
      fl, f64, rf, vj, vt, sd))
    if r.async then
      local function va(pr)
        local pa = pr and pr.time_per_step_async
        return pa and string.format("%.2fx", pa / r.async) or "-"
      end
      local ra = r.fp64_s and string.format("%.1f", 100 * math.max(
        floor_s or 0, r.fp64_s) / r.async) or "-"
      io.write(string.format("%-9s %-14s %11.1f %8s %7s %8s %6s %8s %8s   "
        .. "(one synchronisation per %d steps)\n", "", "", r.async * 1e6, "",
        floor_s and string.format("%.1f", 100 * floor_s / r.async) or "-",
        "", ra, va(peer_res.jax), va(peer_res.torch), steps))
    end
    local ad = r.adaptive
    if ad then
      local jx = peer_res.jax
      local jt = jx and jx.adaptive_time_per_attempt
      for _, k in ipairs({ "call", "step" }) do
        local a = ad[k]
        if a then
          io.write(string.format("%-9s %-14s %11.1f %8s %7s %8s %6s %8s "
            .. "%8s   (adaptive to t=%.3g, tol %g: %d attempts, %d rejected; "
            .. "step controller on the %s%s)\n", "", "", a.tpa * 1e6, "",
            floor_s and string.format("%.1f", 100 * floor_s / a.tpa) or "-",
            "", "", jt and string.format("%.2fx", jt / a.tpa) or "-", "-", t1a, tol,
            a.steps, a.rejected,
            k == "step" and "host" or "device",
            jt and k == "call" and string.format("; JAX while_loop %.1f us, %d "
              .. "attempts", jt * 1e6, jx.adaptive_attempts) or ""))
          ob.metric(string.format("%s_%s_us_per_attempt_adaptive_%s", m,
                                  r.name, k == "call" and "device" or "host"),
                    a.tpa * 1e6)
        end
      end
    end
    local ck = r.clk
    if ck then   -- the clocks while the fixed steps above ran
      io.write(string.format("%-9s %-14s %11s   (SM clock %.0f-%.0f MHz, "
        .. "mean %.0f, card's maximum %.0f; power cap or slowdown in %d of "
        .. "%d samples; up to %.0f W of %.0f W)\n", "", "", "", ck.sm_min,
        ck.sm_max, ck.sm_mean, ck.sm_max_mhz, ck.capped, ck.samples,
        ck.power_max, ck.limit_w))
      ob.metric(string.format("%s_%s_sm_mhz_mean", m, r.name), ck.sm_mean)
    end
    if r.ours then
      ob.metric(string.format("%s_%s_us_per_step", m, r.name), r.tps * 1e6)
      ob.metric(string.format("%s_%s_us_per_step_sync_call", m, r.name),
                r.async * 1e6)
      if floor_s then
        ob.metric(string.format("%s_%s_floor_pct", m, r.name),
                  100 * floor_s / r.tps)
      end
      if r.roof then
        ob.metric(string.format("%s_%s_fp64_floor_us", m, r.name),
                  r.fp64_s * 1e6)
        ob.metric(string.format("%s_%s_roofline_pct", m, r.name), r.roof)
      end
      for pn, pr in pairs(peer_res) do
        ob.metric(string.format("%s_%s_vs_%s", m, r.name, pn),
                  pr.time_per_step / r.tps)
      end
    end
  end
end
io.write("floor%: the floor's time over the measured time; fp64 us: the "
  .. "step's FP64 instructions at the measured DFMA peak; roof%: the larger "
  .. "of the two floors over the measured time; vs jax/torch: the peer's time "
  .. "per step over ours (above 1: we are faster); sum diff: relative "
  .. "difference of the final state's sum from the first row's\n")
