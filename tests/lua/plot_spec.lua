-- plot_spec.lua: ob.progress (the sweep's progress bar in plain mode, in
-- events.jsonl, in replays and in the dashboard) and ob.plot (the plots a
-- scenario names, drawn by odebench plot). Scenarios run in fixtures/ or
-- from a temporary file, like in ui_spec.lua.

local json = require "dkjson"

local H = dofile(assert(os.getenv("ODEBENCH_SRC"), "set ODEBENCH_SRC")
                 .. "/tests/lua/spec_helpers.lua")
local BIN, SRC, FIX, q, sh_ok, slurp, exists =
  H.BIN, H.SRC, H.FIX, H.q, H.sh_ok, H.slurp, H.exists
local function tmpdir() return H.tmpdir("plot") end
teardown(H.cleanup)

local HAVE_TMUX = sh_ok("command -v tmux >/dev/null 2>&1")
local HAVE_GNUPLOT = sh_ok("command -v gnuplot >/dev/null 2>&1")

local function has(text, part)
  assert.is_truthy(text:find(part, 1, true),
                   "expected to find:\n  " .. part .. "\nin:\n" .. text)
end

local function hasnt(text, part)
  assert.is_falsy(text:find(part, 1, true),
                  "did not expect:\n  " .. part .. "\nin:\n" .. text)
end

-- Runs BIN with args in FIX (not a terminal); returns status, stdout, stderr.
local function run(args)
  local dir = tmpdir()
  local quoted = {}
  for i, a in ipairs(args) do quoted[i] = q(a) end
  local cmd = ("cd %s && env -u LD_PRELOAD %s %s </dev/null >%s/out 2>%s/err")
    :format(q(FIX), q(BIN), table.concat(quoted, " "), q(dir), q(dir))
  local _, how, code = os.execute(cmd)
  if how == "signal" then code = 128 + code end
  return code, slurp(dir .. "/out") or "", slurp(dir .. "/err") or ""
end

-- Writes a scenario (text after the require line) to a temporary file.
local function scenario(body)
  local path = tmpdir() .. "/scenario.lua"
  local f = assert(io.open(path, "w"))
  f:write('local ob = require "odebench"\n', body, "\n")
  f:close()
  return path
end

local function count(text, part)
  local n, i = 0, 1
  while true do
    local s, e = text:find(part, i, true)
    if not s then return n end
    n, i = n + 1, e + 1
  end
end

local function png(path)
  local data = slurp(path)
  return data ~= nil and data:sub(1, 8) == "\137PNG\r\n\26\n"
end

local function svg(path)
  local data = slurp(path)
  return data ~= nil and data:find("<svg", 1, true) ~= nil
end

-- One run of the fixture sweep (busy seconds per configuration) for the
-- specs that only read it.
local recorded
local function sweep_run()
  if not recorded then
    recorded = tmpdir() .. "/run"
    local code, _, err = run { "sweep_plot.lua", "--ui", "none", "--out", recorded }
    assert.are.equal(0, code, err)
  end
  return recorded
end

local plot_it = HAVE_GNUPLOT and it or function(name)
  pending(name .. " (gnuplot is not installed)")
end

local tmux_it = HAVE_TMUX and it or function(name)
  pending(name .. " (tmux is not installed)")
end

describe("ob.progress", function()
  it("shows a progress bar with the time left in plain mode under a pipe",
     function()
    local out = tmpdir() .. "/run"
    local code, stdout, err = run { "sweep_plot.lua", "--set", "busy=0.2",
                                    "--out", out }
    assert.are.equal(0, code, err)
    has(err, "sweep [--------------------] 0/6")
    has(err, "sweep [####################] 6/6  N=32 fused")
    assert.is_truthy(err:find("sweep %[#+%-+%] [1-5]/6 eta %d+s  N=%d+ %a+"), err)
    hasnt(err .. stdout, "\27[")
    -- every report is recorded, in order
    local seen = {}
    for line in io.lines(out .. "/events.jsonl") do
      local obj = assert(json.decode(line), line)
      if obj.kind == "progress" then
        assert.are.equal(6, obj.accepted)
        seen[#seen + 1] = obj.step or 0
      end
    end
    assert.are.same({ 0, 1, 2, 3, 4, 5, 6 }, seen)
  end)

  it("prints a few lines a second however often it is called", function()
    local path = scenario [[
      for i = 1, 20000 do ob.progress(i, 20000, "item " .. i) end]]
    local code, _, err = run { path, "--out", tmpdir() .. "/run" }
    assert.are.equal(0, code, err)
    has(err, "sweep [####################] 20000/20000  item 20000")
    -- two lines a second after a burst of two, and the last one
    local last = 0
    for t in err:gmatch("%[%s*([%d.]+)s%]") do last = math.max(last, tonumber(t)) end
    assert.is_true(count(err, "sweep [") <= 3 + 2 * math.ceil(last), err)
  end)

  it("replays as plain lines", function()
    local code, _, err = run { "replay", sweep_run() }
    assert.are.equal(0, code, err)
    has(err, "sweep [--------------------] 0/6")
    has(err, "6/6  N=32 fused")
  end)

  tmux_it("shows the sweep in the dashboard's Activity panel", function()
    local dir = tmpdir()
    local sock = dir .. "/tmux.sock"
    local tmux = ("env -u LD_PRELOAD tmux -S %s "):format(q(sock))
    local inner = ("cd %s && %s replay %s --speed 20; sleep 60"):format(
      q(FIX), q(BIN), q(sweep_run()))
    assert(sh_ok(tmux .. "new-session -d -s r -x 120 -y 40 " .. q(inner)))
    local screen = ""
    for _ = 1, 100 do
      local p = assert(io.popen(tmux .. "capture-pane -p -t r"))
      screen = p:read("a")
      p:close()
      if screen:find("replay finished", 1, true) then break end
      os.execute("sleep 0.1")
    end
    os.execute(tmux .. "kill-server 2>/dev/null")
    has(screen, "Activity")
    has(screen, "sweep 6/6 [############] done  N=32 fused")
  end)

  it("refuses bad arguments", function()
    local cases = {
      { "ob.progress(7, 3)", "bad argument #1 to 'progress' (steps done between 0 and n = 3 expected, got 7)" },
      { "ob.progress(-1, 3)", "bad argument #1 to 'progress' (steps done between 0 and n = 3 expected, got -1)" },
      { "ob.progress(1, 0)", "bad argument #2 to 'progress' (number of steps >= 1 expected, got 0)" },
      { "ob.progress(1.5, 3)", "bad argument #1 to 'progress' (number has no integer representation)" },
      { "ob.progress(1, 3, {})", "bad argument #3 to 'progress' (string expected, got table)" },
    }
    for _, c in ipairs(cases) do
      local code, _, err = run { scenario(c[1]), "--ui", "none" }
      assert.are.equal(2, code, err)
      has(err, c[2])
    end
  end)
end)

describe("ob.plot", function()
  it("records the requests in the results context", function()
    local doc = assert(json.decode(slurp(sweep_run() .. "/results.json")))
    local p = doc.context.plots
    assert.are.same({ kind = "lines", rows = "solve", x = "n", y = "gbs",
                      group = "method,variant", logx = "true",
                      title = "fixture: GB/s against n" }, p.gbs_vs_n)
    assert.are.same({ kind = "heatmap", rows = "solve", x = "n", y = "variant",
                      z = "time_per_step" }, p.heat)
    assert.are.equal("roofline", p.roof.kind)
    has(slurp(sweep_run() .. "/results.csv"), "# plots.tpc_vs_n.y=time_per_component\n")
  end)

  plot_it("odebench plot draws the named plots as PNG and SVG, and the automatic ones",
          function()
    local dir = tmpdir() .. "/plots"
    local code, stdout, err = run { "plot", sweep_run(), "--out", dir }
    assert.are.equal(0, code, err)
    for _, name in ipairs { "gbs_vs_n", "tpc_vs_n", "roof", "heat",
                            "time_per_step", "gbs", "roofline" } do
      assert.is_true(png(dir .. "/" .. name .. ".png"), name .. ".png")
      assert.is_true(svg(dir .. "/" .. name .. ".svg"), name .. ".svg")
      has(stdout, dir .. "/" .. name .. ".png")
    end
    -- the named ones first, in the order the scenario asked for them
    assert.is_true(stdout:find("gbs_vs_n.png", 1, true) < stdout:find("tpc_vs_n.png", 1, true))
    assert.is_true(stdout:find("heat.png", 1, true) < stdout:find("time_per_step.png", 1, true))
    local gp = slurp(dir .. "/plot.gp")
    has(gp, "set title 'fixture: GB/s against n'")
    has(gp, "title 'dopri5/plain'")
    has(gp, "set ylabel 'time per step and component [")
    -- default titles name the scenario (no directory, no .lua) and what
    -- is drawn against what
    has(gp, "set title 'sweep_plot: time per step and component vs n'\n")
    has(gp, "set title 'sweep_plot: time per step vs n'\n")
    has(gp, "set title 'sweep_plot: bandwidth vs n'\n")
    has(gp, "set xlabel 'n [components]'\n")
    has(gp, "set ylabel 'time per step [s]'\n")
    has(gp, "set ylabel 'bandwidth [GB/s]'\n")
    has(gp, "set xlabel 'arithmetic intensity [flop/byte]'\n")
    has(gp, "set ylabel 'GFLOP/s'\n")
    hasnt(gp, ".lua")
    -- the charts with reference lines set their x range (gnuplot sampled
    -- the lines over the points' range only: one point drew them a point
    -- wide): both rooflines, the named and the automatic GB/s charts with
    -- the bandwidth line (n from 128 to 2048: whole decades); the memory
    -- roof ends at the ridge
    local _, nrange = gp:gsub("set xrange %[[%d.e+-]+:[%d.e+-]+%]", "")
    assert.are.equal(4, nrange, gp)
    has(gp, "set xrange [100:10000]")
    local heat = slurp(dir .. "/named_heat.dat")
    -- the heatmap's log colour scale is labelled at 1, 2, 5 times powers of
    -- ten where it spans under three decades and at least two such values
    -- (the cells are measured times: a loaded machine can stretch them)
    local lo, hi = math.huge, 0
    for line in heat:gmatch("[^\n]+") do
      if not line:find("^variant") then
        for v in line:gmatch("%s([%d.e+-]+)") do
          lo, hi = math.min(lo, tonumber(v)), math.max(hi, tonumber(v))
        end
      end
    end
    if hi / lo < 1e3 and hi / lo >= 5 then   -- (5: two 1-2-5 values inside)
      assert.is_truthy(gp:find("set cbtics %([%d., ]+%)"), gp)
    end
    local _, nroof = gp:gsub("%(x <= [%d.e+-]+ %? [%d.e+-]+ %* x : 1/0%)", "")
    assert.are.equal(2, nroof, gp)
    has(heat, "variant 128 512 2048\n")
    assert.is_truthy(heat:find("\nplain [%d.]+ [%d.]+ [%d.]+\n"), heat)
    -- a block per group, three sizes each, sorted by n
    local dat = slurp(dir .. "/named_gbs_vs_n.dat")
    assert.is_truthy(dat:find("# dopri5/plain\n128 [^\n]+\n512 [^\n]+\n2048 [^\n]+\n"), dat)
  end)

  plot_it("derives the speed-up over the sequential runs of the same n", function()
    local out = tmpdir() .. "/run"
    local path = scenario [[
      local p = ob.problem("bruss2d", { N = 8 })
      local function run(v, th)
        local s <close> = ob.solver { problem = p, method = "radau1a5", variant = v,
                                      h = 1e-3, threads = th }
        return s:integrate { t1 = 0.01 }
      end
      ob.plot { name = "speedup", x = "threads", y = "speedup", group = "variant",
                logx = true }
      local seq = math.min(run("A").time_per_step, run("D").time_per_step)
      local want = {}
      for _, th in ipairs { 1, 2 } do
        want[th] = seq / run("par_PipeDb2mt", th).time_per_step
      end
      io.write(string.format("%.10g %.10g\n", want[1], want[2]))]]
    local code, stdout, err = run { path, "--ui", "none", "-q", "--out", out }
    assert.are.equal(0, code, err)
    local w1, w2 = stdout:match("^(%S+) (%S+)")
    code, _, err = run { "plot", out, "-q" }
    assert.are.equal(0, code, err)
    assert.is_true(png(out .. "/plots/speedup.png"))
    local dat = slurp(out .. "/plots/named_speedup.dat")
    local y1, y2 = dat:match("# par_PipeDb2mt\n1 (%S+)\n2 (%S+)\n")
    assert.is_truthy(y1, dat)
    assert.is_true(math.abs(tonumber(y1) / tonumber(w1) - 1) < 1e-6, dat)
    assert.is_true(math.abs(tonumber(y2) / tonumber(w2) - 1) < 1e-6, dat)
  end)

  plot_it("a tuning heatmap from the rows of ob.tune, filtered by where", function()
    local out = tmpdir() .. "/run"
    local path = scenario [[
      local p = ob.problem("bruss2d", { N = 8 })
      local s <close> = ob.solver { problem = p, method = "radau1a5", variant = "A", tol = 1e-6 }
      ob.plot { name = "space", kind = "heatmap", x = "cfg.block", y = "cfg.variant",
                where = { strategy = "exhaustive" } }
      ob.tune { target = s, space = { variant = { "Dblock", "PipeDb2mt" },
                                      block = { 16, 32 } },
                strategy = "exhaustive", steps = 1, cache = "off",
                measure = { warmup = 0, min_reps = 1, max_reps = 1 } }]]
    local code, _, err = run { path, "--ui", "none", "-q", "--out", out }
    assert.are.equal(0, code, err)
    code, _, err = run { "plot", out, "-q" }
    assert.are.equal(0, code, err)
    assert.is_true(png(out .. "/plots/space.png"))
    local dat = slurp(out .. "/plots/named_space.dat")
    has(dat, "cfg.variant 16 32\n")
    assert.is_truthy(dat:find("\nDblock [%d.e+-]+ [%d.e+-]+\nPipeDb2mt [%d.e+-]+ [%d.e+-]+\n"), dat)
    has(slurp(out .. "/plots/plot.gp"), "set cblabel 'median time [")
  end)

  plot_it("the automatic tuning charts show the run's largest tuning, and say which", function()
    local out = tmpdir() .. "/run"
    local path = scenario [[
      local p = ob.problem("bruss2d", { N = 8 })
      local s <close> = ob.solver { problem = p, method = "radau1a5", variant = "A", tol = 1e-6 }
      local q = { warmup = 0, min_reps = 1, max_reps = 1 }
      ob.tune { target = s, space = { variant = { "Dblock", "PipeDb2mt" }, block = { 16, 32, 64 } },
                strategy = "exhaustive", steps = 1, cache = "off", measure = q }
      ob.tune { target = s, space = { variant = { "Dblock" }, block = { 16, 32 } },
                strategy = "exhaustive", steps = 1, cache = "off", measure = q }]]
    local code, _, err = run { path, "--ui", "none", "-q", "--out", out }
    assert.are.equal(0, code, err)
    code, _, err = run { "plot", out, "-q" }
    assert.are.equal(0, code, err)
    assert.is_true(png(out .. "/plots/heatmap.png"))
    local gp = slurp(out .. "/plots/plot.gp")
    has(gp, "tuning 1 of 2, the largest, 6 configurations timed")
    has(gp, "tuning 1 of 2, the largest, median time [")
    has(gp, "set ylabel 'median time [")
    has(gp, "set xlabel 'evaluation'\n")
    -- the first tuning's 6 cells, not the second's 2
    local dat = slurp(out .. "/plots/heat.dat")
    assert.is_truthy(dat:find("PipeDb2mt", 1, true), dat)
    local nums = 0
    for line in dat:gmatch("[^\n]+") do
      if not line:find("^block") then
        for v in line:gmatch("%s(%S+)") do if v ~= "NaN" then nums = nums + 1 end end
      end
    end
    assert.are.equal(6, nums, dat)
  end)

  plot_it("leaves out a plot without data (with a warning) and replaces an "
          .. "automatic chart of the same name", function()
    local out = tmpdir() .. "/run"
    local path = scenario [[
      local p = ob.problem("bruss2d", { N = 8 })
      local s <close> = ob.solver { problem = p, method = "dopri5", variant = "plain" }
      s:integrate { t1 = 0.01 }
      ob.plot { name = "gbs", x = "n", y = "gflops", title = "mine" }
      ob.plot { name = "empty", x = "n", y = "gbs", where = { variant = "nosuch" } }]]
    local code, _, err = run { path, "--ui", "none", "-q", "--out", out }
    assert.are.equal(0, code, err)
    local stdout
    code, stdout, err = run { "plot", out }
    assert.are.equal(0, code, err)
    has(err, "warning: plot 'empty' of the scenario is left out: no finished "
             .. "solve rows with values for it")
    assert.is_false(exists(out .. "/plots/empty.png"))
    assert.is_true(png(out .. "/plots/gbs.png"))
    assert.are.equal(1, count(stdout, "/gbs.png"))
    local gp = slurp(out .. "/plots/plot.gp")
    assert.are.equal(1, count(gp, "set output 'gbs.'.fmt"))
    has(gp, "set title 'mine'")
  end)

  it("a run whose only plot has no data is refused", function()
    local out = tmpdir() .. "/run"
    local path = scenario [[
      ob.metric("m", 1)
      ob.plot { name = "nothing", x = "n", y = "gbs" }]]
    local code, _, err = run { path, "--ui", "none", "-q", "--out", out }
    assert.are.equal(0, code, err)
    code, _, err = run { "plot", out }
    assert.are.equal(2, code, err)
    has(err, "plot 'nothing' of the scenario is left out")
    has(err, "nothing to plot in '" .. out .. "'")
  end)

  it("refuses bad arguments with the allowed values", function()
    local cases = {
      { 'ob.plot { name = "a", kind = "bars", x = "n", y = "gbs" }',
        "bad argument #1 to 'plot' (field 'kind': unknown kind 'bars' (allowed: lines, roofline, heatmap))" },
      { 'ob.plot { name = "a", x = "n", y = "gbps" }',
        "bad argument #1 to 'plot' (field 'y': unknown column 'gbps' for solve rows (allowed: n, d, t0, t1," },
      { 'ob.plot { name = "a", x = "n", y = "gbps" }',
        "time_per_step, gbs, gflops, floor_pct, bytes, t, h, err, threads, median, q1, q3, reps, spread, "
        .. "fp64_floor_s, fp64_peak_gflops, roofline_pct, speedup, time_per_component, "
        .. "flop_per_byte, label, problem, method, variant, backend, status))" },
      { 'ob.plot { name = "a", x = "method", y = "gbs" }',
        "(field 'x': column 'method' holds text, a number column is needed here (allowed: n, d," },
      { 'ob.plot { name = "a", x = "cfg.block", y = "median", group = "colour" }',
        "(field 'group': unknown column 'colour' for tune rows (allowed: n, steps, h, eval, median," },
      { 'ob.plot { name = "a", x = "n", y = "gbs", group = { "variant", 3 } }',
        "(field 'group': list of column names expected, got number)" },
      { 'ob.plot { name = "a", x = "n", y = "gbs", rows = "all" }',
        "(field 'rows': unknown value 'all' (allowed: solve, tune))" },
      { 'ob.plot { x = "n", y = "gbs" }', "(field 'name' is required" },
      { 'ob.plot { name = "a/b", x = "n", y = "gbs" }',
        "(field 'name': 'a/b' is not a plot name (1 to 40 letters, digits, '_' and '-'))" },
      { 'ob.plot { name = "a", x = "n" }', "(a lines plot needs fields 'x' and 'y' (column names))" },
      { 'ob.plot { name = "a", kind = "roofline", y = "gbs" }',
        "(a roofline plots GFLOP/s against flop/byte: leave out fields 'x', 'y' and 'z')" },
      { 'ob.plot { name = "a", kind = "heatmap", x = "n", y = "variant", group = "method" }',
        "(field 'group' does not apply to a heatmap" },
      { 'ob.plot { name = "a", x = "n", y = "gbs", z = "n" }',
        "(field 'z' (the colour) belongs to a heatmap only)" },
      { 'ob.plot { name = "a", x = "n", y = "gbs", logx = "yes" }',
        "(field 'logx': boolean expected, got string)" },
      { 'ob.plot { name = "a", x = "n", y = "gbs", where = { variant = {} } }',
        "(field 'where': {column = string, number or boolean, ...} expected)" },
      { 'ob.plot { name = "a", x = "n", y = "gbs", colour = "red" }',
        "(unknown field 'colour' (allowed: name, kind, x, y, z, group, rows, where, logx, logy, title))" },
      { 'ob.plot { name = "a", x = "n", y = "gbs" }; ob.plot { name = "a", x = "n", y = "gflops" }',
        "(field 'name': a plot named 'a' was requested already)" },
      { 'ob.plot "gbs"', "bad argument #1 to 'plot' (table expected, got string)" },
    }
    for _, c in ipairs(cases) do
      local out = tmpdir() .. "/run"
      local code, _, err = run { scenario(c[1]), "--ui", "none", "--out", out }
      assert.are.equal(2, code, err)
      has(err, c[2])
      assert.is_false(exists(out))
    end
  end)
end)

-- {====== what a chart shows: styles, ticks, labels, titles, error bars, roofs

describe("odebench plot charts", function()
  -- A run directory holding results.csv of the given lines; its plot.gp
  -- after odebench plot (and the directory).
  local function plot_rows(lines)
    local dir = tmpdir() .. "/run"
    os.execute("mkdir -p " .. q(dir))
    local f = assert(io.open(dir .. "/results.csv", "w"))
    f:write(table.concat(lines, "\n"), "\n")
    f:close()
    local code, _, err = run { "plot", dir, "-q" }
    assert.are.equal(0, code, err)
    return slurp(dir .. "/plots/plot.gp"), dir .. "/plots"
  end

  -- The text of chart name in plot.gp.
  local function chart(gp, name)
    local s = assert(gp:find("set output '" .. name .. ".'.fmt", 1, true), name)
    return gp:sub(s, gp:find("set output\n}", s, true))
  end

  -- The (colour, marker) of each series of a chart, in order.
  local function styles(text)
    local out = {}
    for idx, lc, pt in text:gmatch("index (%d+) using [%d:]+ with %S+ lw [%d.]+ lc rgb '(#%x+)' pt (%S+)") do
      out[#out + 1] = { tonumber(idx), lc, pt }
    end
    return out
  end

  -- n series V1..Vn (variant), time per step t(v, n) at three sizes;
  -- extra columns after the header's, values from more(v, n, tps).
  local function sweep(nseries, head, more, extra_ctx)
    local lines = { "# scenario.path=/home/someone/odebench/scenarios/my_sweep.lua",
                    "# bandwidth.read_1t=20", "# bandwidth.peak_gflops_1t=40",
                    "# plots.tpc.x=n", "# plots.tpc.y=time_per_component",
                    "# plots.tpc.group=variant", "# plots.tpc.logx=true", "# plots.tpc.logy=true" }
    for _, l in ipairs(extra_ctx or {}) do lines[#lines + 1] = l end
    lines[#lines + 1] = "kind,problem,method,variant,backend,n,status,time_per_step,gbs,gflops"
      .. (head or "")
    for v = 1, nseries do
      for _, n in ipairs { 1000, 10000, 100000 } do
        local tps = 1e-8 * n * (1 + v / 10)
        lines[#lines + 1] = ("solve,bruss2d,radau1a5,V%d,cpu,%d,ok,%.17g,%g,%g%s")
          :format(v, n, tps, 5 + v, 1 + v, more and more(v, n, tps) or "")
      end
    end
    return lines
  end

  plot_it("16 series get 16 distinct colours and 16 distinct markers", function()
    local gp = plot_rows(sweep(16))
    for _, name in ipairs { "tpc", "time_per_step" } do
      local st = styles(chart(gp, name))
      assert.are.equal(16, #st, name)
      local colours, markers, both = {}, {}, {}
      for i, s in ipairs(st) do
        assert.are.equal(i - 1, s[1])
        colours[s[2]], markers[s[3]], both[s[2] .. " " .. s[3]] = true, true, true
      end
      local function size(t) local k = 0 for _ in pairs(t) do k = k + 1 end return k end
      assert.are.equal(16, size(colours), name)
      assert.are.equal(16, size(markers), name)
      assert.are.equal(16, size(both), name)
      hasnt(chart(gp, name), "set key title")
    end
    -- the same series keeps its style across charts
    assert.are.same(styles(chart(gp, "tpc")), styles(chart(gp, "time_per_step")))
  end)

  plot_it("past 16 series the key says that styles repeat", function()
    local gp = plot_rows(sweep(18))
    for _, name in ipairs { "tpc", "time_per_step" } do
      local text = chart(gp, name)
      has(text, "set key title '18 series: from series 17 on, colours and markers repeat'\n")
      local st = styles(text)
      assert.are.equal(18, #st)
      assert.are.same({ st[1][2], st[1][3] }, { st[17][2], st[17][3] })
      assert.are.same({ st[2][2], st[2][3] }, { st[18][2], st[18][3] })
    end
  end)

  plot_it("log axes tick as 1e-8 beyond 1e-3..1e5 and as %g within; the last label has room",
          function()
    local gp, dir = plot_rows(sweep(2))
    local tps = chart(gp, "time_per_step")
    has(tps, 'set format y "%.0te%T"\n')   -- 1e-5 .. 1.2e-3 s
    has(tps, 'set format x "%.0te%T"\n')   -- n up to 1e5
    has(tps, "set rmargin 6\n")
    has(chart(gp, "gbs"), 'set format y "%g"\n')   -- linear, 6 .. 7 GB/s
    has(chart(gp, "tpc"), 'set format y "%g"\n')   -- 10 .. 12 ns
    -- what gnuplot drew: powers of ten as 1e-5, never 0.00001 or 1e-05
    local svg_text = slurp(dir .. "/time_per_step.svg")
    has(svg_text, ">1e-5<")
    has(svg_text, ">1e5<")
    hasnt(svg_text, ">0.00001<")
    hasnt(svg_text, ">1e-05<")
  end)

  plot_it("axes are labelled with units from one table; unknown columns keep their name",
          function()
    local gp = plot_rows(sweep(2, ",floor_pct,iters,relres,mystery", function(v)
      return (",%d,%d,%g,%d"):format(40 + v, 10 * v, 10 ^ -v, v)
    end, { "# plots.fl.x=n", "# plots.fl.y=floor_pct",
           "# plots.it.x=iters", "# plots.it.y=relres", "# plots.it.logy=true",
           "# plots.my.x=mystery", "# plots.my.y=gflops" }))
    has(chart(gp, "fl"), "set ylabel 'floor [% of memory floor]'\n")
    has(chart(gp, "fl"), "title 'the memory floor'")
    has(chart(gp, "it"), "set xlabel 'iterations'\n")
    has(chart(gp, "it"), "set ylabel 'relative residual'\n")
    has(chart(gp, "my"), "set xlabel 'mystery'\n")
    has(chart(gp, "my"), "set ylabel 'GFLOP/s'\n")
    has(chart(gp, "tpc"), "set ylabel 'time per step and component [ns]'\n")
    has(chart(gp, "time_per_step"), "set ylabel 'time per step [s]'\n")
    has(chart(gp, "time_per_step"), "set xlabel 'n [components]'\n")
    has(chart(gp, "gbs"), "set ylabel 'bandwidth [GB/s]'\n")
  end)

  plot_it("titles name the scenario and what is swept, never a path", function()
    local gp = plot_rows(sweep(2))
    has(gp, "set title 'my_sweep: time per step and component vs n'\n")
    has(gp, "set title 'my_sweep: time per step vs n'\n")
    has(gp, "set title 'my_sweep: bandwidth vs n'\n")
    has(gp, "set title 'my_sweep: roofline'\n")
    for title in gp:gmatch("set title '([^\n]*)'\n") do
      assert.is_falsy(title:find("/", 1, true), title)
      assert.is_falsy(title:find(".lua", 1, true), title)
    end
  end)

  plot_it("a tuning chart's title names the scenario, not its path", function()
    local out = tmpdir() .. "/run"
    local path = scenario [[
      local p = ob.problem("bruss2d", { N = 8 })
      local s <close> = ob.solver { problem = p, method = "radau1a5", variant = "A", tol = 1e-6 }
      ob.tune { target = s, space = { variant = { "Dblock", "PipeDb2mt" }, block = { 16, 32 } },
                strategy = "exhaustive", steps = 1, cache = "off",
                measure = { warmup = 0, min_reps = 1, max_reps = 1 } }]]
    local code, _, err = run { path, "--ui", "none", "-q", "--out", out }
    assert.are.equal(0, code, err)
    code, _, err = run { "plot", out, "-q" }
    assert.are.equal(0, code, err)
    local gp = slurp(out .. "/plots/plot.gp")
    has(gp, "set title 'scenario: tuning 4 configurations timed'\n")
    has(gp, "set title 'scenario: tuning median time [")
    hasnt(gp, path)
  end)

  plot_it("rows with q1 and q3 get error bars from q1 to q3 of the plotted time", function()
    -- median = 10 time_per_step (10 steps), q1 = 0.9 median, q3 = 1.2 median
    local gp, dir = plot_rows(sweep(2, ",median,q1,q3", function(_, _, tps)
      return (",%.17g,%.17g,%.17g"):format(10 * tps, 9 * tps, 12 * tps)
    end))
    has(chart(gp, "time_per_step"), "using 1:2:6:7 with yerrorlines")
    has(chart(gp, "tpc"), "using 1:2:3:4 with yerrorlines")
    hasnt(chart(gp, "gbs"), "yerrorlines")
    -- solves.dat: x tps gbs gflops flop/byte q1 q3, the quartiles per step
    local rows = 0
    for line in slurp(dir .. "/solves.dat"):gmatch("[^\n]+") do
      if not line:find("^#") then
        local v = {}
        for w in line:gmatch("%S+") do v[#v + 1] = tonumber(w) end
        assert.is_true(math.abs(v[6] / v[2] - 0.9) < 1e-12, line)
        assert.is_true(math.abs(v[7] / v[2] - 1.2) < 1e-12, line)
        rows = rows + 1
      end
    end
    assert.are.equal(6, rows)
    -- the named chart: per step and component, in its unit (ns)
    local dat = slurp(dir .. "/named_tpc.dat")
    local n = 0
    for x, y, lo, hi in dat:gmatch("\n(%S+) (%S+) (%S+) (%S+)\n") do
      assert.is_true(math.abs(tonumber(lo) / tonumber(y) - 0.9) < 1e-12, dat)
      assert.is_true(math.abs(tonumber(hi) / tonumber(y) - 1.2) < 1e-12, dat)
      assert.is_true(tonumber(x) >= 1000)
      n = n + 1
    end
    assert.is_true(n >= 2, dat)
    -- without quartiles: lines and points, two columns
    gp, dir = plot_rows(sweep(2))
    hasnt(gp, "yerrorlines")
    assert.is_truthy(slurp(dir .. "/named_tpc.dat"):find("\n1000 [%d.e+-]+\n"))
  end)

  plot_it("rows with fp64_peak_gflops get their own compute and memory roofs", function()
    local lines = {
      "# scenario.path=gpu_run.lua", "# bandwidth.read_1t=20", "# bandwidth.peak_gflops_1t=40",
      "# plots.r.kind=roofline", "# plots.r.group=backend",
      "kind,problem,method,variant,backend,n,status,time_per_step,gbs,gflops,floor_pct,fp64_peak_gflops",
      "solve,bruss2d,dopri5,gpu_reference,cuda,100000,ok,1e-5,3000,900,50,60000",
      "solve,bruss2d,dopri5,gpu_reference,cuda,1000000,ok,1e-4,3600,1000,60,60000",
      "solve,bruss2d,dopri5,plain,cpu,100000,ok,1e-3,10,3,30,",
    }
    local gp = plot_rows(lines)
    for _, name in ipairs { "r", "roofline" } do
      local text = chart(gp, name)
      -- the GPU rows' memory roof: 100 gbs / floor_pct, 6000 GB/s for both
      has(text, "(x <= 10 ? 6000 * x : 1/0) with lines lw 2 lc rgb '#7f7f7f' "
                .. "title 'memory roof, cuda (6000.0 GB/s)'")
      has(text, "60000 with lines lw 2 dt 2 lc rgb '#7f7f7f' "
                .. "title 'compute roof, cuda FP64 (60000.0 GFLOP/s)'")
      has(text, "title 'memory roof, 1 thread (20.0 GB/s)'")
      has(text, "40 with lines lw 2 dt 2 lc rgb '#000000' title 'compute roof, 1 core (40.0 GFLOP/s)'")
      -- the x range reaches both ridges (2 and 10 flop/byte)
      local lo, hi = text:match("set xrange %[([%d.e+-]+):([%d.e+-]+)%]")
      assert.is_true(tonumber(lo) <= 0.3 / 4 + 1e-9 and tonumber(hi) >= 10, text)
    end
    -- a GPU run alone: its roofs only
    gp = plot_rows { lines[1], lines[2], lines[3], lines[4], lines[5], lines[6], lines[7] }
    hasnt(chart(gp, "roofline"), "1 thread")
    has(chart(gp, "roofline"), "compute roof, cuda FP64")
  end)
end)

-- }======
