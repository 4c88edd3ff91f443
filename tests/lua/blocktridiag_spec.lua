-- blocktridiag_spec.lua: ob.blocktridiag, the block-tridiagonal line solver
-- (odb_batched.h). Skipped until the module registers ob.blocktridiag.
local ob = require "odebench"

if not ob.blocktridiag then return end

describe("ob.blocktridiag", function()
  it("solves a small line exactly", function()
    local t = ob.blocktridiag{ lines = 1, length = 2, block = 2 }
    t:set(1, 1, "D", { 4, 1, 1, 5 }); t:set(1, 1, "C", { 1, 0, 0, 1 })
    t:set(1, 2, "A", { 1, 2, 0, 1 }); t:set(1, 2, "D", { 6, 0, 1, 7 })
    t:factor()
    local x = t:solve(ob.vector{ 1, 2, 3, 4 })
    assert.is_true(math.abs(4 * x[1] + x[2] + x[3] - 1) < 1e-14)
    assert.is_true(math.abs(x[1] + 5 * x[2] + x[4] - 2) < 1e-14)
    assert.is_true(math.abs(x[1] + 2 * x[2] + 6 * x[3] - 3) < 1e-14)
    assert.is_true(math.abs(x[2] + x[3] + 7 * x[4] - 4) < 1e-14)
  end)

  it("gives the same answer in both layouts", function()
    local lines, K, B = 13, 5, 7
    local n = lines * K * B
    local rhs = ob.vector(n)
    for i = 1, n do rhs[i] = math.sin(i) end
    local xs = {}
    for _, lay in ipairs{ "standard", "compact" } do
      local t = ob.blocktridiag{ lines = lines, length = K, block = B,
                                 layout = lay }
      t:random{ seed = 3 }
      t:factor()
      xs[lay] = t:solve(rhs)
      t:close()
    end
    local d, m = 0, 0
    for i = 1, n do
      d = math.max(d, math.abs(xs.standard[i] - xs.compact[i]))
      m = math.max(m, math.abs(xs.standard[i]))
    end
    assert.is_true(d <= 1e-13 * m)
  end)

  it("counts the bytes factor and solve must move", function()
    -- 3K - 2 blocks per line (A_1 and C_K lie outside the matrix); factor
    -- reads each once and writes each once but for the first rows of D_1
    -- and of the K - 1 blocks C (K rows of B a line, kept by the LU and by
    -- the unit lower solve), solve reads each once and reads the
    -- right-hand side and writes the solution once
    local lines, K, B = 5, 7, 3
    local t = ob.blocktridiag{ lines = lines, length = K, block = B }
    local blocks = lines * (3 * K - 2) * B * B
    assert.are.equal(8 * (2 * blocks - lines * K * B), t:info().factor_bytes)
    assert.are.equal(8 * (blocks + 2 * lines * K * B), t:info().solve_bytes)
    local s = t:bench { op = "solve", reps = 1 }
    assert.are.equal(t:info().solve_bytes, s.bytes)
    assert.are.equal(s.bytes, s.floor_bytes)
    t:close()
  end)

  it("refuses bad input", function()
    local ok, err = pcall(ob.blocktridiag, { lines = 1, length = 2, block = 3,
                                             variant = "stream" })
    assert.is_false(ok)
    assert.matches("needs backend", err, 1, true)
    assert.is_false(pcall(ob.blocktridiag, { lines = 1, length = 2, block = 1 }))
    assert.is_false(pcall(ob.blocktridiag, { lines = 0, length = 2, block = 3 }))
    assert.is_false(pcall(ob.blocktridiag, { lines = 1, length = 2, block = 3,
                                             layout = "x" }))
    local t = ob.blocktridiag{ lines = 3, length = 2, block = 3 }
    assert.is_false(pcall(t.solve, t, ob.vector(18)))   -- not factored
    t:set(2, 2, "D", { 0, 0, 0, 0, 0, 0, 0, 0, 0 })
    local ok, err = pcall(t.factor, t)
    assert.is_false(ok)
    assert.matches("zero or tiny pivot", err, 1, true)
    t:random{}
    t:factor()
    assert.is_false(pcall(t.solve, t, ob.vector(17)))   -- wrong size
    ok, err = pcall(t.bench, t, { op = "solve", stages = 2 })
    assert.is_false(ok)                     -- a stream plan on the CPU
    assert.matches('variant "stream"', err, 1, true)
    ok, err = pcall(t.bench, t, { op = "factor", threads = 2 })
    assert.is_false(ok)                     -- the factor's plan too
    assert.matches('threads and kernel are for variant "stream"', err, 1, true)
    ok, err = pcall(t.bench, t, { op = "factor", kernel = "warp" })
    assert.is_false(ok)
    assert.matches('threads and kernel are for variant "stream"', err, 1, true)
    ok, err = pcall(t.bench, t, { op = "factor", kernel = "fast" })
    assert.is_false(ok)                     -- the names the factor knows
    assert.matches("unknown stream factor kernel 'fast' (known: auto, row, "
                   .. "tile, warp)", err, 1, true)
    ok, err = pcall(t.bench, t, { op = "solve", kernel = "row" })
    assert.is_false(ok)                     -- the solve has no kernels
    assert.matches('kernel is for op "factor"', err, 1, true)
  end)
end)

describe("ob.blocktridiag with the user's right-hand side", function()
  local H = dofile(os.getenv("ODEBENCH_SRC") .. "/tests/lua/spec_helpers.lua")
  teardown(H.cleanup)

  it("solves b from a .npy file and returns x of shape (lines*length, block)", function()
    local dir = H.tmpdir("btd")
    local t = ob.blocktridiag { lines = 3, length = 4, block = 2 }
    t:random { seed = 5 }
    t:factor()
    local b = ob.vector(3 * 4 * 2)
    for i = 1, #b do b[i] = math.cos(i) end
    b:save(dir .. "/b.npy")
    local x = t:solve(dir .. "/b.npy")
    assert.same(t:solve(b):totable(), x:totable())
    assert.same({ 12, 2 }, (x:shape()))
    local ok, err = pcall(t.solve, t, ob.vector(24):reshape({ 12 }, "<c16"))
    assert.is_false(ok)
    assert.matches("blocktridiag solve: b: complex ('<c16') values are not taken (real float64 only)", err, 1, true)
  end)
end)
