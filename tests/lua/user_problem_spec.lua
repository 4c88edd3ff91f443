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

  it("an error inside f fails the integration instead of crashing", function()
    local p = ob.problem { n = 3, f = function() error("boom") end,
                           y0 = ob.vector(3) }
    local s = ob.solver { problem = p, method = "rk4", backend = "cpu",
                          variant = "plain", h = 0.1 }
    local ok = pcall(s.integrate, s, { t0 = 0, t1 = 0.3 })
    local y = s:state()
    assert.is_true(not ok or y[1] ~= y[1])   -- raised, or NaN state
    s:close()
  end)
end)
