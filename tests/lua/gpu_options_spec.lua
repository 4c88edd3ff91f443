-- gpu_options_spec.lua: a variant's options (the tiled GPU variants'
-- tiling = {...}, declared by each variant) and those of the barrier
-- benchmark are checked before any GPU is needed, and the GPU scenarios end
-- cleanly (exit 0, a note) on a machine without one.

local ob = require "odebench"
local H = dofile(os.getenv("ODEBENCH_SRC") .. "/tests/lua/spec_helpers.lua")

teardown(H.cleanup)

-- pcall of f and its error text.
local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok)
  return tostring(e)
end

-- The registered variant named name (its ob.list entry), or nil.
local function variant(name)
  for _, v in ipairs(ob.list().variants) do
    if v.name == name then return v end
  end
end

describe("variant options (tiling = {...})", function()
  local p = ob.problem("bruss2d", { N = 8 })
  local function cpu(tiling, v)
    return ob.solver { problem = p, method = "bs3", backend = "cpu",
                       variant = v, h = 0.01, tiling = tiling }
  end

  it("a CPU variant refuses any option by name", function()
    local e = err_of(cpu, { threads = 128 }, "plain")
    assert.is_truthy(e:find("bad argument #1 to 'solver' (field 'tiling': "
      .. "variant 'plain' takes no option 'threads' (it declares none))", 1,
      true), e)
    -- with auto the solver checks them against the variant it picks
    e = err_of(cpu, { rows = 4 })
    assert.is_truthy(e:find("variant 'pipe' takes no option 'rows' (it "
      .. "declares none)", 1, true), e)
    cpu({}, "plain"):close()   -- an empty table gives no option
    assert.are.equal(0, #variant("plain").options)
  end)

  it("refuses what is not a table of named values", function()
    assert.is_truthy(err_of(cpu, 5, "plain"):find(
      "field 'tiling': must be a table", 1, true))
    local e = err_of(cpu, { 32 }, "plain")
    assert.is_truthy(e:find("field 'tiling': unknown field '1' (option names "
      .. "are strings)", 1, true), e)
    e = err_of(cpu, { threads = {} }, "plain")
    assert.is_truthy(e:find("field 'tiling.threads': must be a number, a "
      .. "boolean or a string, got table", 1, true), e)
  end)

  -- The GPU variants are registered in a build with CUDA, device or not:
  -- the values are checked against their declarations before the backend
  -- is looked for.
  local function gpu(v, tiling)
    return ob.solver { problem = p, method = "bs3", backend = "cuda",
                       variant = v, h = 0.01, tiling = tiling }
  end

  it("checks each value against the variant's declaration, field named", function()
    if not variant("gpu_multiblock") then
      pending("this build has no GPU variants")
      return
    end
    local mb, s2d = "gpu_multiblock", "gpu_stream2d"
    local cases = {
      { mb, { threads = 7 }, "field 'tiling.threads': must be in 32..1024, got 7" },
      { mb, { threads = 96 }, "field 'tiling.threads': must be a power of two "
                              .. "in 32..1024, got 96" },
      { mb, { comps = 9 }, "field 'tiling.comps': must be in 1..8, got 9" },
      { mb, { blocks = 0 }, "field 'tiling.blocks': must be in 1..8, got 0" },
      { mb, { barrier = "D" }, "field 'tiling.barrier': must be \"A\", \"B\" "
                               .. "or \"C\", got 'D'" },
      { mb, { stride = "AB" }, "field 'tiling.stride': must be \"A\"" },
      { mb, { persistent = 1 }, "field 'tiling.persistent': must be a boolean "
                                .. "(true or false), got 1" },
      { mb, { watchdog = -1 }, "field 'tiling.watchdog': must be positive, got -1" },
      { mb, { tiles = 2.5 }, "field 'tiling.tiles': must be an integer, got 2.5" },
      { mb, { colour = 1 }, "field 'tiling': unknown field 'colour' "
                            .. "(gpu_multiblock takes threads, comps, blocks, "
                            .. "stride, barrier, wg_per_tile, tiles, wg_per_sm, "
                            .. "persistent, watchdog)" },
      { s2d, { early = 0 }, "field 'tiling.early': must be a boolean" },
      { s2d, { cluster = 3 }, "field 'tiling.cluster': must be 1, 2, 4 or 8, got 3" },
      { s2d, { cluster = 16 }, "field 'tiling.cluster': must be in 1..8, got 16" },
      { s2d, { band = 5 }, "field 'tiling.band': must be in 1..4, got 5" },
      { s2d, { skew = 3 }, "field 'tiling.skew': must be in 1..2, got 3" },
      { s2d, { carry = 4 }, "field 'tiling.carry': must be in 0..3, got 4" },
      { s2d, { carry = -1 }, "field 'tiling.carry': must be in 0..3, got -1" },
      { s2d, { rows = 0 }, "field 'tiling.rows': must be in 1..1073741824, got 0" },
      { s2d, { rows = "many" }, "field 'tiling.rows': must be a number, got 'many'" },
      { s2d, { comps = 2 }, "field 'tiling': unknown field 'comps' (gpu_stream2d "
                            .. "takes skew, threads," },
      { "gpu_hexagonal", { tiles = 2 }, "field 'tiling': unknown field 'tiles' "
        .. "(gpu_hexagonal takes height, width, width2, threads)" },
      { "gpu_reference", { threads = 64 }, "field 'tiling': variant "
        .. "'gpu_reference' takes no option 'threads' (it declares none)" },
    }
    for _, c in ipairs(cases) do
      local e = err_of(gpu, c[1], c[2])
      assert.is_truthy(e:find("bad argument #1 to 'solver' (" .. c[3], 1, true), e)
    end
  end)

  it("takes a valid table: the next check is the GPU's", function()
    if not variant("gpu_multiblock") then
      pending("this build has no GPU variants")
      return
    end
    for _, c in ipairs {
      { "gpu_multiblock", { threads = 128, comps = 2, blocks = 4, stride = "C",
                            barrier = "B", tiles = 3, wg_per_tile = 5,
                            wg_per_sm = 2, persistent = false, watchdog = 0.5 } },
      { "gpu_stream2d", { skew = 2, rows = 64, carry = 0, lag = 2,
                          early = false, cluster = 1, threads = 64 } },
      { "gpu_trapezoid", { height = 2, width = 200 } },
    } do
      local ok, e = pcall(gpu, c[1], c[2])
      if ok then
        e:close()
      else
        assert.is_falsy(tostring(e):find("tiling", 1, true), tostring(e))
      end
    end
  end)

  it("ob.list and odebench --list show each tiled variant's options", function()
    local v = variant("gpu_stream2d")
    if not v then
      pending("this build has no GPU variants")
      return
    end
    local by = {}
    for _, o in ipairs(v.options) do by[o.name] = o end
    assert.are.same({ "int", "auto", "1, 2, 4 or 8" },
                    { by.cluster.type, by.cluster.default, by.cluster.allowed })
    assert.are.same({ "bool", true }, { by.early.type, by.early.default })
    assert.are.equal("auto", by.carry.default)
    by = {}
    for _, o in ipairs(variant("gpu_multiblock").options) do by[o.name] = o end
    assert.are.same({ 256, "a power of two in 32..1024" },
                    { by.threads.default, by.threads.allowed })
    assert.are.same({ "B", "\"A\", \"B\" or \"C\"" },
                    { by.stride.default, by.stride.allowed })
    assert.are.equal("positive", by.watchdog.allowed)
    local dir = H.tmpdir("gpuopt")
    assert.is_true(H.sh_ok(string.format("%s --list >%s/list 2>&1", H.q(H.BIN),
                                         H.q(dir))))
    local out = H.slurp(dir .. "/list")
    assert.is_truthy(out:find("options (tiling = {...}):", 1, true), out)
    assert.is_truthy(out:match("\n%s+cluster%s+int%s+default auto%s+1, 2, 4 or 8 "), out)
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
