-- batched_spec.lua: ob.batched (many small B x B matrices: LU, solve,
-- GEMV, GEMM, TRSM, bench) on the CPU, ob.blocktridiag's bench and get, and
-- the refusal of backend "cuda" where no GPU can be used (these specs run
-- on the CPU; tests/gpu/dense/test_batched_gpu.c covers the GPU).
local ob = require "odebench"
local H = dofile(os.getenv("ODEBENCH_SRC") .. "/tests/lua/spec_helpers.lua")

-- max over matrices of ||A_p x_p - b_p|| / ||b_p||; A[p] row-major Vectors.
local function worst_residual(A, x, b, n, B)
  local worst = 0
  for p = 1, n do
    local num, den = 0, 0
    for i = 1, B do
      local s = -b[(p - 1) * B + i]
      for j = 1, B do s = s + A[p][(i - 1) * B + j] * x[(p - 1) * B + j] end
      num = num + s * s
      den = den + b[(p - 1) * B + i] ^ 2
    end
    worst = math.max(worst, math.sqrt(num / den))
  end
  return worst
end

-- max |u - v| / max |v| over two Vectors (or tables) of n values.
local function rel_diff(u, v, n)
  local d, m = 0, 0
  for i = 1, n do
    d = math.max(d, math.abs(u[i] - v[i]))
    m = math.max(m, math.abs(v[i]))
  end
  return m > 0 and d / m or d
end

local function rhs(len)
  local b = ob.vector(len)
  for i = 1, len do b[i] = math.sin(1.7 * i) end
  return b
end

-- Whether backend "cuda" can run here (then the refusal specs do not apply).
local function have_gpu()
  return ob.info { bandwidth = false }.gpu ~= nil
end

describe("ob.batched", function()
  if not ob.batched then
    pending("ob.batched is not registered in this build")
    return
  end
  teardown(H.cleanup)

  it("solves fresh random diagonally dominant systems in both layouts", function()
    for _, lay in ipairs { "standard", "compact" } do
      for _, B in ipairs { 2, 3, 5, 7, 10, 15, 32 } do
        local n = B < 16 and 37 or 5          -- not a multiple of VL
        local m = ob.batched { n = n, block = B, layout = lay }
        m:random { seed = 11 + B }
        local A = {}
        for p = 1, n do A[p] = m:get(p) end
        local b = rhs(n * B)
        assert.is_number(m:lu())
        assert.is_true(m:info().factored)
        local x, sec = m:solve(b)
        assert.is_number(sec)
        local r = worst_residual(A, x, b, n, B)
        assert.is_true(r < 1e-12, ("%s B=%d residual %.2e"):format(lay, B, r))
        m:close()
      end
    end
  end)

  it("gives the same matrices and answers in both layouts", function()
    local n, B = 13, 7
    local out = {}
    for _, lay in ipairs { "standard", "compact" } do
      local m = ob.batched { n = n, block = B, layout = lay, vl = 4 }
      m:random { seed = 3, dominance = 2 }
      local o = { A = m:get(9) }
      local x = rhs(n * B)
      o.y = m:gemv(x, { alpha = 2, beta = 0 })
      local X = ob.batched { n = n, block = B, layout = lay, vl = 4 }
      local C = ob.batched { n = n, block = B, layout = lay, vl = 4 }
      X:random { seed = 4 }
      m:gemm(X, C, { alpha = 0.5 })
      o.C = C:get(13)
      m:lu()
      o.LU = m:get(9)
      o.x = m:solve(x)
      -- X := L^{-1} X with m's factors
      m:trsm(X, "lower")
      o.T = X:get(2)
      out[lay] = o
    end
    local s, c = out.standard, out.compact
    assert.are.equal(0, rel_diff(c.A, s.A, B * B))      -- same generator
    for _, k in ipairs { "y", "x" } do
      assert.is_true(rel_diff(c[k], s[k], n * B) < 1e-13, k)
    end
    for _, k in ipairs { "C", "LU", "T" } do
      assert.is_true(rel_diff(c[k], s[k], B * B) < 1e-13, k)
    end
  end)

  it("computes GEMV, GEMM and TRSM as written", function()
    local m = ob.batched { n = 3, block = 2, layout = "compact" }
    m:set(2, { 4, 1, 2, 5 })
    local y = m:gemv(ob.vector { 1, 1, 1, 2, 0, 0 })
    assert.are.same({ 1, 1, 6, 12, 0, 0 }, { y[1], y[2], y[3], y[4], y[5], y[6] })
    local y2 = m:gemv(ob.vector { 0, 0, 1, 0, 0, 0 },
                      { alpha = 2, beta = 1, y = ob.vector { 1, 1, 1, 1, 1, 1 } })
    assert.are.same({ 1, 1, 9, 5 }, { y2[1], y2[2], y2[3], y2[4] })
    local X = ob.batched { n = 3, block = 2, layout = "compact" }
    local C = ob.batched { n = 3, block = 2, layout = "compact" }
    X:set(2, { 1, 2, 3, 4 })
    m:gemm(X, C)
    local c = C:get(2)
    assert.are.same({ 7, 12, 17, 24 }, { c[1], c[2], c[3], c[4] })
    m:lu()                                 -- L = [1 0; 0.5 1], U = [4 1; 0 4.5]
    local f = m:get(2)
    assert.are.same({ 4, 1, 0.5, 4.5 }, { f[1], f[2], f[3], f[4] })
    m:trsm(X, "lower")                     -- X := L^{-1} X
    local t = X:get(2)
    assert.are.same({ 1, 2, 2.5, 3 }, { t[1], t[2], t[3], t[4] })
  end)

  it("reports a zero pivot with the matrix index", function()
    for _, lay in ipairs { "standard", "compact" } do
      local m = ob.batched { n = 9, block = 3, layout = lay }
      m:random { seed = 2 }
      m:set(6, { 1, 2, 3, 2, 4, 7, 1, 1, 1 })  -- second pivot exactly zero
      local ok, err = pcall(m.lu, m)
      assert.is_false(ok)
      assert.matches("matrix 6 has a zero or tiny pivot at row 2", err, 1, true)
      assert.matches("every matrix is left as it was", err, 1, true)
    end
  end)

  it("benchmarks every op on the CPU", function()
    local m = ob.batched { n = 50, block = 5 }
    m:random {}
    for _, op in ipairs { "lu", "solve", "trsm", "gemm", "gemv" } do
      local r = m:bench { op = op, reps = 3 }
      assert.is_true(r.seconds > 0 and r.best <= r.seconds, op)
      assert.is_true(r.bytes > 0 and r.gbs > 0, op)
      assert.are.equal("cpu", r.variant)
      assert.are.equal(3, r.reps)
    end
    assert.is_false(m:info().factored)      -- bench leaves the matrices
    -- in place: 25 read, 20 written (the first row of U is A's own)
    local lu = m:bench { op = "lu", reps = 1 }
    assert.are.equal(50 * (25 + 20) * 8, lu.bytes)
    assert.are.equal(lu.bytes, lu.floor_bytes)
    if lu.floor_pct then   -- with bandwidth figures: named, noted above 100
      assert.are.equal("cpu read+copy 1t", lu.floor_bw)
      assert.are.equal(lu.floor_pct > 100, lu.floor_note ~= nil)
    end
  end)

  it("refuses bad input with the reason", function()
    local function refuses(f, msg, ...)
      local ok, err = pcall(f, ...)
      assert.is_false(ok)
      assert.matches(msg, err, 1, true)
    end
    refuses(ob.batched, "field 'block': must be in 2..32, got 1", { n = 4, block = 1 })
    refuses(ob.batched, "field 'block': must be in 2..32, got 33", { n = 4, block = 33 })
    refuses(ob.batched, "field 'n': must be in 1..1099511627776, got 0", { n = 0, block = 3 })
    refuses(ob.batched, "field 'n': must be in 1..1099511627776, got -5", { n = -5, block = 3 })
    refuses(ob.batched, "n and block are required", { block = 3 })
    refuses(ob.batched, "unknown layout 'x'", { n = 4, block = 3, layout = "x" })
    refuses(ob.batched, "vector length 3", { n = 4, block = 3, vl = 3 })
    refuses(ob.batched, "backend 'gpu' is unknown", { n = 4, block = 3, backend = "gpu" })
    refuses(ob.batched, "unknown field 'size'", { n = 4, block = 3, size = 2 })
    refuses(ob.batched, "needs backend \"cuda\"", { n = 4, block = 3, variant = "team" })
    local m = ob.batched { n = 4, block = 3 }
    refuses(m.solve, "call lu() first", m, ob.vector(12))
    refuses(m.get, "matrix: must be in 1..4, got 5", m, 5)
    refuses(m.set, "expected block*block = 9 values, got 2", m, 1, { 1, 2 })
    m:random {}
    m:lu()
    refuses(m.lu, "already factored", m)
    refuses(m.solve, "vector has 11 values, expected n*block = 12", m, ob.vector(11))
    refuses(m.bench, "hold LU factors", m, { op = "lu" })
    m:random {}
    refuses(m.bench, "unknown batched op 'qr'", m, { op = "qr" })
    refuses(m.bench, "field 'reps': must be in 1..1000, got 0", m, { op = "lu", reps = 0 })
    refuses(m.bench, "needs backend \"cuda\"", m, { op = "lu", variant = "cublas" })
    local other = ob.batched { n = 5, block = 3 }
    refuses(m.gemm, "the batches differ", m, other, other)
    local X = ob.batched { n = 4, block = 3 }
    refuses(m.gemm, "C must not be A or X", m, X, X)
    m:close()
    refuses(m.lu, "the batch is closed", m)
  end)

  it("refuses backend cuda where no GPU can be used", function()
    if have_gpu() then
      pending("a GPU is usable here")
      return
    end
    local ok, err = pcall(ob.batched, { n = 4, block = 3, backend = "cuda" })
    assert.is_false(ok)
    assert.is_truthy(err:find("this build has no CUDA", 1, true) or
                     err:find("no CUDA device", 1, true), err)
    ok, err = pcall(ob.blocktridiag, { lines = 2, length = 3, block = 3,
                                       backend = "cuda" })
    assert.is_false(ok)
    assert.is_truthy(err:find("this build has no CUDA", 1, true) or
                     err:find("no CUDA device", 1, true), err)
  end)

  it("makes odebench exit with status 2 for backend cuda without a GPU", function()
    if have_gpu() then
      pending("a GPU is usable here")
      return
    end
    local dir = H.tmpdir("batched")
    local f = assert(io.open(dir .. "/s.lua", "w"))
    f:write('local ob = require "odebench"\n',
            'ob.batched { n = 8, block = 3, backend = "cuda" }\n')
    f:close()
    local cmd = ("cd %s && env -u LD_PRELOAD %s --out %s s.lua >out 2>err")
      :format(H.q(dir), H.q(H.BIN), H.q(dir .. "/run"))
    local _, _, code = os.execute(cmd)
    assert.are.equal(2, code)
    local err = H.slurp(dir .. "/err")
    assert.is_truthy(err:find("this build has no CUDA", 1, true) or
                     err:find("no CUDA device", 1, true), err)
  end)
end)

describe("ob.blocktridiag (get, random, bench)", function()
  if not ob.blocktridiag then
    pending("ob.blocktridiag is not registered in this build")
    return
  end

  it("draws the same blocks in both layouts and gets them back", function()
    local got = {}
    for _, lay in ipairs { "standard", "compact" } do
      local t = ob.blocktridiag { lines = 5, length = 3, block = 4, layout = lay }
      t:random { seed = 8 }
      got[lay] = { t:get(4, 2, "A"), t:get(4, 3, "D"), t:get(1, 3, "C") }
    end
    for k = 1, 3 do
      assert.are.equal(0, rel_diff(got.compact[k], got.standard[k], 16))
    end
    for i = 1, 16 do assert.are.equal(0, got.compact[3][i]) end  -- last row: C = 0
  end)

  it("benchmarks factor and solve", function()
    for _, lay in ipairs { "standard", "compact" } do
      local t = ob.blocktridiag { lines = 9, length = 4, block = 3, layout = lay }
      local f = t:bench { op = "factor", reps = 2 }
      assert.is_true(f.seconds > 0 and f.gbs > 0)
      assert.are.equal(t:info().factor_bytes, f.bytes)
      local s = t:bench { op = "solve", reps = 2, seed = 4 }
      assert.is_true(s.seconds > 0 and s.gbs > 0)
      assert.are.equal("cpu", s.variant)
      assert.are.equal("cpu", t:info().backend)
    end
    local t = ob.blocktridiag { lines = 2, length = 2, block = 2 }
    local ok, err = pcall(t.bench, t, { op = "lu" })
    assert.is_false(ok)
    assert.matches("op 'lu' is unknown", err, 1, true)
  end)
end)

describe("ob.batched with the user's matrices", function()
  local H = dofile(os.getenv("ODEBENCH_SRC") .. "/tests/lua/spec_helpers.lua")
  local dir
  setup(function() dir = H.tmpdir("batched") end)
  teardown(H.cleanup)

  -- n random B x B matrices, diagonally dominant, as one (n*B, B) Vector,
  -- and n right-hand sides as (n, B).
  local function stack(n, B)
    local A = ob.vector(n * B * B)
    for p = 0, n - 1 do
      for i = 0, B - 1 do
        for j = 0, B - 1 do
          A[p * B * B + i * B + j + 1] = (i == j and B + 1 or 0) + 2 * math.random() - 1
        end
      end
    end
    local b = ob.vector(n * B)
    for e = 1, #b do b[e] = 2 * math.random() - 1 end
    return A:reshape { n * B, B }, b:reshape { n, B }
  end

  -- x = A \ b for each matrix: Gaussian elimination without pivoting in
  -- Lua, the reference.
  local function reference(A, b, n, B)
    local x = ob.vector(n * B)
    for p = 0, n - 1 do
      local M, y = {}, {}
      for i = 1, B do
        M[i] = {}
        for j = 1, B do M[i][j] = A[p * B * B + (i - 1) * B + j] end
        y[i] = b[p * B + i]
      end
      for k = 1, B do
        for i = k + 1, B do
          local l = M[i][k] / M[k][k]
          for j = k, B do M[i][j] = M[i][j] - l * M[k][j] end
          y[i] = y[i] - l * y[k]
        end
      end
      for i = B, 1, -1 do
        local s = y[i]
        for j = i + 1, B do s = s - M[i][j] * x[p * B + j] end
        x[p * B + i] = s / M[i][i]
      end
    end
    return x
  end

  it("solves fresh random data saved to .npy and read back, equal to the reference", function()
    math.randomseed(77)
    for _, c in ipairs { { 13, 2, "compact" }, { 7, 5, "standard" }, { 21, 8, "compact" } } do
      local n, B, lay = c[1], c[2], c[3]
      local A, b = stack(n, B)
      A:save(dir .. "/a.npy")
      b:save(dir .. "/b.npy")
      local m = ob.batched { data = dir .. "/a.npy", layout = lay }
      local info = m:info()
      assert.same({ n, B }, { info.n, info.block })
      assert.same(A:totable(), m:matrices():totable())
      assert.same({ n * B, B }, (m:matrices():shape()))
      m:lu()
      local x = m:solve(dir .. "/b.npy")
      local what = table.concat(c, " ")
      assert.is_true(x:max_rel_err(reference(A, b, n, B)) <= 1e-13, what)
      assert.same({ n, B }, (x:shape()))
      x:save(dir .. "/x.npy")
      local back, binfo = ob.load(dir .. "/x.npy")
      assert.same(x:totable(), back:totable())
      assert.same({ n, B }, binfo.shape)
      -- the product of the user's matrices with x gives b back
      local m2 = ob.batched { data = A, n = n, block = B }
      assert.is_true(m2:gemv(x):max_rel_err(b) <= 1e-13, what)
    end
  end)

  it("refuses a singular matrix of a user batch naming it, all or nothing", function()
    local A = stack(5, 3)
    for e = 1, 9 do A[2 * 9 + e] = 0 end      -- matrix 3 is zero
    A[2 * 9 + 1] = 1
    local m = ob.batched { data = A }
    local before = m:matrices():totable()
    local ok, err = pcall(m.lu, m)
    assert.is_false(ok)
    assert.matches("ob.batched lu: matrix 3 has a zero or tiny pivot at row 2", err, 1, true)
    assert.same(before, m:matrices():totable())
  end)

  it("refuses data that is not a stack of square matrices, with the reason", function()
    local function refuses(msg, opts)
      local ok, err = pcall(ob.batched, opts)
      assert.is_false(ok)
      assert.is_truthy(tostring(err):find(msg, 1, true), tostring(err))
    end
    local shape = "is not a stack of B x B matrices (batch*B, B) with B (the columns) in 2..32 and the rows a multiple of B"
    refuses("ob.batched: data: shape {10, 4} " .. shape, { data = ob.vector(40):reshape { 10, 4 } })
    refuses("ob.batched: data: shape {3, 1} " .. shape, { data = ob.vector(3):reshape { 3, 1 } })
    refuses("ob.batched: data: shape {66, 33} " .. shape, { data = ob.vector(66 * 33):reshape { 66, 33 } })
    refuses("ob.batched: data: a 2-D matrix expected (a Vector with a shape {rows, cols}: ob.load's, or "
            .. "v:reshape's), got 8 numbers without a shape", { data = ob.vector(8) })
    refuses("ob.batched: data: complex ('<c16') matrices are not taken (real float64 only)",
            { data = ob.vector(16):reshape({ 4, 2 }, "<c16") })
    refuses("ob.batched: n = 3 but data holds 2 matrices of 2 x 2 (shape {4, 2})",
            { data = ob.vector(8):reshape { 4, 2 }, n = 3 })
    refuses("ob.batched: block = 4 but data holds 2 x 2 matrices (shape {4, 2})",
            { data = ob.vector(8):reshape { 4, 2 }, block = 4 })
    local v = ob.vector(8):reshape { 4, 2 }
    v[6] = 0 / 0
    refuses("ob.batched: data: matrix 2, row 1, column 2 is NaN", { data = v })
    refuses("ob.batched: data: ob.load: " .. dir .. "/none.npy", { data = dir .. "/none.npy" })
    local m = ob.batched { data = ob.vector(8):reshape { 4, 2 } }
    local ok, err = pcall(m.solve, m, ob.vector(3))
    assert.is_false(ok)
    assert.matches("ob.batched solve: vector has 3 values, expected n*block = 4", err, 1, true)
    ok, err = pcall(m.solve, m, ob.vector(8):reshape({ 4 }, "<c16"))
    assert.is_false(ok)
    assert.matches("ob.batched solve: b: complex ('<c16') values are not taken (real float64 only)", err, 1, true)
  end)
end)
