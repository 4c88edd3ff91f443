-- reservoir_spec.lua: ob.reservoir, grid:matrix, A:spmv, ob.krylov (CPU).
local ok_ob, ob = pcall(require, os.getenv("OB_SPARSE_MODULE") or "odebench")

describe("ob.reservoir", function()
  if not (ok_ob and ob.reservoir) then
    pending("ob.reservoir is not registered in this build")
    return
  end

  it("builds GH in every format with equal SpMV", function()
    for _, pat in ipairs { "b", "h" } do
      local g = ob.reservoir { J = 3, H = 5, I = 3, k = 2, wells = 2, pattern = pat, seed = 4 }
      local info = g:info()
      assert.equal(3 * 5 * 3 * 2 + 2, info.n)
      local x = {}
      for i = 1, info.n do x[i] = math.sin(i) end
      local y0 = g:matrix("csr"):spmv(x)
      for _, f in ipairs { "bsr", "ell", "hyb", "dia", "bdia" } do
        local A = g:matrix(f)
        assert.equal(f, A:info().format)
        assert.is_true(A:spmv(x):max_rel_err(y0) <= 1e-14, f)
      end
    end
  end)

  it("solves to the known solution with BiCGStab and QMR", function()
    local g = ob.reservoir { J = 4, H = 5, I = 3, k = 3, wells = 3, pattern = "h", seed = 9 }
    local A = g:matrix("csr")
    local b, xs = g:rhs(A)
    for _, m in ipairs { "bicgstab", "qmr" } do
      local r = ob.krylov { A = A, b = b, method = m, tol = 1e-10, maxit = 300 }
      assert.is_true(r.converged, m)
      assert.equal("converged", r.outcome)
      assert.is_true(r.relres_true <= 1e-10)
      assert.is_true(r.x:max_rel_err(xs) <= 1e-8)
      assert.equal(r.iters + 1, #r.history)
    end
  end)

  it("refuses bad input with the reason", function()
    local ok, err = pcall(ob.reservoir, { J = 0, H = 2, I = 2 })
    assert.is_false(ok)
    assert.matches("field 'J': must be in 1..1073741824, got 0", err, 1, true)
    ok, err = pcall(ob.reservoir, { H = 2, I = 2 })
    assert.is_false(ok)
    assert.matches("must be positive", err, 1, true)
    ok, err = pcall(ob.reservoir, { J = 2, H = 2, I = 2, wells = 5 })
    assert.is_false(ok)
    assert.matches("5 wells do not fit", err, 1, true)
    ok, err = pcall(ob.reservoir, { J = 2, H = 2, I = 2, k = 17 })
    assert.is_false(ok)
    local g = ob.reservoir { J = 2, H = 2, I = 2 }
    ok, err = pcall(g.matrix, g, "coo")
    assert.is_false(ok)
    assert.matches("unknown sparse format", err, 1, true)
  end)

  it("converts CSR to every format with equal SpMV", function()
    local g = ob.reservoir { J = 5, H = 3, I = 4, k = 3, wells = 2, pattern = "h", seed = 3 }
    local A = g:matrix("csr")
    local x = {}
    for i = 1, A:info().n do x[i] = math.cos(3 * i) end
    local y0 = A:spmv(x)
    for _, f in ipairs { "csr", "bsr", "ell", "hyb", "dia" } do
      local B = A:convert(f, { bs = 3 })
      assert.equal(f, B:info().format)
      assert.is_true(B:spmv(x):max_rel_err(y0) <= 1e-14, f)
      B:close()
    end
  end)

  it("refuses a conversion over the memory limit, naming the size", function()
    local g = ob.reservoir { J = 4, H = 4, I = 4, k = 2, pattern = "b" }
    local A = g:matrix("csr")
    local need = A:info().bytes
    for _, f in ipairs { "csr", "bsr", "ell", "hyb", "dia", "bdia" } do
      local ok, err = pcall(g.matrix, g, f, { max_bytes = 1000 })
      assert.is_false(ok, f)
      assert.matches("needs %d+ bytes.*limit 1000", err)
    end
    local ok, err = pcall(g.matrix, g, "csr", { max_bytes = 1000 })
    assert.is_false(ok)
    assert.matches("CSR needs " .. need .. " bytes, limit 1000", err, 1, true)
    ok, err = pcall(A.convert, A, "dia", { max_bytes = 64 })
    assert.is_false(ok)
    assert.matches("DIA needs %d+ bytes %(%d+ diagonals%), limit 64", err)
    ok, err = pcall(A.convert, A, "bsr", { bs = 0 })
    assert.is_false(ok)
    assert.matches("bs must be in 1..64, got 0", err, 1, true)
    ok, err = pcall(g.matrix, g, "csr", { backend = "metal" })
    assert.is_false(ok)
    assert.matches('backend must be "cpu" or "cuda", got "metal"', err, 1, true)
    ok, err = pcall(g.matrix, g, "csr", { max_bytes = -5 })
    assert.is_false(ok)
    assert.matches("max_bytes must be positive", err, 1, true)
    local B = g:matrix("bsr")
    ok, err = pcall(B.convert, B, "ell")
    assert.is_false(ok)
    assert.matches("conversion needs a CSR source", err, 1, true)
  end)

  it("names a wrong vector length", function()
    local g = ob.reservoir { J = 2, H = 3, I = 2, k = 2, wells = 1 }
    local A = g:matrix("bdia")
    local ok, err = pcall(A.spmv, A, { 1, 2, 3 })
    assert.is_false(ok)
    assert.matches("x has 3 entries, the matrix order is 25", err, 1, true)
  end)

  it("runs the SpMV scenario quickly, or says there is no GPU (exit 0)", function()
    local bin, src = os.getenv("ODEBENCH_BIN"), os.getenv("ODEBENCH_SRC")
    if not (bin and src) then return end
    local out = os.tmpname()
    local cmd = string.format("env -u LD_PRELOAD %q %q --ui none --quiet --out %q "
      .. "--set V=6 --set k=2 --set patterns=b,h --set formats=csr,bsr,bdia --set reps=3 "
      .. "--set tune_reps=1 >%q 2>&1", bin, src .. "/scenarios/reservoir_spmv.lua",
      out .. ".d", out)
    local ok = os.execute(cmd)
    local f = io.open(out)
    local text = f and f:read("a") or ""
    if f then f:close() end
    os.execute(string.format("rm -rf %q %q", out, out .. ".d"))
    assert.is_true(ok == true, text)
    assert.is_truthy(text:find("no GPU", 1, true) or text:find("cusparse_csr", 1, true), text)
  end)

  -- Runs on a machine with a GPU as well as without one: without, A:gpu()
  -- must say why (no CUDA in the build, or no device).
  it("copies a matrix to the GPU or says why it cannot", function()
    local g = ob.reservoir { J = 3, H = 4, I = 5, k = 2, wells = 2, pattern = "h", seed = 8 }
    local x = {}
    for i = 1, g:info().n do x[i] = math.sin(7 * i) end
    for _, f in ipairs { "csr", "bsr", "ell", "hyb", "dia", "bdia" } do
      local A = g:matrix(f)
      local ok, D = pcall(A.gpu, A)
      if not ok then
        assert.matches("CUDA", D)
        local ok2, err2 = pcall(g.matrix, g, f, { backend = "cuda" })
        assert.is_false(ok2)
        assert.matches("CUDA", err2)
      else
        local y0 = A:spmv(x)
        assert.is_true(D:spmv(x):max_rel_err(y0) <= 1e-13, f)
        local info = D:info()
        assert.equal(f, info.format)
        assert.is_true(info.bytes > 0)
        local okl, errl = pcall(D.spmv, D, { 1, 2 })
        assert.is_false(okl)
        assert.matches("x has 2 entries, the matrix order is " .. g:info().n, errl, 1, true)
        local oki, erri = pcall(D.bench, D, { impl = "mkl" })
        assert.is_false(oki)
        assert.matches('impl must be "ours" or "cusparse"', erri, 1, true)
        local t, cfg = D:tune { reps = 2 }
        assert.is_true(t > 0)
        assert.matches("block=%d+ grain=%d+ shared_x=[01]", cfg)
        assert.is_true(D:bench { reps = 3 } > 0)
        if f == "csr" or f == "bsr" then
          assert.is_true(D:spmv(x, "cusparse"):max_rel_err(y0) <= 1e-13, f)
          assert.is_true(D:bench { impl = "cusparse", reps = 3 } > 0)
        else
          local okc = pcall(D.bench, D, { impl = "cusparse" })
          assert.is_false(okc)
        end
        local oks, errs = pcall(D.set, D, { block = 100 })
        assert.is_false(oks)
        assert.matches("block must be a multiple of 32", errs, 1, true)
        if f == "bdia" then
          D:set { stream = 1 }
          assert.is_true(D:spmv(x):max_rel_err(y0) <= 1e-13, "bdia stream")
        else
          local okst, errst = pcall(D.set, D, { stream = 1 })
          assert.is_false(okst)
          assert.matches("stream applies to bdia only", errst, 1, true)
        end
        D:close()
        local okc, errc = pcall(D.info, D)
        assert.is_false(okc)
        assert.matches("closed", errc, 1, true)
      end
      A:close()
    end
  end)
end)
