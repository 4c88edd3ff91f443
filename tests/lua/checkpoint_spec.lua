-- checkpoint_spec.lua: s:checkpoint(file) and ob.solver{..., restart =
-- file} (lua/odb_lua_checkpoint.c over core/ode/odb_checkpoint.c): a
-- restarted solver continues the same trajectory bit for bit, and each
-- refusal says why, with the file name shown escaped. The kill during a
-- write is tests/core/ode/test_checkpoint.c's.
local ob = require "odebench"

local H = dofile(assert(os.getenv("ODEBENCH_SRC"), "set ODEBENCH_SRC")
                 .. "/tests/lua/spec_helpers.lua")
teardown(H.cleanup)

-- true when the two Vectors of n hold the same doubles.
local function same_bits(a, b, n)
  for i = 1, n do
    if a[i] ~= b[i] then return false, i end
  end
  return true
end

local function bruss(N)
  return ob.problem("bruss2d", { N = N or 16 })
end

local function solver(p, method, variant, extra)
  local o = { problem = p, method = method, variant = variant,
              backend = "cpu", tol = 1e-8 }
  for k, v in pairs(extra or {}) do o[k] = v end
  return ob.solver(o)
end

-- The error of f(...) with its "file:line: " position taken off.
local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return (tostring(e):gsub("^[^:]*:%d+: ", ""))
end

describe("a restarted integration", function()
  for _, mv in ipairs { { "dopri5", "fused" }, { "radau2a5", "A" } } do
    local method, variant = mv[1], mv[2]
    it(("continues bit for bit (%s/%s)"):format(method, variant), function()
      local dir = H.tmpdir("ckpt")
      local p = bruss()
      -- a runs 0 -> 1, writes a checkpoint, runs on to 2; b restarts from
      -- the checkpoint and runs to 2
      local a = solver(p, method, variant)
      a:integrate { t1 = 1 }
      a:checkpoint(dir .. "/run.ckpt")
      local ra = a:integrate { t1 = 2 }
      local b = solver(p, method, variant, { restart = dir .. "/run.ckpt" })
      assert.are.equal(1, b.t)
      local rb = b:integrate { t1 = 2 }
      assert.are.equal(2, b.t)
      assert.is_true(same_bits(a:state(), b:state(), p.n))
      assert.are.equal(ra.steps, rb.steps)
      assert.are.equal(ra.accepted, rb.accepted)
      assert.are.equal(ra.rejected, rb.rejected)
      assert.are.equal(ra.nfev, rb.nfev)
      assert.is_true(ra.steps > 10)
    end)
  end

  it("after steps is the run 0 -> T itself, bit for bit (radau2a5/A)",
     function()
    -- The adaptive steps of s:step are those of a run 0 -> T until one
    -- would pass T; a checkpoint after them and a restart to T give that
    -- run's state and step count. (A PIRK step reads no f(t, y) kept from
    -- the step before, so integrate starting afresh from the restored
    -- state changes no bit.)
    local dir = H.tmpdir("ckpt")
    local p = bruss()
    local direct = solver(p, "radau2a5", "A")
    local rd = direct:integrate { t1 = 4 }
    local a = solver(p, "radau2a5", "A")
    local k = 0
    while a.t < 1 do a:step(); k = k + 1 end
    a:checkpoint(dir .. "/mid.ckpt")
    local b = solver(p, "radau2a5", "A", { restart = dir .. "/mid.ckpt" })
    local rb = b:integrate { t1 = 4 }
    assert.is_true(same_bits(direct:state(), b:state(), p.n))
    assert.are.equal(rd.steps, k + rb.steps)
  end)

  it("may run on another variant of the same method", function()
    local dir = H.tmpdir("ckpt")
    local p = bruss()
    local a = solver(p, "dopri5", "fused")
    a:integrate { t1 = 1 }
    a:checkpoint(dir .. "/run.ckpt")
    a:integrate { t1 = 2 }
    local b = solver(p, "dopri5", "plain", { restart = dir .. "/run.ckpt" })
    b:integrate { t1 = 2 }
    local ya, yb, worst = a:state(), b:state(), 0
    for i = 1, p.n do
      worst = math.max(worst, math.abs(ya[i] - yb[i]) / math.abs(ya[i]))
    end
    assert.is_true(worst < 1e-10, "rel diff " .. worst)
  end)
end)

describe("a checkpoint is refused", function()
  local dir, good, radau

  setup(function()
    dir = H.tmpdir("ckpt")
    good, radau = dir .. "/good.ckpt", dir .. "/radau.ckpt"
    solver(bruss(), "dopri5", "plain"):checkpoint(good)
    solver(bruss(), "radau2a5", "A"):checkpoint(radau)
  end)

  -- ob.solver{..., restart = file} refuses with exactly
  -- "bad argument #1 to '...' (field 'restart': <why>)".
  local function refused(why, p, method, file, extra)
    local o = { restart = file }
    for k, v in pairs(extra or {}) do o[k] = v end
    local e = err_of(solver, p, method, method == "dopri5" and "plain" or "A",
                     o)
    assert.are.equal("(field 'restart': " .. why .. ")",
                     e:match("%(field 'restart'.*$"), e)
    assert.is_truthy(e:find("^bad argument #1 to '[^']*solver' "), e)
  end

  it("from another problem, size, parameter value or method", function()
    refused(("checkpoint '%s' is of another problem: bruss2d(N=16) n=512, "
             .. "not medakzo(N=256) n=512"):format(good),
            ob.problem("medakzo", { N = 256 }), "dopri5", good)
    refused(("checkpoint '%s' is of another size: n = 512 (bruss2d(N=16) "
             .. "n=512), not n = 128 (bruss2d(N=8) n=128)"):format(good),
            bruss(8), "dopri5", good)
    refused(("checkpoint '%s' is of another problem: bruss2d(N=16) n=512 "
             .. "with parameter alpha = 0.002, not 0.01"):format(good),
            ob.problem("bruss2d", { N = 16, alpha = 0.01 }), "dopri5", good)
    refused(("checkpoint '%s' is of another method: dopri5, not verner65")
            :format(good), bruss(), "verner65", good,
            { variant = "plain" })
    refused(("checkpoint '%s' is of radau2a5 with m = 4 corrector steps, "
             .. "not m = 2"):format(radau), bruss(), "radau2a5", radau,
            { m = 2 })
  end)

  it("when damaged, of another format version, or missing", function()
    local bytes = assert(H.slurp(good))
    assert.are.equal(4800, #bytes)   -- 672 + 512 * 8 + 32
    local function put(name, s)
      local f = assert(io.open(dir .. "/" .. name, "wb"))
      f:write(s)
      f:close()
      return dir .. "/" .. name
    end
    local f = put("short.ckpt", bytes:sub(1, 1000))
    refused(("checkpoint '%s' is truncated: 1000 bytes, its header (n = 512) "
             .. "says 4800"):format(f), bruss(), "dopri5", f)
    f = put("flip.ckpt", bytes:sub(1, 2000) .. "x" .. bytes:sub(2002))
    refused(("checkpoint '%s' is corrupted: its contents do not match its "
             .. "SHA-256"):format(f), bruss(), "dopri5", f)
    f = put("v2.ckpt", bytes:sub(1, 8) .. "\2" .. bytes:sub(10))
    refused(("checkpoint '%s' has format version 2; this build reads "
             .. "version 1"):format(f), bruss(), "dopri5", f)
    f = put("text.ckpt", ("not a checkpoint\n"):rep(300))
    refused(("'%s' is not an odebench checkpoint (it does not begin with "
             .. "ODBCKPT)"):format(f), bruss(), "dopri5", f)
    f = dir .. "/none.ckpt"
    refused(("checkpoint '%s': cannot open it: No such file or directory")
            :format(f), bruss(), "dopri5", f)
  end)

  it("and s:checkpoint refuses what it cannot write", function()
    local s = solver(bruss(8), "dopri5", "plain")
    assert.are.equal(("checkpoint '%s/no/dir.ckpt': cannot create the file: "
                      .. "No such file or directory"):format(dir),
                     err_of(s.checkpoint, s, dir .. "/no/dir.ckpt"))
    assert.is_truthy(err_of(s.checkpoint, s):find("^bad argument #2 to "
                     .. "'[^']*' %(string expected, got no value%)$"))
    s:close()
    assert.is_truthy(err_of(s.checkpoint, s, dir .. "/x.ckpt")
                     :find("the solver is closed", 1, true))
  end)

  it("by the odebench program with status 2, the name shown escaped",
     function()
    local bad = dir .. "/bad\27[31m.ckpt"
    local f = assert(io.open(bad, "wb"))
    f:write(assert(H.slurp(good)):sub(1, 700))
    f:close()
    local scen = dir .. "/restart.lua"
    f = assert(io.open(scen, "w"))
    f:write(([[
      local ob = require "odebench"
      local s = ob.solver { problem = ob.problem("bruss2d", { N = 16 }),
                            method = "dopri5", restart = %q }
      s:integrate { t1 = 1 }
    ]]):format(bad))
    f:close()
    local p = assert(io.popen(("timeout 60 %s --ui none --out %s %s 2>&1; "
                               .. "echo \"rc=$?\""):format(H.q(H.BIN),
                               H.q(dir .. "/out"), H.q(scen))))
    local out = p:read("a")
    p:close()
    assert.are.equal(2, tonumber(out:match("rc=(%d+)%s*$")), out)
    assert.is_truthy(out:find(("field 'restart': checkpoint '%s/bad\\x1b[31m"
                               .. ".ckpt' is truncated: 700 bytes, its "
                               .. "header (n = 512) says 4800"):format(dir),
                              1, true), out)
    assert.is_nil(out:find("\27", 1, true))
  end)
end)
