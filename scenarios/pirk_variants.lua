-- pirk_variants.lua: which implementation variant of a PIRK method is
-- fastest, and by how much, as the system grows out of the caches (the kind
-- of study of Kalinnik's Figures 7.8 and 7.9).
--
-- For each problem, corrector method and system size it runs every
-- sequential thesis variant (A, E, D, Dblock, PipeDe2m, PipeDb2m, PipeDb2mt,
-- and where the access distance is limited PipeDb1m, PipeDb1mt, ppDb1m,
-- ppDb1mt) with the same fixed step for a few steps, and prints the time per
-- step and component, the ranking, and the spread between the fastest and
-- the slowest variant. All variants compute the same arithmetic; the step
-- size is the one an adaptive run at tol 1e-6 chose for the first steps.
-- `odebench plot RUN_DIR` draws the time per step and component against n
-- per variant, one plot per problem and method (tpc_<problem>_<method>).
--
--   odebench scenarios/pirk_variants.lua
--   odebench scenarios/pirk_variants.lua --set sizes=1e4,1e5,1e6,4e6 --set steps=3
--   odebench scenarios/pirk_variants.lua --set problems=bruss2d --set methods=lobatto3c8
local ob = require "odebench"
local report = require "odebench.report"

local problems = ob.param("problems", "bruss2d,cusp")
local methods  = ob.param("methods", "radau1a5,lobatto3c8")
local sizes    = ob.param("sizes", "1e4,1e5,1e6")   -- target n per problem
local steps    = ob.param("steps", 2)
local block    = ob.param("block", 0)                -- 0: each variant's default

ob.info { bandwidth = "now" }   -- floor% against the bandwidth measured in this run

local function split(s)
  local t = {}
  for w in tostring(s):gmatch("[^,%s]+") do t[#t + 1] = w end
  return t
end

-- The size parameter of each problem that gives about n components.
local size_of = {
  bruss2d = function(n) return { N = math.max(4, math.floor(math.sqrt(n / 2) + 0.5)) } end,
  cusp    = function(n) return { N = math.max(4, math.floor(n / 3 + 0.5)) } end,
  string  = function(n) return { N = math.max(4, math.floor(n / 2 + 0.5)) } end,
  medakzo = function(n) return { N = math.max(4, math.floor(n / 2 + 0.5)) } end,
  stars   = function(n) return { N = math.max(2, math.floor(n / 6 + 0.5)) } end,
}

local thesis = { "A", "E", "D", "Dblock", "PipeDe2m", "PipeDb2m", "PipeDb2mt",
                 "PipeDb1m", "PipeDb1mt", "ppDb1m", "ppDb1mt" }
local present = {}
for _, v in ipairs(ob.list().variants) do present[v.name] = true end

local npresent = 0
for _, v in ipairs(thesis) do
  if present[v] then npresent = npresent + 1 end
end
local total, done = #split(problems) * #split(methods) * #split(sizes) * npresent, 0
local noted = {}   -- every row, for the floor footnotes
ob.progress(0, total)

for _, pname in ipairs(split(problems)) do
  for _, mname in ipairs(split(methods)) do
    ob.plot { name = string.format("tpc_%s_%s", pname, mname), x = "n",
              y = "time_per_component", group = "variant",
              where = { problem = pname, method = mname }, logx = true, logy = true,
              title = string.format("%s, %s: time per step and component against n",
                                    pname, mname) }
    for _, ntarget in ipairs(split(sizes)) do
      local p = ob.problem(pname, size_of[pname](tonumber(ntarget)))
      -- the step: what an adaptive run with variant A takes at first
      local probe <close> = ob.solver { problem = p, method = mname, variant = "A", tol = 1e-6 }
      for _ = 1, 3 do probe:step() end
      local h = probe.h * 0.9
      io.write(string.format("\n%s n=%d d=%d, %s, h=%.3g\n", p.label, p.n, p.d, mname, h))
      io.write(string.format("  %-10s %12s %6s %14s %8s %7s\n", "variant", "s/step",
                             "+-", "ns/(step*comp)", "GB/s", "floor%"))
      local rows = {}
      for _, v in ipairs(thesis) do
        if present[v] then
          local ok, s = pcall(ob.solver, { problem = p, method = mname, variant = v,
                                           h = h, block = block > 0 and block or nil })
          if ok then
            s:set_state(probe:state(), probe.t)
            s:step(h)                                  -- warm-up
            local r = s:integrate { t1 = s.t + steps * h, label = v }
            rows[#rows + 1] = { v = v, tps = r.time_per_step, spread = r.spread }
            noted[#noted + 1] = r
            io.write(string.format("  %-10s %12.4e %6s %14.3f %8.2f %7s\n", v,
              r.time_per_step, string.format("%.1f%%", 100 * r.spread),
              r.time_per_step / p.n * 1e9, r.gbs or 0, report.floor(r)))
            s:close()
          else
            io.write(string.format("  %-10s %s\n", v, "n/a: " .. tostring(s):gsub("^.-%(", "("):sub(1, 90)))
          end
          done = done + 1
          ob.progress(done, total, string.format("%s n=%d %s %s", pname, p.n, mname, v))
        end
      end
      table.sort(rows, function(a, b) return a.tps < b.tps end)
      if #rows > 0 then
        -- medians within each other's spread ((q3 - q1) / median) are
        -- tied: "=" rather than an order the noise could reverse
        local rank = report.ranking(rows, function(r) return r.v end,
                                    function(r) return r.tps, r.spread end)
        io.write(string.format("  ranking: %s\n  spread slowest/fastest: %.2fx\n",
          rank, rows[#rows].tps / rows[1].tps))
        ob.metric(string.format("%s/%s/n=%d spread", pname, mname, p.n), rows[#rows].tps / rows[1].tps)
      end
    end
  end
end
for _, l in ipairs(report.floor_notes(noted)) do print(l) end
