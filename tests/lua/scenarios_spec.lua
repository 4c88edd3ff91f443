-- scenarios_spec.lua: every scenario under scenarios/ runs to the end with
-- small settings (the benchmarks' numbers are not checked here, only that
-- each one still works: exit 0 and its results written, or, for the GPU
-- ones on a machine without a GPU, a clean exit that says so). A scenario
-- added to scenarios/ without an entry here fails the last test.
local H = dofile(os.getenv("ODEBENCH_SRC") .. "/tests/lua/spec_helpers.lua")

-- name -> small --set options; skip = what the scenario prints when this
-- build or machine lacks what it measures (then result rows are optional)
local QUICK = {
  quickstart = { "" },
  bruss2d_cpu = { "--set steps=1 --set max_mult=0.05 --set methods=bs3" },
  pirk_variants = { "--set sizes=1e3 --set steps=1 --set methods=radau1a5" },
  pirk_threads = { "--set N=40 --set steps=1 --set threads=1,2 --set sequential=A" },
  autotune_pirk = { "--set problems=bruss2d --set N=64 --set methods=radau1a5 "
                    .. "--set run_steps=300 --set probe=2 --set pair_reps=3 "
                    .. "--set eval_steps=1" },
  tuner_strategies = { "--set steps=1 --set seeds=1" },
  mpi_scaling = { "--set N=32 --set string_N=2000 --set weak_N=16 "
                  .. "--set weak_string_N=1000 --set steps=1 --set reps=1" },
  mpi_access_distance = { "--set N=64 --set Nx=32 --set steps=1" },
  mpi_tune = { "--set N=16 --set blocks=64 --set rounds=1 --set reps=1 "
               .. "--set steps=1" },
  mpi_krylov = { "--set V=4 --set reps=2 --set solves=1 --set formats=csr" },
  tsm_cpu = { "--set widths=1,3 --set mib=4 --set reps=1" },
  blocktridiag = { "--set blocks=3 --set rows=4096 --set reps=1 --set peers=none" },
  blocktridiag_tune = { "--set blocks=3 --set gpu_bytes=2^20 --set reps=1 "
                        .. "--set cache=off", skip = "no GPU" },
  peer_arkode = { "--set steps=2 --set steps_c=20", skip = "no \"arkode\" variant" },
  reservoir_spmv = { "--set k=2 --set patterns=b --set reps=2 --set tune_reps=1",
                     skip = "no GPU" },
  reservoir_bicgstab = { "--set sizes=20 --set its=10", skip = "no GPU" },
  tsm_roofline = { "--set widths=2 --set rows=65536 --set reps=1", skip = "no GPU" },
  gpu_barriers = { "--set iters=10 --set concurrent=1", skip = "no GPU" },
  gpu_bruss2d = { "--set steps=2 --set methods=bs3 --set variants=gpu_reference "
                  .. "--set peers=none", skip = "no GPU" },
  mpi_gpu_bruss2d = { "--set N=64 --set steps=2 --set methods=bs3 --set reps=1",
                      skip = "no GPU" },
  gpu_access_distance = { "--set n=2000 --set d=32 --set methods=bs3 "
                          .. "--set variants=gpu_stream2d", skip = "no GPU" },
  gpu_stream2d_tune = { "--set N=64 --set methods=bs3 --set steps=2 --set threads=64 "
                        .. "--set rows=0 --set cluster=1 --set cache=off", skip = "no GPU" },
  gpu_user_problem = { "--set n=2000 --set steps=1", skip = "no GPU" },
}

-- The result rows of a results.csv (its lines less comments and header).
local function rows(csv)
  local n = -1
  for line in csv:gmatch("[^\n]+") do
    if line:sub(1, 1) ~= "#" then n = n + 1 end
  end
  return math.max(n, 0)
end

describe("scenarios", function()
  teardown(H.cleanup)

  local names = {}
  for name in pairs(QUICK) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local q = QUICK[name]
    it(name .. ".lua runs to the end with small settings", function()
      local dir = H.tmpdir("scn")
      local cmd = string.format("%s %s/scenarios/%s.lua --ui none --out %s %s >%s/log 2>&1",
                                H.q(H.BIN), H.q(H.SRC), name, H.q(dir .. "/run"), q[1],
                                H.q(dir))
      local ok = H.sh_ok(cmd)
      local log = H.slurp(dir .. "/log") or ""
      assert.is_true(ok, log)
      assert.is_true(H.exists(dir .. "/run/results.csv"), log)
      -- rows are required unless the scenario said what it lacks
      if not (q.skip and log:find(q.skip, 1, true)) then
        local n = rows(H.slurp(dir .. "/run/results.csv") or "")
        assert.is_true(n >= 1, "results.csv has no rows:\n" .. log)
      end
    end)
  end

  it("reservoir_spmv.lua and reservoir_bicgstab.lua run on a matrix file (--set file=)", function()
    local dir = H.tmpdir("scn")
    local mk = dir .. "/mk.lua"
    local f = assert(io.open(mk, "w"))
    f:write('local ob = require "odebench"\n',
            'local g = ob.reservoir { J = 5, H = 4, I = 3, k = 2, wells = 2 }\n',
            ('g:matrix("csr"):write(%q)\n'):format(dir .. "/g.mtx"))
    f:close()
    assert.is_true(H.sh_ok(("%s %s --ui none --out %s >%s/mk.log 2>&1"):format(H.q(H.BIN), H.q(mk),
                   H.q(dir .. "/mk"), H.q(dir))), H.slurp(dir .. "/mk.log"))
    local gpu = require("odebench").info({ bandwidth = false }).gpu
    for _, c in ipairs { { "reservoir_spmv", "--set reps=2 --set tune_reps=1 --set threads=1" },
                         { "reservoir_bicgstab", "--set its=10 --set formats=csr,bdia" } } do
      local cmd = ("%s %s/scenarios/%s.lua --ui none --out %s --set file=%s %s >%s/log 2>&1")
        :format(H.q(H.BIN), H.q(H.SRC), c[1], H.q(dir .. "/" .. c[1]), H.q(dir .. "/g.mtx"), c[2], H.q(dir))
      local ok = H.sh_ok(cmd)
      local log = H.slurp(dir .. "/log") or ""
      assert.is_true(ok, log)
      -- the loaded matrix: 5 x 4 x 3 cells of 2 components and 2 wells
      assert.is_truthy(log:find(dir .. "/g.mtx: n = 122, nnz = 1326", 1, true), log)
      assert.is_truthy(log:find("bdia does not apply without the grid the matrix comes from", 1, true), log)
      local csv = H.slurp(dir .. "/" .. c[1] .. "/results.csv") or ""
      if c[1] == "reservoir_spmv" then
        for _, fmt in ipairs { "csr", "bsr", "ell", "hyb", "dia" } do
          assert.is_truthy(log:find("  cpu      " .. fmt .. " ", 1, true), log)
        end
        assert.is_truthy(csv:find("spmv", 1, true), csv)
      else
        -- the CPU reference converges: its true residual is printed below tol
        for _, m in ipairs { "bicgstab", "qmr" } do
          local rel = log:match(m .. "%s+cpu%s+csr%s+%-%s+%d+%s+%S+%s+%S+%s+%S+%s+%S+%s+%S+%s+(%S+)")
          assert.is_true(rel ~= nil and tonumber(rel) <= 1e-10, log)
        end
        assert.is_truthy(csv:find("krylov", 1, true), csv)
      end
      if not gpu then assert.is_truthy(log:find("no GPU in this run", 1, true), log) end
    end
  end)

  it("has small settings for every scenario in scenarios/", function()
    local p = assert(io.popen("ls " .. H.q(H.SRC .. "/scenarios")))
    local missing = {}
    for f in p:lines() do
      local name = f:match("^(.*)%.lua$")
      if name and not QUICK[name] then missing[#missing + 1] = name end
    end
    p:close()
    assert.are.same({}, missing)
  end)
end)
