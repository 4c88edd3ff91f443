-- tstops_spec.lua: times where f jumps (ob.problem{tstops = ...},
-- s:integrate{tstops = ...}, MEDAKZO's t = 5): the integration lands on
-- each stop and starts again just after it (core/ode/odb_solver.c,
-- odb_solver_integrate_stops). tests/core/ode/test_tstops.c has the C side.
local ob = require "odebench"

local TAU = 0.3

-- y' = y up to TAU, y' = -y after (f at TAU is the first piece's):
-- y(1) = exp(2 TAU - 1).
local function kink(extra)
  local def = {
    name = "kink", n = 2, y0 = { 1, 1 },
    f = function(t, y, f)
      local g = t <= TAU and 1 or -1
      f[1], f[2] = g * y[1], g * y[2]
    end,
  }
  for k, v in pairs(extra or {}) do def[k] = v end
  return ob.problem(def)
end

local function err_at_1(s)
  local y, ex = s:state(), math.exp(2 * TAU - 1)
  return math.max(math.abs(y[1] - ex), math.abs(y[2] - ex)) / ex
end

-- The error of f(...) with its "file:line: " position taken off.
local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return (tostring(e):gsub("^[^:]*:%d+: ", ""))
end

describe("a problem's tstops", function()
  it("make a step end exactly on the stop", function()
    local s = ob.solver { problem = kink { tstops = { TAU } },
                          method = "dopri5", tol = 1e-10 }
    local landed = false
    while s.t < 0.5 do
      if s:step().t == TAU then landed = true end
    end
    assert.is_true(landed)
  end)

  it("keep the steps over the jump accurate and unrejected", function()
    local s = ob.solver { problem = kink { tstops = { TAU } },
                          method = "dopri5", tol = 1e-10 }
    local r = s:integrate { t1 = 1 }
    assert.are.equal(0, r.rejected)
    assert.is_true(err_at_1(s) < 1e-9, "error " .. err_at_1(s))
    -- the same problem without them: rejections at the jump, and worse
    local u = ob.solver { problem = kink(), method = "dopri5", tol = 1e-10 }
    local ru = u:integrate { t1 = 1 }
    assert.is_true(ru.rejected > 5, "rejected " .. ru.rejected)
    assert.is_true(err_at_1(u) > err_at_1(s))
  end)

  it("are sorted, and refused when not finite numbers", function()
    local s = ob.solver { problem = kink { tstops = { 2, TAU, -1 } },
                          method = "dopri5", tol = 1e-10 }
    assert.are.equal(0, s:integrate { t1 = 1 }.rejected)
    for _, c in ipairs {
      { { 1, "x" }, "entry 2 is a string" },
      { { 0 / 0 }, "entry 1 is nan" },
      { { 1, 1 / 0 }, "entry 2 is inf" },
      { { -1 / 0 }, "entry 1 is -inf" },
      { { true }, "entry 1 is a boolean" },
    } do
      assert.are.equal("bad argument #1 to 'problem' (field 'tstops': "
                       .. c[2] .. ", a finite number (a time) expected)",
                       err_of(kink, { tstops = c[1] })
                         :gsub("to '[^']*problem'", "to 'problem'"))
    end
    assert.are.equal("bad argument #1 to 'problem' (field 'tstops': list "
                     .. "of times expected, got number)",
                     err_of(kink, { tstops = 0.3 })
                       :gsub("to '[^']*problem'", "to 'problem'"))
  end)
end)

describe("s:integrate{tstops = ...}", function()
  it("adds stops for that call: the same bits as the problem's", function()
    local a = ob.solver { problem = kink { tstops = { TAU } },
                          method = "dopri5", tol = 1e-10 }
    local b = ob.solver { problem = kink(), method = "dopri5", tol = 1e-10 }
    local ra = a:integrate { t1 = 1 }
    local rb = b:integrate { t1 = 1, tstops = { 5, TAU } }
    local ya, yb = a:state(), b:state()
    assert.are.equal(ya[1], yb[1])
    assert.are.equal(ya[2], yb[2])
    assert.are.equal(ra.steps, rb.steps)
    -- the next call has none: its steps go over nothing of the kind
    local rc = b:integrate { t1 = 2, tstops = {} }
    assert.are.equal("ok", rc.status)
  end)

  it("ignores stops outside the span", function()
    local a = ob.solver { problem = kink(), method = "dopri5", tol = 1e-6 }
    local b = ob.solver { problem = kink(), method = "dopri5", tol = 1e-6 }
    local ra = a:integrate { t0 = 0.5, t1 = 1 }
    local rb = b:integrate { t0 = 0.5, t1 = 1, tstops = { -1, 0.2, 1.5 } }
    assert.are.equal(a:state()[1], b:state()[1])
    assert.are.equal(ra.steps, rb.steps)
  end)

  it("refuses a bad list, naming the field", function()
    local s = ob.solver { problem = kink(), method = "dopri5" }
    assert.are.equal("bad argument #2 to 'integrate' (field 'tstops': entry "
                     .. "2 is -inf, a finite number (a time) expected)",
                     err_of(s.integrate, s, { t1 = 1, tstops = { 0.5, -1 / 0 } })
                       :gsub("to '[^']*'", "to 'integrate'", 1))
    assert.are.equal(0, s.t)
  end)
end)

describe("MEDAKZO", function()
  it("over its jump at t = 5 in one call, radau2a5/A at 1e-10", function()
    -- y_200 at t = 20 against the Bari IVP test set's published value
    -- (PSIDE at 1e-10); without the declared stop this ends 1.2e-5 off
    local s = ob.solver { problem = ob.problem("medakzo"), method = "radau2a5",
                          variant = "A", backend = "cpu", tol = 1e-10 }
    local r = s:integrate { t1 = 20 }
    local ref = 0.6190822732534586e-5
    local e = math.abs(s:state()[200] - ref) / ref
    assert.are.equal("ok", r.status)
    assert.is_true(e <= 2e-7, "rel err " .. e)
  end)
end)
