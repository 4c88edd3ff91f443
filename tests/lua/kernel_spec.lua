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
