-- kernel_spec.lua: ob.kernel, the tuned tall & skinny products (odb_tsm.h).
local ob = require "odebench"

describe("ob.kernel", function()
  it("names the supported range of M and N", function()
    local ok, err = pcall(ob.kernel, "tsmttsm", { M = 65, N = 4, K = 100 })
    assert.is_false(ok)
    assert.matches("field 'M': must be in 1..64, got 65", err, 1,
                   true)
    ok, err = pcall(ob.kernel, "tsmm", { M = 4, N = 0, K = 100 })
    assert.is_false(ok)
    assert.matches("field 'N': must be in 1..64, got 0", err, 1,
                   true)
  end)

  it("refuses K = 0, unknown names, dtypes and fields", function()
    local ok, err = pcall(ob.kernel, "tsmm", { M = 4, N = 4, K = 0 })
    assert.is_false(ok)
    assert.matches("field 'K': must be in 1..9223372036854775807, got 0", err, 1, true)
    ok, err = pcall(ob.kernel, "gemm", { M = 4, N = 4, K = 10 })
    assert.is_false(ok)
    assert.matches("known: tsmttsm, tsmm", err, 1, true)
    ok, err = pcall(ob.kernel, "tsmm", { M = 4, N = 4, K = 10, dtype = "s" })
    assert.is_false(ok)
    assert.matches("unknown dtype 's'", err, 1, true)
    ok, err = pcall(ob.kernel, "tsmm", { M = 4, N = 4, K = 10, bogus = 1 })
    assert.is_false(ok)
    assert.matches("unknown field 'bogus'", err, 1, true)
    ok, err = pcall(ob.kernel, "tsmm", { M = 4, N = 4 })
    assert.is_false(ok)
    assert.matches("M, N and K are required", err, 1, true)
  end)

  it("runs on the GPU, or says there is none", function()
    local ok, k = pcall(ob.kernel, "tsmttsm",
                        { M = 3, N = 5, K = 10007, dtype = "z", backend = "cuda" })
    if not ob.info({ bandwidth = false }).gpu then
      assert.is_false(ok)
      -- built with CUDA but no device, or built without CUDA at all
      assert.is_truthy(k:find("no cuda backend", 1, true) or
                       k:find("this build has no CUDA", 1, true), k)
      return
    end
    assert.is_true(ok, k)
    assert.is_true(k:check() <= 1e-12)
    local sec, gf = k:time(3)
    assert.is_true(sec > 0 and gf > 0)
    local s1, g1, s2, g2, q = k:compare(3)
    assert.is_true(s1 > 0 and g1 > 0 and s2 > 0 and g2 > 0)
    assert.is_true(q[1] <= q[2] and q[2] <= q[3] and q[1] > 0)
    assert.is_string(k:info().config)
    assert.are.equal("cuda", k:info().backend)
    -- the final race: the tuner's fastest few (up to 3) against cuBLAS
    local info = k:info()
    assert.is_true(info.raced >= 0 and info.raced <= 3, tostring(info.raced))
    assert.is_boolean(info.race_changed)
    assert.is_true(info.raced > 0 or not info.race_changed)
    k:close()
  end)

  it("runs the CPU version with backend 'cpu', against the plain loop", function()
    for _, c in ipairs({ { "tsmttsm", "d", 1, 1 }, { "tsmttsm", "z", 3, 5 },
                         { "tsmttsm", "d", 17, 64 }, { "tsmm", "d", 5, 3 },
                         { "tsmm", "z", 64, 7 }, { "tsmm", "d", 2, 33 } }) do
      local k = ob.kernel(c[1], { M = c[3], N = c[4], K = 30011, dtype = c[2],
                                  backend = "cpu", threads = 2 })
      local what = table.concat(c, " ")
      assert.is_true(k:check() <= 1e-12, what)
      local sec, gf = k:time(2)
      assert.is_true(sec > 0 and gf > 0, what)
      local s1, g1, s2, g2, q = k:compare(3)
      assert.is_true(s1 > 0 and g1 > 0 and s2 > 0 and g2 > 0, what)
      assert.is_true(q[1] <= q[2] and q[2] <= q[3] and q[1] > 0, what)
      local info = k:info()
      assert.are.equal("cpu", info.backend)
      assert.are.equal("plain loop", info.peer)
      assert.are.equal("threads=2", info.config)
      local ok, err = pcall(k.cublas, k)
      assert.is_false(ok)
      assert.matches("runs on the CPU", err, 1, true)
      k:close()
      ok, err = pcall(k.time, k)
      assert.is_false(ok)
      assert.matches("closed", err, 1, true)
    end
  end)

  it("refuses bad backends, threads and repetitions", function()
    local cases = {
      { { M = 4, N = 4, K = 100, backend = "tpu" }, "backend 'tpu' (expected auto, cuda or cpu)" },
      { { M = 4, N = 4, K = 100, backend = "cpu", threads = -1 }, "field 'threads': must be in 0..256, got -1" },
      { { M = 4, N = 4, K = 100, backend = "cpu", threads = 999 }, "field 'threads': must be in 0..256, got 999" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(ob.kernel, "tsmm", c[1])
      assert.is_false(ok)
      assert.matches(c[2], err, 1, true)
    end
    local k = ob.kernel("tsmm", { M = 4, N = 4, K = 100, backend = "cpu" })
    local ok, err = pcall(k.time, k, 0)
    assert.is_false(ok)
    assert.matches("reps: must be in 1..1000, got 0", err, 1, true)
    k:close()
  end)
end)

describe("ob.kernel with the user's matrices", function()
  local H = dofile(os.getenv("ODEBENCH_SRC") .. "/tests/lua/spec_helpers.lua")
  local dir
  setup(function() dir = H.tmpdir("kernel") end)
  teardown(H.cleanup)

  -- A rows x cols Vector of random numbers in [-1, 1) (w = 2: complex
  -- pairs), with its shape.
  local function rand(rows, cols, w)
    local v = ob.vector(rows * cols * w)
    for i = 1, #v do v[i] = 2 * math.random() - 1 end
    return v:reshape({ rows, cols }, w == 2 and "<c16" or "<f8")
  end

  -- The reference product, the plain triple loop in Lua: tsmttsm C = A^T B
  -- (A K x M, B K x N), tsmm B = A C (A K x M, C M x N); w = 2 complex.
  local function reference(op, A, X, K, M, N, w)
    local rows = op == "tsmttsm" and M or K
    local out = ob.vector(rows * N * w)
    local function at(v, cols, i, j)
      local e = ((i - 1) * cols + (j - 1)) * w
      return v[e + 1], w == 2 and v[e + 2] or 0
    end
    for r = 1, rows do
      for j = 1, N do
        local sr, si = 0, 0
        for l = 1, op == "tsmttsm" and K or M do
          local ar, ai, xr, xi
          if op == "tsmttsm" then
            ar, ai = at(A, M, l, r); xr, xi = at(X, N, l, j)
          else
            ar, ai = at(A, M, r, l); xr, xi = at(X, N, l, j)
          end
          sr = sr + ar * xr - ai * xi
          si = si + ar * xi + ai * xr
        end
        local e = ((r - 1) * N + (j - 1)) * w
        out[e + 1] = sr
        if w == 2 then out[e + 2] = si end
      end
    end
    return out
  end

  it("runs on fresh random data saved to .npy and read back, equal to the reference", function()
    math.randomseed(20261129)
    for _, c in ipairs { { "tsmttsm", 1, 3, 5, 301 }, { "tsmttsm", 2, 4, 2, 257 },
                         { "tsmm", 1, 6, 3, 199 }, { "tsmm", 2, 3, 7, 64 } } do
      local op, w, M, N, K = c[1], c[2], c[3], c[4], c[5]
      local xname = op == "tsmttsm" and "B" or "C"
      local A = rand(K, M, w)
      local X = op == "tsmttsm" and rand(K, N, w) or rand(M, N, w)
      A:save(dir .. "/a.npy")
      X:save(dir .. "/x.npy")
      local k = ob.kernel(op, { A = dir .. "/a.npy", [xname] = dir .. "/x.npy",
                                backend = "cpu", threads = 2 })
      local info = k:info()
      local what = table.concat(c, " ")
      assert.same({ M, N, K, w == 2 and "z" or "d", "user" },
                  { info.M, info.N, info.K, info.dtype, info.data }, what)
      local out = k:result()
      local ref = reference(op, A, X, K, M, N, w)
      assert.is_true(out:max_rel_err(ref) <= 1e-13, what)
      local shape, dtype = out:shape()
      assert.same({ op == "tsmttsm" and M or K, N }, shape, what)
      assert.equal(w == 2 and "<c16" or "<f8", dtype, what)
      assert.is_true(k:check() <= 1e-12, what)
      local _, _, row = k:time(1)
      assert.equal("user", row.data)
      out:save(dir .. "/out.npy")
      local back, binfo = ob.load(dir .. "/out.npy")
      assert.same(out:totable(), back:totable())
      assert.same(shape, binfo.shape)
      -- the Vectors themselves, without a file, give the same product
      local k2 = ob.kernel(op, { A = A, [xname] = X, backend = "cpu" })
      assert.same(out:totable(), k2:result():totable())
      k:close()
      k2:close()
    end
  end)

  it("refuses matrices whose shapes do not fit the op, naming them", function()
    local A, B = rand(10, 3, 1), rand(9, 4, 1)
    local function fails(msg, op, opts)
      local ok, err = pcall(ob.kernel, op, opts)
      assert.is_false(ok)
      assert.is_truthy(tostring(err):find(msg, 1, true), tostring(err))
    end
    fails("ob.kernel: tsmttsm (C = A^T B): B must be K x N with K = 10, the rows of A (10 x 3), got 9 x 4",
          "tsmttsm", { A = A, B = B })
    fails("ob.kernel: tsmm (B = A C): C must be M x N with M = 3, the columns of A (10 x 3), got 9 x 4",
          "tsmm", { A = A, C = B })
    fails("ob.kernel: tsmm (B = A C) takes A and C; B is its output", "tsmm", { A = A, B = B })
    fails("ob.kernel: tsmttsm (C = A^T B) takes A and B; C is its output", "tsmttsm", { A = A, C = B })
    fails("ob.kernel: tsmttsm takes A and B together (the inputs to use), or neither (random inputs)",
          "tsmttsm", { A = A, M = 3, N = 4, K = 10 })
    fails("ob.kernel: A is '<f8' and B '<c16': both real ('<f8') or both complex ('<c16')",
          "tsmttsm", { A = A, B = rand(10, 2, 2) })
    fails("ob.kernel: dtype 'z' but A and B are '<f8'", "tsmttsm", { A = A, B = rand(10, 2, 1), dtype = "z" })
    fails("ob.kernel: K = 11 but A is 10 x 3 and B 10 x 2", "tsmttsm", { A = A, B = rand(10, 2, 1), K = 11 })
    fails("ob.kernel: A is 10 x 70 and B 10 x 2: K (the rows of A) must be at least 1, M and N (the columns) in 1..64",
          "tsmttsm", { A = rand(10, 70, 1), B = rand(10, 2, 1) })
    fails("ob.kernel: A: a 2-D matrix expected (a Vector with a shape {rows, cols}: ob.load's, or v:reshape's), "
          .. "got 6 numbers without a shape", "tsmttsm", { A = ob.vector(6), B = B })
    fails("got shape {6}", "tsmttsm", { A = ob.vector(6):reshape { 6 }, B = B })
    fails("ob.kernel: B: a matrix expected (a Vector with a 2-D shape, or a .npy file name), got table",
          "tsmttsm", { A = A, B = { 1, 2 } })
    fails("ob.kernel: A: ob.load: " .. dir .. "/none.npy", "tsmttsm", { A = dir .. "/none.npy", B = B })
    fails("ob.kernel: M, N and K are required (or the matrices A and C)", "tsmm", { M = 2 })
  end)
end)
