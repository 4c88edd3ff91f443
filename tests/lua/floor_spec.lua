-- floor_spec.lua: the floor fields of every timed row (odbL_floor_fields,
-- core/io/odb_floor.h, docs/floors.md): floor_bytes is the family's fewest
-- bytes counted by hand here, floor_pct and floor_bw come with the
-- machine's figures, floor_note only above 100 (and then says why); the
-- report marks such rows. No time is asserted.
local ob = require "odebench"
local report = require "odebench.report"

local H = dofile(assert(os.getenv("ODEBENCH_SRC"), "set ODEBENCH_SRC")
                 .. "/tests/lua/spec_helpers.lua")
teardown(H.cleanup)

-- floor_pct and floor_bw come together; the note only above 100, and
-- then one of the two notes (a tiny problem fits any cache: "in cache").
local function check_floor(r, bw, tiny)
  assert.is_number(r.floor_bytes)
  if r.floor_pct == nil then          -- no bandwidth figures on this machine
    assert.is_nil(r.floor_bw)
    assert.is_nil(r.floor_note)
    return
  end
  assert.is_true(r.floor_pct > 0)
  assert.are.equal(bw, r.floor_bw)
  assert.are.equal(r.floor_pct > 100, r.floor_note ~= nil,
                   ("floor_pct %g, note %s"):format(r.floor_pct, tostring(r.floor_note)))
  if r.floor_note and tiny then assert.are.equal("in cache", r.floor_note) end
end

describe("floor fields", function()
  it("a solve row: y read each attempt, ynew written each accepted step", function()
    local p = ob.problem("bruss2d", { N = 8 })           -- n = 128
    local s <close> = ob.solver { problem = p, method = "dopri5", variant = "fused",
                                  h = 1e-4 }
    local r = s:integrate { t1 = 1e-3, measure = { max_reps = 2 } }
    assert.are.equal(10, r.steps)
    assert.are.equal(8 * 128 * 10 + 8 * 128 * 10, r.floor_bytes)
    assert.is_true(r.bytes >= r.floor_bytes)             -- the variant's own count
    check_floor(r, "cpu read+copy 1t", true)
  end)

  it("an SpMV row: CSR values, int32 columns, int64 row pointers, x and y", function()
    local g = ob.reservoir { J = 3, H = 4, I = 3, k = 2, seed = 1 }
    local A = g:matrix("csr")
    local n, nnz = A:info().n, A:info().nnz
    local _, row = A:bench { threads = 1, reps = 2 }
    assert.are.equal(12 * nnz + 8 * (n + 1) + 8 * n + 8 * n, row.floor_bytes)
    check_floor(row, "cpu read+copy 1t", true)
    -- DIA: every nonzero inside the matrix, not the stored parts of a
    -- diagonal that lie outside it
    local D = A:convert("dia")
    local _, drow = D:bench { threads = 1, reps = 2 }
    assert.is_true(drow.floor_bytes >= 8 * nnz + 16 * n)
    assert.is_true(drow.floor_bytes < D:info().bytes + 16 * n)
    A:close(); D:close(); g:close()
  end)

  it("a Krylov row: A twice and 17 vectors an iteration (BiCGStab)", function()
    local g = ob.reservoir { J = 3, H = 4, I = 3, k = 2, seed = 1 }
    local A = g:matrix("csr")
    local n, nnz = A:info().n, A:info().nnz
    local b = g:rhs(A)
    local r = ob.krylov { A = A, b = b, method = "bicgstab", impl = "cpu", tol = 1e-8,
                          measure = { max_reps = 2 } }
    local per = 2 * (12 * nnz + 8 * (n + 1)) + 17 * 8 * n
    assert.are.equal(per, r.bytes_per_iter)
    assert.are.equal(per * r.iters, r.floor_bytes)
    assert.are.equal("cpu", r.backend)
    check_floor(r, "cpu read+copy 1t", true)
    A:close(); g:close()
  end)

  it("a kernel row: A^T B reads A and B once and writes the small C", function()
    local k <close> = ob.kernel("tsmttsm", { M = 2, N = 3, K = 1000, backend = "cpu",
                                             threads = 1 })
    local _, _, row = k:time(2)
    assert.are.equal(8 * (1000 * 2 + 1000 * 3) + 8 * 2 * 3, row.floor_bytes)
    check_floor(row, "cpu read+copy 1t", true)
  end)

  it("batched and block tridiagonal rows: in place, first rows kept", function()
    local m = ob.batched { n = 40, block = 4 }
    m:random { seed = 2 }
    local r = m:bench { op = "trsm", reps = 2 }
    -- L's 6 below the unit diagonal and X's 16 read, X's last 3 rows written
    assert.are.equal(40 * (6 + 16 + 12) * 8, r.floor_bytes)
    check_floor(r, "cpu read+copy 1t", true)
    m:close()
    local t = ob.blocktridiag { lines = 3, length = 5, block = 2 }
    local f = t:bench { op = "factor", reps = 2 }
    local blocks = 3 * (3 * 5 - 2) * 4
    assert.are.equal(8 * (2 * blocks - 3 * 5 * 2), f.floor_bytes)
    check_floor(f, "cpu read+copy 1t", true)
    t:close()
  end)

  it("the report marks a row above its floor and says why once", function()
    assert.are.equal("118.6*", report.floor { floor_pct = 118.6, floor_note = "in cache" })
    assert.are.equal("86.0", report.floor { floor_pct = 86 })
    assert.are.equal("86%", report.floor({ floor_pct = 86 }, "%.0f%%"))
    assert.are.equal("-", report.floor {})
    local lines = report.floor_notes { { floor_pct = 90 },
                                       { floor_pct = 120, floor_note = "in cache" },
                                       { floor_pct = 130, floor_note = "in cache" },
                                       { floor_pct = 140, floor_note = "floor to fix" } }
    assert.are.equal(2, #lines)
    assert.matches("in cache", lines[1], 1, true)
    assert.matches("floor to fix", lines[2], 1, true)
    assert.are.same({}, report.floor_notes { { floor_pct = 99 } })
    local text = report.format { { kind = "solve", label = "x", method = "m", variant = "v",
                                   steps = 1, accepted = 1, rejected = 0, seconds = 1,
                                   floor_pct = 150, floor_note = "in cache" } }
    assert.matches("150.0*", text, 1, true)
    assert.matches("* above 100% of the floor, in cache", text, 1, true)
  end)
end)
