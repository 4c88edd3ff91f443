-- tune_spec.lua: ob.tune on a small BRUSS2D PIRK solver and on Lua
-- functions, the tuning database through the cache option and the
-- `odebench tunedb` command, and the argument errors.

local ob = require "odebench"
local json = require "dkjson"

local BIN = os.getenv("ODEBENCH_BIN")

-- Single-quotes s for sh.
local function q(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

local made = {}

local function tmpdir()
  local p = assert(io.popen("mktemp -d /tmp/odebench-tune.XXXXXX"))
  local d = p:read("l")
  p:close()
  made[#made + 1] = d
  return d
end

teardown(function()
  for _, d in ipairs(made) do os.execute("chmod -R u+w " .. q(d) .. "; rm -rf " .. q(d)) end
end)

-- Runs a shell command; returns its exit status and output.
local function sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1; echo \"rc=$?\""))
  local out = p:read("a")
  p:close()
  return tonumber(out:match("rc=(%d+)%s*$")), out:gsub("rc=%d+%s*$", "")
end

local function fails_with(text, f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok, "expected an error containing: " .. text)
  assert.is_truthy(tostring(err):find(text, 1, true),
                   "error was: " .. tostring(err) .. "\nexpected: " .. text)
  return err
end

local function file_bytes(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- A small PIRK solver: BRUSS2D N=8 (n = 128), Radau IA(5).
local function pirk()
  local p = ob.problem("bruss2d", { N = 8 })
  return ob.solver { problem = p, method = "radau1a5", variant = "A", tol = 1e-6 }
end

local quick = { warmup = 0, min_reps = 2, max_reps = 3 }

-- A problem defined in a scenario, named "heatish" whatever its f and source.
local function heatish(f, src)
  return ob.problem { name = "heatish", n = 64, d = 1, y0 = function(i) return i end,
                      f = f or function(t, y, f) for i = 1, 64 do f[i] = -y[i] end end,
                      gpu_source = src }
end

-- Tunes rk4 on p over {plain, fused} with the database db; the result.
local function tune_in(db, p)
  local s = ob.solver { problem = p, method = "rk4", backend = "cpu", variant = "plain", h = 1e-3 }
  local t = ob.tune { target = s, space = { variant = { "plain", "fused" } }, steps = 1,
                      cache = db, measure = quick }
  s:close()
  return t
end

describe("ob.tune on a solver", function()
  it("searches variant x block exhaustively, verifying every one", function()
    local s = pirk()
    local t = ob.tune { target = s, steps = 1, cache = "off", measure = quick,
                        space = { variant = { "A", "E", "D", "Dblock", "fused" },
                                  block = { 16, 64 } } }
    -- 'fused' is an explicit RK variant: it does not apply, so 8 of 10
    assert.are.equal(8, t.stats.valid)
    assert.are.equal(10, t.stats.raw)
    assert.are.equal(8, #t.evaluations)
    assert.are.equal(8, t.stats.measured)
    local best
    for _, e in ipairs(t.evaluations) do
      assert.are.equal("ok", e.status)
      assert.is_true(e.err <= e.tol, e.config_str)
      assert.is_true(e.tol > 0 and e.tol < 1e-10)
      assert.is_true(e.median > 0 and e.reps >= 2)
      assert.is_not.equal("fused", e.config.variant)
      if not best or e.median < best.median then best = e end
    end
    assert.are.equal(best.config_str, t.best_config)
    assert.are.same(best.config, t.best)
    assert.are.equal(best.median, t.best_median)
    assert.are.equal(1, t.steps)
    assert.is_true(t.h > 0)
    -- the tied ones are ok evaluations within the spread of the best
    for i, c in ipairs(t.tied_configs) do
      assert.is_not.equal(t.best_config, c)
      assert.are.equal("table", type(t.tied[i]))
    end
    -- the solver itself is untouched
    assert.are.equal("A", s.variant)
    assert.are.equal(0, s.t)
  end)

  it("honours where, budgets and strategies", function()
    local s = pirk()
    local space = { variant = { "A", "E", "D", "Dblock" }, block = { pow2 = { 8, 64 } } }
    local t = ob.tune { target = s, space = space, steps = 1, cache = "off", measure = quick,
                        where = function(c) return c.variant == "Dblock" or c.block == 8 end }
    assert.are.equal(3 + 4, t.stats.valid)
    for _, e in ipairs(t.evaluations) do
      assert.is_true(e.config.variant == "Dblock" or e.config.block == 8)
    end
    for _, strategy in ipairs { "random", "anneal" } do
      local r = ob.tune { target = s, space = space, strategy = strategy, seed = 3,
                          budget = { evals = 5 }, steps = 1, cache = "off", measure = quick }
      assert.are.equal(5, #r.evaluations, strategy)
      assert.are.equal(strategy, r.strategy)
      assert.are.equal(3, r.stats.seed)
      local seen = {}
      for _, e in ipairs(r.evaluations) do
        assert.is_nil(seen[e.config_str], "repeated " .. e.config_str)
        seen[e.config_str] = true
      end
    end
    local r = ob.tune { target = s, space = space, budget = { seconds = 1e-9 },
                        steps = 1, cache = "off", measure = quick }
    assert.is_true(#r.evaluations <= 1)
  end)

  it("rejects a configuration that fails verification and never picks it", function()
    local s = pirk()
    local t = ob.tune { target = s, steps = 1, cache = "off", measure = quick,
                        space = { variant = { "A", "E", "D" } },
                        verify = function(c, y, ref)
                          assert.are.equal(128, #y)
                          local err = y:max_rel_err(ref)
                          if c.variant == "E" then return false, 0.5, 1e-12 end
                          return err < 1e-12, err, 1e-12
                        end }
    assert.are.equal(1, t.stats.rejected)
    for _, e in ipairs(t.evaluations) do
      if e.config.variant == "E" then
        assert.are.equal("rejected", e.status)
        assert.are.equal(0.5, e.err)
        assert.is_truthy(e.message:find("exceeds the tolerance", 1, true))
        assert.is_nil(e.median)
      end
    end
    assert.is_not.equal("E", t.best.variant)
  end)

  it("stores every evaluation and reuses it (cache = path)", function()
    local dir = tmpdir()
    local db = dir .. "/t.db"
    local s = pirk()
    local args = { target = s, space = { variant = { "A", "E" }, block = { 16, 32 } },
                   steps = 1, cache = db, measure = quick }
    local first = ob.tune(args)
    assert.are.equal(4, first.stats.measured)
    assert.are.equal(0, first.stats.cached)
    assert.are.equal(db, first.cache)
    local again = ob.tune(args)
    assert.are.equal(4, again.stats.cached)
    assert.are.equal(0, again.stats.measured)
    assert.are.equal(first.best_config, again.best_config)
    for _, e in ipairs(again.evaluations) do assert.is_true(e.cached) end
    if BIN then
      local rc, out = sh(q(BIN) .. " tunedb list --db " .. q(db))
      assert.are.equal(0, rc, out)
      assert.is_truthy(out:find("bruss2d(N=8) n=128 | radau1a5 m=4 | solver/cpu", 1, true), out)
      rc, out = sh(q(BIN) .. " tunedb show 1 --db " .. q(db))
      assert.are.equal(0, rc, out)
      assert.is_truthy(out:find(first.best_config, 1, true))
      rc, out = sh(q(BIN) .. " tunedb export --json --db " .. q(db) .. " 2>/dev/null")
      assert.are.equal(0, rc, out)
      local doc = json.decode(out)
      assert.are.equal(1, #doc.targets)
      assert.are.equal(4, #doc.targets[1].evaluations)
      rc, out = sh(q(BIN) .. " tunedb export --csv --db " .. q(db))
      assert.are.equal(0, rc)
      assert.are.equal(5, select(2, out:gsub("\n", "")))
      rc, out = sh(q(BIN) .. " tunedb show 7 --db " .. q(db))
      assert.are.equal(2, rc)
      assert.is_truthy(out:find("no target 7", 1, true))
      rc, out = sh(q(BIN) .. " tunedb prune --db " .. q(db))
      assert.are.equal(2, rc)
      rc, out = sh(q(BIN) .. " tunedb prune --version-mismatch --db " .. q(db))
      assert.are.equal(0, rc, out)
      assert.is_truthy(out:find("removed 0 target(s)", 1, true))
    end
  end)

  it("keeps problems defined in a scenario apart by their GPU source", function()
    local db = tmpdir() .. "/src.db"
    local function user(src) return heatish(nil, src) end
    local function tune(p) return tune_in(db, p) end
    local a = "__device__ double odb_rhs(odb_idx j, double t, const double *y) { return -y[j]; }"
    local b = "__device__ double odb_rhs(odb_idx j, double t, const double *y) { return -2.0 * y[j]; }"
    assert.are.equal(0, tune(user(a)).stats.cached)
    assert.are.equal(2, tune(user(a)).stats.cached)     -- same source: reused
    assert.are.equal(0, tune(user(b)).stats.cached)     -- same label, new source
  end)

  it("keeps problems defined in a scenario apart by the code of their f", function()
    local db = tmpdir() .. "/f.db"
    local function user(f) return heatish(f) end
    local function decay() return function(t, y, f) for i = 1, 64 do f[i] = -y[i] end end end
    local function tune(p) return tune_in(db, p) end
    assert.are.equal(0, tune(user(decay())).stats.cached)
    assert.are.equal(2, tune(user(decay())).stats.cached)   -- the same code: reused
    assert.are.equal(0, tune(user(function(t, y, f)          -- same label, other code
      for i = 1, 64 do f[i] = -y[i] * y[i] end end)).stats.cached)
  end)

  it("refuses a corrupt or write-protected cache file and leaves it alone", function()
    local dir = tmpdir()
    local junk = dir .. "/junk.db"
    local f = assert(io.open(junk, "wb"))
    f:write("not a database at all\n")
    f:close()
    local s = pirk()
    fails_with("corrupt or not a database", ob.tune,
               { target = s, space = { variant = { "A" } }, cache = junk })
    assert.are.equal("not a database at all\n", file_bytes(junk))
    local ro = dir .. "/ro.db"
    ob.tune { target = s, space = { variant = { "A" } }, cache = ro, steps = 1, measure = quick }
    -- ob.tune has closed the database: no write-ahead log is left for the
    -- collector to fold into the file later.
    assert.is_nil(io.open(ro .. "-wal", "rb"))
    local before = file_bytes(ro)
    os.execute("chmod 0444 " .. q(ro))
    fails_with("write-protected", ob.tune,
               { target = s, space = { variant = { "A", "E" } }, cache = ro })
    collectgarbage()
    collectgarbage()
    assert.are.equal(before, file_bytes(ro))
  end)
end)

describe("ob.tune on a function", function()
  it("minimizes what the function returns", function()
    local calls = 0
    local t = ob.tune { target = function(c) calls = calls + 1; return 1 + (c.x - 7) ^ 2 + #c.s end,
                        space = { x = { min = 0, max = 12, step = 1 }, s = { "aa", "b" } },
                        measure = { warmup = 0, min_reps = 1, max_reps = 1 } }
    assert.are.equal(26, #t.evaluations)
    assert.are.equal(26, calls)
    assert.are.equal("s=b x=7", t.best_config)
    assert.are.equal(2, t.best_median)
    assert.are.equal("function", t.evaluations[1].status == "ok" and "function" or "?")
  end)

  it("times a function that returns nothing, and records refusals", function()
    local t = ob.tune { target = function(c)
                          if c.n == 3 then return nil, "three is not allowed" end
                        end,
                        space = { n = { 1, 2, 3 } }, measure = quick }
    assert.are.equal(1, t.stats.failed)
    for _, e in ipairs(t.evaluations) do
      if e.config.n == 3 then
        assert.are.equal("failed", e.status)
        assert.is_truthy(e.message:find("three is not allowed", 1, true))
      else
        assert.are.equal("ok", e.status)
        assert.is_true(e.median >= 0)
      end
    end
  end)

  it("reports configurations whose medians lie within the spread as tied", function()
    local k = 0
    local jitter = { 0.98, 1.0, 1.02 }
    local base = { a = 1e-3, b = 1.004e-3, c = 3e-3 }
    local t = ob.tune { target = function(c) k = k + 1; return base[c.v] * jitter[k % 3 + 1] end,
                        space = { v = { "a", "b", "c" } },
                        measure = { warmup = 0, min_reps = 3, max_reps = 3 } }
    assert.are.equal("v=a", t.best_config)
    assert.are.same({ "v=b" }, t.tied_configs)
  end)

  it("raises the errors of the Lua callbacks with their position", function()
    fails_with("tune_spec.lua", ob.tune,
               { target = function() error("target broke") end, space = { x = { 1 } } })
    fails_with("where: ", ob.tune,
               { target = function() return 1 end, space = { x = { 1 } },
                 where = function() error("where broke") end })
    fails_with("must return seconds", ob.tune,
               { target = function() return "soon" end, space = { x = { 1 } } })
  end)
end)

describe("ob.tune argument errors", function()
  local s

  before_each(function() s = s or pirk() end)

  it("names the field and what is allowed", function()
    fails_with("field 'target' is required", ob.tune, { space = { x = { 1 } } })
    fails_with("field 'target': Solver or function expected, got number", ob.tune,
               { target = 3, space = { x = { 1 } } })
    fails_with("field 'space': the space is empty", ob.tune, { target = s, space = {} })
    fails_with("field 'space': table expected", ob.tune, { target = s })
    fails_with("field 'where': the constraints leave no valid configuration", ob.tune,
               { target = s, space = { variant = { "A", "E" } }, cache = "off",
                 where = function() return false end })
    fails_with("field 'space': the constraints leave no valid configuration", ob.tune,
               { target = s, space = { variant = { "fused", "plain" } }, cache = "off" })
    fails_with("unknown strategy 'genetic' (allowed: exhaustive, random, anneal", ob.tune,
               { target = s, space = { variant = { "A" } }, strategy = "genetic" })
    fails_with("field 'budget': evals must be a positive integer, got 0", ob.tune,
               { target = s, space = { variant = { "A" } }, budget = { evals = 0 } })
    fails_with("field 'budget': seconds must be positive", ob.tune,
               { target = s, space = { variant = { "A" } }, budget = { seconds = 0 } })
    fails_with("field 'budget': give evals and/or seconds", ob.tune,
               { target = s, space = { variant = { "A" } }, budget = {} })
    fails_with("unknown field 'evls'", ob.tune,
               { target = s, space = { variant = { "A" } }, budget = { evls = 3 } })
    fails_with("parameter 'm' (corrector steps) changes the method's order", ob.tune,
               { target = s, space = { m = { 2, 3 } } })
    fails_with("unknown parameter 'tile' for a solver target (allowed: variant, block, threads)",
               ob.tune, { target = s, space = { tile = { 2, 3 } } })
    fails_with("unknown variant 'Z'", ob.tune, { target = s, space = { variant = { "A", "Z" } } })
    fails_with("the values must be all integers or all strings", ob.tune,
               { target = s, space = { block = { 8, "x" } } })
    fails_with("needs a list of values, {min =, max = [, step =]} or {pow2 = {lo, hi}}",
               ob.tune, { target = s, space = { block = { lo = 1 } } })
    fails_with("pow2 = {lo, hi} takes two integers", ob.tune,
               { target = s, space = { block = { pow2 = { 8 } } } })
    fails_with("no power of two in [5, 7]", ob.tune,
               { target = s, space = { block = { pow2 = { 5, 7 } } } })
    fails_with("step must be positive", ob.tune,
               { target = s, space = { block = { min = 1, max = 8, step = 0 } } })
    fails_with("field 'verify': a function target has no reference", ob.tune,
               { target = function() end, space = { x = { 1 } }, verify = true })
    fails_with("fields 'steps' and 'h' apply to solver targets only", ob.tune,
               { target = function() end, space = { x = { 1 } }, steps = 2 })
    fails_with("field 'steps': must be at least 1", ob.tune,
               { target = s, space = { variant = { "A" } }, steps = 0 })
    fails_with("unknown field 'budgets'", ob.tune,
               { target = s, space = { variant = { "A" } }, budgets = 3 })
    fails_with("field 'measure': max_reps must be >= 1", ob.tune,
               { target = s, space = { variant = { "A" } }, measure = { max_reps = 0 } })
  end)
end)
