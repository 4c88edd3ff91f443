-- ui_spec.lua: the dashboard in a real terminal (tmux: send-keys,
-- capture-pane), plain mode, events.jsonl, replay and plot. Scenarios run
-- in fixtures/ like in cli_spec.lua.

local json = require "dkjson"

local H = dofile(assert(os.getenv("ODEBENCH_SRC"), "set ODEBENCH_SRC")
                 .. "/tests/lua/spec_helpers.lua")
local BIN, SRC, FIX, q, sh_ok, slurp, exists =
  H.BIN, H.SRC, H.FIX, H.q, H.sh_ok, H.slurp, H.exists
local function tmpdir() return H.tmpdir("ui") end

local HAVE_TMUX = sh_ok("command -v tmux >/dev/null 2>&1")
local HAVE_GNUPLOT = sh_ok("command -v gnuplot >/dev/null 2>&1")

local function sleep(s)
  os.execute("sleep " .. s)
end

local function has(text, part)
  assert.is_truthy(text:find(part, 1, true),
                   "expected to find:\n  " .. part .. "\nin:\n" .. text)
end

local function hasnt(text, part)
  assert.is_falsy(text:find(part, 1, true),
                  "did not expect:\n  " .. part .. "\nin:\n" .. text)
end

-- Runs BIN with args in FIX (not a terminal); returns status, stdout, stderr.
local function run(args, env)
  local dir = tmpdir()
  local quoted = {}
  for i, a in ipairs(args) do quoted[i] = q(a) end
  local cmd = ("cd %s && env -u LD_PRELOAD %s %s %s </dev/null >%s/out 2>%s/err")
    :format(q(FIX), env or "", q(BIN), table.concat(quoted, " "), q(dir), q(dir))
  local _, how, code = os.execute(cmd)
  if how == "signal" then code = 128 + code end
  return code, slurp(dir .. "/out") or "", slurp(dir .. "/err") or ""
end

local function results(out)
  return assert(json.decode(slurp(out .. "/results.json") or "null"),
                "no results.json in " .. out)
end

-- {====== a tmux server of our own for the file's specs

local T = {}

-- tmux with our socket; LD_PRELOAD (sanitizer builds) stays away from it.
local function tmux(args)
  return ("env -u LD_PRELOAD tmux -S %s %s"):format(q(T.sock), args)
end

-- Starts args (a list) in a detached W x H pane, in FIX. When odebench
-- ends, `stty -a` goes to <dir>/stty and then its exit status to
-- <dir>/exit (in that order: who sees the status finds the modes too).
local function start(args, w, h, env)
  local dir = tmpdir()
  local quoted = {}
  for i, a in ipairs(args) do quoted[i] = q(a) end
  local inner = ("cd %s && env %s %s %s; rc=$?; stty -a >%s/stty; echo $rc >%s/exit; "
                 .. "sleep 120"):format(q(FIX), env or "", q(BIN),
                 table.concat(quoted, " "), q(dir), q(dir))
  T.n = (T.n or 0) + 1
  local name = "s" .. T.n
  assert(sh_ok(tmux(("new-session -d -s %s -x %d -y %d %s"):format(
    name, w or 120, h or 40, q(inner)))), "tmux new-session failed")
  return { name = name, dir = dir }
end

local function capture(s, escapes)
  local p = assert(io.popen(tmux(("capture-pane -p %s -t %s"):format(
    escapes and "-e" or "", s.name))))
  local text = p:read("a")
  p:close()
  return text
end

local function keys(s, ...)
  local list = {}
  for i, k in ipairs { ... } do list[i] = q(k) end
  assert(sh_ok(tmux(("send-keys -t %s %s"):format(s.name,
    table.concat(list, " ")))))
end

-- Waits until the screen shows part (plain text); returns the screen. The
-- default wait is long: CI runs these beside the other suites.
local function wait_for(s, part, seconds)
  local screen = ""
  for _ = 1, (seconds or 20) * 10 do
    screen = capture(s)
    if screen:find(part, 1, true) then return screen end
    sleep(0.1)
  end
  error("timed out waiting for:\n  " .. part .. "\nscreen:\n" .. screen)
end

-- Waits for odebench to end; returns its exit status.
local function wait_exit(s, seconds)
  for _ = 1, (seconds or 60) * 10 do
    local e = slurp(s.dir .. "/exit")
    if e and e:match("%d") and exists(s.dir .. "/stty") then
      return tonumber(e:match("%d+"))
    end
    sleep(0.1)
  end
  error("odebench did not end; screen:\n" .. capture(s))
end

local function stop(s)
  os.execute(tmux("kill-session -t " .. s.name) .. " 2>/dev/null")
end

-- The step count the Activity panel shows.
local function steps_shown(screen)
  return tonumber(screen:match("steps (%d+) %("))
end

-- The step count on the screen now (retried while a redraw is half done).
local function steps_now(s)
  local screen = ""
  for _ = 1, 30 do
    screen = capture(s)
    local n = steps_shown(screen)
    if n then return n end
    sleep(0.1)
  end
  error("no step count on the screen:\n" .. screen)
end

-- The terminal is back in its normal modes and on its normal screen.
local function assert_restored(s)
  local stty = slurp(s.dir .. "/stty") or ""
  assert.is_truthy(stty:find("[ \n]icanon"), stty)
  assert.is_truthy(stty:find("[ \n]echo[ \n]"), stty)
  assert.is_falsy(stty:find("-icanon", 1, true), stty)
  hasnt(capture(s), "Throughput")
end

-- }======

setup(function()
  if HAVE_TMUX then
    T.dir = tmpdir()
    T.sock = T.dir .. "/tmux.sock"
  end
end)

teardown(function()
  if T.sock then os.execute(tmux("kill-server") .. " 2>/dev/null") end
  H.cleanup()   -- after the tmux server whose socket lives in T.dir
end)

local tmux_it = HAVE_TMUX and it or function(name)
  pending(name .. " (tmux is not installed)")
end

local plot_it = HAVE_GNUPLOT and it or function(name)
  pending(name .. " (gnuplot is not installed)")
end

describe("the dashboard (--ui tui) in tmux", function()
  tmux_it("shows the panels, p pauses, q stops cleanly with complete results",
          function()
    local out = tmpdir() .. "/run"
    local s = start({ "ui_long.lua", "--ui", "tui", "--out", out })
    local screen = wait_for(s, "steps/s")
    for _, part in ipairs { "odebench", "ui_long.lua", "elapsed", "Activity",
                            "solve bruss2d/rk4/plain", "n=8192", "running",
                            "t=", "of 10", "Throughput", "GB/s", "GFLOP/s",
                            "Finished solves", "Metrics", "warmup_ms", "12.5",
                            "Log", "hello from the scenario", "q quit",
                            "? help" } do
      has(screen, part)
    end
    -- p: the engine waits; the step count stands still
    keys(s, "p")
    wait_for(s, "PAUSED")
    sleep(0.4)
    local a = steps_now(s)
    sleep(1.0)
    assert.are.equal(a, steps_now(s))
    -- p again: it goes on
    keys(s, "p")
    sleep(0.8)
    local b = steps_now(s)
    assert.is_true(b > a, ("steps %s after resuming, %s paused"):format(b, a))
    -- ? shows the help, any key closes it
    keys(s, "?")
    wait_for(s, "this help (any key closes it)")
    keys(s, "x")
    -- q: stop after the current step, write results, restore the terminal
    keys(s, "q")
    assert.are.equal(130, wait_exit(s))
    assert_restored(s)
    local after = capture(s)
    has(after, "hello from the scenario")   -- the captured stdout, re-emitted
    has(after, "interrupted; results so far in")
    local doc = results(out)
    assert.are.equal(2, #doc.results)          -- the metric and the solve
    assert.are.equal("metric", doc.results[1].kind)
    local r = doc.results[2]
    assert.are.equal("interrupted", r.status)
    assert.is_true(r.steps >= b, ("%d steps in results, %d shown"):format(r.steps, b))
    assert.are.equal("tui", doc.context.ui)
    has(slurp(out .. "/results.csv"), "interrupted")
    local ev = slurp(out .. "/events.jsonl")
    has(ev, '"kind":"run"')
    has(ev, '"kind":"solve_begin"')
    has(ev, '"kind":"metric"')
    assert.is_false(exists(out .. "/events.jsonl.part"))
    stop(s)
  end)

  -- The rows of results.csv of kind solve (a CSV reader for its quoted
  -- fields), by variant.
  local function solve_rows(csv)
    local function fields(line)
      local out, i = {}, 1
      while i <= #line + 1 do
        local v
        if line:sub(i, i) == '"' then
          local j, buf = i + 1, {}
          while true do
            local c = line:sub(j, j)
            if c == '"' and line:sub(j + 1, j + 1) == '"' then
              buf[#buf + 1] = '"'; j = j + 2
            elseif c == '"' or c == "" then break
            else buf[#buf + 1] = c; j = j + 1 end
          end
          v, i = table.concat(buf), j + 2
        else
          local j = line:find(",", i, true) or #line + 1
          v, i = line:sub(i, j - 1), j + 1
        end
        out[#out + 1] = v
      end
      return out
    end
    local head, rows = nil, {}
    for line in csv:gmatch("[^\n]+") do
      if line:sub(1, 1) ~= "#" then
        if not head then head = fields(line)
        else
          local r = {}
          for k, v in ipairs(fields(line)) do r[head[k]] = v end
          if r.kind == "solve" then rows[r.variant] = r end
        end
      end
    end
    return rows
  end

  tmux_it("Finished solves: whole variant names, n, and the floor % of "
          .. "results.csv", function()
    local out = tmpdir() .. "/run"
    local variants = { "PipeDe2m", "PipeDb2m", "PipeDb2mt", "PipeDb1m",
                       "PipeDb1mt" }
    local s = start({ "ui_variants.lua", "--ui", "tui", "--out", out }, 120, 40)
    -- the five rows are there once the long solve runs (the first row may
    -- have measured the bandwidth: generous time)
    wait_for(s, "solve bruss2d/rk4/plain", 120)
    local screen = wait_for(s, "(5 finished)", 30)
    keys(s, "q")
    assert.are.equal(130, wait_exit(s))
    assert_restored(s)
    local rows = solve_rows(assert(slurp(out .. "/results.csv")))
    has(screen, "Finished solves")
    assert.is_truthy(screen:find("solve +n +steps", 1), screen)
    for _, v in ipairs(variants) do
      local r = assert(rows[v], "no results row of " .. v)
      -- the line of this variant: its whole name and a space after it
      local line = screen:match("[^\n]*bruss2d/radau1a5/" .. v .. " [^\n]*")
      assert.is_truthy(line, "no line of " .. v .. " in:\n" .. screen)
      local floor = r.floor_pct ~= "" and
                    ("%.1f%%"):format(tonumber(r.floor_pct)) or "-"
      assert.is_truthy(line:find(" " .. r.n .. " ", 1, true),
                       "n " .. r.n .. " not in: " .. line)
      assert.is_truthy(line:find(" " .. floor .. " ", 1, true),
                       "floor " .. floor .. " (results.csv) not in: " .. line)
    end
    hasnt(screen, "~")
    stop(s)
  end)

  tmux_it("restores the terminal after Ctrl-C and keeps the results", function()
    local out = tmpdir() .. "/run"
    local s = start({ "long.lua", "--ui", "tui", "--out", out })
    wait_for(s, "steps/s")
    keys(s, "C-c")
    assert.are.equal(130, wait_exit(s))
    assert_restored(s)
    local doc = results(out)
    assert.are.equal("interrupted", doc.results[1].status)
    stop(s)
  end)

  tmux_it("asks for a larger terminal, goes on, and survives resizes", function()
    local s = start({ "long.lua", "--ui", "tui", "--out", tmpdir() .. "/run" })
    wait_for(s, "steps/s")
    assert(sh_ok(tmux("resize-window -t " .. s.name .. " -x 50 -y 12")))
    local small = wait_for(s, "terminal too small (50x12)")
    has(small, "the run goes on; q stops it")
    for _, size in ipairs { { 80, 24 }, { 60, 30 }, { 132, 50 } } do
      assert(sh_ok(tmux(("resize-window -t %s -x %d -y %d"):format(
        s.name, size[1], size[2]))))
      sleep(0.2)
    end
    assert(sh_ok(tmux("resize-window -t " .. s.name .. " -x 120 -y 40")))
    wait_for(s, "steps/s")
    local n1 = steps_now(s)
    sleep(0.5)
    assert.is_true(steps_now(s) > n1)
    keys(s, "q")
    assert.are.equal(130, wait_exit(s))
    assert_restored(s)
    stop(s)
  end)

  tmux_it("honours NO_COLOR", function()
    local function colours(env)
      local s = start({ "replay", "tune_run", "--speed", "50" }, 120, 40, env)
      wait_for(s, "replay finished")
      local screen = capture(s, true)
      keys(s, "q")
      wait_exit(s)
      stop(s)
      return screen:find("\27%[[34][0-7]m") or screen:find("\27%[[34]8;5;")
    end
    assert.is_truthy(colours(""), "no colours without NO_COLOR")
    assert.is_falsy(colours("NO_COLOR=1"), "colours despite NO_COLOR")
  end)

  tmux_it("runs plain lines when TERM is unset (auto and tui)", function()
    local out = tmpdir() .. "/run"
    local s = start({ "tiny.lua", "--ui", "tui", "--out", out }, 120, 40,
                    "-u TERM")
    assert.are.equal(0, wait_exit(s))
    local screen = capture(s)
    has(screen, "warning: no dashboard (TERM is not set); plain progress lines")
    has(screen, "results in")
    assert.are.equal("plain", results(out).context.ui)
    stop(s)
    out = tmpdir() .. "/run"
    s = start({ "tiny.lua", "--out", out }, 120, 40, "-u TERM")
    assert.are.equal(0, wait_exit(s))
    hasnt(capture(s), "warning")
    assert.are.equal("plain", results(out).context.ui)
    stop(s)
  end)

  tmux_it("auto is the dashboard on a terminal", function()
    local out = tmpdir() .. "/run"
    local s = start({ "tiny.lua", "--out", out })
    assert.are.equal(0, wait_exit(s))
    assert.are.equal("tui", results(out).context.ui)
    has(capture(s), "tiny_err")          -- ob.report's table, after the end
    assert_restored(s)
    stop(s)
  end)
end)

describe("a live tuning run in the dashboard", function()
  -- The best configuration among those the tuner measured (status ok),
  -- whichever one the s key happened to drop, by the fixture's objective.
  local objective = dofile(FIX .. "/tune_live_objective.lua")
  local function best_measured(list)
    local best, at = math.huge, nil
    for _, r in ipairs(list) do
      local t = tonumber(r["cfg.tile"])
      local v = t and objective(t, r["cfg.stride"]) or math.huge
      if r.status == "ok" and v < best then best, at = v, r.config end
    end
    return at
  end

  -- Timeouts are generous: CI runs this beside the other suites, and a
  -- loaded machine stretches both odebench's start and tmux's captures.
  tmux_it("shows the tuner's progress; s skips a configuration", function()
    local out = tmpdir() .. "/run"
    local s = start({ "tune_live.lua", "--ui", "tui", "--out", out,
                      "--set", "busy=0.3" })
    local screen = wait_for(s, "/15 [", 60)   -- "tuning i/15 [###---]"
    has(screen, "Best configurations")
    has(screen, "Heatmap: tile (rows) x stride (columns)")
    keys(s, "s")
    wait_for(s, "skip requested", 30)
    assert.are.equal(0, wait_exit(s, 120))
    assert_restored(s)
    local list = results(out).results
    local skipped = 0
    for _, r in ipairs(list) do
      if r.status == "skipped" then skipped = skipped + 1 end
    end
    assert.are.equal(1, skipped)
    has(capture(s), "best " .. best_measured(list))
    has(slurp(out .. "/events.jsonl"), '"text":"skipped')
    stop(s)
  end)
end)

describe("replay in tmux", function()
  tmux_it("shows the best configurations and a heatmap whose axes the arrows "
          .. "choose", function()
    local s = start({ "replay", "tune_run", "--speed", "20" })
    local screen = wait_for(s, "replay finished")
    for _, part in ipairs { "REPLAY x20", "tune_fixture.lua", "Fixture CPU",
                            "Best configurations (30 evaluated)",
                            "1  tile=8 stride=B unroll=2", "1.2 ms",
                            "tuning 30/30", "best    tile=8 stride=B unroll=2",
                            "exhaustive 30/30",
                            "Heatmap: stride (rows) x tile (columns)",
                            "solve bruss2d/dopri5/fused", "done",
                            "fused_speedup=1.58 x", "tuning done" } do
      has(screen, part)
    end
    -- the heatmap row of stride B: 4 ms at tile=1 ... 1.2 ms (best) at 8
    assert.is_truthy(screen:find("B +4 ms +2%.6 ms +1%.7 ms +1%.2 ms%*"), screen)
    keys(s, "Right")
    wait_for(s, "Heatmap: stride (rows) x unroll (columns)")
    keys(s, "Down")
    wait_for(s, "Heatmap: tile (rows) x unroll (columns)")
    keys(s, "Left")
    wait_for(s, "Heatmap: tile (rows) x stride (columns)")
    keys(s, "q")
    assert.are.equal(0, wait_exit(s))
    assert_restored(s)
    stop(s)
  end)

  tmux_it("s jumps ahead to the next solve or configuration; Ctrl-C ends it",
          function()
    local s = start({ "replay", "tune_run", "--speed", "0.2" })
    wait_for(s, "solve bruss2d/dopri5/fused")
    hasnt(capture(s), "tuning 1/30")
    keys(s, "s")
    wait_for(s, "tuning 1/30", 4)        -- 5.5 s at x0.2 without the jump
    keys(s, "C-c")                           -- Ctrl-C ends a replay too
    assert.are.equal(130, wait_exit(s))
    assert_restored(s)
    stop(s)
  end)

  tmux_it("replays a recorded run", function()
    local out = tmpdir() .. "/run"
    local code, _, err = run { "sweep.lua", "--ui", "none", "--out", out }
    assert.are.equal(0, code, err)
    local s = start({ "replay", out, "--speed", "50" })
    local screen = wait_for(s, "replay finished")
    has(screen, "sweep.lua")
    has(screen, "bruss2d/dopri5/fused")
    has(screen, "(6 finished)")
    has(screen, "sizes")
    keys(s, "q")
    assert.are.equal(0, wait_exit(s))
    stop(s)
  end)
end)

describe("plain mode and events.jsonl", function()
  it("prints plain lines under a pipe, no escape sequences", function()
    local out = tmpdir() .. "/run"
    local code, stdout, err = run { "sweep.lua", "--out", out }
    assert.are.equal(0, code, err)
    has(err, "bruss2d/dopri5/plain: n=128")
    has(err, "results in " .. out)
    hasnt(err .. stdout, "\27[")
    assert.are.equal("plain", results(out).context.ui)
  end)

  it("records every event in events.jsonl, one JSON object per line", function()
    local out = tmpdir() .. "/run"
    local code, _, err = run { "sweep.lua", "--ui", "none", "--out", out }
    assert.are.equal(0, code, err)
    local kinds, n = {}, 0
    for line in io.lines(out .. "/events.jsonl") do
      local obj = assert(json.decode(line), line)
      kinds[obj.kind] = (kinds[obj.kind] or 0) + 1
      n = n + 1
    end
    assert.are.equal(1, kinds.run)
    -- each of the 6 integrate calls runs a warm-up and at least 3 timed
    -- runs (odb_measure's defaults), each a solve of its own
    assert.is_true(kinds.solve_begin >= 6 * 4, tostring(kinds.solve_begin))
    assert.are.equal(kinds.solve_begin, kinds.solve_end)
    assert.are.equal(1, kinds.metric)
    assert.is_true(kinds.step >= 6)
  end)

  it("leaves no events.jsonl after a failed run", function()
    local out = tmpdir() .. "/out"
    local code = run { "runtime_error.lua", "--ui", "none", "--out", out }
    assert.are.equal(2, code)
    assert.is_false(exists(out))
  end)

  it("replays as plain lines when not on a terminal", function()
    local code, _, err = run { "replay", "tune_run" }
    assert.are.equal(0, code, err)
    has(err, "bruss2d/dopri5/fused: done")
    has(err, "tune [####################] 30/30")
    has(err, "best so far tile=8 stride=B unroll=2: 1.2 ms")
    hasnt(err, "\27[")
  end)

  it("refuses to replay a missing, empty or corrupt run directory", function()
    local cases = {
      { { "replay", "no_such_run" }, "cannot replay 'no_such_run': no such run directory" },
      { { "replay", tmpdir() }, "holds no events.jsonl" },
      { { "replay", "corrupt_run" }, "corrupt_run/events.jsonl:4: not valid JSON" },
      { { "replay", "noheader_run" }, "not an odebench events file" },
      { { "replay" }, "'replay' needs a run directory" },
      { { "replay", "tune_run", "--speed", "0" }, "bad --speed value '0'" },
    }
    for _, c in ipairs(cases) do
      local code, _, err = run(c[1])
      assert.are.equal(2, code, err)
      has(err, c[2])
    end
  end)
end)

describe("odebench plot", function()
  local function png(path)
    local data = slurp(path)
    return data and data:sub(1, 8) == "\137PNG\r\n\26\n"
  end
  local function svg(path)
    local data = slurp(path)
    return data and data:find("<svg", 1, true) ~= nil
  end

  plot_it("draws a sweep, a roofline, a tuning curve and a heatmap", function()
    local dir = tmpdir() .. "/plots"
    local code, stdout, err = run { "plot", "tune_run", "--out", dir }
    assert.are.equal(0, code, err)
    for _, name in ipairs { "time_per_step", "gbs", "roofline", "tuning",
                            "heatmap" } do
      assert.is_true(png(dir .. "/" .. name .. ".png"), name .. ".png")
      assert.is_true(svg(dir .. "/" .. name .. ".svg"), name .. ".svg")
      has(stdout, dir .. "/" .. name .. ".png")
    end
    has(slurp(dir .. "/heat.dat"), "B 4 2.6 1.7 1.2 1.9")
    has(slurp(dir .. "/plot.gp"), "gnuplot plot.gp")
  end)

  plot_it("plots a fresh run into RUN_DIR/plots", function()
    local out = tmpdir() .. "/run"
    local code, _, err = run { "sweep.lua", "--ui", "none", "--out", out }
    assert.are.equal(0, code, err)
    code, _, err = run { "plot", out, "-q" }
    assert.are.equal(0, code, err)
    assert.is_true(png(out .. "/plots/time_per_step.png"))
    assert.is_true(svg(out .. "/plots/gbs.svg"))
    assert.is_false(exists(out .. "/plots/heatmap.png"))
  end)

  it("refuses a run without plottable data, or no run at all", function()
    local out = tmpdir() .. "/run"
    local code, _, err = run { "metric_only.lua", "--ui", "none", "--out", out }
    assert.are.equal(0, code, err)
    local cases = {
      { { "plot", out }, "nothing to plot in '" .. out .. "'" },
      { { "plot", "no_such_run" }, "no run directory 'no_such_run'" },
      { { "plot", tmpdir() }, "holds no results.csv or events.jsonl" },
      { { "plot", "tune_run", "--x", "nosuch" }, "results.csv has no column 'nosuch'" },
    }
    for _, c in ipairs(cases) do
      code, _, err = run(c[1])
      assert.are.equal(2, code, err)
      has(err, c[2])
    end
    assert.is_false(exists(out .. "/plots"))
  end)
end)
