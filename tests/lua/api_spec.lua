-- api_spec.lua: the odebench Lua module under plain lua5.4 (require "odebench").
-- Run by meson (suite 'lua') with LUA_PATH/LUA_CPATH pointing at lua/ and
-- build/lua/; a child lua5.4 is used where the environment must differ.

local ob = require "odebench"

local LUA = os.getenv("ODEBENCH_LUA") or "lua5.4"

-- Single-quotes s for sh.
local function q(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- Temporary directories, removed when the file's specs are done.
local made = {}

local function tmpdir()
  local p = assert(io.popen("mktemp -d /tmp/odebench-api.XXXXXX"))
  local d = p:read("l")
  p:close()
  made[#made + 1] = d
  return d
end

teardown(function()
  for _, d in ipairs(made) do os.execute("rm -rf " .. q(d)) end
end)

-- Runs code in a child lua5.4 with extra environment; returns exit code and
-- the combined output.
local function child(env, code)
  local dir = tmpdir()
  local file = dir .. "/child.lua"
  local f = assert(io.open(file, "w"))
  f:write(code)
  f:close()
  local p = assert(io.popen(("cd %s && env %s %s %s 2>&1; echo \"rc=$?\"")
                            :format(q(dir), env, LUA, q(file))))
  local out = p:read("a")
  p:close()
  local rc = tonumber(out:match("rc=(%d+)%s*$"))
  return rc, out:gsub("rc=%d+%s*$", ""), dir
end

-- pcall(f) must fail with a message containing the plain text pattern.
local function fails_with(text, f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok, "expected an error containing: " .. text)
  assert.is_truthy(tostring(err):find(text, 1, true),
                   "error was: " .. tostring(err) .. "\nexpected: " .. text)
  return err
end

describe("ob.param", function()
  it("returns the default when nothing is set", function()
    assert.are.equal(5, ob.param("spec_absent_int", 5))
    assert.are.equal("integer", math.type(ob.param("spec_absent_int", 5)))
    assert.are.equal(1.5, ob.param("spec_absent_real", 1.5))
    assert.are.equal("abc", ob.param("spec_absent_str", "abc"))
    assert.are.equal(true, ob.param("spec_absent_bool", true))
  end)

  it("refuses a default of another type", function()
    fails_with("bad argument #2 to 'param'", function() ob.param("x", {}) end)
  end)

  it("reads ODEBENCH_SET typed like the default", function()
    local rc, out = child("ODEBENCH_SET='N=32,x=2.5,flag=false,name=hi,big=1e3'", [[
      local ob = require "odebench"
      local N, x = ob.param("N", 8), ob.param("x", 1.0)
      local flag, name = ob.param("flag", true), ob.param("name", "x")
      local big = ob.param("big", 1)
      print(N, math.type(N), x, flag, name, big, math.type(big))
    ]])
    assert.are.equal(0, rc, out)
    assert.are.equal("32\tinteger\t2.5\tfalse\thi\t1000\tinteger", out:match("[^\n]+"))
  end)

  -- ob.param("N", 8)'s error with ODEBENCH_SET=<set>, from a child
  local function param_error(set)
    return child("ODEBENCH_SET=" .. set, [[
      local ob = require "odebench"
      local ok, err = pcall(function() return ob.param("N", 8) end)
      print(err)
    ]])
  end

  it("refuses a non-number for a numeric parameter", function()
    local rc, out = param_error("N=abc")
    assert.are.equal(0, rc, out)
    assert.is_truthy(out:find("bad argument #1 to 'param' (ODEBENCH_SET N=abc: " ..
                              "number expected for parameter 'N')", 1, true), out)
  end)

  it("refuses a fraction for an integer parameter", function()
    local rc, out = param_error("N=1.5")
    assert.are.equal(0, rc, out)
    assert.is_truthy(out:find("bad argument #1 to 'param' (ODEBENCH_SET N=1.5: " ..
                              "integer expected for parameter 'N' (its default, 8, " ..
                              "is an integer; a scenario that takes fractions " ..
                              "writes it as 8.0))", 1, true), out)
  end)
end)

describe("ob.problem", function()
  it("has n = 2N^2, d = 2N and the other fields", function()
    local p = ob.problem("bruss2d", { N = 16 })
    assert.are.equal(512, p.n)
    assert.are.equal(32, p.d)
    assert.are.equal("bruss2d", p.name)
    assert.is_truthy(p.label:find("bruss2d", 1, true))
    assert.are.equal(16, p.params.N)
    assert.is_true(p.t1 > p.t0)
    local y0 = p:initial()
    assert.are.equal(512, #y0)
    assert.is_true(y0:norm_inf() > 0)
    assert.is_truthy(tostring(p):find("odebench.Problem", 1, true))
  end)

  it("refuses unknown names, listing the valid ones", function()
    local err = fails_with("bad argument #1 to 'problem' (unknown problem 'nope'",
                           function() ob.problem("nope", { N = 8 }) end)
    assert.is_truthy(err:find("bruss2d", 1, true))
  end)

  it("refuses N = 0 and N = -3", function()
    fails_with("bad argument #2 to 'problem'",
               function() ob.problem("bruss2d", { N = 0 }) end)
    local err = fails_with("bad argument #2 to 'problem'",
                           function() ob.problem("bruss2d", { N = -3 }) end)
    assert.is_truthy(err:find("'N'", 1, true), err)
  end)

  it("refuses wrong parameter types and names", function()
    fails_with("bad argument #2 to 'problem' (parameter 'N': number expected, got string)",
               function() ob.problem("bruss2d", { N = "x" }) end)
    fails_with("bad argument #2 to 'problem'",
               function() ob.problem("bruss2d", { M = 2 }) end)
  end)
end)

describe("ob.solver", function()
  local p = ob.problem("bruss2d", { N = 8 })

  it("is created for every method x variant in ob.list(), or refused with a reason", function()
    local l = ob.list()
    local backends = {}
    for _, b in ipairs(l.backends) do backends[b.name] = true end
    local count, refused = 0, 0
    for _, m in ipairs(l.methods) do
      for _, v in ipairs(l.variants) do
        if backends[v.backend] then
          local ok, s = pcall(ob.solver, { problem = p, method = m.name, variant = v.name,
                                            backend = v.backend })
          if ok then
            assert.are.equal(m.name, s.method)
            assert.are.equal(v.name, s.variant)
            assert.are.equal(p.n, s.n)
            s:close()
            count = count + 1
          else
            -- a variant that does not fit the method says why
            assert.is_truthy(tostring(s):find("variant '" .. v.name .. "' does not apply: ", 1, true), s)
            refused = refused + 1
          end
        end
      end
    end
    assert.is_true(count >= 10)
    assert.is_true(refused >= 1)
  end)

  it("refuses unknown method, variant and backend names", function()
    local e = fails_with("bad argument #1 to 'solver' (unknown method 'nope'",
                         function() ob.solver { problem = p, method = "nope" } end)
    assert.is_truthy(e:find("dopri5", 1, true))
    e = fails_with("bad argument #1 to 'solver' (unknown variant 'nope'",
                   function() ob.solver { problem = p, variant = "nope" } end)
    assert.is_truthy(e:find("fused", 1, true))
    e = fails_with("bad argument #1 to 'solver' (unknown backend 'nope'",
                   function() ob.solver { problem = p, backend = "nope" } end)
    assert.is_truthy(e:find("cpu", 1, true))
  end)

  it("refuses wrong field types and unknown fields", function()
    fails_with("bad argument #1 to 'solver' (field 'tol': number expected, got string)",
               function() ob.solver { problem = p, tol = "1e-6" } end)
    fails_with("bad argument #1 to 'solver' (field 'method': string expected, got number)",
               function() ob.solver { problem = p, method = 5 } end)
    fails_with("bad argument #1 to 'solver' (field 'problem': odebench.Problem expected, got table)",
               function() ob.solver { problem = {} } end)
    local e = fails_with("bad argument #1 to 'solver' (unknown field 'tolerance'",
                         function() ob.solver { problem = p, tolerance = 1e-6 } end)
    assert.is_truthy(e:find("allowed: problem", 1, true))
    fails_with("field 'tol': must be positive", function() ob.solver { problem = p, tol = -1 } end)
    fails_with("bad argument #1 to 'solver' (field 'max_steps': integer expected, got 1.5)",
               function() ob.solver { problem = p, max_steps = 1.5 } end)
    fails_with("field 'sync': must be 'step' or 'call'",
               function() ob.solver { problem = p, h = 1e-3, sync = "never" } end)
    fails_with("sync = call with adaptive steps needs the step controller on the device",
               function() ob.solver { problem = p, sync = "call" } end)
  end)

  it("takes fixed steps with sync = 'call' to the same state as 'step'", function()
    local p16 = ob.problem("bruss2d", { N = 16 })
    local a = ob.solver { problem = p16, method = "dopri5", h = 1e-3, sync = "step" }
    local b = ob.solver { problem = p16, method = "dopri5", h = 1e-3, sync = "call" }
    local ra = a:integrate { t0 = 0, t1 = 0.02 }
    local rb = b:integrate { t0 = 0, t1 = 0.02 }
    assert.are.equal(20, rb.steps)
    assert.are.equal(ra.steps, rb.steps)
    assert.are.equal(0, a:state():max_rel_err(b:state()))
  end)

  it("gives the same state with fused and plain (1e-13 relative)", function()
    local p16 = ob.problem("bruss2d", { N = 16 })
    local a = ob.solver { problem = p16, method = "dopri5", variant = "fused", tol = 1e-8 }
    local b = ob.solver { problem = p16, method = "dopri5", variant = "plain", tol = 1e-8 }
    local ra = a:integrate { t0 = 0, t1 = 0.1 }
    local rb = b:integrate { t0 = 0, t1 = 0.1 }
    assert.are.equal(ra.steps, rb.steps)
    local err = a:state():max_rel_err(b:state())
    assert.is_true(err <= 1e-13, "relative difference " .. err)
  end)

  it("returns sane result tables", function()
    local p16 = ob.problem("bruss2d", { N = 16 })
    local ref = ob.reference(p16, { t0 = 0, t1 = 0.1 })
    local s = ob.solver { problem = p16, method = "dopri5", tol = 1e-6 }
    local r = s:integrate { t0 = 0, t1 = 0.1, reference = ref, label = "sane" }
    assert.are.equal("solve", r.kind)
    assert.are.equal("ok", r.status)
    assert.are.equal("sane", r.label)
    assert.are.equal("dopri5", r.method)
    assert.are.equal("bruss2d", r.problem)
    assert.are.equal("cpu", r.backend)
    assert.are.equal(512, r.n)
    assert.are.equal(32, r.d)
    assert.is_true(r.steps > 0)
    assert.are.equal(r.steps, r.accepted + r.rejected)
    assert.is_true(r.nfev >= r.steps)
    assert.is_true(r.seconds > 0)
    assert.is_true(r.time_per_step > 0)
    assert.is_true(r.gbs > 0)
    assert.is_true(r.gflops > 0)
    assert.is_true(math.abs(r.t - 0.1) < 1e-12)
    assert.is_true(r.err >= 0 and r.err < 1e-4, "err " .. tostring(r.err))
    assert.are.equal(r.err, s:state():max_rel_err(ref))
    if r.floor_pct then assert.is_true(r.floor_pct > 0) end
  end)

  it("steps, reads and sets its state", function()
    local s = ob.solver { problem = p, method = "dopri5" }
    local st = s:step()
    assert.is_true(st.t > 0 and st.h > 0)
    assert.are.equal(1, st.accepted)
    local t = s.t
    st = s:step(1e-4)
    assert.is_true(math.abs(s.t - (t + 1e-4)) < 1e-15)
    local y = s:state()
    assert.are.equal(p.n, #y)
    s:set_state(p:initial(), 0)
    assert.are.equal(0, s.t)
    s:set_state(y:totable(), 0.25)
    assert.are.equal(0.25, s.t)
    assert.are.equal(0, s:state():max_rel_err(y))
    fails_with("bad argument #1 to 'set_state' (table of 128 numbers expected",
               function() s:set_state({ 1, 2 }) end)
  end)

  it("refuses t1 before t0", function()
    local s = ob.solver { problem = p }
    fails_with("bad argument #1 to 'integrate' (t1 (0.5) must be greater than t0 (1))",
               function() s:integrate { t0 = 1, t1 = 0.5 } end)
    fails_with("bad argument #1 to 'integrate' (unknown field 'tend'",
               function() s:integrate { tend = 1 } end)
    fails_with("field 'reference': Vector of length 128 expected",
               function() s:integrate { t1 = 1, reference = ob.vector(3) } end)
  end)

  it("raises engine failures after recording them", function()
    local s = ob.solver { problem = p, max_steps = 2 }
    fails_with("steps", function() s:integrate { t0 = 0, t1 = 1 } end)
  end)

  it("closes with <close> and stays closed", function()
    local kept
    do
      local s <close> = ob.solver { problem = p }
      kept = s
      assert.is_true(s.n == p.n)
    end
    assert.are.equal("odebench.Solver(closed)", tostring(kept))
    fails_with("closed", function() return kept.t end)
    fails_with("calling 'step' on bad self (the solver is closed)",
               function() kept:step() end)
    kept:close()   -- idempotent
  end)

  it("keeps a problem alive while a solver uses it", function()
    local q2 = ob.problem("bruss2d", { N = 8 })
    local s = ob.solver { problem = q2 }
    q2:close()
    q2:close()
    assert.are.equal("odebench.Problem(closed)", tostring(q2))
    fails_with("closed", function() return q2.n end)
    local r = s:integrate { t0 = 0, t1 = 0.01 }
    assert.are.equal("ok", r.status)
    assert.are.equal(q2, s.problem)
  end)
end)

describe("ob.vector", function()
  it("reads, writes and measures", function()
    local v = ob.vector { 1, -4, 2 }
    assert.are.equal(3, #v)
    assert.are.equal(-4, v[2])
    v[2] = 3
    assert.are.equal(3, v[2])
    assert.are.equal(3, v:norm_inf())
    assert.are.same({ 1, 3, 2 }, v:totable())
    local w = ob.vector { 1, 3, 4 }
    assert.are.equal(0.5, v:max_rel_err(w))
    assert.are.equal(4, #ob.vector(4))
    fails_with("out of range", function() return v[4] end)
    fails_with("out of range", function() v[0] = 1 end)
    fails_with("bad argument #1 to 'vector' (element 2: number expected, got string)",
               function() ob.vector { 1, "x" } end)
    do local c <close> = ob.vector(2) end
  end)
end)

describe("ob.reference", function()
  it("is cached and handed out as a copy", function()
    local p = ob.problem("bruss2d", { N = 8 })
    local a = ob.reference(p, { t1 = 0.05 })
    a[1] = 1e9
    local b = ob.reference(p, { t1 = 0.05 })
    assert.is_true(b[1] < 1e3)
    fails_with("bad argument #2 to 'reference' (t1 (0) must be greater than t0 (1))",
               function() ob.reference(p, { t0 = 1, t1 = 0 }) end)
    fails_with("bad argument #2 to 'reference' (unknown method 'x'",
               function() ob.reference(p, { t1 = 1, method = "x" }) end)
  end)

  it("tells apart problems whose labels agree", function()
    -- bruss2d(N=8) is the label for any alpha
    local a = ob.problem("bruss2d", { N = 8 })
    local b = ob.problem("bruss2d", { N = 8, alpha = 0.2 })
    assert.are.equal(a.label, b.label)
    local ra = ob.reference(a, { t1 = 0.1 })
    local rb = ob.reference(b, { t1 = 0.1 })
    assert.is_true(math.abs(ra[5] - rb[5]) > 1e-3, ra[5] .. " " .. rb[5])
    -- a new problem with the same parameters shares the cached solution
    local a2 = ob.problem("bruss2d", { N = 8 })
    assert.are.equal(ra[5], ob.reference(a2, { t1 = 0.1 })[5])
    -- problems defined in the scenario: user(n=3,d=3) both, f differs
    local decay = ob.problem { n = 3, f = function(t, y, f) for i = 1, 3 do f[i] = -y[i] end end,
                               y0 = { 1, 1, 1 } }
    local grow = ob.problem { n = 3, f = function(t, y, f) for i = 1, 3 do f[i] = y[i] end end,
                              y0 = { 1, 1, 1 } }
    assert.are.equal(decay.label, grow.label)
    local rd = ob.reference(decay, { t0 = 0, t1 = 1 })
    local rg = ob.reference(grow, { t0 = 0, t1 = 1 })
    assert.is_true(math.abs(rd[1] - math.exp(-1)) < 1e-10, tostring(rd[1]))
    assert.is_true(math.abs(rg[1] - math.exp(1)) < 1e-10, tostring(rg[1]))
  end)
end)

describe("ob.info", function()
  it("measures the bandwidth again in this run with bandwidth = 'now'", function()
    local b = ob.info { bandwidth = "now" }.bandwidth
    assert.is_false(b.from_cache)
    assert.is_true(b.read_all > 0 and b.copy_all > 0 and b.peak_gflops_1t > 0)
    assert.is_nil(ob.info { bandwidth = false }.bandwidth)
    local ok, err = pcall(ob.info, { bandwidth = "later" })
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find('true, false or "now"', 1, true), err)
  end)
end)

describe("the run", function()
  it("lists problems, methods, variants, kernels and backends", function()
    local l = ob.list()
    local names = {}
    for _, sec in ipairs { "problems", "methods", "variants", "kernels", "backends" } do
      for _, e in ipairs(l[sec]) do names[e.name] = true end
    end
    for _, n in ipairs { "bruss2d", "heun_euler", "bs3", "rk4", "dopri5",
                         "verner65", "plain", "fused", "tsmttsm", "tsmm", "cpu" } do
      assert.is_true(names[n], n)
    end
    -- every listed kernel runs on the CPU backend
    for _, k in ipairs(l.kernels) do
      local kk = ob.kernel(k.name, { M = 2, N = 3, K = 100, backend = "cpu" })
      assert.is_true(kk:check() <= 1e-12, k.name)
      kk:close()
    end
    -- the dense family's variants: the CPU's first, each naming the file
    -- of its code; every GPU one is a variant ob.blocktridiag accepts
    assert.are.equal("auto", l.dense[1].name)
    assert.are.equal("cpu", l.dense[1].backend)
    local src = os.getenv("ODEBENCH_SRC")
    for _, d in ipairs(l.dense) do
      assert.is_truthy(d.doc:match("[%w_/]+%.cu?%f[^%w]"), d.name)
      for path in d.doc:gmatch("%a+/[%w_/]+%.cu?%f[^%w]") do
        if src then   -- every file named is in the tree
          local f = io.open(src .. "/" .. path)
          assert.is_truthy(f, path)
          if f then f:close() end
        end
      end
      if d.backend == "cuda" then
        local ok, err = pcall(ob.blocktridiag, { lines = 1, length = 2,
                                                 block = 3, backend = "cuda",
                                                 variant = d.name })
        assert.is_true(ok or not err:find("unknown", 1, true), err)
      end
    end
  end)

  it("describes the machine", function()
    local i = ob.info { bandwidth = false }
    assert.is_true(i.cpu.cores >= 1)
    assert.is_true(#i.caches >= 1)
    assert.is_true(i.caches[1].size > 0)
  end)

  it("has a seed and a random stream", function()
    assert.are.equal("integer", math.type(ob.seed()))
    for _ = 1, 100 do
      local x = ob.random()
      assert.is_true(x >= 0 and x < 1)
    end
  end)

  it("records metrics", function()
    local m = ob.metric("spec_metric", 2.5, "GB/s")
    assert.are.equal("metric", m.kind)
    assert.are.equal(2.5, m.value)
  end)

  it("formats reports in pure Lua", function()
    local report = require "odebench.report"
    local text = report.format {
      { kind = "solve", label = "x", method = "dopri5", variant = "fused",
        steps = 10, accepted = 9, rejected = 1, seconds = 0.5,
        time_per_step = 0.05, gbs = 3.25, floor_pct = 40, err = 1e-7, status = "ok" },
      { kind = "metric", name = "m", value = 1 },
    }
    assert.is_truthy(text:find("steps (acc/rej)", 1, true))
    assert.is_truthy(text:find("10 (9/1)", 1, true))
    assert.is_truthy(text:find("50 ms", 1, true))
    assert.is_truthy(text:find("3.25", 1, true))
    assert.is_truthy(text:find("m = 1", 1, true))
    assert.are.equal("", report.format {})
  end)

  it("writes a scenario's table as CSV, numbers through the format given", function()
    local report = require "odebench.report"
    local path = os.tmpname()
    local rows = { { B = 3, gbs = 1234.56789, kernel = "row" },
                   { B = 10, gbs = 2 / 3, kernel = "warp" } }
    report.write_csv(path, { "B", "kernel", "gbs" }, rows, "%.6g")
    local f = assert(io.open(path))
    local text = f:read("a")
    f:close()
    assert.are.equal("B,kernel,gbs\n3,row,1234.57\n10,warp,0.666667\n", text)
    report.write_csv(path, { "B", "gbs" }, { { B = 3, gbs = 0.5 } })
    f = assert(io.open(path))
    text = f:read("a")
    f:close()
    os.remove(path)
    assert.are.equal("B,gbs\n3,0.5\n", text)
  end)

  it("prints ob.report and writes results with ob.finish", function()
    local out = tmpdir() .. "/out"
    local rc, text = child("ODEBENCH_OUT=" .. q(out) .. " ODEBENCH_SEED=7", [[
      local ob = require "odebench"
      local p = ob.problem("bruss2d", { N = 8 })
      local s = ob.solver { problem = p }
      local r = s:integrate { t0 = 0, t1 = 0.01, label = "child" }
      ob.report(r)
      print("seed", ob.seed())
      print("dir", ob.finish())
    ]])
    assert.are.equal(0, rc, text)
    assert.is_truthy(text:find("child", 1, true), text)
    assert.is_truthy(text:find("seed\t7", 1, true), text)
    assert.is_truthy(text:find("dir\t" .. out, 1, true), text)
    local f = io.open(out .. "/results.json")
    assert.is_truthy(f, "no results.json in " .. out)
    local json = f:read("a")
    f:close()
    assert.is_truthy(json:find('"label": "child"', 1, true), json)
    assert.is_truthy(io.open(out .. "/results.csv"))
  end)
end)
