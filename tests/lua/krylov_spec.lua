-- krylov_spec.lua: ob.krylov's options, results and refusals (runs without
-- a GPU: the GPU impls either converge or raise "no CUDA ..."), and the
-- reservoir_bicgstab scenario exiting 0 where no GPU is present.
local ok_ob, ob = pcall(require, os.getenv("OB_SPARSE_MODULE") or "odebench")
local H = dofile(os.getenv("ODEBENCH_SRC") .. "/tests/lua/spec_helpers.lua")

describe("ob.krylov", function()
  if not (ok_ob and ob.krylov and ob.reservoir) then
    pending("ob.krylov is not registered in this build")
    return
  end
  teardown(H.cleanup)

  local g = ob.reservoir { J = 3, H = 4, I = 5, k = 2, wells = 2, pattern = "h", seed = 7 }
  local A = g:matrix("csr")
  local B = g:matrix("bdia")
  local b, xs = g:rhs(A)

  it("returns the result table and x, with timings", function()
    local r, x = ob.krylov { A = A, b = b, method = "bicgstab", impl = "cpu", tol = 1e-10 }
    assert.is_true(r.converged)
    assert.equal(r.x, x)
    assert.equal("cpu", r.impl)
    assert.is_true(x:max_rel_err(xs) <= 1e-8)
    assert.is_true(r.seconds >= 0 and r.seconds_per_iter >= 0)
    assert.is_true(r.bytes_per_iter > 0)
    assert.equal(r.iters + 1, #r.history)
    local q = ob.krylov { A = A, b = b, method = "qmr", impl = "cpu", x0 = x, tol = 1e-6 }
    assert.is_true(q.converged)
    assert.equal(0, q.iters)
  end)

  it("reports maxit in the result instead of raising", function()
    local r = ob.krylov { A = A, b = b, maxit = 2, tol = 1e-15 }
    assert.is_false(r.converged)
    assert.equal("maxit", r.outcome)
    assert.equal(2, r.iters)
    assert.matches("no convergence in 2 iterations", r.message, 1, true)
  end)

  it("runs the GPU impls or says why not", function()
    for _, impl in ipairs { "cusparse", "fused", "persistent" } do
      for _, sync in ipairs { "lock", "lockfree", "wss" } do
        local ok, r = pcall(ob.krylov, { A = A, b = b, impl = impl, sync = sync, delay = 100 })
        if ok then
          assert.is_true(r.converged, impl)
          assert.is_true(r.x:max_rel_err(xs) <= 1e-8, impl)
        else
          assert.matches("CUDA", r, 1, true)
        end
      end
    end
  end)

  it("refuses bad options with the allowed values", function()
    local cases = {
      { { impl = "gpu" }, "unknown Krylov impl 'gpu' (cpu, cusparse, fused, persistent)" },
      { { sync = "spin" }, "unknown sync 'spin' (lock, lockfree, wss)" },
      { { method = "cg" }, "method must be \"bicgstab\" or \"qmr\"" },
      { { delay = -1 }, "delay must be in 0..1000000 ns" },
      { { grid = 0 }, "grid must be in 1..1048576" },
      { { block = 100 }, "block must be a multiple of 32 in 64..1024" },
      { { rv = "texture" }, "rv must be \"auto\", \"shared\" or \"global\"" },
      { { watchdog = 0 }, "watchdog must be in (0, 3600]" },
      { { tol = -1 }, "must be positive" },
      { { maxit = 0 }, "field 'maxit': must be in 1..1073741823, got 0" },
      { { colour = 1 }, "unknown field 'colour'" },
    }
    for _, c in ipairs(cases) do
      local t = { A = A, b = b }
      for key, v in pairs(c[1]) do t[key] = v end
      local ok, err = pcall(ob.krylov, t)
      assert.is_false(ok, c[2])
      assert.matches(c[2], err, 1, true)
    end
    local ok, err = pcall(ob.krylov, { A = B, b = b, method = "qmr" })
    assert.is_false(ok)
    assert.matches("QMR needs A^T x and so CSR", err, 1, true)
    ok, err = pcall(ob.krylov, { A = A, b = { 1, 2, 3 } })
    assert.is_false(ok)
    assert.matches("b has 3 entries", err, 1, true)
  end)

  it("runs the scenario and exits 0, measuring only where a GPU is present", function()
    local dir = H.tmpdir("krylov")
    local cmd = ("cd %s && env -u LD_PRELOAD %s %s --set sizes=5 --set k=2 --set cpu_max=5 --out %s >%s/out 2>%s/err")
      :format(H.q(dir), H.q(H.BIN), H.q(H.SRC .. "/scenarios/reservoir_bicgstab.lua"), H.q(dir .. "/run"),
              H.q(dir), H.q(dir))
    assert.is_true(H.sh_ok(cmd), H.slurp(dir .. "/err"))
    local out = H.slurp(dir .. "/out") or ""
    assert.is_truthy(out:find("no GPU", 1, true) or out:find("us/iter", 1, true), out)
  end)

  it("exits 2 from a scenario whose GPU impl cannot run", function()
    local dir = H.tmpdir("krylov")
    local f = assert(io.open(dir .. "/s.lua", "w"))
    f:write([[
local ob = require "odebench"
local g = ob.reservoir { J = 3, H = 3, I = 3, k = 2 }
local A = g:matrix("ell")
ob.krylov { A = A, b = g:rhs(A), impl = "persistent" }
]])
    f:close()
    local cmd = ("cd %s && env -u LD_PRELOAD %s s.lua --out %s >%s/out 2>%s/err")
      :format(H.q(dir), H.q(H.BIN), H.q(dir .. "/run"), H.q(dir), H.q(dir))
    local _, _, code = os.execute(cmd)
    assert.equal(2, code)
    local err = H.slurp(dir .. "/err") or ""
    assert.is_truthy(err:find("s.lua:4:", 1, true), err)
    assert.is_truthy(err:find("persistent takes CSR or Bdia", 1, true) or err:find("CUDA", 1, true), err)
  end)
end)
