-- files_spec.lua: a user's own data: ob.matrix{file = ...}, A:write,
-- ob.load, v:save (lua/odb_lua_files.c), the odebench program's exit
-- status 2 for a bad file, and the files read by NumPy and SciPy when a
-- python3 with both is importable ($ODEBENCH_PYTHON, else python3).
local ob = require "odebench"
local H = dofile(os.getenv("ODEBENCH_SRC") .. "/tests/lua/spec_helpers.lua")

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- The error of f(...) must contain msg.
local function fails(msg, f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok, msg)
  assert.is_truthy(tostring(err):find(msg, 1, true), tostring(err))
end

local function ramp(n)
  local x = ob.vector(n)
  for i = 1, n do x[i] = math.sin(i) + i / n end
  return x
end

describe("ob.matrix and A:write", function()
  local dir
  setup(function() dir = H.tmpdir("files") end)
  teardown(H.cleanup)

  it("writes every format and reads it back in every format that applies", function()
    local g = ob.reservoir { J = 4, H = 3, I = 3, k = 2, wells = 2, pattern = "h", seed = 3 }
    local n = g:info().n
    local x = ramp(n)
    local y0 = g:matrix("csr"):spmv(x)
    for _, f in ipairs { "csr", "bsr", "ell", "hyb", "dia", "bdia" } do
      local A = g:matrix(f)
      local file = dir .. "/gh_" .. f .. ".mtx"
      A:write(file)
      local B = ob.matrix { file = file }
      assert.equal("csr", B:info().format)
      assert.equal(n, B:info().n)
      assert.is_true(B:spmv(x):max_rel_err(y0) <= 1e-15, f)
    end
    for _, f in ipairs { "bsr", "ell", "hyb", "dia" } do
      local B = ob.matrix { file = dir .. "/gh_csr.mtx", format = f, bs = 2 }
      assert.equal(f, B:info().format)
      assert.is_true(B:spmv(x):max_rel_err(y0) <= 1e-15, f)
    end
    local B = ob.matrix { file = dir .. "/gh_csr.mtx", format = "bdia",
                          grid = { J = 4, H = 3, I = 3, k = 2, wells = 2, pattern = "h" } }
    assert.equal("bdia", B:info().format)
    assert.is_true(B:spmv(x):max_rel_err(y0) <= 1e-15)
  end)

  it("expands symmetric files, sums duplicates and reports progress", function()
    local file = dir .. "/sym.mtx"
    write(file, "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 2\n2 1 -1\n2 1 -0.5\n3 3 4\n")
    local seen = {}
    local A = ob.matrix { file = file, progress = function(done, total) seen[#seen + 1] = done / total end }
    assert.same({ 2, -1.5, 0, -1.5, 0, 0, 0, 0, 4 },
                (function() local t = {} for j = 1, 3 do
                   local e = ob.vector(3) e[j] = 1
                   local c = A:spmv(e)
                   for i = 1, 3 do t[(i - 1) * 3 + j] = c[i] end end return t end)())
    assert.equal(4, A:info().nnz)
    assert.equal(1, seen[#seen])
  end)

  it("refuses bad files, formats that do not apply and bad options with the reason", function()
    local bad = dir .. "/bad.mtx"
    write(bad, "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n3 1 nan\n")
    fails("ob.matrix: " .. bad .. ": line 4: row index 3 out of range 1..2", ob.matrix, { file = bad })
    write(bad, "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 1 nan\n")
    fails(bad .. ": line 4: value 'nan' is not finite (a matrix holds finite numbers only)", ob.matrix, { file = bad })
    write(bad, "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n")
    fails("line 1: field 'complex' is not read: odebench's matrices are real (float64)", ob.matrix, { file = bad })
    local g = ob.reservoir { J = 3, H = 3, I = 2, k = 1, wells = 1 }
    g:matrix("csr"):write(dir .. "/g.mtx")
    fails("ob.matrix: bdia does not apply without the grid the matrix comes from", ob.matrix,
          { file = dir .. "/g.mtx", format = "bdia" })
    fails("ob.matrix: the matrix has order 19, the grid's GH has order 10", ob.matrix,
          { file = dir .. "/g.mtx", format = "bdia", grid = { J = 3, H = 3, I = 1, k = 1, wells = 1 } })
    fails("field 'file': string (a .mtx file name) expected, got nil", ob.matrix, { format = "csr" })
    fails("unknown field 'fiel'", ob.matrix, { fiel = "x" })
    fails("unknown sparse format 'coo'", ob.matrix, { file = dir .. "/g.mtx", format = "coo" })
    fails("boom", ob.matrix, { file = dir .. "/g.mtx", progress = function() error("boom") end })
  end)

  it("leaves nothing half-written and the old file in place when a write fails", function()
    local g = ob.reservoir { J = 2, H = 2, I = 2, k = 1 }
    fails("A:write: " .. dir .. "/no/such.mtx: cannot create the file: No such file or directory",
          function() g:matrix("csr"):write(dir .. "/no/such.mtx") end)
    assert.is_nil(io.open(dir .. "/no/such.mtx"))
  end)
end)

describe("ob.load and v:save", function()
  local dir
  setup(function() dir = H.tmpdir("files") end)
  teardown(H.cleanup)

  it("round-trips 1-D and 2-D arrays, float64 and complex128, C and Fortran order", function()
    local v = ob.vector { 1, 2, 3, 4, 5, 6 }
    for _, case in ipairs {
      { opts = nil, shape = { 6 }, dtype = "<f8", order = "C" },
      { opts = { shape = { 2, 3 } }, shape = { 2, 3 }, dtype = "<f8", order = "C" },
      { opts = { shape = { 3, 2 }, order = "F" }, shape = { 3, 2 }, dtype = "<f8", order = "F" },
      { opts = { dtype = "<c16" }, shape = { 3 }, dtype = "<c16", order = "C" },
      { opts = { shape = { 1, 3 }, dtype = "<c16", order = "F" }, shape = { 1, 3 }, dtype = "<c16", order = "F" },
    } do
      local file = dir .. "/v.npy"
      v:save(file, case.opts)
      local w, info = ob.load(file)
      assert.same(v:totable(), w:totable())
      assert.same(case.shape, info.shape)
      assert.equal(case.dtype, info.dtype)
      assert.equal(case.order, info.order)
    end
  end)

  it("loads a Matrix Market array as its values in row-major order", function()
    write(dir .. "/a.mtx", "%%MatrixMarket matrix array real general\n2 3\n1\n4\n2\n5\n3\n6\n")
    local w, info = ob.load(dir .. "/a.mtx")
    assert.same({ 1, 2, 3, 4, 5, 6 }, w:totable())
    assert.same({ 2, 3 }, info.shape)
  end)

  it("refuses bad files and shapes with the reason", function()
    local bad = dir .. "/bad.npy"
    write(bad, "\x93NUMPY\1\0\58\0{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }\n" .. ("\0"):rep(8))
    fails("ob.load: " .. bad .. ": byte offset 20: dtype '>f8' is big-endian (odebench reads little-endian '<f8' and '<c16')",
          ob.load, bad)
    write(bad, "not numpy")
    fails(bad .. ": byte offset 0: not a .npy file", ob.load, bad)
    local v = ob.vector { 1, 2, 3 }
    fails("v:save: shape {2, 2} holds 4 numbers, the Vector has 3", v.save, v, dir .. "/x.npy", { shape = { 2, 2 } })
    fails("v:save: dtype \"<c16\" takes pairs (re, im); the Vector has 3 numbers", v.save, v, dir .. "/x.npy", { dtype = "<c16" })
    fails("v:save: dtype must be \"<f8\" or \"<c16\", got \"<f4\"", v.save, v, dir .. "/x.npy", { dtype = "<f4" })
    assert.is_nil(io.open(dir .. "/x.npy"))
  end)
end)

describe("a Vector's shape", function()
  local dir
  setup(function() dir = H.tmpdir("files") end)
  teardown(H.cleanup)

  it("comes from ob.load, v:reshape and v:copy, and v:save writes it", function()
    local v = ob.vector { 1, 2, 3, 4, 5, 6 }
    local s, dt = v:shape()
    assert.same({ 6 }, s)
    assert.equal("<f8", dt)
    assert.equal(v, v:reshape { 2, 3 })
    assert.same({ 2, 3 }, (v:shape()))
    v:save(dir .. "/s.npy")                  -- the shape it carries
    local w, info = ob.load(dir .. "/s.npy")
    assert.same({ 2, 3 }, info.shape)
    assert.same({ 2, 3 }, (w:shape()))
    assert.same({ 2, 3 }, (w:copy():shape()))
    v:reshape({ 3 }, "<c16")
    s, dt = v:shape()
    assert.same({ 3 }, s)
    assert.equal("<c16", dt)
    v:save(dir .. "/c.npy")
    w, info = ob.load(dir .. "/c.npy")
    assert.equal("<c16", info.dtype)
    assert.same({ 3 }, info.shape)
    assert.equal("<c16", select(2, w:shape()))
    v:save(dir .. "/f.npy", { dtype = "<f8" })   -- a dtype given: 1-D of its count
    assert.same({ 6 }, select(2, ob.load(dir .. "/f.npy")).shape)
  end)

  it("refuses a shape that does not hold the values", function()
    local v = ob.vector { 1, 2, 3 }
    fails("v:reshape: shape {2, 2} holds 4 numbers, the Vector has 3", v.reshape, v, { 2, 2 })
    fails("v:reshape: shape {3} holds 6 numbers (re, im pairs), the Vector has 3", v.reshape, v, { 3 }, "<c16")
    fails("v:reshape: shape must have 1 or 2 dimensions, got 3", v.reshape, v, { 1, 1, 3 })
    fails("v:reshape: dtype must be \"<f8\" or \"<c16\", got \"<f4\"", v.reshape, v, { 3 }, "<f4")
    fails("shape[1]: must be in 0..1099511627776, got -3", v.reshape, v, { -3 })
    assert.same({ 3 }, (v:shape()))
  end)
end)

describe("A:bench and A:convert", function()
  it("times the CPU SpMV in A's format and records an spmv row", function()
    local g = ob.reservoir { J = 6, H = 5, I = 4, k = 2 }
    local A = g:matrix("bsr")
    local sec, row = A:bench { reps = 3, threads = 2 }
    assert.is_true(sec > 0)
    assert.equal(sec, row.seconds)
    assert.equal("spmv", row.kind)
    assert.equal("bsr", row.format)
    assert.equal("cpu", row.backend)
    assert.equal(2, row.threads)
    assert.equal(3, row.reps)
    assert.equal(g:info().n, row.n)
    assert.equal(A:info().nnz, row.nnz)
    assert.equal(A:info().bytes, row.bytes)
    fails("field 'threads': must be in 0..", A.bench, A, { threads = -1 })
    fails("unknown field 'rep'", A.bench, A, { rep = 1 })
  end)

  it("refuses a format that does not apply with the reason", function()
    -- the diagonal and 20 entries on 20 other diagonals: DIA would store
    -- 21 x 40 values for 60 nonzeros
    local file = H.tmpdir("files") .. "/wide.mtx"
    local f = assert(io.open(file, "w"))
    f:write("%%MatrixMarket matrix coordinate real general\n40 40 60\n")
    for i = 1, 40 do f:write(("%d %d 1\n"):format(i, i)) end
    for j = 2, 21 do f:write(("1 %d 0.5\n"):format(j)) end
    f:close()
    local A = ob.matrix { file = file }
    fails("dia does not apply: the 60 nonzeros lie on 21 diagonals", A.convert, A, "dia")
    fails("bdia does not apply without the grid the matrix comes from", A.convert, A, "bdia")
    assert.equal("ell", A:convert("ell"):info().format)
  end)
end)

describe("the odebench program", function()
  teardown(H.cleanup)

  it("exits 2 naming the file and line of a bad matrix, writing no results", function()
    local dir = H.tmpdir("files")
    write(dir .. "/bad.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 x\n")
    write(dir .. "/s.lua", 'local ob = require "odebench"\nob.matrix{file = "bad.mtx"}\n')
    local cmd = ("cd %s && env -u LD_PRELOAD %s s.lua --out %s >out 2>err")
      :format(H.q(dir), H.q(H.BIN), H.q(dir .. "/run"))
    local _, _, code = os.execute(cmd)
    local err = H.slurp(dir .. "/err") or ""
    assert.equal(2, code, err)
    assert.is_truthy(err:find("bad.mtx: line 3: expected a real value, got 'x'", 1, true), err)
    assert.is_false(H.exists(dir .. "/run/results.json"))
  end)
end)

describe("NumPy and SciPy read and write the same files", function()
  local py = os.getenv("ODEBENCH_PYTHON") or "python3"
  local have = H.sh_ok(py .. " -c 'import numpy, scipy.io' >/dev/null 2>&1")
  if not have then
    print("# files_spec: skipping the NumPy/SciPy check: " .. py .. " cannot import numpy and scipy")
    pending("python3 with numpy and scipy is not importable")
    return
  end
  teardown(H.cleanup)

  -- Runs a Python program; its standard output.
  local function python(src)
    local dir = H.tmpdir("files-py")
    write(dir .. "/p.py", src)
    local p = assert(io.popen(py .. " " .. H.q(dir .. "/p.py") .. " 2>&1"))
    local out = p:read("a")
    local ok = p:close()
    assert.is_true(ok, out)
    return out
  end

  it("gives the same SpMV from our file read by scipy.io.mmread and from SciPy's file read by ob.matrix", function()
    local dir = H.tmpdir("files")
    local g = ob.reservoir { J = 5, H = 4, I = 3, k = 3, wells = 3, pattern = "h", seed = 5 }
    local A = g:matrix("csr")
    local n = g:info().n
    A:write(dir .. "/ours.mtx")
    local x = ramp(n)
    x:save(dir .. "/x.npy")
    A:spmv(x):save(dir .. "/y.npy")
    local out = python(([[
import numpy as np, scipy.io, scipy.sparse
A = scipy.sparse.csr_matrix(scipy.io.mmread("%s/ours.mtx"))
x = np.load("%s/x.npy"); y = np.load("%s/y.npy")
print("ours-in-scipy", np.max(np.abs(A @ x - y)) / np.max(np.abs(y)))
B = scipy.sparse.random(60, 60, density=0.1, random_state=1, format="coo") + scipy.sparse.eye(60)
B = B.tocoo(); B.data = B.data * 1e-3 - 0.7
scipy.io.mmwrite("%s/scipy.mtx", B, precision=17)
xs = np.linspace(-1, 1, 60); np.save("%s/xs.npy", xs); np.save("%s/ys.npy", B.tocsr() @ xs)
]]):format(dir, dir, dir, dir, dir, dir))
    local err = tonumber(out:match("ours%-in%-scipy (%S+)"))
    assert.is_true(err ~= nil and err <= 1e-15, out)
    local B = ob.matrix { file = dir .. "/scipy.mtx" }
    local xs = ob.load(dir .. "/xs.npy")
    local ys = ob.load(dir .. "/ys.npy")
    assert.is_true(B:spmv(xs):max_rel_err(ys) <= 1e-15)
  end)

  it("round-trips every dtype and order through np.load and np.save", function()
    local dir = H.tmpdir("files")
    local v = ob.vector { 1.5, -2.25, 3e-300, 4e300, 5, 6, 7, 8, 9, 10, 11, 12 }
    v:save(dir .. "/f_c.npy", { shape = { 3, 4 } })
    v:save(dir .. "/f_f.npy", { shape = { 3, 4 }, order = "F" })
    v:save(dir .. "/c_c.npy", { shape = { 2, 3 }, dtype = "<c16" })
    v:save(dir .. "/c_f.npy", { shape = { 2, 3 }, dtype = "<c16", order = "F" })
    local out = python(([[
import numpy as np
v = np.array([1.5, -2.25, 3e-300, 4e300, 5, 6, 7, 8, 9, 10, 11, 12])
a = np.load("%s/f_c.npy"); b = np.load("%s/f_f.npy")
c = np.load("%s/c_c.npy"); d = np.load("%s/c_f.npy")
z = v[0::2] + 1j * v[1::2]
ok = (np.array_equal(a, v.reshape(3, 4)) and np.array_equal(b, v.reshape(3, 4)) and b.flags.f_contiguous
      and np.array_equal(c, z.reshape(2, 3)) and np.array_equal(d, z.reshape(2, 3)) and d.flags.f_contiguous)
print("loaded", ok)
np.save("%s/np_f.npy", np.asfortranarray(v.reshape(4, 3)))
np.save("%s/np_c.npy", z.reshape(3, 2))
]]):format(dir, dir, dir, dir, dir, dir))
    assert.is_truthy(out:find("loaded True", 1, true), out)
    local w, info = ob.load(dir .. "/np_f.npy")
    assert.same(v:totable(), w:totable())
    assert.equal("F", info.order)
    w, info = ob.load(dir .. "/np_c.npy")
    assert.same(v:totable(), w:totable())
    assert.equal("<c16", info.dtype)
    assert.same({ 3, 2 }, info.shape)
  end)
end)
