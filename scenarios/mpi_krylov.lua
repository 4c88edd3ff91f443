-- mpi_krylov.lua: the distributed SpMV and Krylov solvers (dist/sparse,
-- docs/mpi.md) on the reservoir matrices of M. A. Al-Mouhamed and A. H.
-- Khan, "SpMV and BiCG-Stab optimization for a class of hepta-diagonal-
-- sparse matrices on GPU", against ranks and formats.
--
--   mpirun -n R odebench scenarios/mpi_krylov.lua [--set V=32] [--set k=4]
--   mpirun -n R odebench scenarios/mpi_krylov.lua --set file=a.mtx
--   mpirun -n R odebench scenarios/mpi_krylov.lua --set backend=cuda \
--       --set V=128 --set k=4 [--set large=160]
--
-- Matrices: GH-b and GH-h on a V x V x V grid with k components and
-- `wells` wells, split in slabs of planes (`dist=planes`) and by rows
-- (`dist=rows`); or the Matrix Market `file`, split by rows. Formats: those
-- that split (csr, ell, hyb; every one on one rank), and `bdia` on slabs of
-- planes (`--set formats=bdia --set dist=planes`: each rank a Bdia of its
-- planes, docs/mpi.md "Bdia on slabs of planes"; on several ranks a
-- `dist=rows` row of it is passed over with a line saying so). For each: the median
-- seconds of one SpMV (the slowest rank's, `reps` runs) with its spread,
-- and BiCGStab, pipelined BiCGStab and QMR on b = A 1 (`tol`, `maxit`):
-- iterations, the median seconds per iteration over the solves made with
-- its spread, the solves made, the true residual, and where the scalar work
-- ran (ctl: "cpu" on CPU ranks; on GPU ranks "dev", the state machine on
-- the devices, or "host", every reduction through the hosts). On GPU
-- ranks the row bicg_pk is BiCGStab's persistent form (impl =
-- "persistent": each rank's whole solve in one kernel, the halo and the
-- sums over the ranks exchanged by the kernel; CSR on linked ranks, CSR
-- or Bdia on one rank; `--set persistent=0` leaves it out).
--
-- What a row costs: every row builds its matrix (each rank the CSR of its
-- planes and their neighbours, or of the whole matrix for a file, and the
-- transpose, then keeps its rows), times `reps` + 1 SpMVs, then
-- solves to `tol` with each solver. The unit timed is one iteration, so
-- a solver is not run `solves` times regardless: after the first solve
-- (always made: it gives the iterations and the residual) another comes
-- only while the solver's solves so far, the slowest rank's seconds, stay
-- under `budget` seconds (default 1), up to `solves` (default 3) in all.
-- Those seconds are the same on every rank, so every rank makes the same
-- solves. At V=128, k=4 on 16 ranks (an SpMV 44 ms, a BiCGStab iteration
-- 116 ms, 12 iterations) each solver so solves once (1.4 s), and a row
-- costs about 5 s besides its build; `--set budget=1e9` gives `solves`
-- solves each.
--
-- The floor of one SpMV: the bytes every rank must move at least (its
-- rows' matrix, x once, y once, its ghosts and the values it sends:
-- odb_dsparse_min_bytes), summed over the ranks, over the faster of the
-- read and copy bandwidth the ranks measure (core/io/odb_floor.h's model
-- for a kernel that reads and writes; each figure the one-thread figure
-- (the largest any rank has) times the ranks, but no more than the
-- machine's all-core figure (the largest any rank has): ranks
-- on one host share its memory). "% floor" is that time over the measured
-- one; a '*' marks a row above 100%, with odebench.report's footnote ("in
-- cache" where the bytes fit the host's last-level cache).
--
-- GPU ranks (`--set backend=cuda`): every rank computes on the GPU of its
-- local rank (several ranks share a GPU where there are fewer GPUs than
-- ranks); the halo column says how the exchange went ("link": every rank
-- a GPU of its own on one host, the values copied between the GPUs and
-- the waits on the device, and BiCGStab's and QMR's sums too, so their
-- iterations never wait for a host; "host": packed on the device, through
-- pinned host buffers; "aware": device buffers handed to a CUDA-aware
-- MPI; "none": one rank). ODEBENCH_GPU_LINK=off takes the host's path.
-- The floor is then the bytes over the GPUs' read bandwidth
-- (odb_cuda_read_bandwidth, each GPU once): an SpMV reads nearly all its
-- bytes, and nothing moves them faster than a pass that only reads.
-- `large=V2` adds the grid V2 x V2 x V2 after the others (a larger one that fits: at k=4 a
-- GH-b matrix and its transpose take about 2.7 kB a cell on the device).
-- Compare `mpirun -n 1` and `mpirun -n 2` line by line: one GPU against
-- two.
--
-- One rank count a run: the binding runs on every rank of mpirun (there
-- is no sub-communicator), so scaling is several runs of this scenario.
-- Peers: `--set peers=petsc` adds PETSc's BiCGStab (KSPBCGS, no
-- preconditioner, the same tolerance, zero initial guess) on the same
-- rows on the same ranks (ob.matrix{..., petsc = true}, docs/mpi.md "The
-- PETSc peer") after the rows of the first format of each matrix and
-- split: a row "petsc_bcgs" timed as ours (the slowest rank's KSPSolve
-- over its iterations), and a line with PETSc's time an iteration over
-- our BiCGStab's (above 1: ours is faster) and both iteration counts. A build without the peer
-- (-Dpeers=enabled with MPI and libpetsc-real-dev) says so in one line.
local ob = require "odebench"

local V      = ob.param("V", 24)
local k      = ob.param("k", 2)
local wells  = ob.param("wells", 4)
local file   = ob.param("file", "")
local fmts   = ob.param("formats", "csr,ell,hyb")
local dists  = ob.param("dist", "planes,rows")
local pats   = ob.param("patterns", "b,h")
local reps   = ob.param("reps", 20)
local solves = ob.param("solves", 3)          -- the most solves a solver a row
local budget = ob.param("budget", 1.0)        -- seconds after which no more are made
local tol    = ob.param("tol", 1e-8)
local maxit  = ob.param("maxit", 500)
local peers  = ob.param("peers", "")
local backend = ob.param("backend", "cpu")
local large  = ob.param("large", 0)           -- a further grid large^3 (0: none)
local pk     = ob.param("persistent", 1)      -- GPU ranks: the row bicg_pk too (0: not)

if backend ~= "cpu" and backend ~= "cuda" then
  error(string.format('backend: "cpu" or "cuda" expected, got %s', tostring(backend)), 0)
end
if type(large) ~= "number" or large < 0 or large % 1 ~= 0 then
  error(string.format("large: an integer >= 0 expected, got %s", tostring(large)), 0)
end
local gpu = backend == "cuda"

local info = ob.info { bandwidth = not gpu }
local R = info.ranks or 1
local bw = info.bandwidth or {}
-- a figure of the ranks (GB/s): the one-thread figure times the ranks, but
-- no more than the host's all-core one (the ranks share one host's memory).
-- The largest over the ranks of each: a rank whose figures were measured
-- while others kept the host busy (they take turns now, core/io's lock, but
-- a figure not stored is measured by each in turn) has lower ones, and one
-- rank's low all-core figure must not cap the sum
local function ranks_bw(one, all)
  local v = ob.allreduce(one or 0, "max") * R
  local cap = ob.allreduce(all or 0, "max")
  if cap > 0 and v > cap then v = cap end
  return v
end
local copy = ranks_bw(bw.copy_1t, bw.copy_all)
local read = ranks_bw(bw.read_1t, bw.read_all)
local cpu_bw = math.max(read, copy)   -- core/io/odb_floor.h: reads and writes
-- the last-level cache of the host: a floor's bytes that fit it may be
-- served faster than memory (a row above 100% is then "in cache")
local llc = 0
for _, c in ipairs(info.caches or {}) do
  if c.size * c.count > llc then llc = c.size * c.count end
end

local function split(s)
  local t = {}
  for w in tostring(s):gmatch("[^,%s]+") do t[#t + 1] = w end
  return t
end

if not gpu then
  print(string.format("mpi_krylov: %d rank(s), backend cpu; bandwidth for the floor %.1f GB/s (read %.1f, "
    .. "copy %.1f: the faster, as core/io/odb_floor.h)", R, cpu_bw, read, copy))
end
local petsc = false
for _, p in ipairs(split(peers)) do
  if p ~= "petsc" then
    error(string.format("peers: unknown peer '%s' (allowed: petsc)", p), 0)
  end
  local ok, why = pcall(ob.matrix, { dist = "rows", grid = { J = 1, H = 1, I = 1, k = 1 }, petsc = true })
  if ok then
    why:close()
    petsc = not gpu
    print(gpu and "PETSc peer: passed over with backend=cuda (it runs on the CPU ranks)"
          or "PETSc peer: KSPBCGS on the same rows and ranks")
  else
    print("PETSc peer: " .. (tostring(why):gsub("^ob.matrix: petsc = true: ", "")))
  end
end

local function ones(n)
  local x = ob.vector(n)
  for i = 1, n do x[i] = 1 end
  return x
end

local function median(t)
  table.sort(t)
  local n = #t
  if n == 0 then return 0 end
  return n % 2 == 1 and t[(n + 1) / 2] or 0.5 * (t[n / 2] + t[n / 2 + 1])
end

local function spread(t)       -- (max - min) / median over a few solves
  local m = median(t)
  return m > 0 and (t[#t] - t[1]) / m or 0
end

if type(solves) ~= "number" or solves < 1 or solves % 1 ~= 0 then
  error(string.format("solves: an integer >= 1 expected, got %s", tostring(solves)), 0)
end
if type(budget) ~= "number" or not (budget >= 0) then
  error(string.format("budget: seconds >= 0 expected, got %s", tostring(budget)), 0)
end

local header_done = false
local notes = {}            -- rows above their floor (odebench.report's notes)
local function header(st)
  if header_done then return end
  header_done = true
  if gpu then
    print(string.format("mpi_krylov: %d rank(s), backend cuda, %s; GPU read bandwidth for the floor %.1f GB/s "
      .. "(copy %.1f GB/s)", R, st.halo, (st.read_bw_sum or 0) / 1e9, (st.copy_bw_sum or 0) / 1e9))
  end
  print(string.format("%-14s %-6s %-5s %9s %5s %-5s %8s %10s %7s %7s  %-9s %5s %10s %7s %9s %-4s %6s",
    "matrix", "dist", "fmt", "n", "ranks", "halo", "ghosts", "spmv_us", "spread", "%floor",
    "solver", "iters", "us/iter", "spread", "relres", "ctl", "solves"))
end

local function run(label, mk, dist, f, peer)
  local D <close> = mk(dist, f, peer)
  local di = D:info()
  local ghosts = ob.allreduce(di.ghosts)
  local sec, st = D:bench { reps = reps }
  header(st)
  local halo = not gpu and "cpu" or st.halo == "halo: CUDA-aware MPI" and "aware"
               or st.halo:find("GPU peer copies", 1, true) and "link"
               or st.halo:find("none", 1, true) and "none" or "host"
  local fbw = gpu and math.max(st.read_bw_sum or 0, st.copy_bw_sum or 0) or cpu_bw * 1e9
  local floor_s = fbw > 0 and st.floor_bytes_sum / fbw or 0
  local pct = sec > 0 and 100 * floor_s / sec or 0
  -- above 100%: in the host's cache (CPU ranks) or a floor to fix; the GPU
  -- ranks' L2 is not known here, so theirs is always to fix
  local note = pct > 100 and ((not gpu and st.floor_bytes_sum <= llc) and "in cache" or "floor to fix") or nil
  if note then notes[#notes + 1] = { floor_note = note } end
  local pcts = string.format("%6.1f%%%s", pct, note and "*" or " ")
  local b = D:spmv(ones(di.n))
  local ours
  local solvers = { "bicgstab", "pbicgstab", "qmr" }
  -- the persistent form: CSR on linked GPU ranks, CSR or Bdia on one
  if gpu and pk ~= 0 and ((R == 1 and (f == "csr" or f == "bdia")) or (halo == "link" and f == "csr")) then
    table.insert(solvers, 2, "bicg_pk")
  end
  for _, m in ipairs(solvers) do
    local per, r, spent = {}, nil, 0
    repeat    -- r.seconds is the slowest rank's: every rank stops alike
      if m == "bicg_pk" then r = D:bicgstab { b = b, tol = tol, maxit = maxit, impl = "persistent" }
      else r = D[m](D, { b = b, tol = tol, maxit = maxit }) end
      per[#per + 1] = r.seconds_per_iter
      spent = spent + r.seconds
    until #per >= solves or spent >= budget
    local made = #per
    local pm = median(per)
    local ctl = r.control == "device" and "dev" or r.control == "host" and "host" or "cpu"
    print(string.format("%-14s %-6s %-5s %9d %5d %-5s %8d %10.2f %6.1f%% %s %-9s %5d %10.2f %6.1f%% %9.2e %-4s %6d",
      label, dist, f, di.n, R, halo, ghosts, sec * 1e6, 100 * st.spread,
      pcts, m, r.iters, pm * 1e6, 100 * spread(per), r.relres_true, ctl, made))
    ob.metric(string.format("%s_%s_%s_%s%s_us_per_iter", label, dist, f, m, gpu and "_cuda" or ""), pm * 1e6, "us")
    if m == "bicgstab" then ours = { us = pm * 1e6, iters = r.iters } end
  end
  if peer then   -- PETSc's BiCGStab, solved and timed as ours
    local per, r, spent = {}, nil, 0
    repeat
      r = D:petsc { b = b, tol = tol, maxit = maxit }
      per[#per + 1] = r.seconds_per_iter
      spent = spent + r.seconds
    until #per >= solves or spent >= budget
    local pm = median(per)
    print(string.format("%-14s %-6s %-5s %9d %5d %-5s %8s %10s %7s %7s  %-9s %5d %10.2f %6.1f%% %9.2e %-4s %6d",
      label, dist, "aij", di.n, R, "cpu", "", "", "", "", "petsc_bcgs", r.iters, pm * 1e6,
      100 * spread(per), r.relres_true, "cpu", #per))
    print(string.format("  BiCGStab %s %s: PETSc's time an iteration over ours %.2fx (%d iterations, PETSc %d%s)",
      label, dist, pm > 0 and pm * 1e6 / ours.us or 0, ours.iters, r.iters,
      r.converged and "" or ", PETSc: " .. r.outcome))
    ob.metric(string.format("%s_%s_petsc_bcgs_us_per_iter", label, dist), pm * 1e6, "us")
  end
  ob.metric(string.format("%s_%s_%s%s_spmv_us", label, dist, f, gpu and "_cuda" or ""), sec * 1e6, "us")
end

local formats = split(fmts)
if file ~= "" then
  for _, f in ipairs(formats) do
    run("file", function(_, fm, pe)
          return ob.matrix { dist = "rows", file = file, format = fm, backend = backend, petsc = pe }
        end, "rows", f, petsc and f == formats[1])
  end
else
  local sizes = large > 0 and { V, large } or { V }
  for si, v in ipairs(sizes) do
    for _, pat in ipairs(split(pats)) do
      local grid = { J = v, H = v, I = v, k = k, wells = wells, pattern = pat, seed = 1 }
      local label = "GH-" .. pat .. (si > 1 and ("-V" .. v) or "")
      for _, dist in ipairs(split(dists)) do
        for _, f in ipairs(formats) do
          if f == "bdia" and dist == "rows" and R > 1 then
            print(string.format("%-14s %-6s %-5s passed over: Bdia on %d ranks needs slabs of planes (dist=planes)",
              label, dist, f, R))
          else
            run(label, function(d, fm, pe)
                  return ob.matrix { dist = d, grid = grid, format = fm, backend = backend, petsc = pe }
                end, dist, f, petsc and f == formats[1])
          end
        end
      end
    end
  end
end
for _, line in ipairs(require("odebench.report").floor_notes(notes)) do print(line) end
