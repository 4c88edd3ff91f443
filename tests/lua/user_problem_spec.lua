-- user_problem_spec.lua: ob.problem{...}, a problem defined in a scenario
-- (f as a Lua function, optional CUDA C of f_j), on the CPU.

local ob = require "odebench"

-- dy_i/dt = k (y_{i-1} - 2 y_i + y_{i+1}) - y_i^2, mirrored ends, d = 1.
local function heat(n, k)
  return function(t, y, f)
    for i = 1, n do
      local l = y[i > 1 and i - 1 or 2]
      local r = y[i < n and i + 1 or n - 1]
      f[i] = k * (l - 2 * y[i] + r) - y[i] * y[i]
    end
  end
end

-- Each case {definition, text}: ob.problem refuses the definition with an
-- error that contains text.
local function assert_refused(cases)
  for _, c in ipairs(cases) do
    local ok, err = pcall(ob.problem, c[1])
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find(c[2], 1, true), tostring(err))
  end
end

-- Classical RK4 with fixed h in plain Lua tables: the independent check.
local function rk4(f, y, h, steps)
  local n = #y
  local function add(a, b, c)
    local r = {}
    for i = 1, n do r[i] = a[i] + c * b[i] end
    return r
  end
  local function ev(v)
    local yv, fv = ob.vector(v), ob.vector(n)
    f(0, yv, fv)
    local r = {}
    for i = 1, n do r[i] = fv[i] end
    return r
  end
  for _ = 1, steps do
    local k1 = ev(y)
    local k2 = ev(add(y, k1, h / 2))
    local k3 = ev(add(y, k2, h / 2))
    local k4 = ev(add(y, k3, h))
    for i = 1, n do
      y[i] = y[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i])
    end
  end
  return y
end

describe("ob.problem{...} defined in a scenario", function()
  it("integrates with the plain variant like an independent RK4", function()
    local n, k = 37, 0.3
    local y0 = {}
    for i = 1, n do y0[i] = math.sin(i) * 0.5 + 0.6 end
    local p = ob.problem { name = "heat", n = n, d = 1, f = heat(n, k),
                           y0 = function(i) return y0[i] end }
    assert.are.equal(37, p.n)
    assert.are.equal(1, p.d)
    local s = ob.solver { problem = p, method = "rk4", backend = "cpu",
                          variant = "plain", h = 0.01 }
    s:integrate { t0 = 0, t1 = 0.5 }
    local ref = rk4(heat(n, k), { table.unpack(y0) }, 0.01, 50)
    local y = s:state()
    local worst = 0
    for i = 1, n do
      worst = math.max(worst, math.abs(y[i] - ref[i]) / math.abs(ref[i]))
    end
    assert.is_true(worst < 1e-13, "rel err " .. worst)
    s:close()
    p:close()
  end)

  it("refuses bad definitions with the field named", function()
    local f = function() end
    local cases = {
      { { n = 0, f = f, y0 = function() return 0 end }, "field 'n'" },
      { { n = 4, d = 5, f = f, y0 = function() return 0 end }, "field 'd'" },
      { { n = 4, y0 = function() return 0 end }, "field 'f'" },
      { { n = 4, f = f, y0 = ob.vector(3) }, "field 'y0'" },
      { { n = 4, f = f, y0 = function() return "x" end }, "field 'y0'" },
      { { n = 4, f = f, y0 = { 1, 2, 3 } }, "a list of 4 numbers, one per component, expected; got 3" },
      { { n = 2, f = f, y0 = { 1, "x" } }, "entry 2 is string" },
      { { n = 2, f = f, y0 = true }, "field 'y0'" },
      { { n = 4, f = f, y0 = ob.vector(4), params = { 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
        "field 'params'" },
      { { n = 4, f = f, y0 = ob.vector(4), colour = 1 }, "unknown field 'colour'" },
    }
    assert_refused(cases)
  end)

  it("keys its tunings by its label, n and the code of f", function()
    local function mk(f) return ob.problem { name = "k", n = 3, f = f, y0 = { 1, 2, 3 } } end
    local function neg() return function(t, y, f) for i = 1, 3 do f[i] = -y[i] end end end
    local a, b = mk(neg()), mk(neg())
    local c = mk(function(t, y, f) for i = 1, 3 do f[i] = y[i] end end)
    assert.is_truthy(a.key:find("^k%(n=3,d=3%) n=3 f=%x+$"), a.key)
    assert.are.equal(a.key, b.key)       -- the same code, another closure
    assert.are_not.equal(a.key, c.key)   -- other code
    assert.are.equal("bruss2d(N=8) n=128", ob.problem("bruss2d", { N = 8 }).key)
    a:close(); b:close(); c:close()
  end)

  it("takes y0 as a list of n numbers", function()
    local p = ob.problem { n = 3, f = function() end, y0 = { 1.5, -2, 3 } }
    local y = p:initial()
    assert.are.same({ 1.5, -2, 3 }, { y[1], y[2], y[3] })
    p:close()
  end)

  it("an error inside f fails the step with f's message; the state stays", function()
    local bad = true
    local f = function(t, y, out)
      if bad then error("boom") end
      for i = 1, 3 do out[i] = -y[i] end
    end
    local p = ob.problem { name = "decay", n = 3, f = f, y0 = { 1, 2, 3 } }
    -- fixed steps and adaptive steps (where NaN errors would otherwise
    -- shrink the step until it is too small)
    for _, opts in ipairs({ { method = "rk4", variant = "plain", h = 0.1 },
                            { method = "dopri5", variant = "plain" } }) do
      bad = true
      local s = ob.solver { problem = p, method = opts.method, backend = "cpu",
                            variant = opts.variant, h = opts.h }
      local ok, err = pcall(s.integrate, s, { t0 = 0, t1 = 0.3 })
      assert.is_false(ok)
      err = tostring(err)
      assert.is_truthy(err:find("f of problem decay(n=3,d=3) failed in the step at t = 0", 1, true), err)
      assert.is_truthy(err:find("user_problem_spec.lua:%d+: boom"), err)
      local y = s:state()
      assert.are.same({ 1, 2, 3 }, { y[1], y[2], y[3] })
      bad = false   -- the failure is reported once: the next call goes on
      s:integrate { t0 = 0, t1 = 0.3 }
      y = s:state()
      assert.is_true(math.abs(y[1] - math.exp(-0.3)) < 1e-5, tostring(y[1]))
      s:close()
    end
    p:close()
  end)

  it("an error inside f ends ob.tune with f's message", function()
    local p = ob.problem { n = 3, f = function() error("tuned boom") end,
                           y0 = { 1, 2, 3 } }
    local s = ob.solver { problem = p, method = "rk4", backend = "cpu",
                          variant = "plain", h = 0.1 }
    local ok, err = pcall(ob.tune, { target = s, space = { variant = { "plain", "fused" } },
                                     cache = "off", steps = 1,
                                     measure = { warmup = 0, min_reps = 1, max_reps = 1 } })
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("tuned boom", 1, true), tostring(err))
    s:close()
    p:close()
  end)
end)

-- A 2-D grid problem with a cell source for gpu_stream2d: Gray-Scott
-- reaction-diffusion on rows x cols cells of 2 components (u, v), mirrored
-- edges; nine = true takes the 9-point Laplacian (reads the diagonals).
local GS = { du = 0.16, dv = 0.08, F = 0.035, k = 0.065 }

local function gs_cell_source(nine)
  return [[
__device__ __forceinline__ void odb_rhs_cell(odb_idx i, odb_idx j, double t,
                                             const odb_cell_in &in,
                                             double *f) {
  const int up = i > 0 ? -1 : 1, dn = i < ODB_NR - 1 ? 1 : -1;
  const int lf = j > 0 ? -1 : 1, rt = j < ODB_NC - 1 ? 1 : -1;
  (void)t;
  double lap[2];
  for (int c = 0; c < 2; ++c) {
    const double s4 = ODB_Y(up, 0, c) + ODB_Y(dn, 0, c) + ODB_Y(0, lf, c)
                      + ODB_Y(0, rt, c);
]] .. (nine and [[
    const double sd = ODB_Y(up, lf, c) + ODB_Y(up, rt, c) + ODB_Y(dn, lf, c)
                      + ODB_Y(dn, rt, c);
    lap[c] = (4.0 * s4 + sd - 20.0 * ODB_Y(0, 0, c)) / 6.0;
]] or [[
    lap[c] = s4 - 4.0 * ODB_Y(0, 0, c);
]]) .. [[
  }
  const double u = ODB_Y(0, 0, 0), v = ODB_Y(0, 0, 1), uvv = u * v * v;
  f[0] = ODB_P0 * lap[0] - uvv + ODB_P2 * (1.0 - u);
  f[1] = ODB_P1 * lap[1] + uvv - (ODB_P2 + ODB_P3) * v;
}
]]
end

-- The same f in Lua (the CPU reference), the same order of operations.
local function gs_f(rows, cols, nine)
  return function(t, y, f)
    local function at(i, j, c) return y[2 * (i * cols + j) + c + 1] end
    for i = 0, rows - 1 do
      local up = i > 0 and -1 or 1
      local dn = i < rows - 1 and 1 or -1
      for j = 0, cols - 1 do
        local lf = j > 0 and -1 or 1
        local rt = j < cols - 1 and 1 or -1
        local lap = {}
        for c = 0, 1 do
          local s4 = at(i + up, j, c) + at(i + dn, j, c) + at(i, j + lf, c)
                     + at(i, j + rt, c)
          if nine then
            local sd = at(i + up, j + lf, c) + at(i + up, j + rt, c)
                       + at(i + dn, j + lf, c) + at(i + dn, j + rt, c)
            lap[c] = (4.0 * s4 + sd - 20.0 * at(i, j, c)) / 6.0
          else
            lap[c] = s4 - 4.0 * at(i, j, c)
          end
        end
        local u, v = at(i, j, 0), at(i, j, 1)
        local uvv = u * v * v
        local q = 2 * (i * cols + j) + 1
        f[q] = GS.du * lap[0] - uvv + GS.F * (1.0 - u)
        f[q + 1] = GS.dv * lap[1] + uvv - (GS.F + GS.k) * v
      end
    end
  end
end

local function gs_problem(rows, cols, nine, extra)
  local t = { name = nine and "gs9" or "gs5", n = 2 * rows * cols,
              d = 2 * cols + 2, f = gs_f(rows, cols, nine),
              y0 = function(q)
                local cell = (q - 1) // 2
                local i, j = cell // cols, cell % cols
                if (q - 1) % 2 == 0 then return 1 - 0.5 * math.exp(-((i - rows / 2) ^ 2 + (j - cols / 3) ^ 2) / 20) end
                return 0.25 * math.exp(-((i - rows / 3) ^ 2 + (j - cols / 2) ^ 2) / 15) + 0.01 * math.sin(q)
              end,
              params = { GS.du, GS.dv, GS.F, GS.k },
              grid = { rows = rows, cols = cols, comps = 2 },
              cell_source = gs_cell_source(nine), star = not nine }
  for k, v in pairs(extra or {}) do t[k] = v end
  return ob.problem(t)
end

describe("ob.problem{grid=, cell_source=}: a 2-D grid for gpu_stream2d", function()
  it("refuses incomplete or inconsistent grids with the field named", function()
    local f = function() end
    local y0 = function() return 0 end
    local src = gs_cell_source(false)
    local cases = {
      { { n = 12, d = 6, f = f, y0 = y0, cell_source = src }, "field 'cell_source': needs field 'grid'" },
      { { n = 12, d = 6, f = f, y0 = y0, grid = { rows = 2, cols = 3, comps = 2 } }, "field 'grid': needs field 'cell_source'" },
      { { n = 12, d = 6, f = f, y0 = y0, star = true }, "field 'star': needs fields 'grid' and 'cell_source'" },
      { { n = 12, d = 6, f = f, y0 = y0, cell_source = src, grid = { rows = 2, cols = 2, comps = 2 } },
        "rows x cols x comps = 2 x 2 x 2 must be n (12)" },
      { { n = 12, d = 6, f = f, y0 = y0, cell_source = src, grid = { rows = 2, comps = 2 } }, "rows and cols are required" },
      { { n = 12, d = 5, f = f, y0 = y0, cell_source = src, grid = { rows = 2, cols = 3, comps = 2 } },
        "field 'd': a grid's stencil reaches the next row: at least comps x cols = 6, got 5" },
      { { n = 12, d = 6, f = f, y0 = y0, cell_source = src, grid = { rows = 2, cols = 3, comps = 2, depth = 1 } },
        "unknown field 'depth'" },
      { { n = 12, d = 6, f = f, y0 = y0, cell_source = src, grid = { rows = 2, cols = 3, comps = 2 }, star = 1 },
        "field 'star'" },
      { { n = 12, d = 6, f = f, y0 = y0, cell_source = src, grid = "2x3" }, "field 'grid'" },
      { { n = 18, d = 9, f = f, y0 = y0, cell_source = src, grid = { rows = 2, cols = 1, comps = 9 } },
        "field 'grid.cols': must be in 2..18, got 1" },
      { { n = 36, d = 18, f = f, y0 = y0, cell_source = src, grid = { rows = 2, cols = 2, comps = 9 } },
        "field 'grid.comps': must be in 1..8, got 9" },
    }
    assert_refused(cases)
  end)

  it("keys its tunings by the cell source and the star", function()
    local a, b = gs_problem(4, 5, false), gs_problem(4, 5, true)
    local c = gs_problem(4, 5, false, { star = false })
    assert.is_truthy(a.key:find(" cell=%x+ star$"), a.key)
    assert.is_truthy(b.key:find(" cell=%x+$"), b.key)
    assert.is_truthy(c.key:find(" cell=%x+$"), c.key)
    assert.are_not.equal(a.key, b.key)
    assert.are_not.equal(a.key, c.key)   -- the same source, not a star
    a:close(); b:close(); c:close()
  end)

  it("runs on gpu_stream2d like plain on the CPU, or says there is no GPU", function()
    local gpu = ob.info({ bandwidth = false }).gpu
    -- a 5-point star (lag 1 by default), a 9-point stencil (lag 2, a
    -- barrier every pass), and the star at lag 2 and on narrow strips
    local runs = {
      { nine = false, tiling = nil },
      { nine = true, tiling = nil },
      { nine = false, tiling = { lag = 2, threads = 32 } },
      { nine = true, tiling = { threads = 32, rows = 5 } },
    }
    for _, r in ipairs(runs) do
      local p = gs_problem(23, 37, r.nine)
      for _, m in ipairs { "dopri5", "verner65" } do
        local ok, s = pcall(ob.solver, { problem = p, method = m, backend = "cuda",
                                         variant = "gpu_stream2d", h = 0.05, tiling = r.tiling })
        if not gpu then
          assert.is_false(ok)
          assert.is_truthy(tostring(s):lower():find("cuda", 1, true), tostring(s))
        else
          assert.is_true(ok, tostring(s))
          local c = ob.solver { problem = p, method = m, backend = "cpu",
                                variant = "plain", h = 0.05 }
          s:integrate { t0 = 0, t1 = 0.15 }
          c:integrate { t0 = 0, t1 = 0.15 }
          local a, b = s:state(), c:state()
          local worst = 0
          for q = 1, p.n do
            worst = math.max(worst, math.abs(a[q] - b[q]) / math.max(math.abs(b[q]), 1e-3))
          end
          assert.is_true(worst <= 1e-12, string.format("%s %s %s: rel err %.3g", p.key, m,
                         r.tiling and "tiled" or "defaults", worst))
          s:close(); c:close()
        end
      end
      p:close()
    end
  end)
end)
