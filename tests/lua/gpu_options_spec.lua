-- gpu_options_spec.lua: the options of the multi-block GPU tiling and of
-- the barrier benchmark are checked before any GPU is needed, and the GPU
-- scenarios end cleanly (exit 0, a note) on a machine without one.

local ob = require "odebench"
local H = dofile(os.getenv("ODEBENCH_SRC") .. "/tests/lua/spec_helpers.lua")

teardown(H.cleanup)

-- pcall of f and its error text.
local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok)
  return tostring(e)
end

describe("gpu_multiblock tiling options", function()
  local p = ob.problem("bruss2d", { N = 8 })
  local function solver(tiling)
    return ob.solver { problem = p, method = "bs3", backend = "cpu",
                       variant = "plain", h = 0.01, tiling = tiling }
  end

  it("refuses out-of-range and misspelt fields with the field named", function()
    local cases = {
      { { threads = 7 }, "field 'tiling.threads': must be in 32..1024, got 7" },
      { { threads = 96 }, "field 'tiling.threads': must be a power of two" },
      { { comps = 9 }, "field 'tiling.comps': must be in 1..8, got 9" },
      { { blocks = 0 }, "field 'tiling.blocks': must be in 1..8, got 0" },
      { { barrier = "D" }, "field 'tiling.barrier': must be \"A\", \"B\" or \"C\"" },
      { { stride = "AB" }, "field 'tiling.stride'" },
      { { persistent = 1 }, "field 'tiling.persistent': must be a boolean" },
      { { early = 0 }, "field 'tiling.early': must be a boolean" },
      { { cluster = 3 }, "field 'tiling.cluster': must be 1, 2, 4 or 8" },
      { { cluster = 16 }, "field 'tiling.cluster': must be in 1..8, got 16" },
      { { watchdog = -1 }, "field 'tiling.watchdog': must be positive" },
      { { band = 5 }, "field 'tiling.band': must be in 1..4, got 5" },
      { { skew = 3 }, "field 'tiling.skew': must be in 1..2, got 3" },
      { { carry = 4 }, "field 'tiling.carry': must be in 0..3, got 4" },
      { { carry = -1 }, "field 'tiling.carry': must be in 0..3, got -1" },
      { { rows = 0 }, "field 'tiling.rows': must be in 1..1073741824, got 0" },
      { { colour = 1 }, "unknown field 'colour'" },
    }
    for _, c in ipairs(cases) do
      local e = err_of(solver, c[1])
      assert.is_truthy(e:find(c[2], 1, true), e)
    end
    assert.is_truthy(err_of(solver, 5):find("field 'tiling': must be a table", 1, true))
  end)

  it("accepts a valid tiling table (ignored by CPU variants)", function()
    local s = solver { threads = 128, comps = 2, blocks = 4, stride = "C",
                       barrier = "B", tiles = 3, wg_per_tile = 5,
                       wg_per_sm = 2, persistent = false, watchdog = 0.5,
                       skew = 2, rows = 64, carry = 0, early = false,
                       cluster = 1 }
    s:integrate { t0 = 0, t1 = 0.02 }
    s:close()
  end)
end)

describe("ob.gpu_barrier", function()
  it("checks its options before looking for a GPU", function()
    assert.is_truthy(err_of(ob.gpu_barrier, { kind = "Z" })
                     :find("field 'kind': must be \"A\", \"B\" or \"C\"", 1, true))
    assert.is_truthy(err_of(ob.gpu_barrier, { wg_per_barrier = 0 })
                     :find("field 'wg_per_barrier': must be in 1..", 1, true))
    assert.is_truthy(err_of(ob.gpu_barrier, { threads = 2000 })
                     :find("field 'threads': must be in 32..1024", 1, true))
    assert.is_truthy(err_of(ob.gpu_barrier, { size = 1 })
                     :find("unknown field 'size'", 1, true))
  end)

  it("either runs or says why there is no GPU", function()
    local ok, r = pcall(ob.gpu_barrier, { kind = "A", wg_per_barrier = 2,
                                          iters = 10 })
    if ok then
      assert.is_true(r.per_second > 0 and r.us_per_barrier > 0)
    else
      assert.is_truthy(tostring(r):find("gpu_barrier:", 1, true), tostring(r))
    end
  end)
end)

describe("GPU scenarios without a GPU", function()
  local extra = { gpu_barriers = "", gpu_access_distance = "--set n=2000",
                  gpu_user_problem = "--set n=2000" }
  for _, sc in ipairs { "gpu_barriers", "gpu_access_distance",
                        "gpu_user_problem" } do
    it(sc .. ".lua exits 0", function()
      local info = ob.info()
      if info.gpu then return end   -- a real run is the benchmark's business
      local dir = H.tmpdir("gpuopt")
      local cmd = string.format("%s %s/scenarios/%s.lua --ui none --out %s "
        .. "%s >%s/log 2>&1", H.q(H.BIN), H.q(H.SRC), sc,
        H.q(dir .. "/run"), extra[sc], H.q(dir))
      assert.is_true(H.sh_ok(cmd), H.slurp(dir .. "/log"))
      assert.is_truthy(H.slurp(dir .. "/log"):find("no GPU", 1, true))
    end)
  end
end)

describe("ob.gpu_power and ob.gpu_watch", function()
  it("refuse a period out of range or not a number", function()
    assert.is_truthy(err_of(ob.gpu_watch, 5):find(
      "period must be in 0.001..1 seconds, got 5", 1, true))
    assert.is_truthy(err_of(ob.gpu_watch, 0):find("period must be in", 1, true))
    assert.is_truthy(err_of(ob.gpu_watch, "x"):find("number expected", 1, true))
  end)

  it("read the card, or say why not (no GPU, no NVML)", function()
    local p, why = ob.gpu_power()
    if not p then
      assert.is_string(why)
      assert.is_truthy(why:find("no GPU", 1, true) or why:find("NVML", 1, true),
                       why)
      local w, why2 = ob.gpu_watch()
      assert.is_nil(w)
      assert.are.equal(why, why2)
      return
    end
    assert.is_true(p.sm_mhz > 0 and p.sm_max_mhz >= p.sm_mhz)
    assert.is_true(p.limit_w > 0 and p.power_w > 0)
    assert.is_string(p.reasons)
    local w = assert(ob.gpu_watch(0.005))
    local t = os.clock() + 0.05
    while os.clock() < t do end
    local s = w:stop()
    assert.is_true(s.samples >= 2, "samples " .. s.samples)
    assert.is_true(s.sm_min <= s.sm_mean and s.sm_mean <= s.sm_max)
    assert.is_true(s.capped >= 0 and s.capped <= s.samples)
    assert.are.same(s, w:stop())   -- a second stop gives the same figures
  end)
end)
