-- hardening_host_spec.lua: the odebench program when a run is stopped
-- (SIGINT through a pcall, SIGTERM, SIGHUP, os.exit), when plot and replay
-- read files that were edited or damaged (gnuplot quoting, terminal
-- escapes, absurd times, large runs) and the exit statuses of tunedb.

local json = require "dkjson"

local H = dofile(assert(os.getenv("ODEBENCH_SRC"), "set ODEBENCH_SRC")
                 .. "/tests/lua/spec_helpers.lua")
local BIN, q, sh_ok, slurp, exists = H.BIN, H.q, H.sh_ok, H.slurp, H.exists
local function tmpdir() return H.tmpdir("hard") end
teardown(H.cleanup)

local HAVE_GNUPLOT = sh_ok("command -v gnuplot >/dev/null 2>&1")
local plot_it = HAVE_GNUPLOT and it or function(name)
  pending(name .. " (gnuplot is not installed)")
end

local function has(text, part)
  assert.is_truthy(text:find(part, 1, true),
                   "expected to find:\n  " .. part .. "\nin:\n" .. text)
end

local function hasnt(text, part)
  assert.is_falsy(text:find(part, 1, true),
                  "did not expect:\n  " .. part .. "\nin:\n" .. text)
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- Seconds since the epoch, to the millisecond.
local function now()
  local p = assert(io.popen("date +%s.%N"))
  local t = tonumber(p:read("l"))
  p:close()
  return t
end

-- Runs BIN with args in dir (default: a fresh one); returns status,
-- stdout, stderr. timeout(1) guards against a hang (status 124).
local function run(args, dir, limit)
  dir = dir or tmpdir()
  local io_dir = tmpdir()
  local quoted = {}
  for i, a in ipairs(args) do quoted[i] = q(a) end
  local cmd = ("cd %s && env -u LD_PRELOAD timeout -s KILL %d %s %s </dev/null >%s/out 2>%s/err")
    :format(q(dir), limit or 120, q(BIN), table.concat(quoted, " "), q(io_dir), q(io_dir))
  local _, how, code = os.execute(cmd)
  if how == "signal" then code = 128 + code end
  return code, slurp(io_dir .. "/out") or "", slurp(io_dir .. "/err") or ""
end

-- One finished solve row (label "done") before the body; the scenario
-- creates the file named by arg[1] once that row is finished.
local function scenario(dir, body)
  local path = dir .. "/scenario.lua"
  write(path, [[
local ob = require "odebench"
local p = ob.problem("bruss2d", { N = 8 })
local s = ob.solver { problem = p, method = "dopri5", variant = "plain" }
s:integrate { t0 = 0, t1 = 0.01, label = "done" }
if arg[1] then io.open(arg[1], "w"):close() end
]] .. body .. "\n")
  return path
end

local function results(out)
  return json.decode(slurp(out .. "/results.json") or "null")
end

-- Starts the scenario in the background, waits for its mark, sends sig,
-- and waits at most 10 s for the exit (then kills it). Returns the exit
-- status, the seconds from the signal to the exit, stderr.
local function signalled(path, out, sig)
  local dir = tmpdir()
  local mark = dir .. "/mark"
  local script = ([[
env -u LD_PRELOAD %s %s --ui none --out %s -- %s >%s/out 2>%s/err &
pid=$!
i=0
while [ ! -e %s ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
sleep 0.3
date +%%s.%%N >%s/sent
kill -%s $pid
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
kill -KILL $pid 2>/dev/null
wait $pid
echo $? >%s/rc
date +%%s.%%N >%s/done
]]):format(q(BIN), q(path), q(out), q(mark), q(dir), q(dir), q(mark), q(dir), sig,
           q(dir), q(dir))
  write(dir .. "/run.sh", script)
  assert(sh_ok("sh " .. q(dir .. "/run.sh")))
  local rc = tonumber(slurp(dir .. "/rc"))
  local took = tonumber(slurp(dir .. "/done")) - tonumber(slurp(dir .. "/sent"))
  return rc, took, slurp(dir .. "/err") or ""
end

-- {====== stopping a run

describe("a stopped run", function()
  it("cannot swallow Ctrl-C in a pcall: it ends with 130 and the finished row", function()
    local dir = tmpdir()
    local path = scenario(dir, [[
while true do pcall(function() local x = 0 for i = 1, 1e6 do x = x + i end end) end]])
    local out = dir .. "/out"
    local rc, took, err = signalled(path, out, "INT")
    assert.are.equal(130, rc, err)
    assert.is_true(took < 5, "took " .. took .. " s after SIGINT")
    has(err, "odebench: interrupted; results so far in " .. out)
    local doc = assert(results(out), "no results.json; stderr: " .. err)
    assert.are.equal(1, #doc.results)
    assert.are.equal("done", doc.results[1].label)
    assert.are.equal("ok", doc.results[1].status)
    has(slurp(out .. "/results.csv"), "solve,done,bruss2d,dopri5,plain,")
    assert.is_true(exists(out .. "/events.jsonl"))
    assert.is_false(exists(out .. "/events.jsonl.part"))
  end)

  it("cannot swallow Ctrl-C in an xpcall with a message handler", function()
    local dir = tmpdir()
    local path = scenario(dir, [[
local function again() return "again" end
while true do xpcall(function() while true do end end, again) end]])
    local out = dir .. "/out"
    local rc, took, err = signalled(path, out, "INT")
    assert.are.equal(130, rc, err)
    assert.is_true(took < 5, "took " .. took .. " s after SIGINT")
    assert.are.equal("done", assert(results(out)).results[1].label)
  end)

  for _, c in ipairs { { "TERM", 143, "SIGTERM" }, { "HUP", 129, "SIGHUP" } } do
    it("writes the finished rows on " .. c[3] .. " and exits " .. c[2], function()
      local dir = tmpdir()
      local path = scenario(dir, "while true do end")
      local out = dir .. "/out"
      local rc, took, err = signalled(path, out, c[1])
      assert.are.equal(c[2], rc, err)
      assert.is_true(took < 5, "took " .. took .. " s after " .. c[3])
      has(err, "odebench: stopped by " .. c[3] .. "; results so far in " .. out)
      local doc = assert(results(out), "no results.json; stderr: " .. err)
      assert.are.equal(1, #doc.results)
      assert.are.equal("done", doc.results[1].label)
      has(slurp(out .. "/results.csv"), "solve,done,")
      assert.is_true(exists(out .. "/events.jsonl"))
      assert.is_false(exists(out .. "/events.jsonl.part"))
    end)
  end

  it("marks a solve that " .. "SIGTERM stops as interrupted", function()
    local dir = tmpdir()
    local path = scenario(dir, [[
local q = ob.problem("bruss2d", { N = 64 })
local l = ob.solver { problem = q, method = "rk4", variant = "plain", h = 1e-7 }
l:integrate { t0 = 0, t1 = 10, label = "long" }]])
    local out = dir .. "/out"
    local rc, _, err = signalled(path, out, "TERM")
    assert.are.equal(143, rc, err)
    local doc = assert(results(out), "no results.json; stderr: " .. err)
    assert.are.equal(2, #doc.results)
    assert.are.equal("ok", doc.results[1].status)
    assert.are.equal("long", doc.results[2].label)
    assert.are.equal("interrupted", doc.results[2].status)
  end)

  it("writes the finished rows on os.exit and exits with its status", function()
    local cases = {
      { "os.exit(true)", 0 }, { "os.exit()", 0 }, { "os.exit(0)", 0 },
      { "os.exit(false)", 1 }, { "os.exit(1)", 1 }, { "os.exit(7, true)", 7 },
      -- a pcall does not catch it, nor does the code after it run
      { 'print(pcall(os.exit, 3)); print("after")', 3 },
      { "local ok = pcall(function() os.exit(5) end) while true do end", 5 },
    }
    for _, c in ipairs(cases) do
      local dir = tmpdir()
      local path = scenario(dir, c[1])
      local out = dir .. "/out"
      local rc, stdout, err = run({ path, "--ui", "none", "--out", out }, dir, 30)
      assert.are.equal(c[2], rc, c[1] .. ": " .. err)
      hasnt(stdout, "after")
      has(err, "odebench: results in " .. out)
      local doc = assert(results(out), c[1] .. ": no results.json; stderr: " .. err)
      assert.are.equal(1, #doc.results, c[1])
      assert.are.equal("done", doc.results[1].label)
      assert.are.equal("ok", doc.results[1].status)
      assert.is_true(exists(out .. "/results.csv"), c[1])
      assert.is_true(exists(out .. "/events.jsonl"), c[1])
    end
  end)

  it("refuses a bad os.exit status like Lua does", function()
    local dir = tmpdir()
    local path = scenario(dir, 'os.exit("soon")')
    local rc, _, err = run({ path, "--ui", "none", "--out", dir .. "/out" }, dir, 30)
    assert.are.equal(2, rc, err)
    has(err, "bad argument #1 to 'exit' (number expected, got string)")
    assert.is_false(exists(dir .. "/out"))
  end)

  it("says how it ends in --help", function()
    local rc, out = run { "--help" }
    assert.are.equal(0, rc)
    has(out, "130 interrupted")
    has(out, "143 SIGTERM, 129 SIGHUP")
    has(out, "os.exit(status)")
  end)

  it("exits 2 on its own usage errors", function()
    for _, args in ipairs { { "replay" }, { "plot" }, { "replay", "/nonexistent/run" },
                            { "plot", "/nonexistent/run" }, { "--speed", "2" },
                            { "replay", ".", "--speed", "-1" }, { "info", "extra" } } do
      local rc, _, err = run(args)
      assert.are.equal(2, rc, table.concat(args, " ") .. ": " .. err)
      has(err, "odebench: ")
    end
  end)
end)

-- }======

-- {====== plot: what reaches gnuplot

describe("odebench plot", function()
  local function plot_ok(dir, run_dir)
    local rc, _, err = run({ "plot", run_dir, "-q" }, dir, 120)
    assert.are.equal(0, rc, err)
    return slurp(run_dir .. "/plots/plot.gp")
  end

  -- None of the files the injected commands would touch exists.
  local function no_pwned(...)
    for _, d in ipairs { ... } do
      for _, f in ipairs { "PWNED", "PWNED2", "PWNED3", "PWNED4", "PWNED5" } do
        assert.is_false(exists(d .. "/" .. f), d .. "/" .. f)
      end
    end
  end

  plot_it("quotes scenario names with quotes, backquotes and @ (nothing runs)", function()
    local names = {
      { 'x"; system "touch PWNED"; a=".lua', [[x"; system "touch PWNED"; a="]] },
      { [[it's "q" `touch PWNED2` @pngterm.lua]], [[it''s "q" `touch PWNED2` @pngterm]] },
    }
    for _, c in ipairs(names) do
      local dir = tmpdir()
      write(dir .. "/" .. c[1], [[
local ob = require "odebench"
for _, n in ipairs { 8, 16 } do
  local p = ob.problem("bruss2d", { N = n })
  local s <close> = ob.solver { problem = p, method = "dopri5", variant = "plain" }
  s:integrate { t1 = 0.01 }
end
ob.plot { name = "g", x = "n", y = "gbs" }]])
      local rc, _, err = run({ c[1], "--ui", "none", "-q", "--out", "run" }, dir, 60)
      assert.are.equal(0, rc, err)
      local gp = plot_ok(dir, dir .. "/run")
      no_pwned(dir, dir .. "/run", dir .. "/run/plots")
      has(gp, "  set title '" .. c[2] .. ": time per step vs n'\n")
      has(gp, "  set title '" .. c[2] .. ": bandwidth vs n'\n")
      assert.is_true(exists(dir .. "/run/plots/time_per_step.png"))
      assert.is_true(exists(dir .. "/run/plots/g.svg"))
    end
  end)

  plot_it("quotes what an edited results.csv holds, and leaves out a bad plot name", function()
    local dir = tmpdir()
    local run_dir = dir .. "/run"
    os.execute("mkdir -p " .. q(run_dir))
    write(run_dir .. "/results.csv", table.concat({
      "# scenario.path=s\"; system \"touch PWNED\"; x=\"",
      "# plots.t.x=n",
      "# plots.t.y=gbs",
      "# plots.t.group=method",
      "# plots.t.title=`touch PWNED2` \"; system \"touch PWNED3\" @pngterm",
      "# plots.ev'il/x.x=n",
      "# plots.ev'il/x.y=gbs",
      "kind,label,problem,method,variant,backend,n,status,time_per_step,gbs,gflops",
      "solve,a,p,\"m\"\"; system \"\"touch PWNED4\"\"; a=\"\"\",v,cpu,8,ok,1e-6,2,1",
      "solve,b,p,\"m'`touch PWNED5`\r\n@x\",v,cpu,16,ok,2e-6,3,1",
      "solve,c,p,plain,v,cpu,32,ok,3e-6,4,1",
    }, "\n") .. "\n")
    local rc, _, err = run({ "plot", run_dir }, dir, 60)
    assert.are.equal(0, rc, err)
    local gp = slurp(run_dir .. "/plots/plot.gp")
    no_pwned(dir, run_dir, run_dir .. "/plots")
    has(err, "warning: plot 'ev'il/x' of the scenario is left out: not a plot name")
    assert.is_false(exists(run_dir .. "/plots/ev'il"))
    has(gp, [[set title '`touch PWNED2` "; system "touch PWNED3" @pngterm']])
    has(gp, [[set title 's"; system "touch PWNED"; x=": time per step vs n']])
    -- the groups of the automatic charts: one word each, no quote or line
    -- break left in them
    has(gp, [[title 'm_;_system__touch_PWNED4_;_a=_']])
    has(gp, [[title 'm_`touch_PWNED5`__@x']])
    has(gp, [[title 'm"; system "touch PWNED4"; a="']])
    has(gp, [[title 'm''`touch PWNED5`  @x']])
    -- every line of the script is a command, a comment or a continuation
    for line in gp:gmatch("[^\n]+") do
      assert.is_falsy(line:find("[%c]"), line)
    end
    assert.is_true(exists(run_dir .. "/plots/t.png"))
    assert.is_true(exists(run_dir .. "/plots/time_per_step.png"))
  end)

  -- 30,000 solve rows (the same few values again and again), a speed-up
  -- chart over them and 3,000 tuning rows
  plot_it("plots 33,000 rows in seconds, every row in place", function()
    local dir = tmpdir()
    local run_dir = dir .. "/run"
    os.execute("mkdir -p " .. q(run_dir))
    local lines = {
      "# scenario.path=big.lua", "# bandwidth.read_1t=10",
      "# plots.sp.x=threads", "# plots.sp.y=speedup", "# plots.sp.group=variant",
      "kind,label,problem,method,variant,backend,n,threads,status,time_per_step,gbs,gflops,config,median,spread,eval",
    }
    local methods = { "dopri5", "rk4", "bs3" }
    local rows, seq_best = {}, {}
    for i = 1, 30000 do
      local r = { method = methods[1 + i % 3], n = 128 * (1 + i % 4),
                  threads = i % 5 == 0 and "" or tostring(1 + i % 4),
                  tps = 1e-5 * (1 + (i * 7919) % 100) }
      rows[#rows + 1] = r
      if r.threads == "" then
        local k = r.method .. "/" .. r.n
        seq_best[k] = math.min(seq_best[k] or math.huge, r.tps)
      end
      lines[#lines + 1] = ("solve,l%d,bruss2d,%s,plain,cpu,%d,%s,ok,%.17g,%d,%d,,,,")
        :format(i, r.method, r.n, r.threads, r.tps, 5 + i % 7, 2 + i % 5)
    end
    for i = 1, 3000 do
      lines[#lines + 1] = ("tune,,bruss2d,dopri5,plain,cpu,128,,ok,,,,block=%d variant=v%d,%.6g,0.01,%d")
        :format(16 * (1 + i % 8), i % 5, 1e-4 * (1 + (i * 31) % 50), i)
    end
    write(run_dir .. "/results.csv", table.concat(lines, "\n") .. "\n")
    local t0 = now()
    local rc, _, err = run({ "plot", run_dir, "-q" }, dir, 120)
    local took = now() - t0
    assert.are.equal(0, rc, err)
    assert.is_true(took < 60, "took " .. took .. " s")
    -- solves.dat: all 30,000 rows, a block per method, each sorted by n
    local dat = slurp(run_dir .. "/plots/solves.dat")
    local count, blocks, last = 0, 0, nil
    for line in (dat .. "\n"):gmatch("([^\n]*)\n") do
      if line:find("^# ") and not line:find("time_per_step") then
        blocks, last = blocks + 1, -math.huge
      elseif line:find("^%d") then
        local x = tonumber(line:match("^(%S+)"))
        assert.is_true(x >= last, "not sorted: " .. line)
        last, count = x, count + 1
      end
    end
    assert.are.equal(30000, count)
    assert.are.equal(3, blocks)
    -- the speed-ups: every threaded row over the best sequential run of
    -- its method and n
    local want, got = {}, {}
    for _, r in ipairs(rows) do
      if r.threads ~= "" then
        want[#want + 1] = seq_best[r.method .. "/" .. r.n] / r.tps
      end
    end
    for y in slurp(run_dir .. "/plots/named_sp.dat"):gmatch("\n%S+ (%S+)") do
      got[#got + 1] = tonumber(y)
    end
    table.sort(want)
    table.sort(got)
    assert.are.equal(#want, #got)
    for i = 1, #want, 97 do
      assert.is_true(math.abs(got[i] / want[i] - 1) < 1e-12, i .. ": " .. got[i] .. " " .. want[i])
    end
    -- the tuning: 3,000 evaluations, a heatmap of block by variant
    local _, nt = slurp(run_dir .. "/plots/tuning.dat"):gsub("\n%d", "")
    assert.are.equal(3000, nt)
    has(slurp(run_dir .. "/plots/heat.dat"), "variant 16 32 48 64 80 96 112 128\n")
    for _, name in ipairs { "sp", "time_per_step", "gbs", "roofline", "tuning", "heatmap" } do
      assert.is_true(exists(run_dir .. "/plots/" .. name .. ".png"), name)
    end
  end)
end)

-- }======

-- {====== replay: what reaches the terminal

describe("odebench replay", function()
  local function events(lines)
    local dir = tmpdir()
    write(dir .. "/events.jsonl", table.concat(lines, "\n") .. "\n")
    return dir
  end

  local header = '{"kind":"run","format":1,"scenario":"s\\u001b]0;pwn\\u0007.lua",'
    .. '"machine":"m\\u009b31m","gpu":"no GPU"}'

  it("escapes control characters of the recording", function()
    local dir = events {
      header,
      '{"kind":"solve_begin","seq":1,"wall":0.1,"value":128,"value2":0.05,'
        .. '"name":"a\\u001b]0;pwn\\u0007b"}',
      '{"kind":"solve_end","seq":2,"wall":0.2,"t":0.05,"step":5,"accepted":5,'
        .. '"value":0.001,"value2":3.5,"name":"a\\u001b]0;pwn\\u0007b","text":"ok"}',
      '{"kind":"metric","seq":3,"wall":0.8,"value":2,"name":"m\\u001b[31m\\u0085\\u00e9"}',
      '{"kind":"log","seq":4,"wall":0.9,"level":"warn","text":"bad \\u001b[2J\\r\\n\\u007f end"}',
    }
    local rc, out, err = run { "replay", dir }
    assert.are.equal(0, rc, err)
    local all = out .. err
    assert.is_falsy(all:find("[\0-\9\11-\31\127]"), all)    -- no control but \n
    assert.is_falsy(all:find("\194[\128-\159]"), all)       -- no C1 (UTF-8)
    has(err, "a\\x1b]0;pwn\\x07b: n=128")
    has(err, "a\\x1b]0;pwn\\x07b: done")
    has(err, "metric m\\x1b[31m\\u0085\195\169 = 2")
    has(err, "odebench: warning: bad \\x1b[2J\\x0d\\x0a\\x7f end")
  end)

  local tmux_it = sh_ok("command -v tmux >/dev/null 2>&1") and it or function(name)
    pending(name .. " (tmux is not installed)")
  end

  tmux_it("shows the escaped text in the dashboard", function()
    local dir = events {
      header,
      '{"kind":"solve_begin","seq":1,"wall":0.1,"value":128,"value2":0.05,'
        .. '"name":"a\\u001b]0;pwn\\u0007b"}',
      '{"kind":"metric","seq":2,"wall":1e308,"value":2,"name":"m\\u001b[31m"}',
    }
    local sock = tmpdir() .. "/tmux.sock"
    local tmux = ("env -u LD_PRELOAD tmux -S %s "):format(q(sock))
    assert(sh_ok(tmux .. "new-session -d -s r -x 120 -y 40 "
                 .. q(("%s replay %s --speed 1; sleep 60"):format(q(BIN), q(dir)))))
    local screen = ""
    for _ = 1, 150 do
      local p = assert(io.popen(tmux .. "capture-pane -p -t r"))
      screen = p:read("a")
      p:close()
      if screen:find("replay finished", 1, true) then break end
      os.execute("sleep 0.1")
    end
    os.execute(tmux .. "kill-server 2>/dev/null")
    has(screen, "replay finished")                  -- within 15 s
    has(screen, "s\\x1b]0;pwn\\x07.lua")
    has(screen, "solve a\\x1b]0;pwn\\x07b")
    has(screen, "m\\x1b[31m")
  end)

  it("waits a few seconds at most between events whatever their times", function()
    local dir = events {
      header,
      '{"kind":"metric","seq":1,"wall":0.1,"value":1,"name":"first"}',
      '{"kind":"metric","seq":2,"wall":1e308,"value":2,"name":"huge"}',
      '{"kind":"metric","seq":3,"wall":-5,"value":3,"name":"negative"}',
      '{"kind":"metric","seq":4,"wall":null,"value":4,"name":"null"}',
      '{"kind":"metric","seq":5,"wall":1e400,"value":5,"name":"inf"}',
      '{"kind":"metric","seq":6,"wall":-1e400,"value":6,"name":"-inf"}',
      '{"kind":"metric","seq":7,"wall":2,"value":7,"name":"last"}',
    }
    local t0 = now()
    local rc, _, err = run({ "replay", dir, "--speed", "1" }, nil, 60)
    local took = now() - t0
    assert.are.equal(0, rc, err)
    assert.is_true(took < 20, "took " .. took .. " s")
    has(err, "[    0.1s] metric first = 1")
    has(err, "[      ?s] metric huge = 2")
    has(err, "[   -5.0s] metric negative = 3")
    has(err, "metric last = 7")
  end)
end)

-- }======

-- {====== tunedb exit statuses

describe("odebench tunedb", function()
  it("exits 2 on bad input and says so in --help", function()
    local dir = tmpdir()
    write(dir .. "/not_a_db", "hello\n")
    local cases = {
      { { "tunedb", "frob" }, "unknown command 'frob'" },
      { { "tunedb", "show", "x" }, "unexpected argument 'x'" },
      { { "tunedb", "show", "1", "--db", dir .. "/none.db" }, "no tuning database at " .. dir .. "/none.db" },
      { { "tunedb", "prune", "--older-than", "1", "--db", dir .. "/none.db" }, "no tuning database at" },
      { { "tunedb", "list", "--db", dir }, "is not a regular file" },
      { { "tunedb", "show", "1", "--db", dir .. "/not_a_db" }, "is corrupt or not a database" },
      { { "tunedb", "prune", "--older-than", "inf", "--db", dir .. "/none.db" },
        "--older-than needs a number of days >= 0, got 'inf'" },
    }
    for _, c in ipairs(cases) do
      local rc, _, err = run(c[1])
      assert.are.equal(2, rc, table.concat(c[1], " ") .. ": " .. err)
      has(err, c[2])
    end
    assert.is_false(exists(dir .. "/none.db"))         -- prune made none
    local rc, out = run { "tunedb", "--help" }
    assert.are.equal(0, rc)
    has(out, "exit status: 0 ok; 2 bad input")
    has(out, "1 a failure while the database or the output is read or written")
  end)
end)

-- }======
