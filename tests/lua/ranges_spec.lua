-- ranges_spec.lua: odebench.ranges, the lists of whole numbers with ranges
-- that scenario parameters such as --set widths=1-64 take.

local ranges = require "odebench.ranges"
local H = dofile(assert(os.getenv("ODEBENCH_SRC"), "set ODEBENCH_SRC")
                 .. "/tests/lua/spec_helpers.lua")
teardown(H.cleanup)

describe("odebench.ranges.integers", function()
  it("reads numbers and ranges in order", function()
    assert.same({ 1, 8, 32 }, ranges.integers("widths", "1,8,32", 1, 64))
    assert.same({ 5, 6, 7, 63 }, ranges.integers("widths", "5-7,63", 1, 64))
    assert.same({ 2, 3 }, ranges.integers("widths", " 2 - 3 ", 1, 64))
    assert.same({ 9 }, ranges.integers("widths", "9-9", 1, 64))
    local all = ranges.integers("widths", "1-64", 1, 64)
    assert.equal(64, #all)
    assert.equal(1, all[1])
    assert.equal(64, all[64])
  end)

  it("gives none for an empty text", function()
    assert.same({}, ranges.integers("widths", "", 1, 64))
  end)

  it("names the parameter, the token and what is allowed", function()
    local cases = {
      { "0", "'0' is outside 1..64" },
      { "65", "'65' is outside 1..64" },
      { "60-70", "'60-70' is outside 1..64" },
      { "9-5", "'9-5' is not a range a-b with a <= b" },
      { "1-x", "'1-x' is not a range" },
      { "3,a", "'a' is not a whole number" },
      { "2.5", "'2.5' is not a whole number" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(ranges.integers, "widths", c[1], 1, 64)
      assert.is_false(ok)
      assert.is_truthy(err:find("widths: " .. c[2], 1, true), err)
      assert.is_truthy(err:find("allowed: whole numbers 1..64", 1, true), err)
    end
  end)
end)

describe("a scenario's widths", function()
  it("out of range: exit 2 naming the parameter, nothing written", function()
    local dir = H.tmpdir("ranges")
    local cmd = string.format("%s %s/scenarios/tsm_cpu.lua --set widths=2,0-3 "
                              .. "--ui none --out %s >%s/log 2>&1; echo $? >%s/rc",
                              H.q(H.BIN), H.q(H.SRC), H.q(dir .. "/run"),
                              H.q(dir), H.q(dir))
    assert.is_true(H.sh_ok(cmd))
    local log = H.slurp(dir .. "/log") or ""
    assert.equal("2", (H.slurp(dir .. "/rc") or ""):match("%d+"), log)
    assert.is_truthy(log:find("widths: '0-3' is outside 1..4096", 1, true), log)
    assert.is_false(H.exists(dir .. "/run"), log)
  end)
end)
