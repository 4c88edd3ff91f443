-- hardening_solver_spec.lua: the solver, user-problem and tuner entry points
-- under misuse: a problem outliving the coroutine that made it, sizes past
-- memory, objects closed or the engine re-entered from inside f or a tuner
-- callback, steps too small to advance t, solutions that blow up, integer
-- options past their type. Cases that could crash or hang run in a child
-- lua5.4 under `timeout`, so that a failure is reported, not fatal.

local ob = require "odebench"
local H = dofile(os.getenv("ODEBENCH_SRC") .. "/tests/lua/spec_helpers.lua")

local LUA = os.getenv("ODEBENCH_LUA") or "lua5.4"

teardown(H.cleanup)

-- Runs code in a child lua5.4 (60 s at most) with extra environment env;
-- returns its exit status and its output (stdout and stderr).
local function child(code, env)
  local dir = H.tmpdir("hardening")
  local file = dir .. "/child.lua"
  local f = assert(io.open(file, "w"))
  f:write(code)
  f:close()
  local p = assert(io.popen(("cd %s && env ODEBENCH_OUT=%s %s timeout 60 %s %s "
                             .. "2>&1; echo \"rc=$?\""):format(H.q(dir),
                             H.q(dir .. "/out"), env or "", LUA, H.q(file))))
  local out = p:read("a")
  p:close()
  return tonumber(out:match("rc=(%d+)%s*$")), out:gsub("rc=%d+%s*$", "")
end

-- The output must contain the plain text.
local function has(out, text)
  assert.is_truthy(out:find(text, 1, true),
                   "output was:\n" .. out .. "\nexpected: " .. text)
end

-- pcall(f, ...) must fail with a message containing the plain text.
local function fails_with(text, f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok, "expected an error containing: " .. text)
  has(tostring(err), text)
  return tostring(err)
end

-- y' = -y on n components from y = 1, named "decay"; extra(t) runs first
-- in f when given.
local DECAY = [[
local ob = require "odebench"
local function decay(n, extra)
  return ob.problem { name = "decay", n = n, d = 1,
    f = function(t, y, out)
      if extra then extra(t) end
      for i = 1, #y do out[i] = -y[i] end
    end,
    y0 = function(i) return 1 end }
end
]]

describe("a problem made inside a coroutine", function()
  it("integrates correctly after the coroutine is collected", function()
    local rc, out = child(DECAY .. [[
      local co = coroutine.create(function() return decay(10) end)
      local _, p = coroutine.resume(co)
      co = nil
      for _ = 1, 5 do collectgarbage() end
      local s = ob.solver { problem = p, method = "dopri5", tol = 1e-8 }
      s:integrate { t0 = 0, t1 = 1 }
      local y = s:state()
      print(("y1=%.12f y10=%.12f"):format(y[1], y[10]))
    ]], "GLIBC_TUNABLES=glibc.malloc.tcache_count=0:glibc.malloc.perturb=165")
    assert.are.equal(0, rc, out)
    local y1, y10 = out:match("y1=(%S+) y10=(%S+)")
    assert.is_truthy(y1, out)
    assert.is_true(math.abs(tonumber(y1) - math.exp(-1)) < 1e-7, out)
    assert.is_true(math.abs(tonumber(y10) - math.exp(-1)) < 1e-7, out)
  end)
end)

describe("ob.problem{...} sizes", function()
  local function f() end
  local function y0() return 1 end

  it("refuses n whose bytes do not fit, naming n in full", function()
    local rc, out = child([[
      local ob = require "odebench"
      for _, n in ipairs { 2^62 // 1, math.maxinteger } do
        print(select(2, pcall(ob.problem, { n = n, d = 1, f = function() end,
                                          y0 = function() return 1 end })))
      end
    ]])
    assert.are.equal(0, rc, out)
    has(out, "field 'n': n = 4611686018427387904 would need 3.69e+19 bytes "
        .. "for the initial value, more than this machine can address")
    has(out, "field 'n': n = 9223372036854775807 would need 7.38e+19 bytes "
        .. "for the initial value, more than this machine can address")
  end)

  it("refuses n past the machine's memory before calling y0", function()
    local calls = 0
    fails_with("field 'n': n = 9007199254740992 would need 7.21e+16 bytes for "
               .. "the initial value alone, more than this machine's memory (",
               ob.problem, { n = 2^53, d = 1, f = f,
                             y0 = function() calls = calls + 1; return 1 end })
    assert.are.equal(0, calls)
  end)

  it("takes n and d only as exact integers in range", function()
    fails_with("field 'n': must be an integer in 1..9223372036854775807, got 2.5",
               ob.problem, { n = 2.5, f = f, y0 = y0 })
    fails_with("field 'n': must be in 1..9223372036854775807, got 0",
               ob.problem, { n = 0, f = f, y0 = y0 })
    fails_with("field 'n': integer expected, got string",
               ob.problem, { n = "4", f = f, y0 = y0 })
    fails_with("field 'd' (the access distance): must be in 1..4, got 5",
               ob.problem, { n = 4, d = 5, f = f, y0 = y0 })
    fails_with("field 'd' (the access distance): must be an integer in 1..4, "
               .. "got 1.5", ob.problem, { n = 4, d = 1.5, f = f, y0 = y0 })
    local p = ob.problem { n = 4.0, d = 2.0, f = f, y0 = y0 }
    assert.are.equal(4, p.n)
    assert.are.equal("integer", math.type(p.n))
    assert.are.equal(2, p.d)
  end)

  it("counts y0's components from 1 in its errors", function()
    fails_with("the function returned nil for component 3, number expected",
               ob.problem, { n = 4, f = f, y0 = function(i)
                 if i < 3 then return 1 end end })
  end)
end)

describe("closing from inside f", function()
  it("refuses s:close() of the running solver and keeps it usable", function()
    local rc, out = child(DECAY .. [[
      local s, close = nil, true
      local p = decay(10, function() if close then s:close() end end)
      s = ob.solver { problem = p, method = "dopri5", tol = 1e-8 }
      print(select(2, pcall(s.integrate, s, { t0 = 0, t1 = 1 })))
      close = false
      s:integrate { t0 = 0, t1 = 1 }
      print(("y=%.12f"):format(s:state()[1]))
    ]])
    assert.are.equal(0, rc, out)
    has(out, "f of problem decay(n=10,d=1) failed in the step at t = 0")
    has(out, "s:close cannot be called from inside f of problem 'decay'")
    assert.is_true(math.abs(tonumber(out:match("y=(%S+)")) - math.exp(-1))
                   < 1e-7, out)
  end)

  it("refuses p:close() of the problem ob.reference is solving", function()
    local rc, out = child(DECAY .. [[
      local p
      p = decay(4, function() p:close() end)
      print(select(2, pcall(ob.reference, p, { t1 = 1 })))
      print(tostring(p))
    ]])
    assert.are.equal(0, rc, out)
    has(out, "reference solution failed: f of problem decay(n=4,d=1) failed")
    has(out, "p:close cannot be called from inside f of problem 'decay'")
    has(out, "odebench.Problem(decay(n=4,d=1), n=4)")
  end)

  it("refuses __close of the running solver through coroutine.close", function()
    local rc, out = child(DECAY .. [[
      local s, co
      local p = decay(4, function()
        if co then local c = co; co = nil; print(coroutine.close(c)) end
      end)
      co = coroutine.create(function()
        local t <close> = ob.solver { problem = p, method = "dopri5" }
        s = t
        coroutine.yield()
      end)
      coroutine.resume(co)
      s:integrate { t0 = 0, t1 = 1 }
      print(("y=%.12f"):format(s:state()[1]))
    ]])
    assert.are.equal(0, rc, out)
    has(out, "false\t")
    has(out, "s:close cannot be called from inside f of problem 'decay'")
    assert.is_true(math.abs(tonumber(out:match("y=(%S+)")) - math.exp(-1))
                   < 1e-5, out)
  end)
end)

describe("re-entering the engine from a callback", function()
  it("ends s:step() and ob.reference() inside f with f's error", function()
    local rc, out = child(DECAY .. [[
      local s, p, mode
      p = decay(4, function() if mode then mode() end end)
      s = ob.solver { problem = p, method = "dopri5" }
      mode = function() ob.reference(p) end
      print(select(2, pcall(s.integrate, s, { t0 = 0, t1 = 1 })))
      mode = function() s:step() end
      print(select(2, pcall(s.integrate, s, { t0 = 0, t1 = 1 })))
      mode = function() ob.solver { problem = p } end
      print(select(2, pcall(s.step, s)))
      mode = nil
      print(("y=%.12f"):format(ob.reference(p)[1]))
    ]])
    assert.are.equal(0, rc, out)
    has(out, "ob.reference cannot be called from inside f of problem 'decay': "
        .. "the engine is in the middle of the call that runs it")
    has(out, "s:step cannot be called from inside f of problem 'decay'")
    has(out, "ob.solver cannot be called from inside f of problem 'decay'")
    local n = 0
    for _ in out:gmatch("f of problem decay%(n=4,d=1%) failed in the step") do
      n = n + 1
    end
    assert.are.equal(3, n, out)
    assert.is_true(math.abs(tonumber(out:match("y=(%S+)")) - math.exp(-1))
                   < 1e-10, out)
  end)

  it("refuses the same from f on a threaded variant's workers", function()
    local rc, out = child([[
      local ob = require "odebench"
      local p
      p = ob.problem { name = "w", n = 64, d = 1,
        f = function(t, y, out) ob.reference(p) end,
        y0 = function() return 1 end }
      local s = ob.solver { problem = p, method = "radau2a5",
                            variant = "par_D", threads = 2, h = 0.1 }
      print(select(2, pcall(s.integrate, s, { t0 = 0, t1 = 1 })))
    ]])
    assert.are.equal(0, rc, out)
    has(out, "ob.reference cannot be called from inside f of problem 'w'")
  end)

  it("ends ob.tune inside a tuner's target with a clean error", function()
    fails_with("tune: target: ", ob.tune, {
      target = function(c)
        ob.tune { target = function() return 1 end, space = { y = { 1 } } }
        return 1
      end, space = { x = { 1, 2 } } })
    fails_with("ob.tune cannot be called from inside the target of ob.tune",
               ob.tune, {
      target = function(c)
        ob.tune { target = function() return 1 end, space = { y = { 1 } } }
        return 1
      end, space = { x = { 1, 2 } } })
  end)

  it("lets a function target make and run solvers of its own", function()
    local p = ob.problem("bruss2d", { N = 8 })
    local r = ob.tune {
      target = function(c)
        local s = ob.solver { problem = p, method = "dopri5", variant = c.v }
        local res = s:integrate { t0 = 0, t1 = 0.01 }
        s:close()
        return res.status == "ok" and 1e-3 or nil, "failed"
      end, space = { v = { "plain", "fused" } } }
    assert.are.equal(2, r.stats.valid)
    assert.are.equal(2, #r.evaluations)
    assert.are.equal("ok", r.evaluations[1].status)
    assert.are.equal("ok", r.evaluations[2].status)
  end)

  it("refuses closing or stepping the tuned solver from its verify", function()
    local rc, out = child([[
      local ob = require "odebench"
      local p = ob.problem("bruss2d", { N = 8 })
      local s = ob.solver { problem = p, method = "dopri5", variant = "plain" }
      for _, act in ipairs { "close", "step", "tune" } do
        print(select(2, pcall(ob.tune, { target = s, cache = "off",
          space = { variant = { "plain", "fused" } },
          verify = function(c, y, ref)
            if act == "close" then s:close()
            elseif act == "step" then s:step()
            else ob.tune { target = function() return 1 end,
                           space = { x = { 1 } } } end
            return true
          end })))
      end
      print(tostring(s))
    ]])
    assert.are.equal(0, rc, out)
    has(out, "tune: verify: ")
    has(out, "s:close cannot be called from inside the 'verify' of ob.tune")
    has(out, "s:step cannot be called from inside the 'verify' of ob.tune")
    has(out, "ob.tune cannot be called from inside the 'verify' of ob.tune")
    has(out, "odebench.Solver(bruss2d(N=8), dopri5, plain/cpu")
  end)

  it("ends the odebench program with status 2 and f's error", function()
    local dir = H.tmpdir("hardening")
    local file = dir .. "/reenter.lua"
    local f = assert(io.open(file, "w"))
    f:write(DECAY .. [[
      local s
      local p = decay(4, function() s:step() end)
      s = ob.solver { problem = p, method = "dopri5" }
      s:integrate { t0 = 0, t1 = 1 }
    ]])
    f:close()
    local p = assert(io.popen(("timeout 60 %s --ui none --out %s %s 2>&1; "
                               .. "echo \"rc=$?\""):format(H.q(H.BIN),
                               H.q(dir .. "/out"), H.q(file))))
    local out = p:read("a")
    p:close()
    assert.are.equal(2, tonumber(out:match("rc=(%d+)%s*$")), out)
    has(out, "s:step cannot be called from inside f of problem 'decay'")
  end)
end)

describe("fixed steps too small to advance t", function()
  it("are refused up front when t0, t1 and h are known", function()
    local rc, out = child(DECAY .. [[
      local p = decay(2)
      local s = ob.solver { problem = p, method = "rk4", h = 1e-17 }
      print(select(2, pcall(s.integrate, s, { t0 = 1, t1 = 2 })))
      print(select(2, pcall(s.integrate, s, { t0 = 0, t1 = 2 })))
      s = ob.solver { problem = p, method = "rk4", h = 1e-10 }
      print(select(2, pcall(s.integrate, s, { t0 = 0, t1 = 1 })))
      s = ob.solver { problem = p, method = "rk4", h = 0.01, max_steps = 10 }
      print(select(2, pcall(s.integrate, s, { t0 = 0, t1 = 1 })))
      s = ob.solver { problem = p, method = "rk4", h = 0.1, max_steps = 10 }
      print(s:integrate { t0 = 0, t1 = 1 }.steps)
    ]])
    assert.are.equal(0, rc, out)
    has(out, "the solver's fixed step h = 1e-17 does not advance t at t = 2 "
        .. "(t + h rounds to t); give a larger h")
    has(out, "the solver's fixed step h = 1e-10 needs 10000000000 steps from "
        .. "0 to t1 = 1, more than max_steps = 100000000")
    has(out, "the solver's fixed step h = 0.01 needs 100 steps from 0 to t1 = "
        .. "1, more than max_steps = 10")
    -- the last integrate's steps, on a line of its own (a warning about
    -- rows never written by ob.finish may follow it)
    assert.is_truthy(out:find("\n10\n", 1, true), out)
  end)

  it("ends s:step(h) with a step-size error, t unchanged", function()
    local p = ob.problem { n = 2, f = function(t, y, f) end,
                           y0 = function() return 1 end }
    local s = ob.solver { problem = p, method = "rk4" }
    s:set_state({ 1, 1 }, 1)
    fails_with("step size 1e-17 does not advance t = 1 (t + h rounds to t)",
               s.step, s, 1e-17)
    assert.are.equal(1, s.t)
  end)
end)

describe("solutions that leave every finite bound", function()
  local function square(n, k)
    return ob.problem { name = "square", n = n, d = 1,
      f = function(t, y, f)
        for i = 1, n do f[i] = 0 end
        f[k] = y[k] * y[k]
      end, y0 = function() return 1 end }
  end

  it("end adaptive steps through a blow-up with a step-size error", function()
    local s = ob.solver { problem = square(1, 1), method = "dopri5" }
    local err = fails_with("below hmin", s.integrate, s, { t0 = 0, t1 = 2 })
    local t = tonumber(err:match("at t = (%S+)"))
    assert.is_true(t > 0.999 and t < 1.001, err)
  end)

  it("end fixed steps with a non-finite component anywhere", function()
    for _, v in ipairs { "plain", "fused" } do
      local s = ob.solver { problem = square(3, 2), method = "rk4", h = 0.1,
                            variant = v }
      fails_with("solution became non-finite: component 2 is inf at t = 2",
                 s.integrate, s, { t0 = 0, t1 = 2 })
    end
  end)
end)

describe("integer options", function()
  local p = ob.problem("bruss2d", { N = 8 })

  it("are refused past their type's range, never truncated", function()
    fails_with("field 'm': must be in 1..2147483647, got 4294967297",
               ob.solver, { problem = p, method = "radau2a5", m = 2^32 + 1 })
    fails_with("field 'max_steps': must be in 1..9223372036854775807, got 0",
               ob.solver, { problem = p, max_steps = 0 })
    fails_with("field 'block': must be in 0..9223372036854775807, got -1",
               ob.solver, { problem = p, block = -1 })
    local s = ob.solver { problem = p, method = "dopri5", variant = "plain" }
    fails_with("field 'steps': must be at least 1 and at most 2147483647, got "
               .. "2147483648",
               ob.tune, { target = s, space = { variant = { "plain" } },
                          steps = 2^31, cache = "off" })
    fails_with("field 'steps': integer expected, got 2.5",
               ob.tune, { target = s, space = { variant = { "plain" } },
                          steps = 2.5, cache = "off" })
    fails_with("field 'measure': min_reps must be >= 1 and at most "
               .. "2147483647, got 4294967297", ob.tune, { target = s, cache = "off",
               space = { variant = { "plain" } },
               measure = { min_reps = 2^32 + 1 } })
    fails_with("field 'measure': warmup must be >= 0 and at most 2147483647, "
               .. "got -1",
               ob.tune, { target = s, cache = "off",
               space = { variant = { "plain" } }, measure = { warmup = -1 } })
    local r = ob.tune { target = s, space = { variant = { "plain" } },
                        steps = 5, cache = "off",
                        measure = { warmup = 0, min_reps = 1, max_reps = 1 } }
    assert.are.equal(5, r.steps)
  end)

  it("refuse threads past a small multiple of the hardware threads", function()
    local err = fails_with("field 'threads': must be in 1..", ob.solver,
                           { problem = p, threads = 100000 })
    local lim, hw = err:match("1%.%.(%d+) on this machine %(4 x its (%d+) "
                              .. "hardware threads, at least 64%), got 100000")
    assert.is_truthy(lim, err)
    assert.are.equal(math.max(64, 4 * tonumber(hw)), tonumber(lim))
    fails_with("got 4294967298", ob.solver, { problem = p, threads = 2^32 + 2 })
    local s = ob.solver { problem = p, method = "radau2a5", variant = "par_D" }
    fails_with("parameter 'threads': 100000 is more than " .. lim, ob.tune,
               { target = s, space = { threads = { 1, 100000 } },
                 cache = "off" })
  end)
end)

describe("Vector indices and lengths", function()
  it("are exact integers in range, shown in full", function()
    local v = ob.vector(3)
    fails_with("Vector index must be an integer in [1, 3], got 2.5",
               function() return v[2.5] end)
    fails_with("Vector index must be an integer, got string",
               function() v["2"] = 1 end)
    fails_with("Vector index 4611686018427387904 out of range [1, 3]",
               function() return v[2^62 // 1] end)
    fails_with("length: must be an integer in 0..137438953472, got 2.5",
               ob.vector, 2.5)
    fails_with("length: must be in 0..137438953472, got -1", ob.vector, -1)
    v[2.0] = 7
    assert.are.equal(7, v[2])
  end)

  it("refuse a length past the machine's memory before allocating", function()
    fails_with("a vector of 137438953472 numbers would need",
               ob.vector, 137438953472)
    fails_with("more than this machine's memory", ob.vector, 137438953472)
  end)
end)

describe("a state at an infinite time", function()
  it("is refused by integrate instead of stepping forever", function()
    local p = ob.problem("bruss2d", { N = 8 })
    local s = ob.solver { problem = p, method = "dopri5" }
    fails_with("the current time (-inf) must be finite",
               s.integrate, s, { t0 = -math.huge, t1 = 0.01 })
  end)
end)
