-- measure_spec.lua: repeated measurement (lua/odb_lua_measure.c over
-- core/rt/odb_measure.c): the fields of a timed row, the measure option
-- and its errors, odebench --measure, and rankings that mark ties
-- (lua/odebench/report.lua). Only invariants of the figures are asserted
-- (q1 <= median <= q3, reps within the bounds), never a time.
local ob = require "odebench"
local report = require "odebench.report"

local H = dofile(assert(os.getenv("ODEBENCH_SRC"), "set ODEBENCH_SRC")
                 .. "/tests/lua/spec_helpers.lua")
teardown(H.cleanup)

-- The fields every timed row carries, with their invariants.
local function check_row(r, lo, hi)
  assert.is_number(r.median)
  assert.is_true(r.q1 <= r.median and r.median <= r.q3,
                 ("q1 %g, median %g, q3 %g"):format(r.q1, r.median, r.q3))
  assert.are.equal((r.q3 - r.q1) / r.median, r.spread)
  assert.is_true(math.type(r.reps) == "integer" and r.reps >= lo and r.reps <= hi,
                 "reps " .. tostring(r.reps))
end

local function kernel()
  return ob.kernel("tsmm", { M = 2, N = 2, K = 1000, backend = "cpu", threads = 1 })
end

describe("timed rows", function()
  it("k:time returns the median and a row with q1, q3, spread and reps", function()
    local k <close> = kernel()
    local sec, gf, row = k:time { min_reps = 4, max_reps = 6, warmup = 0 }
    check_row(row, 4, 6)
    assert.are.equal(sec, row.median)
    assert.are.equal(sec, row.seconds)
    assert.are.equal(gf, row.gflops)
    assert.are.equal("kernel", row.kind)
    -- a count is exactly that many runs
    local _, _, r3 = k:time(3)
    assert.are.equal(3, r3.reps)
  end)

  it("k:compare's speed-up range holds the ratio of the medians", function()
    local k <close> = kernel()
    local s1, _, s2, _, q, row = k:compare { min_reps = 5, max_reps = 5 }
    assert.are.equal(5, row.reps)
    assert.are.equal(s2 / s1, q[2])
    assert.is_true(q[1] <= q[2] and q[2] <= q[3])
    assert.are.equal(row.peer_median, s2)
    assert.are.equal(row.speedup, q[2])
  end)

  it("m:bench and t:bench rows carry the same fields", function()
    local m <close> = ob.batched { n = 64, block = 4 }
    m:random { seed = 1 }
    local r = m:bench { op = "gemv", measure = { min_reps = 3, max_reps = 4 } }
    check_row(r, 3, 4)
    assert.are.equal("batched", r.kind)
    assert.are.equal(r.median, r.seconds)
    assert.is_true(r.best <= r.median)
    local t <close> = ob.blocktridiag { lines = 4, length = 8, block = 2 }
    local f = t:bench { op = "factor", reps = 2 }
    assert.are.equal(2, f.reps)
    assert.are.equal("blocktridiag", f.kind)
  end)
end)

describe("s:integrate", function()
  local function solver(extra)
    local o = { problem = ob.problem("bruss2d", { N = 6 }), method = "dopri5",
                variant = "plain", tol = 1e-6 }
    for k, v in pairs(extra or {}) do o[k] = v end
    return ob.solver(o)
  end

  it("a row has median, q1, q3, spread and reps within measure's bounds", function()
    local s <close> = solver()
    local r = s:integrate { t0 = 0, t1 = 0.05,
                            measure = { min_reps = 4, max_reps = 6, warmup = 0 } }
    check_row(r, 4, 6)
    assert.are.equal(r.median, r.seconds)
    assert.are.equal(r.median / r.steps, r.time_per_step)
    assert.are.equal("solve", r.kind)
  end)

  it("ob.solver's measure applies to every integrate, the call's over it", function()
    local s <close> = solver { measure = { min_reps = 2, max_reps = 2 } }
    assert.are.equal(2, s:integrate { t0 = 0, t1 = 0.01 }.reps)
    assert.are.equal(5, s:integrate { t0 = 0, t1 = 0.01,
                                      measure = { min_reps = 5, max_reps = 5 } }.reps)
  end)

  it("repeated runs end in exactly the state of one run", function()
    local once <close> = solver()
    local r1 = once:integrate { t0 = 0, t1 = 0.2, measure = { min_reps = 1, max_reps = 1,
                                                               warmup = 0 } }
    assert.are.equal(1, r1.reps)
    local many <close> = solver()
    local r9 = many:integrate { t0 = 0, t1 = 0.2, measure = { min_reps = 9, max_reps = 9 } }
    assert.are.equal(9, r9.reps)
    local a, b = once:state(), many:state()
    for i = 1, #a do assert.are.equal(a[i], b[i]) end
    assert.are.equal(once.t, many.t)
    assert.are.equal(r1.steps, r9.steps)
    assert.are.equal(r1.nfev, r9.nfev)
    -- a continuation from the current state repeats from that state too
    local c1 = once:integrate { t1 = 0.3, measure = { min_reps = 1, max_reps = 1, warmup = 0 } }
    local c9 = many:integrate { t1 = 0.3, measure = { min_reps = 9, max_reps = 9 } }
    a, b = once:state(), many:state()
    for i = 1, #a do assert.are.equal(a[i], b[i]) end
    assert.are.equal(c1.steps, c9.steps)
  end)

  it("a first run that alone spends the budget is the only one", function()
    local s <close> = solver()
    local r = s:integrate { t0 = 0, t1 = 0.05,
                            measure = { min_reps = 5, max_seconds = 1e-9 } }
    assert.are.equal(1, r.reps)
    assert.are.equal(0, r.spread)
  end)

  it("refuses bad measure values on ob.solver and s:integrate", function()
    local ok, e = pcall(solver, { measure = { max_reps = 0 } })
    assert.is_false(ok)
    assert.matches("bad argument #1 to 'solver' (field 'measure.max_reps': "
                   .. "must be an integer in 1..1000, got 0)", e, 1, true)
    local s <close> = solver()
    ok, e = pcall(function()
      return s:integrate { t1 = 0.01, measure = { target_spread = 0 } }
    end)
    assert.is_false(ok)
    assert.matches("bad argument #1 to 'integrate' (field 'measure.target_spread': "
                   .. "must be a number in (0, 1], got 0)", e, 1, true)
    ok, e = pcall(s.integrate, s, { t1 = 0.01, measure = "fast" })
    assert.is_false(ok)
    assert.matches("field 'measure': table expected, got string", e, 1, true)
  end)
end)

describe("measure = {...}", function()
  local function err_of(opts)
    local k <close> = kernel()
    local ok, e = pcall(k.time, k, opts)
    assert.is_false(ok)
    return e
  end

  it("refuses bad values with the field, what is allowed and the value", function()
    assert.matches("field 'measure.min_reps': must be an integer in 1..1000, got 0",
                   err_of { min_reps = 0 }, 1, true)
    assert.matches("field 'measure.max_reps': must be an integer in 1..1000, got 2.5",
                   err_of { max_reps = 2.5 }, 1, true)
    assert.matches("field 'measure.warmup': must be an integer in 0..100, got -1",
                   err_of { warmup = -1 }, 1, true)
    assert.matches("field 'measure.max_seconds': must be a number in (0, 86400], got 0.0",
                   err_of { max_seconds = 0.0 }, 1, true)
    assert.matches("field 'measure.target_spread': must be a number in (0, 1], got 2",
                   err_of { target_spread = 2 }, 1, true)
    assert.matches("field 'measure.min_reps': number expected, got string",
                   err_of { min_reps = "3" }, 1, true)
    assert.matches("field 'measure': unknown field 'reps' (allowed: warmup, "
                   .. "min_reps, max_reps, max_seconds, target_spread)",
                   err_of { reps = 3 }, 1, true)
    assert.matches("field 'measure': min_reps (5) must be at most max_reps (2)",
                   err_of { min_reps = 5, max_reps = 2 }, 1, true)
  end)

  it("refuses a measure that is not a table on the bench calls", function()
    local m <close> = ob.batched { n = 8, block = 2 }
    m:random {}
    local ok, e = pcall(m.bench, m, { op = "gemv", measure = 3 })
    assert.is_false(ok)
    assert.matches("field 'measure': table expected, got number", e, 1, true)
  end)
end)

describe("rankings", function()
  it("ob.tied and report.tied agree: within the larger spread", function()
    assert.is_true(ob.tied(1.57e-4, 0.05, 1.62e-4, 0.04))
    assert.is_false(ob.tied(1.57e-4, 0.01, 1.62e-4, 0.01))
    assert.is_true(report.tied(1.57e-4, 0.05, 1.62e-4, 0.04))
    assert.is_false(report.tied(1.57e-4, 0.01, 1.62e-4, 0.01))
    assert.is_true(ob.tied({ median = 1, spread = 0.1 }, { median = 1.05, spread = 0 }))
  end)

  it("prints two tied medians as tied and orders the rest", function()
    local rows = {
      { label = "D", median = 3.0e-4, spread = 0.01 },
      { label = "A", median = 1.62e-4, spread = 0.04 },
      { label = "E", median = 1.57e-4, spread = 0.05 },
    }
    local text, groups = report.ranking(rows)
    assert.are.equal("E = A < D", text)
    assert.are.equal(2, #groups)
  end)

  it("ob.report ranks the solve rows of one label with ties", function()
    local text = report.format {
      { kind = "solve", label = "n=8", method = "m", variant = "a", steps = 1,
        time_per_step = 1.00e-3, spread = 0.05, reps = 5 },
      { kind = "solve", label = "n=8", method = "m", variant = "b", steps = 1,
        time_per_step = 1.02e-3, spread = 0.01, reps = 5 },
      { kind = "solve", label = "n=8", method = "m", variant = "c", steps = 1,
        time_per_step = 2.00e-3, spread = 0.01, reps = 5 },
    }
    assert.matches("n=8, time per step: a/m = b/m < c/m", text, 1, true)
    assert.matches("5.0%", text, 1, true)
  end)
end)

describe("odebench --measure", function()
  it("reaches every row: reps in results.csv", function()
    local dir = H.tmpdir("measure")
    local cmd = ("cd %s && env -u LD_PRELOAD %s measure_rows.lua --ui none -q "
                 .. "--measure min_reps=7,max_reps=7 --out %s/run >%s/log 2>&1")
                :format(H.q(H.FIX), H.q(H.BIN), H.q(dir), H.q(dir))
    assert.is_true(H.sh_ok(cmd), H.slurp(dir .. "/log"))
    local csv = assert(H.slurp(dir .. "/run/results.csv"))
    local lines = {}
    for l in csv:gmatch("[^\n]+") do
      if l:sub(1, 1) ~= "#" then lines[#lines + 1] = l end   -- the context
    end
    local head, col = {}, nil
    for name in lines[1]:gmatch("[^,]+") do head[#head + 1] = name end
    for i, name in ipairs(head) do if name == "reps" then col = i end end
    assert.is_number(col, lines[1])
    local kinds = {}
    for i = 2, #lines do
      local cells = {}
      for c in (lines[i] .. ","):gmatch("([^,]*),") do cells[#cells + 1] = c end
      kinds[#kinds + 1] = cells[1]
      assert.are.equal("7", cells[col], lines[i])
    end
    assert.are.same({ "kernel", "solve" }, kinds)
  end)

  it("refuses a bad value with exit status 2", function()
    local dir = H.tmpdir("measure")
    local cmd = ("cd %s && env -u LD_PRELOAD %s measure_rows.lua --ui none "
                 .. "--measure max_seconds=-1 --out %s/run >%s/log 2>&1")
                :format(H.q(H.FIX), H.q(H.BIN), H.q(dir), H.q(dir))
    local _, _, code = os.execute(cmd)
    assert.are.equal(2, code)
    assert.matches("odebench: --measure: max_seconds must be a number in (0, 86400], got -1",
                   H.slurp(dir .. "/log"), 1, true)
  end)
end)
