-- mpi_scaling.lua: strong and weak scaling of the distributed explicit RK
-- variants (mpi_A, mpi_S, mpi_N, mpi_X, mpi_P; docs/mpi.md) on BRUSS2D and
-- STRING,
-- against the sequential variants and the POSIX-thread variants (par_*
-- for PIRK correctors, pipe_threads for explicit RK) with as many threads
-- as there are ranks, after the self-adaptive solver
-- for distributed address spaces of the PIRK autotuning thesis (Korch's
-- group, §10.3). Where the build has it (-Dpeers=enabled with MPI and
-- SUNDIALS's parallel N_Vector), the peer `arkode_mpi` (SUNDIALS ARKODE's
-- ERKStep on an NVECTOR_PARALLEL vector, mpi_N's split and halos) runs
-- beside them as a row of its own ("peer"), and every n and R prints how
-- many times faster the best mpi_* variant is than ARKODE with MPI (the
-- same tableau, h and tolerances).
--
-- One run measures at the R ranks it was started with: the binding runs a
-- distributed variant on all ranks of the run (mpi_tune.lua chooses fewer
-- with the option `ranks`), so each rank count is its own `mpirun -n R`.
-- Each run appends its figures to the table file `--set table=FILE`
-- (rank 0 writes; one line per problem, size, variant and R) and prints the scaling over every R the
-- table holds so far, so the last run of
--
--   for R in 1 2 4 8 16; do
--     mpirun -n $R odebench scenarios/mpi_scaling.lua --set table=scaling.tsv
--   done
--
-- prints strong and weak scaling from 1 to 16 ranks. Strong: the sizes of
-- `N` (and `string_N`) at every R; weak: `weak_N` scaled so that n grows
-- with R (BRUSS2D's N by sqrt(R), STRING's N by R). Speed-up is over the
-- fastest sequential variant (`sequential`, one process, measured in every
-- run) at the same n, efficiency that over R (weak: the one-rank time of
-- the same variant over the time at R, n per rank held). Times are medians
-- of `measure` with their spread; "spread" per n is how far the slowest
-- distributed variant is from the fastest ((slowest - fastest) / fastest).
-- `odebench plot RUN_DIR` draws the run's time per step against n per
-- variant (time_n_<method>_<problem>) and the speed-up over the fastest
-- sequential run (speedup_n_<method>_<problem>).
--
--   mpirun -n 2 odebench scenarios/mpi_scaling.lua --set N=64 --set steps=2
--   odebench scenarios/mpi_scaling.lua --set problems=bruss2d --set variants=mpi_N
local ob = require "odebench"

local Ns      = ob.param("N", "1448")          -- BRUSS2D sizes: n = 2N^2 (4.19M)
local sNs     = ob.param("string_N", "2000000") -- STRING sizes: n = 2N
local weakN   = ob.param("weak_N", "362")       -- BRUSS2D N at one rank (weak)
local weaksN  = ob.param("weak_string_N", "500000")
local probs   = ob.param("problems", "bruss2d,string")
local methods = ob.param("methods", "dopri5,radau1a5")
local only    = ob.param("variants", "mpi_A,mpi_S,mpi_N,mpi_X,mpi_P,mpi_pirk_A,"
                         .. "mpi_pirk_S,mpi_pirk_N,mpi_pirk_X,arkode_mpi")
local seqs    = ob.param("sequential", "fused,pipe,plain,A,PipeDb1mt")
local pars    = ob.param("threads_variants", "pipe_threads,par_A,par_Dblock,"
                         .. "par_PipeDb1mt,par_ppDb1mt")
local steps   = ob.param("steps", 10)
local h       = ob.param("h", 1e-6)
local table_f = ob.param("table", "")
local reps    = ob.param("reps", 5)

local info = ob.info { bandwidth = false }
local R, me = info.ranks or 1, info.rank or 0
local M = { warmup = 1, min_reps = reps, max_reps = reps, max_seconds = 60 }

local function split(s)
  local t = {}
  for w in tostring(s):gmatch("[^,%s]+") do t[#t + 1] = w end
  return t
end

local present = {}
for _, v in ipairs(ob.list().variants) do present[v.name] = true end
local dist = {}
for _, v in ipairs(split(only)) do
  if present[v] then dist[#dist + 1] = v end
end
if #dist == 0 then
  print("mpi_scaling: no distributed variant (this build has no MPI)")
end

-- the sizes: { problem, N, kind = "strong" | "weak" }
local cases = {}
for _, p in ipairs(split(probs)) do
  if p ~= "bruss2d" and p ~= "string" then
    error(string.format("--set problems: '%s' is not allowed (bruss2d, "
                        .. "string)", p), 0)
  end
  for _, N in ipairs(split(p == "bruss2d" and Ns or sNs)) do
    cases[#cases + 1] = { p = p, N = math.tointeger(tonumber(N)), kind = "strong" }
  end
  local w = tonumber(p == "bruss2d" and weakN or weaksN)
  local wN = p == "bruss2d" and math.floor(w * math.sqrt(R) + 0.5) or w * R
  cases[#cases + 1] = { p = p, N = math.tointeger(wN), kind = "weak" }
end

-- one timed integrate of `steps` fixed steps; nil, message when refused
local function timed(p, method, v, opts)
  local ok, s = pcall(ob.solver, { problem = p, method = method, variant = v,
                                   h = h, threads = opts.threads })
  if not ok then return nil, tostring(s) end
  local r = s:integrate { t1 = steps * h, measure = M, label = opts.label }
  if r.status ~= "ok" then return nil, "status " .. tostring(r.status) end
  s:close()
  return r
end

local lines = {}   -- the table lines of this run
local plotted = {}
local total, done = #cases * #split(methods) * (#split(seqs) + #dist + #split(pars)), 0
ob.progress(0, total)

for _, method in ipairs(split(methods)) do
  for _, c in ipairs(cases) do
    local p = ob.problem(c.p, { N = c.N })
    local pk = method .. "_" .. c.p
    if not plotted[pk] then
      plotted[pk] = true
      ob.plot { name = "time_n_" .. pk, x = "n", y = "time_per_step", group = "variant",
                where = { method = method, problem = c.p }, logx = true, logy = true,
                title = string.format("%s, %s, %d rank(s): time per step", c.p,
                                      method, R) }
      ob.plot { name = "speedup_n_" .. pk, x = "n", y = "speedup", group = "variant",
                where = { method = method, problem = c.p }, logx = true,
                title = string.format("%s, %s, %d rank(s): speed-up over the "
                                      .. "fastest sequential variant", c.p, method, R) }
    end
    io.write(string.format("\n%s n=%d (%s), %s, %d steps, %d rank(s)\n",
                           p.label, p.n, c.kind, method, steps, R))
    -- the sequential and the threaded runs on rank 0 alone (the others
    -- wait at the barrier below, within ODEBENCH_MPI_TIMEOUT): R copies at
    -- once would share the memory bandwidth and slow the baseline down
    local best = math.huge
    local function row(kind, v, r, base)
      local tps = r.time_per_step
      io.write(string.format("  %-10s %-14s %12.4e s/step  spread %5.1f%%  "
                             .. "%7.2fx\n", kind, v, tps, 100 * r.spread,
                             base and base / tps or 1))
      lines[#lines + 1] = table.concat({ c.p, c.kind, p.n, method, v, kind, R,
        string.format("%.6e", tps), string.format("%.4f", r.spread),
        string.format("%.6e", r.q1 / steps), string.format("%.6e", r.q3 / steps) }, "\t")
    end
    local function na(kind, v, why)   -- silent when the method's kind is why
      if why:find("PIRK", 1, true) then return end
      io.write(string.format("  %-10s %-14s n/a: %s\n", kind, v,
                             (why:gsub("^.-does not apply: ", "")):sub(1, 90)))
    end
    if me == 0 then
      for _, v in ipairs(split(seqs)) do
        if present[v] then
          local r, why = timed(p, method, v, { label = v .. " seq" })
          if r then
            best = math.min(best, r.time_per_step)
            row("seq", v, r)
          else
            na("seq", v, why)
          end
        end
      end
      for _, v in ipairs(split(pars)) do
        if present[v] then
          local r, why = timed(p, method, v, { threads = R, label = v .. " p=" .. R })
          if r then row("threads", v, r, best) else na("threads", v, why) end
        end
      end
    end
    best = ob.bcast(best)
    ob.barrier()
    done = done + #split(seqs) + #split(pars)
    ob.progress(done, total, string.format("n=%d sequential, threads", p.n))
    local fast, slow, peer = math.huge, 0, nil
    for _, v in ipairs(dist) do
      local how = v == "arkode_mpi" and "peer" or "ranks"
      local r, why = timed(p, method, v, { label = v .. " R=" .. R })
      if r and how == "peer" then
        row(how, v, r, best)
        peer = r.time_per_step
      elseif r then
        row(how, v, r, best)
        fast, slow = math.min(fast, r.time_per_step), math.max(slow, r.time_per_step)
      else
        na(how, v, why)
      end
      done = done + 1
      ob.progress(done, total, string.format("n=%d %s R=%d", p.n, v, R))
    end
    if slow > 0 then
      io.write(string.format("  fastest distributed %.4e s/step (%.2fx over the "
                             .. "fastest sequential), slowest %.1f%% behind\n",
                             fast, best / fast, 100 * (slow - fast) / fast))
      ob.metric(string.format("%s n=%d R=%d speedup", c.p, p.n, R), best / fast)
      ob.metric(string.format("%s n=%d R=%d variant spread", c.p, p.n, R),
                (slow - fast) / fast)
    end
    if peer and slow > 0 then
      io.write(string.format("  best mpi_* %.4e s/step, arkode_mpi %.4e: "
                             .. "%.2fx faster than ARKODE with MPI\n", fast,
                             peer, peer / fast))
      ob.metric(string.format("%s n=%d R=%d over arkode_mpi", c.p, p.n, R),
                peer / fast)
    end
  end
end

-- {====== the table over the runs: append this R's lines, print the scaling

local function read_table(file)
  local t = {}
  local f = io.open(file, "r")
  if not f then return t end
  for line in f:lines() do
    if line:sub(1, 1) ~= "#" then
      local c = {}
      for w in line:gmatch("[^\t]+") do c[#c + 1] = w end
      t[#t + 1] = { p = c[1], kind = c[2], n = tonumber(c[3]), method = c[4],
                    v = c[5], how = c[6], R = tonumber(c[7]), tps = tonumber(c[8]),
                    spread = tonumber(c[9]) }
    end
  end
  f:close()
  return t
end

-- strong: speed-up and efficiency of each distributed variant (and the
-- peer) at each R over the fastest sequential run of the same n; weak: the
-- variant's one-rank time over its time at R; then, per n and R, the best
-- mpi_* variant against the peer arkode_mpi
local function summary(t)
  local seq, one, keys, seen, bestd, peer = {}, {}, {}, {}, {}, {}
  for _, e in ipairs(t) do
    local k = table.concat({ e.p, e.kind, e.method }, " ")
    local nr = k .. " " .. e.n .. " " .. e.R
    if e.how == "seq" then
      local sk = k .. " " .. e.n
      seq[sk] = math.min(seq[sk] or math.huge, e.tps)
    elseif (e.how == "ranks" or e.how == "peer") and e.R == 1 then
      one[k .. " " .. e.v] = e.tps
    end
    if e.how == "ranks" then bestd[nr] = math.min(bestd[nr] or math.huge, e.tps) end
    if e.how == "peer" then peer[nr] = e.tps end
    if e.how == "ranks" and not seen[k] then seen[k] = true; keys[#keys + 1] = k end
  end
  table.sort(keys)
  for _, k in ipairs(keys) do
    io.write(string.format("\nscaling %s (from the table)\n  %-10s %5s %10s %12s %9s %7s\n",
                           k, "variant", "R", "n", "s/step", "speedup", "eff"))
    for _, e in ipairs(t) do
      local ek = table.concat({ e.p, e.kind, e.method }, " ")
      if ek == k and (e.how == "ranks" or e.how == "peer") then
        local sp, eff
        if e.kind == "strong" then
          sp = (seq[ek .. " " .. e.n] or 0) / e.tps
          eff = sp / e.R
        else
          sp = (one[ek .. " " .. e.v] or 0) / e.tps * e.R
          eff = sp / e.R
        end
        io.write(string.format("  %-10s %5d %10d %12.4e %8.2fx %6.1f%%\n", e.v, e.R,
                               e.n, e.tps, sp, 100 * eff))
      end
    end
    local ratios = {}
    for nr, tp in pairs(peer) do
      local n, r = nr:match("^" .. k:gsub("%p", "%%%0") .. " (%d+) (%d+)$")
      if n and bestd[nr] then
        ratios[#ratios + 1] = { n = tonumber(n), R = tonumber(r), peer = tp,
                                best = bestd[nr] }
      end
    end
    table.sort(ratios, function(x, y)
      return x.n < y.n or (x.n == y.n and x.R < y.R)
    end)
    if #ratios > 0 then
      io.write(string.format("  best mpi_* over arkode_mpi\n  %5s %10s %12s %12s %8s\n",
                             "R", "n", "best s/step", "peer s/step", "ratio"))
    end
    for _, x in ipairs(ratios) do
      io.write(string.format("  %5d %10d %12.4e %12.4e %7.2fx\n", x.R, x.n, x.best,
                             x.peer, x.peer / x.best))
    end
  end
end

if table_f ~= "" and me == 0 then
  local f, err = io.open(table_f, "a")
  if not f then error("--set table: " .. tostring(err), 0) end
  if f:seek("end") == 0 then
    f:write("# problem\tscaling\tn\tmethod\tvariant\thow\tranks\ts_per_step"
            .. "\tspread\tq1_per_step\tq3_per_step\n")
  end
  for _, l in ipairs(lines) do f:write(l, "\n") end
  f:close()
  summary(read_table(table_f))
end

-- }======
