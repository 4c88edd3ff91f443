-- cli_spec.lua: the odebench program (ODEBENCH_BIN) driven like a user would.
-- Scenarios live in fixtures/ and run with that directory as the working
-- directory, so messages read "bad_problem.lua:2: ...".

local json = require "dkjson"

local H = dofile(assert(os.getenv("ODEBENCH_SRC"), "set ODEBENCH_SRC")
                 .. "/tests/lua/spec_helpers.lua")
local BIN, SRC, FIX, q, sh_ok, slurp, exists =
  H.BIN, H.SRC, H.FIX, H.q, H.sh_ok, H.slurp, H.exists
local function tmpdir() return H.tmpdir("cli") end
teardown(H.cleanup)

-- Entries of a directory (sorted), or nil when it does not exist.
local function entries(dir)
  if not exists(dir) then return nil end
  local p = assert(io.popen("ls -A " .. q(dir)))
  local list = {}
  for l in p:lines() do list[#list + 1] = l end
  p:close()
  return list
end

-- Runs "prefix BIN args..." in FIX; returns exit status, stdout, stderr.
local function run(args, prefix)
  local dir = tmpdir()
  local quoted = {}
  for i, a in ipairs(args) do quoted[i] = q(a) end
  -- LD_PRELOAD (set for lua5.4 in the sanitizer build) must not reach the
  -- commands: a sanitizer runtime preloaded into timeout(1) eats its signal.
  local cmd = ("cd %s && env -u LD_PRELOAD %s %s %s >%s/out 2>%s/err"):format(q(FIX),
    prefix or "", q(BIN), table.concat(quoted, " "), q(dir), q(dir))
  local _, how, code = os.execute(cmd)
  if how == "signal" then code = 128 + code end
  return code, slurp(dir .. "/out") or "", slurp(dir .. "/err") or ""
end

local function has(text, part)
  assert.is_truthy(text:find(part, 1, true),
                   "expected to find:\n  " .. part .. "\nin:\n" .. text)
end

describe("odebench", function()
  it("--version names the version", function()
    local code, out = run { "--version" }
    assert.are.equal(0, code)
    assert.is_truthy(out:match("^odebench %d+%.%d+%.%d+"), out)
  end)

  it("--help and -h show the usage", function()
    for _, opt in ipairs { "--help", "-h" } do
      local code, out = run { opt }
      assert.are.equal(0, code)
      has(out, "usage: odebench SCENARIO.lua")
      has(out, "--set KEY=VALUE")
      has(out, "auto is tui when stdin and stdout are")
      has(out, "replay RUN_DIR")
      has(out, "plot RUN_DIR")
    end
  end)

  it("--list names every problem, method, variant, kernel and backend", function()
    local code, out = run { "--list" }
    assert.are.equal(0, code)
    for _, name in ipairs { "problems", "methods", "variants", "kernels", "backends",
                            "bruss2d", "heun_euler", "bs3", "rk4", "dopri5",
                            "verner65", "plain", "fused", "tsmttsm", "tsmm", "cpu",
                            "dense variants (ob.batched, ob.blocktridiag)",
                            "core/dense/batched/blocktridiag.c" } do
      has(out, name)
    end
  end)

  it("--list names each dense GPU variant with the file of its code", function()
    local code, out = run { "--list" }
    assert.are.equal(0, code)
    if not out:find("cuda     a thread per matrix", 1, true) then
      return   -- a build without CUDA lists the CPU's alone
    end
    for _, name in ipairs { "serial2", "team", "cublas",
                            "gpu/dense/odb_btd_factor_stream.cu",
                            "gpu/dense/odb_batched_btd.cu",
                            "gpu/dense/odb_batched_cublas.cu" } do
      has(out, name)
    end
  end)

  it("info prints the caches and the bandwidth", function()
    local code, out = run { "info" }
    assert.are.equal(0, code, out)
    has(out, "caches")
    assert.is_truthy(out:match("L1%s+%d+ [KM]iB"), out)
    has(out, "GB/s")
  end)
end)

describe("odebench on bad input", function()
  -- Runs a case, expects exit 2, the message, and no output directory left.
  local function refused(args, message)
    local out = tmpdir() .. "/out"
    local full = { "--out", out }
    for _, a in ipairs(args) do full[#full + 1] = a end
    local code, _, err = run(full)
    assert.are.equal(2, code, err)
    has(err, message)
    assert.is_nil(entries(out), "output directory left behind: " .. out)
    return err
  end

  it("refuses an unknown problem", function()
    local err = refused({ "bad_problem.lua" }, "odebench: bad_problem.lua:2: " ..
      "bad argument #1 to 'problem' (unknown problem 'nosuchproblem'")
    has(err, "bruss2d")
  end)

  it("refuses an unknown method", function()
    local err = refused({ "bad_method.lua" }, "odebench: bad_method.lua:3: " ..
      "bad argument #1 to 'solver' (unknown method 'nosuchmethod'")
    has(err, "dopri5")
  end)

  it("refuses an unknown variant", function()
    local err = refused({ "bad_variant.lua" }, "odebench: bad_variant.lua:3: " ..
      "bad argument #1 to 'solver' (unknown variant 'nosuchvariant'")
    has(err, "fused")
  end)

  it("refuses an unknown backend", function()
    local err = refused({ "bad_backend.lua" }, "odebench: bad_backend.lua:3: " ..
      "bad argument #1 to 'solver' (unknown backend 'nosuchbackend'")
    has(err, "cpu")
  end)

  it("refuses N = 0 and negative N", function()
    for _, n in ipairs { "0", "-3" } do
      local err = refused({ "param_n.lua", "--set", "N=" .. n },
        "odebench: param_n.lua:4: bad argument #2 to 'problem' (")
      has(err, "'N'")
      has(err, n)
    end
  end)

  it("refuses a non-numeric --set for a numeric parameter", function()
    refused({ "param_n.lua", "--set", "N=abc" }, "odebench: param_n.lua:3: " ..
      "bad argument #1 to 'param' (--set N=abc: number expected for parameter 'N')")
  end)

  it("refuses a fraction for an integer parameter", function()
    refused({ "param_n.lua", "--set", "N=2.5" }, "odebench: param_n.lua:3: " ..
      "bad argument #1 to 'param' (--set N=2.5: integer expected for parameter 'N'")
  end)

  it("refuses t1 < t0", function()
    refused({ "t1_before_t0.lua" }, "odebench: t1_before_t0.lua:4: " ..
      "bad argument #1 to 'integrate' (t1 (0.5) must be greater than t0 (1))")
  end)

  it("reports a syntax error with file and line", function()
    refused({ "syntax_error.lua" },
      "odebench: syntax_error.lua:3: unexpected symbol near '='")
  end)

  it("reports a runtime error with file, line and a traceback", function()
    local err = refused({ "runtime_error.lua" },
      "odebench: runtime_error.lua:4: attempt to index a nil value")
    has(err, "stack traceback:")
  end)

  it("refuses a missing scenario file", function()
    refused({ "no_such_scenario.lua" }, "odebench: cannot open scenario " ..
      "'no_such_scenario.lua': No such file or directory")
  end)

  it("refuses an unwritable --out", function()
    local dir = tmpdir()
    local file = dir .. "/plain_file"
    assert(io.open(file, "w")):close()
    local bad = file .. "/out"
    local code, _, err = run { "tiny.lua", "--out", bad }
    assert.are.equal(2, code, err)
    has(err, "odebench: cannot write to output directory '" .. bad .. "'")
    assert.are.same({ "plain_file" }, entries(dir))
  end)

  it("refuses a bad --ui value", function()
    refused({ "tiny.lua", "--ui", "fancy" },
      "odebench: bad --ui value 'fancy' (allowed: auto, tui, plain, none)")
  end)

  it("refuses an unknown option", function()
    refused({ "tiny.lua", "--frobnicate" },
      "odebench: unknown option '--frobnicate'")
  end)

  it("refuses --set without '='", function()
    refused({ "tiny.lua", "--set", "N" }, "odebench: --set expects KEY=VALUE, got 'N'")
  end)

  it("refuses a bad --seed", function()
    refused({ "tiny.lua", "--seed", "-1" }, "odebench: bad --seed value '-1'")
  end)
end)

describe("odebench running a scenario", function()
  it("writes results.json, results.csv and events.jsonl and nothing else", function()
    local out = tmpdir() .. "/run/out"
    local code, stdout, err = run { "tiny.lua", "--set", "N=8", "--seed", "7",
                                    "--ui", "none", "--out", out, "--set", "unused=1" }
    assert.are.equal(0, code, err)
    has(stdout, "tiny")                          -- the ob.report table
    has(stdout, "steps (acc/rej)")
    has(err, "odebench: results in " .. out)
    has(err, "warning: --set unused=1 was never used")
    assert.are.same({ "events.jsonl", "results.csv", "results.json" }, entries(out))
    local doc = assert(json.decode(slurp(out .. "/results.json")))
    local ctx = doc.context
    local p = assert(io.popen("sha256sum " .. q(FIX .. "/tiny.lua")))
    local sha = p:read("l"):match("^(%x+)")
    p:close()
    assert.are.equal(sha, ctx.scenario.sha256)
    assert.are.equal("tiny.lua", ctx.scenario.path)
    assert.are.equal(7, ctx.seed)
    assert.are.equal(8, ctx.params.N)
    assert.are.equal("8", ctx.sets.N)
    assert.are.equal("none", ctx.ui)
    assert.is_truthy(ctx.odebench.version)
    assert.is_truthy(ctx.cpu.model)
    assert.is_truthy(ctx.lua.version:find("Lua 5.4", 1, true))
    local r = doc.results[1]
    assert.are.equal("solve", r.kind)
    assert.are.equal("tiny", r.label)
    assert.are.equal("ok", r.status)
    assert.is_true(r.steps > 0)
    assert.are.equal(r.steps, r.accepted + r.rejected)
    assert.is_true(r.err < 1e-4)
    assert.are.equal("metric", doc.results[2].kind)
    assert.are.equal("tiny_err", doc.results[2].name)
    local csv = slurp(out .. "/results.csv")
    local header = csv:match("[^\n]*\n?[^\n]*steps[^\n]*")
    assert.is_truthy(header, csv)
  end)

  it("puts its last line after the scenario's output through one pipe", function()
    -- stdout through a pipe is buffered (io.write does not flush, print
    -- does); the final line goes to stderr
    local dir = tmpdir()
    local f = assert(io.open(dir .. "/talk.lua", "w"))
    f:write('for i = 1, 200 do io.write("row ", i, "\\n") end\n')
    f:close()
    local p = assert(io.popen(("env -u LD_PRELOAD %s %s --ui none --out %s 2>&1 | cat")
                              :format(q(BIN), q(dir .. "/talk.lua"), q(dir .. "/out"))))
    local all = p:read("a")
    p:close()
    local last = all:match("([^\n]*)\n$")
    assert.is_truthy(last and last:find("^odebench: results in "), all:sub(-300))
    assert.is_truthy(all:find("row 200\n", 1, true))
  end)

  it("is silent with --quiet apart from errors", function()
    local out = tmpdir() .. "/out"
    local code, stdout, err = run { "tiny.lua", "--quiet", "--ui", "none",
                                    "--out", out }
    assert.are.equal(0, code, err)
    assert.are.equal("", stdout)
    assert.are.equal("", err)
    assert.is_truthy(exists(out .. "/results.json"))
  end)

  -- timeout --foreground: without it timeout(1) signals its whole process
  -- group too, and the second SIGINT kills odebench on purpose.
  it("stops on Ctrl-C, keeps what finished and exits 130", function()
    local out = tmpdir() .. "/out"
    local code, _, err = run({ "long.lua", "--out", out },
                             "timeout --foreground --preserve-status -s INT 2")
    assert.are.equal(130, code, err)
    has(err, "interrupted")
    has(err, "steps/s")                        -- a plain progress line
    local doc = assert(json.decode(slurp(out .. "/results.json") or "null"),
                       "no results.json after Ctrl-C")
    assert.are.equal(1, #doc.results)
    assert.are.equal("interrupted", doc.results[1].status)
    assert.is_true(doc.results[1].steps > 0)
    assert.are.same({ "events.jsonl", "results.csv", "results.json" }, entries(out))
  end)

  it("stops a scenario busy in pure Lua on Ctrl-C", function()
    local out = tmpdir() .. "/out"
    local code, _, err = run({ "busy_lua.lua", "--out", out, "--ui", "none" },
                             "timeout --foreground --preserve-status -s INT 2")
    assert.are.equal(130, code, err)
    local doc = json.decode(slurp(out .. "/results.json") or "null")
    assert.is_truthy(doc, "no results.json after Ctrl-C; stderr: " .. err)
    assert.are.equal(1, #doc.results)
    assert.are.equal("ok", doc.results[1].status)
  end)
end)
