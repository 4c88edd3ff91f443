-- online_spec.lua: ob.tune with the strategies "online" (tuning during the
-- first steps of a real integration) and "model" (the working-set model's
-- block sizes), and their argument errors.

local ob = require "odebench"

local function fails_with(text, f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok, "expected an error containing: " .. text)
  assert.is_truthy(tostring(err):find(text, 1, true),
                   "error was: " .. tostring(err) .. "\nexpected: " .. text)
  return err
end

-- BRUSS2D N=16 (n = 512, d = 32), Radau IA(5); h fixes the steps.
local function pirk(h)
  local p = ob.problem("bruss2d", { N = 16 })
  return ob.solver { problem = p, method = "radau1a5", variant = "A", tol = 1e-6, h = h }, p
end

local space = { variant = { "A", "E", "Dblock", "PipeDb2mt", "ppDb1mt" },
                block = { 16, 32, 64, 128 } }
local function where(c)
  if c.variant == "A" or c.variant == "E" then return c.block == 16 end
  if c.variant == "ppDb1mt" then return c.block >= 32 end
  return true
end

describe("ob.tune strategy 'online'", function()
  it("tunes during the first steps, then the solver runs the winner", function()
    local s = pirk(1e-3)
    local t = ob.tune { target = s, space = space, where = where, strategy = "online",
                        t1 = 0.2 }
    local o = t.online
    assert.are.equal("online", t.strategy)
    assert.is_true(o.tuning_steps > 0 and o.attempts >= o.tuning_steps)
    assert.is_true(o.evaluated >= 5 and o.evaluated <= t.stats.valid)
    assert.is_true(o.best_step > 0 and o.seconds > 0)
    assert.is_true(o.overhead_steps == o.overhead_steps)   -- not NaN
    -- the solver moved on by the tuning steps and runs the winner
    assert.is_true(s.t > 0 and s.t < 0.2)
    assert.is_truthy(o.winner:find("variant=" .. s.variant, 1, true))
    for _, e in ipairs(t.evaluations) do
      if e.status == "ok" and e.err then assert.is_true(e.err <= e.tol, e.config_str) end
    end
    -- the rest of the integration, then the same as variant A all along
    s:integrate { t1 = 0.2 }
    local a = pirk(1e-3)
    a:integrate { t1 = 0.2 }
    assert.is_true(s:state():max_rel_err(a:state()) < 1e-12)
  end)

  it("stops tuning at t1 when the interval is short", function()
    local s = pirk(1e-3)
    local t = ob.tune { target = s, space = space, where = where, strategy = "online",
                        t1 = 0.004, measure = { warmup = 0 } }
    assert.are.equal(0.004, s.t)
    assert.is_false(t.online.finished)
    assert.is_true(t.online.tuning_steps <= 4)
  end)

  it("rejects a candidate that fails its check (custom verify)", function()
    local s = pirk(1e-3)
    local t = ob.tune { target = s, strategy = "online", t1 = 0.1,
                        space = { variant = { "A", "E", "Dblock" }, block = { 64 } },
                        verify = function(c, y, ref)
                          if c.variant == "E" then return false, 0.5, 1e-12 end
                          local err = y:max_rel_err(ref)
                          return err < 1e-12, err, 1e-12
                        end }
    assert.are.equal(1, t.online.rejected)
    assert.is_not.equal("E", s.variant)
    for _, e in ipairs(t.evaluations) do
      if e.config.variant == "E" then assert.are.equal("rejected", e.status) end
    end
  end)

  it("prunes barrier classes with a given barrier cost", function()
    local s = pirk()
    local t = ob.tune { target = s, strategy = "online", t1 = 1, barrier = 1.0,
                        space = { variant = { "par_A", "par_D", "par_ppDb1mt" },
                                  threads = { 2 } } }
    assert.are.equal(2, t.online.pruned)
    assert.are.equal("par_ppDb1mt", s.variant)
  end)

  it("refuses what does not apply", function()
    local s = pirk()
    fails_with("the target must be a Solver", ob.tune,
               { target = function() return 1 end, space = { x = { 1 } }, strategy = "online" })
    fails_with("field 'h'", ob.tune, { target = s, space = space, strategy = "online", h = 1e-3 })
    fails_with("field 'steps'", ob.tune, { target = s, space = space, strategy = "online",
                                           steps = 0 })
    fails_with("only warmup", ob.tune, { target = s, space = space, strategy = "online",
                                         measure = { min_reps = 3 } })
    fails_with("field 't1'", ob.tune, { target = s, space = space, strategy = "online", t1 = 0 })
    fails_with("field 'hopeless'", ob.tune, { target = s, space = space, strategy = "online",
                                              hopeless = 1 })
    fails_with("field 'barrier'", ob.tune, { target = s, space = space, strategy = "online",
                                             barrier = -1 })
    fails_with("applies to strategy 'online' only", ob.tune,
               { target = s, space = space, t1 = 1 })
    fails_with("\"full\" applies to strategy 'online'", ob.tune,
               { target = s, space = space, verify = "full" })
    fails_with("no valid configuration", ob.tune,
               { target = s, space = { variant = { "fused" } }, strategy = "online" })
    assert.are.equal(0, s.t)       -- nothing ran
  end)

  it("checks every component with verify = 'full'", function()
    local s = pirk(1e-3)
    local t = ob.tune { target = s, space = space, where = where, strategy = "online",
                        t1 = 0.1, verify = "full" }
    assert.is_false(t.online.windowed)
    assert.is_true(t.online.evaluated >= 5)
  end)
end)

describe("ob.tune strategy 'model'", function()
  it("searches the model's block sizes with fewer evaluations", function()
    local s = pirk()
    local quick = { warmup = 0, min_reps = 2, max_reps = 3 }
    local sp = { variant = { "Dblock", "PipeDb2mt" }, block = { min = 8, max = 512, step = 8 } }
    local ex = ob.tune { target = s, space = sp, steps = 1, cache = "off", measure = quick,
                         strategy = "exhaustive", budget = { evals = 8 } }
    local mo = ob.tune { target = s, space = sp, steps = 1, cache = "off", measure = quick,
                         strategy = "model" }
    assert.are.equal(128, mo.stats.valid)
    assert.is_true(mo.stats.evals >= 2 and mo.stats.evals <= 20, mo.stats.evals)
    assert.is_truthy(mo.best_config:find("block=", 1, true))
    for _, e in ipairs(mo.evaluations) do
      assert.are.equal(0, e.config.block % 8)
    end
    assert.are.equal(8, ex.stats.evals)
  end)

  it("needs a solver", function()
    fails_with("needs a solver target", ob.tune,
               { target = function() return 1e-3 end, space = { block = { 1, 2 } },
                 strategy = "model" })
  end)
end)
