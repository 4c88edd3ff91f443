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
end)
