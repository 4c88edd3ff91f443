-- user_problem_spec.lua: ob.problem{...}, a problem defined in a scenario
-- (f as a Lua function, optional CUDA C of f_j), on the CPU.

local ob = require "odebench"

-- dy_i/dt = k (y_{i-1} - 2 y_i + y_{i+1}) - y_i^2, mirrored ends, d = 1.
local function heat(n, k)
  return function(t, y, f)
    for i = 1, n do
      local l = y[i > 1 and i - 1 or 2]
      local r = y[i < n and i + 1 or n - 1]
      f[i] = k * (l - 2 * y[i] + r) - y[i] * y[i]
    end
  end
end

-- Classical RK4 with fixed h in plain Lua tables: the independent check.
local function rk4(f, y, h, steps)
  local n = #y
  local function add(a, b, c)
    local r = {}
    for i = 1, n do r[i] = a[i] + c * b[i] end
    return r
  end
  local function ev(v)
    local yv, fv = ob.vector(v), ob.vector(n)
    f(0, yv, fv)
    local r = {}
    for i = 1, n do r[i] = fv[i] end
    return r
  end
  for _ = 1, steps do
    local k1 = ev(y)
    local k2 = ev(add(y, k1, h / 2))
    local k3 = ev(add(y, k2, h / 2))
    local k4 = ev(add(y, k3, h))
    for i = 1, n do
      y[i] = y[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i])
    end
  end
  return y
end

describe("ob.problem{...} defined in a scenario", function()
  it("integrates with the plain variant like an independent RK4", function()
    local n, k = 37, 0.3
    local y0 = {}
    for i = 1, n do y0[i] = math.sin(i) * 0.5 + 0.6 end
    local p = ob.problem { name = "heat", n = n, d = 1, f = heat(n, k),
                           y0 = function(i) return y0[i] end }
    assert.are.equal(37, p.n)
    assert.are.equal(1, p.d)
    local s = ob.solver { problem = p, method = "rk4", backend = "cpu",
                          variant = "plain", h = 0.01 }
    s:integrate { t0 = 0, t1 = 0.5 }
    local ref = rk4(heat(n, k), { table.unpack(y0) }, 0.01, 50)
    local y = s:state()
    local worst = 0
    for i = 1, n do
      worst = math.max(worst, math.abs(y[i] - ref[i]) / math.abs(ref[i]))
    end
    assert.is_true(worst < 1e-13, "rel err " .. worst)
    s:close()
    p:close()
  end)

  it("refuses bad definitions with the field named", function()
    local f = function() end
    local cases = {
      { { n = 0, f = f, y0 = function() return 0 end }, "field 'n'" },
      { { n = 4, d = 5, f = f, y0 = function() return 0 end }, "field 'd'" },
      { { n = 4, y0 = function() return 0 end }, "field 'f'" },
      { { n = 4, f = f, y0 = ob.vector(3) }, "field 'y0'" },
      { { n = 4, f = f, y0 = function() return "x" end }, "field 'y0'" },
      { { n = 4, f = f, y0 = { 1, 2, 3 } }, "a list of 4 numbers, one per component, expected; got 3" },
      { { n = 2, f = f, y0 = { 1, "x" } }, "entry 2 is string" },
      { { n = 2, f = f, y0 = true }, "field 'y0'" },
      { { n = 4, f = f, y0 = ob.vector(4), params = { 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
        "field 'params'" },
      { { n = 4, f = f, y0 = ob.vector(4), colour = 1 }, "unknown field 'colour'" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(ob.problem, c[1])
      assert.is_false(ok)
      assert.is_truthy(tostring(err):find(c[2], 1, true), tostring(err))
    end
  end)

  it("keys its tunings by its label, n and the code of f", function()
    local function mk(f) return ob.problem { name = "k", n = 3, f = f, y0 = { 1, 2, 3 } } end
    local function neg() return function(t, y, f) for i = 1, 3 do f[i] = -y[i] end end end
    local a, b = mk(neg()), mk(neg())
    local c = mk(function(t, y, f) for i = 1, 3 do f[i] = y[i] end end)
    assert.is_truthy(a.key:find("^k%(n=3,d=3%) n=3 f=%x+$"), a.key)
    assert.are.equal(a.key, b.key)       -- the same code, another closure
    assert.are_not.equal(a.key, c.key)   -- other code
    assert.are.equal("bruss2d(N=8) n=128", ob.problem("bruss2d", { N = 8 }).key)
    a:close(); b:close(); c:close()
  end)

  it("takes y0 as a list of n numbers", function()
    local p = ob.problem { n = 3, f = function() end, y0 = { 1.5, -2, 3 } }
    local y = p:initial()
    assert.are.same({ 1.5, -2, 3 }, { y[1], y[2], y[3] })
    p:close()
  end)

  it("an error inside f fails the step with f's message; the state stays", function()
    local bad = true
    local f = function(t, y, out)
      if bad then error("boom") end
      for i = 1, 3 do out[i] = -y[i] end
    end
    local p = ob.problem { name = "decay", n = 3, f = f, y0 = { 1, 2, 3 } }
    -- fixed steps and adaptive steps (where NaN errors would otherwise
    -- shrink the step until it is too small)
    for _, opts in ipairs({ { method = "rk4", variant = "plain", h = 0.1 },
                            { method = "dopri5", variant = "plain" } }) do
      bad = true
      local s = ob.solver { problem = p, method = opts.method, backend = "cpu",
                            variant = opts.variant, h = opts.h }
      local ok, err = pcall(s.integrate, s, { t0 = 0, t1 = 0.3 })
      assert.is_false(ok)
      err = tostring(err)
      assert.is_truthy(err:find("f of problem decay(n=3,d=3) failed in the step at t = 0", 1, true), err)
      assert.is_truthy(err:find("user_problem_spec.lua:%d+: boom"), err)
      local y = s:state()
      assert.are.same({ 1, 2, 3 }, { y[1], y[2], y[3] })
      bad = false   -- the failure is reported once: the next call goes on
      s:integrate { t0 = 0, t1 = 0.3 }
      y = s:state()
      assert.is_true(math.abs(y[1] - math.exp(-0.3)) < 1e-5, tostring(y[1]))
      s:close()
    end
    p:close()
  end)

  it("an error inside f ends ob.tune with f's message", function()
    local p = ob.problem { n = 3, f = function() error("tuned boom") end,
                           y0 = { 1, 2, 3 } }
    local s = ob.solver { problem = p, method = "rk4", backend = "cpu",
                          variant = "plain", h = 0.1 }
    local ok, err = pcall(ob.tune, { target = s, space = { variant = { "plain", "fused" } },
                                     cache = "off", steps = 1,
                                     measure = { warmup = 0, min_reps = 1, max_reps = 1 } })
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("tuned boom", 1, true), tostring(err))
    s:close()
    p:close()
  end)
end)
