-- hardening_data_spec.lua: the batched, block-tridiagonal, sparse and tall
-- & skinny entry points (ob.batched, ob.blocktridiag, ob.reservoir,
-- A:spmv, ob.krylov, ob.kernel) refuse shapes whose memory cannot be
-- addressed, indices out of range (counted from 1, values shown in full)
-- and tables with entries that are not numbers, each with an error naming
-- the argument; and a factorization that fails leaves every matrix and
-- block as it was, so that fixing the bad one and factoring again gives the
-- right answer.
local ob = require "odebench"
local H = dofile(os.getenv("ODEBENCH_SRC") .. "/tests/lua/spec_helpers.lua")
teardown(H.cleanup)

-- f(...) raises an error containing msg (plain text).
local function refuses(msg, f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok, msg)
  assert.is_truthy(tostring(err):find(msg, 1, true), tostring(err))
end

-- Runs the scenario text src under the odebench program: exit status, its
-- standard error, and whether the output directory was written.
local function run_scenario(src)
  local dir = H.tmpdir("hardening")
  local f = assert(io.open(dir .. "/s.lua", "w"))
  f:write('local ob = require "odebench"\n', src, "\n")
  f:close()
  local cmd = ("cd %s && env -u LD_PRELOAD %s s.lua --out %s >out 2>err")
    :format(H.q(dir), H.q(H.BIN), H.q(dir .. "/run"))
  local _, _, code = os.execute(cmd)
  return code, H.slurp(dir .. "/err") or "", H.exists(dir .. "/run")
end

-- The values of a Vector as a plain list.
local function list(v) return v:totable() end

describe("shapes whose memory cannot be addressed", function()
  it("ob.blocktridiag names the shape and the bytes it would need", function()
    refuses("ob.blocktridiag: lines = 8589934592, length = 4194304, block = 32: "
            .. "the blocks would need 8.85e+20 bytes, more than this machine can address",
            ob.blocktridiag, { lines = 2^33, length = 2^22, block = 32 })
    refuses("lines = 1099511627776, length = 1073741824, block = 32: the blocks would need",
            ob.blocktridiag, { lines = 2^40, length = 2^30, block = 32 })
    refuses("field 'lines': must be in 1..1099511627776, got 1099511627777",
            ob.blocktridiag, { lines = 2^40 + 1, length = 2, block = 2 })
    refuses("field 'length': must be in 1..1073741824, got 4294967297",
            ob.blocktridiag, { lines = 2, length = 2^32 + 1, block = 2 })
  end)

  it("ob.kernel refuses a K whose matrices do not fit, on every kind", function()
    for _, name in ipairs { "tsmm", "tsmttsm" } do
      for _, dt in ipairs { "d", "z" } do
        for _, K in ipairs { 2^55, 2^54, math.maxinteger } do
          refuses(("ob.kernel: %s %s M = 64, N = 64, K = %d: its matrices would need")
                  :format(name, dt, K), ob.kernel, name,
                  { M = 64, N = 64, K = K, dtype = dt, backend = "cpu" })
        end
      end
    end
    refuses("field 'K': integer expected, got 9.2233720368548e+18", ob.kernel,
            "tsmm", { M = 4, N = 4, K = 2^63, backend = "cpu" })
    -- a K that fits still runs and gives the product
    local k = ob.kernel("tsmm", { M = 3, N = 5, K = 5000, backend = "cpu" })
    assert.is_true(k:check() < 1e-13)
    k:close()
  end)

  it("ob.batched and ob.reservoir name the field and the value in full", function()
    refuses("field 'n': must be in 1..1099511627776, got 2199023255552",
            ob.batched, { n = 2^41, block = 3 })
    refuses("field 'block': integer expected, got 2.5",
            ob.batched, { n = 4, block = 2.5 })
    refuses("field 'vl': must be in 0..64, got 4294967300",
            ob.batched, { n = 4, block = 3, vl = 2^32 + 4 })
    refuses("field 'J': must be in 1..1073741824, got 4294967299",
            ob.reservoir, { J = 2^32 + 3, H = 2, I = 2 })
    refuses("reservoir of 1073741824 x 1073741824 x 1073741824 cells, k = 1 and 0 wells "
            .. "has order 1.238e+27, more than the 32-bit indices allow",
            ob.reservoir, { J = 2^30, H = 2^30, I = 2^30 })
  end)

  it("makes the odebench program exit 2 with the reason, writing nothing", function()
    local code, err, wrote = run_scenario(
      "ob.blocktridiag { lines = 2^33, length = 2^22, block = 32 }")
    assert.are.equal(2, code, err)
    assert.is_truthy(err:find("the blocks would need 8.85e+20 bytes", 1, true), err)
    assert.is_false(wrote, err)
    code, err, wrote = run_scenario(
      'ob.kernel("tsmm", { M = 64, N = 64, K = 2^55, backend = "cpu" }):time(1)')
    assert.are.equal(2, code, err)
    assert.is_truthy(err:find("K = 36028797018963968: its matrices would need", 1, true), err)
    assert.is_false(wrote, err)
  end)
end)

describe("indices", function()
  it("blocktridiag lines and rows are checked in full, counting from 1", function()
    local t = ob.blocktridiag { lines = 3, length = 4, block = 2 }
    refuses("row: must be in 1..4, got 4294967297", t.set, t, 1, 2^32 + 1, "D",
            { 5, 6, 7, 8 })
    refuses("row: must be in 1..4, got 4294967298", t.get, t, 1, 2^32 + 2, "D")
    refuses("line: must be in 1..3, got 4294967297", t.get, t, 2^32 + 1, 1, "D")
    refuses("line: must be in 1..3, got 0", t.set, t, 0, 1, "D", { 5, 6, 7, 8 })
    refuses("line: must be in 1..3, got -1", t.get, t, -1, 1, "D")
    refuses("row: must be an integer in 1..4, got 2.5", t.get, t, 1, 2.5, "D")
    -- nothing was written: rows 1 and 2 of line 1 still hold the identity
    assert.are.same({ 1, 0, 0, 1 }, list(t:get(1, 1, "D")))
    assert.are.same({ 1, 0, 0, 1 }, list(t:get(1, 2, "D")))
    t:set(3, 4, "D", { 5, 6, 7, 8 })
    assert.are.same({ 5, 6, 7, 8 }, list(t:get(3, 4, "D")))
  end)

  it("batched matrices and kernel repetitions are checked in full", function()
    local m = ob.batched { n = 10, block = 2 }
    refuses("matrix: must be in 1..10, got 4294967297", m.get, m, 2^32 + 1)
    refuses("matrix: must be in 1..10, got 0", m.set, m, 0, { 1, 2, 3, 4 })
    assert.are.same({ 1, 0, 0, 1 }, list(m:get(1)))
    local k = ob.kernel("tsmm", { M = 4, N = 4, K = 100, backend = "cpu" })
    refuses("reps: must be in 1..1000, got 4294967297", k.time, k, 2^32 + 1)
    k:close()
  end)

  it("bench repetitions name the field and the value in full", function()
    local m = ob.batched { n = 4, block = 3 }
    refuses("field 'reps': must be in 1..1000, got 4294967297", m.bench, m,
            { op = "lu", reps = 2^32 + 1 })
    local t = ob.blocktridiag { lines = 2, length = 2, block = 2 }
    refuses("field 'reps': must be in 1..1000, got 4294967297", t.bench, t,
            { op = "factor", reps = 2^32 + 1 })
  end)
end)

describe("tables of numbers", function()
  local g = ob.reservoir { J = 3, H = 3, I = 3, k = 2 }
  local A = g:matrix("csr")
  local n = g:info().n

  local function filled(v)
    local t = {}
    for i = 1, n do t[i] = v end
    return t
  end

  it("A:spmv refuses an entry that is not a number, naming its place", function()
    refuses("x: entry 1: number expected, got string", A.spmv, A, filled("x"))
    local x = filled(1)
    x[7] = true
    refuses("x: entry 7: number expected, got boolean", A.spmv, A, x)
    x[7] = "1"   -- a numeric string is still a string
    refuses("x: entry 7: number expected, got string", A.spmv, A, x)
    -- NaN is a value an SpMV carries through
    x[7] = 0 / 0
    local y = A:spmv(x)
    local nan = 0
    for i = 1, n do if y[i] ~= y[i] then nan = nan + 1 end end
    assert.is_true(nan > 0 and nan < n)
  end)

  it("ob.krylov refuses b and x0 with entries that are not numbers or NaN", function()
    refuses("b: entry 1: number expected, got string", ob.krylov,
            { A = A, b = filled("x") })
    local b = g:rhs(A)
    local bt = b:totable()
    bt[3] = 0 / 0
    refuses("b: entry 3 is NaN", ob.krylov, { A = A, b = bt })
    local bv = b:copy()
    bv[n] = 0 / 0
    refuses(("b: entry %d is NaN"):format(n), ob.krylov, { A = A, b = bv })
    local x0 = filled(0)
    x0[5] = {}
    refuses("x0: entry 5: number expected, got table", ob.krylov,
            { A = A, b = b, x0 = x0 })
    refuses("b: Vector or table expected, got nil", ob.krylov, { A = A })
    local r = ob.krylov { A = A, b = b, x0 = filled(0) }
    assert.is_true(r.converged and r.iters > 0 and r.relres_true < 1e-9)
  end)

  it("block values refuse entries that are not numbers, and NaN", function()
    local m = ob.batched { n = 2, block = 2 }
    refuses("value 2: number expected, got string", m.set, m, 1, { 1, "x", 3, 4 })
    refuses("value 3 is NaN", m.set, m, 1, { 1, 2, 0 / 0, 4 })
    refuses("value 4 is NaN", m.set, m, 1, ob.vector { 1, 2, 3, 0 / 0 })
    refuses("expected block*block = 4 values, got 3", m.set, m, 1, { 1, 2, 3 })
    assert.are.same({ 1, 0, 0, 1 }, list(m:get(1)))
    local t = ob.blocktridiag { lines = 2, length = 2, block = 2 }
    refuses("value 1: number expected, got nil", t.set, t, 1, 1, "C",
            { nil, 2, 3, 4, n = 4 })
    refuses("value 2 is NaN", t.set, t, 1, 1, "C", { 1, 0 / 0, 3, 4 })
    refuses("field 'dominance': a number expected, got NaN", t.random, t,
            { dominance = 0 / 0 })
    assert.are.same({ 0, 0, 0, 0 }, list(t:get(1, 1, "C")))
  end)
end)

describe("a failed factorization leaves everything as it was", function()
  -- max over matrices of ||A_p x_p - b_p|| / ||b_p||; A[p] row-major lists
  local function worst_residual(Am, x, b, nm, B)
    local worst = 0
    for p = 1, nm do
      local num, den = 0, 0
      for i = 1, B do
        local s = -b[(p - 1) * B + i]
        for j = 1, B do s = s + Am[p][(i - 1) * B + j] * x[(p - 1) * B + j] end
        num = num + s * s
        den = den + b[(p - 1) * B + i] ^ 2
      end
      worst = math.max(worst, math.sqrt(num / den))
    end
    return worst
  end

  it("batched lu(): one singular matrix, the others untouched, then the right answer", function()
    for _, lay in ipairs { "standard", "compact" } do
      local nm, B = 11, 5
      local m = ob.batched { n = nm, block = B, layout = lay }
      m:random { seed = 17 }                 -- diagonally dominant
      local Am = {}
      for p = 1, nm do Am[p] = list(m:get(p)) end
      local zero = {}
      for e = 1, B * B do zero[e] = 0 end
      m:set(7, zero)
      refuses("ob.batched lu: matrix 7 has a zero or tiny pivot at row 1", m.lu, m)
      assert.is_false(m:info().factored)
      for p = 1, nm do
        assert.are.same(p == 7 and zero or Am[p], list(m:get(p)), lay .. " matrix " .. p)
      end
      m:set(7, Am[7])
      m:lu()
      local b = ob.vector(nm * B)
      for i = 1, nm * B do b[i] = math.cos(0.3 * i) end
      local x = m:solve(b)
      assert.is_true(worst_residual(Am, x, b, nm, B) < 1e-13, lay)
    end
  end)

  it("blocktridiag factor(): a bad block row, every block untouched, then the right answer", function()
    for _, lay in ipairs { "standard", "compact" } do
      local lines, K, B = 6, 4, 3
      local t = ob.blocktridiag { lines = lines, length = K, block = B, layout = lay }
      t:random { seed = 9 }
      local blocks = {}                      -- blocks[line][row][kind]
      local kinds = { "A", "D", "C" }
      local function all_blocks()
        local got = {}
        for ln = 1, lines do
          got[ln] = {}
          for r = 1, K do
            got[ln][r] = {}
            for _, w in ipairs(kinds) do got[ln][r][w] = list(t:get(ln, r, w)) end
          end
        end
        return got
      end
      blocks = all_blocks()
      -- line 4, row 3: A_3 = 0 and D_3 = 0, so the updated diagonal block is 0
      local zero = {}
      for e = 1, B * B do zero[e] = 0 end
      t:set(4, 3, "A", zero)
      t:set(4, 3, "D", zero)
      refuses("blocktridiag factor: line 4 has a zero or tiny pivot in the diagonal "
              .. "block of row 3", t.factor, t)
      local now = all_blocks()
      for ln = 1, lines do
        for r = 1, K do
          for _, w in ipairs(kinds) do
            local want = (ln == 4 and r == 3 and w ~= "C") and zero or blocks[ln][r][w]
            assert.are.same(want, now[ln][r][w], ("%s line %d row %d %s"):format(lay, ln, r, w))
          end
        end
      end
      t:set(4, 3, "A", blocks[4][3].A)
      t:set(4, 3, "D", blocks[4][3].D)
      t:factor()
      local nv = lines * K * B
      local rhs = ob.vector(nv)
      for i = 1, nv do rhs[i] = math.sin(0.7 * i) end
      local x = t:solve(rhs)
      local worst = 0
      for ln = 1, lines do
        local num, den = 0, 0
        for r = 1, K do
          for i = 1, B do
            local at = ((ln - 1) * K + r - 1) * B + i
            local s = -rhs[at]
            for dw, w in ipairs(kinds) do
              local c = r + dw - 2
              if c >= 1 and c <= K then
                local blk = blocks[ln][r][w]
                for j = 1, B do
                  s = s + blk[(i - 1) * B + j] * x[((ln - 1) * K + c - 1) * B + j]
                end
              end
            end
            num = num + s * s
            den = den + rhs[at] ^ 2
          end
        end
        worst = math.max(worst, math.sqrt(num / den))
      end
      assert.is_true(worst < 1e-13, lay .. " worst line residual " .. worst)
    end
  end)
end)

describe("shapes that fit the address space but not the machine", function()
  it("are refused before anything is allocated, naming shape and bytes", function()
    refuses("K = 9007199254740992 would need", function()
      return ob.kernel("tsmm", { M = 4, N = 4, K = 2^53, backend = "cpu" })
    end)
    refuses("lines = 1048576, length = 1048576, block = 8 would need",
            ob.blocktridiag, { lines = 2^20, length = 2^20, block = 8 })
    refuses("n = 1099511627776 matrices of 4 x 4 would need",
            ob.batched, { n = 2^40, block = 4 })
    refuses("more than this machine's memory", ob.batched,
            { n = 2^40, block = 4 })
  end)
end)
