-- gpu_user_problem.lua: a problem defined here, in the scenario, run by the
-- GPU variants. The component function f_j is given as CUDA C with its
-- access distance d (the generator fuses and tiles it like BRUSS2D's) and
-- as a Lua function for the CPU, which verifies every GPU variant: the
-- states after `steps` fixed steps must agree to 1e-12 relative.
--
-- The problem: a 1-D reaction-diffusion chain with a long-range coupling,
--   y_j' = k (y_{j-1} - 2 y_j + y_{j+1}) + c y_{j+d} - y_j^2,
-- mirrored at the ends, coupling term dropped beyond n; access distance d.
--
--   odebench scenarios/gpu_user_problem.lua
--   odebench scenarios/gpu_user_problem.lua --set n=100003 --set d=517
local ob = require "odebench"

local n     = ob.param("n", 20011)
local d     = ob.param("d", 97)
local steps = ob.param("steps", 5)
local k, c  = 0.25, 0.05

local gpu_source = [[
__device__ double odb_rhs(odb_idx j, double t, const double *__restrict__ y) {
  const double k = ODB_P0, c = ODB_P1;
  const double l = y[j > 0 ? j - 1 : 1];
  const double r = y[j < ODB_N - 1 ? j + 1 : ODB_N - 2];
  const double far = j + ODB_D < ODB_N ? y[j + ODB_D] : 0.0;
  (void)t;
  return k * (l - 2.0 * y[j] + r) + c * far - y[j] * y[j];
}
]]

-- The same f on the CPU (Vectors are 1-based: y[j + 1] is component j).
local function f(t, y, out)
  for i = 1, n do
    local l = y[i > 1 and i - 1 or 2]
    local r = y[i < n and i + 1 or n - 1]
    local far = (i + d <= n) and y[i + d] or 0.0
    out[i] = k * (l - 2 * y[i] + r) + c * far - y[i] * y[i]
  end
end

local p = ob.problem { name = "chain", n = n, d = d, f = f,
                       gpu_source = gpu_source, params = { k, c },
                       y0 = function(i) return 0.5 + 0.25 * math.sin(i) end }
local h = 0.02

local cpu = ob.solver { problem = p, method = "dopri5", backend = "cpu",
                        variant = "plain", h = h }
cpu:integrate { t0 = 0, t1 = steps * h }
local ref = cpu:state()
cpu:close()

local info = ob.info()
if not info.gpu then
  io.write("gpu_user_problem: no GPU here; the CPU run of the user-defined "
    .. "problem finished, nothing to compare\n")
  return
end

local worst = 0
for _, v in ipairs{ "gpu_unfused", "gpu_reference", "gpu_trapezoid",
                    "gpu_multiblock", "gpu_hexagonal" } do
  for _, m in ipairs{ "dopri5" } do
    local ok, s = pcall(ob.solver, { problem = p, method = m, backend = "cuda",
                                     variant = v, h = h })
    if ok then
      s:integrate { t0 = 0, t1 = steps * h }
      local e = s:state():max_rel_err(ref)
      worst = math.max(worst, e)
      io.write(string.format("%-15s %-7s n=%d d=%d: max rel err vs CPU %.2e\n",
        v, m, n, d, e))
      ob.metric(v .. "_max_rel_err", e)
      s:close()
    else
      io.write(string.format("%-15s refused: %s\n", v, tostring(s)))
    end
  end
end

-- A source that does not compile: NVRTC's log points into this file's
-- gpu_source (line 2 of it).
local bad = ob.problem { name = "broken", n = 100, d = 1, f = f,
                         y0 = ob.vector(100),
                         gpu_source = "__device__ double odb_rhs(odb_idx j, double t, const double *y) {\n  return y[j] +* 2.0;\n}\n" }
local ok, err = pcall(ob.solver, { problem = bad, method = "bs3",
                                   backend = "cuda", variant = "gpu_reference" })
io.write("a broken gpu_source is refused: ", tostring(err):sub(1, 300), "\n")
if ok or not tostring(err):find("gpu_source%(2%)") then
  error("the compile error did not name the line in gpu_source")
end
if worst > 1e-12 then
  error(string.format("a GPU variant differs from the CPU by %.2e", worst))
end
io.write(string.format("all GPU variants agree with the CPU to %.2e\n", worst))
