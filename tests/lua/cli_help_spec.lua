-- cli_help_spec.lua: the odebench program explains itself: --help and
-- `odebench help TOPIC`, the command line's messages, --params and
-- --strict, --set values such as 2^18, the scenarios' suggested commands,
-- the environment variables, the man page, the installed odebench.pc, the
-- plain-lua ob.finish warning and `info` without a GPU.

local H = dofile(assert(os.getenv("ODEBENCH_SRC"), "set ODEBENCH_SRC")
                 .. "/tests/lua/spec_helpers.lua")
local BIN, SRC, q, slurp, exists = H.BIN, H.SRC, H.q, H.slurp, H.exists
local BUILD = BIN:match("^(.*)/[^/]+$")
local LUA = os.getenv("ODEBENCH_LUA") or "lua5.4"
local function tmpdir() return H.tmpdir("clihelp") end
teardown(H.cleanup)

-- Runs "cd dir && [env] BIN args..."; returns exit status, stdout, stderr.
local function run(args, dir, env)
  local io_dir = tmpdir()
  local quoted = {}
  for i, a in ipairs(args) do quoted[i] = q(a) end
  local cmd = ("cd %s && env -u LD_PRELOAD %s %s %s >%s/out 2>%s/err"):format(
    q(dir or io_dir), env or "", q(BIN), table.concat(quoted, " "), q(io_dir),
    q(io_dir))
  local _, how, code = os.execute(cmd)
  if how == "signal" then code = 128 + code end
  return code, slurp(io_dir .. "/out") or "", slurp(io_dir .. "/err") or ""
end

-- Runs a shell command; returns exit status and its output (both streams).
local function sh(cmd)
  local p = assert(io.popen("(" .. cmd .. ") 2>&1"))
  local out = p:read("a")
  local _, _, code = p:close()
  return code, out
end

local function has(text, part)
  assert.is_truthy(text:find(part, 1, true),
                   "expected to find:\n  " .. part .. "\nin:\n" .. text)
end

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

-- Entries of a directory, or nil when it does not exist.
local function entries(dir)
  if not exists(dir) then return nil end
  local p = assert(io.popen("ls -A " .. q(dir)))
  local list = {}
  for l in p:lines() do list[#list + 1] = l end
  p:close()
  return list
end

local TOPICS = { "run", "list", "info", "replay", "plot", "tunedb", "params",
                 "env", "exit" }

describe("odebench help", function()
  it("--help names every subcommand, option and exit status", function()
    local code, out = run { "--help" }
    assert.are.equal(0, code)
    for _, part in ipairs { "usage: odebench SCENARIO.lua", "  replay RUN_DIR",
                            "  plot RUN_DIR", "  tunedb ", "  info ", "  help [TOPIC]",
                            "--params", "--strict", "--set KEY=VALUE", "--out DIR",
                            "--ui MODE", "--quiet, -q", "--seed N", "--dump-kernels DIR",
                            "--list", "--version", "--help, -h",
                            "exit status: 0 ok, 1 failure, 2 bad input",
                            "130 interrupted", "143 SIGTERM, 129 SIGHUP" } do
      has(out, part)
    end
  end)

  it("help alone is --help, even beside a file named help", function()
    local dir = tmpdir()
    write(dir .. "/help", "error('a scenario named help ran')\n")
    local _, help = run { "--help" }
    local code, out, err = run({ "help" }, dir)
    assert.are.equal(0, code, err)
    assert.are.equal(help, out)
    assert.are.equal("", err)
  end)

  it("prints each topic", function()
    local want = {
      run = "odebench SCENARIO.lua [options] [-- args...]",
      list = "odebench --list",
      info = "odebench info [--remeasure]",
      replay = "odebench replay RUN_DIR [--speed X] [--ui MODE]",
      plot = "odebench plot RUN_DIR [--out DIR] [--x COLUMN]",
      tunedb = "usage: odebench tunedb list [--db PATH]",
      params = "odebench SCENARIO.lua --params [--set KEY=VALUE ...] [--strict]",
      env = "Environment variables odebench reads:",
      exit = "exit status:",
    }
    for _, t in ipairs(TOPICS) do
      local code, out, err = run { "help", t }
      assert.are.equal(0, code, t .. ": " .. err)
      assert.are.equal(want[t], out:match("^[^\n]*"), t)
    end
    local _, tunedb_help = run { "tunedb", "--help" }
    assert.are.equal(tunedb_help, select(2, run { "help", "tunedb" }))
  end)

  it("refuses an unknown topic with exit status 2", function()
    local code, out, err = run { "help", "nope" }
    assert.are.equal(2, code)
    assert.are.equal("", out)
    assert.are.equal("odebench: no help topic 'nope' (topics: run, list, info, "
                     .. "replay, plot, tunedb, params, env, exit)\n", err)
    code, _, err = run { "help", "run", "more" }
    assert.are.equal(2, code)
    has(err, "odebench: unexpected argument 'more'")
  end)

  it("documents every option of --help in docs/cli.md", function()
    local _, out = run { "--help" }
    local doc = assert(slurp(SRC .. "/docs/cli.md"))
    for opt in out:gmatch("%-%-[%a][%w%-]*") do
      has(doc, opt)
    end
  end)
end)

describe("odebench's command line", function()
  local function refused(args, message)
    local code, out, err = run(args)
    assert.are.equal(2, code, err)
    assert.are.equal("", out)
    assert.are.equal("odebench: " .. message .. "\n", err)
  end
  local ALLOWED = "(allowed: --set, --strict, --params, --measure, --out, --ui, --quiet (-q), "
    .. "--seed, --dump-kernels, --speed, --x, --remeasure, --list, --version, --help (-h))"

  it("names the option and what is allowed", function()
    refused({ "x.lua", "--frobnicate" }, "unknown option '--frobnicate' " .. ALLOWED)
    refused({ "x.lua", "-z" }, "unknown option '-z' " .. ALLOWED)
    refused({ "x.lua", "--s", "1" },
            "ambiguous option '--s' (could be --set, --seed, --speed, --strict)")
    refused({ "x.lua", "--quiet=1" }, "option '--quiet' takes no value (got '--quiet=1')")
    refused({ "x.lua", "--set" }, "option '--set' needs a value (try 'odebench help run')")
    refused({ "x.lua", "--ui", "fancy" },
            "bad --ui value 'fancy' (allowed: auto, tui, plain, none)")
    refused({ "x.lua", "--seed", "x" },
            "bad --seed value 'x' (non-negative integer expected)")
    refused({ "info", "--params" }, "--params only applies to a scenario "
            .. "('odebench SCENARIO.lua --params')")
    refused({ "x.lua", "--remeasure" }, "--remeasure only applies to 'odebench info'")
    refused({ "replay" }, "'replay' needs a run directory (try 'odebench help replay')")
  end)

  it("takes a long option's unique prefix, options after the scenario and '--'", function()
    local dir = tmpdir()
    write(dir .. "/p.lua", 'local ob = require "odebench"\n'
          .. 'print(ob.param("n", 1), ob.seed(), arg[1])\n')
    local code, out, err = run({ "p.lua", "--qu", "--ui", "none", "--set=n=5",
                                 "--seed=9", "--out", "o", "--", "--set" }, dir)
    assert.are.equal(0, code, err)
    assert.are.equal("5\t9\t--set\n", out)
    assert.are.equal("", err)
  end)

  it("accepts 2^18, 16*2^20 and 1e6 for numbers and refuses fractions for integers", function()
    local dir = tmpdir()
    write(dir .. "/p.lua", 'local ob = require "odebench"\n'
          .. 'print(math.type(ob.param("n", 1)), ob.param("n", 1), ob.param("x", 0.5))\n')
    for _, c in ipairs { { "2^18", "integer\t262144" }, { "16*2^20", "integer\t16777216" },
                         { "1e6", "integer\t1000000" }, { "3*1e3", "integer\t3000" } } do
      local code, out, err = run({ "p.lua", "-q", "--ui", "none", "--out", "o",
                                   "--set", "n=" .. c[1], "--set", "x=2^-1" }, dir)
      assert.are.equal(0, code, err)
      assert.are.equal(c[2] .. "\t0.5\n", out)
    end
    local code, _, err = run({ "p.lua", "--out", "o2", "--set", "n=2^0.5" }, dir)
    assert.are.equal(2, code)
    has(err, "--set n=2^0.5: integer expected for parameter 'n'")
    code, _, err = run({ "p.lua", "--out", "o2", "--set", "n=2^^3" }, dir)
    assert.are.equal(2, code)
    has(err, "--set n=2^^3: number expected for parameter 'n'")
    assert.is_nil(entries(dir .. "/o2"))
  end)
end)

-- A scenario that reads two parameters, one with a description, then calls
-- the engine (inside a pcall that must not swallow the stop), then reads one
-- more.
local SCENARIO = [[
local ob = require "odebench"
local n = ob.param("n", 2^4, "grid points per side")
local name = ob.param("name", "")
local on = ob.param("on", true, "whether it runs")
assert(#ob.list().problems > 0)
print("before")
pcall(ob.problem, "bruss2d", { N = n })
print("after the engine call")
local late = ob.param("late", 3)
ob.metric("late", late)
]]

describe("odebench SCENARIO --params", function()
  local function setup()
    local dir = tmpdir()
    write(dir .. "/s.lua", SCENARIO)
    return dir
  end

  it("lists names, defaults and descriptions and runs nothing", function()
    local dir = setup()
    local code, out, err = run({ "s.lua", "--params", "--out", "o" }, dir)
    assert.are.equal(0, code, err)
    assert.are.equal("", err)
    assert.are.equal(table.concat({
      "before",
      "parameters of s.lua (--set NAME=VALUE):",
      "  n     16            grid points per side",
      '  name  ""',
      "  on    true          whether it runs",
      "  late  ?             (read after the first engine call)",
      "A parameter shown with ? is read after the scenario's first call into the "
        .. "engine, where --params stops; its default is in the scenario's text.",
      "" }, "\n"), out)
    assert.are.same({ "s.lua" }, entries(dir))
  end)

  it("shows the values of --set and checks them", function()
    local dir = setup()
    local code, out, err = run({ "s.lua", "--params", "--strict", "--set", "n=2^5",
                                 "--set", "late=1" }, dir)
    assert.are.equal(0, code, err)
    has(out, "  n     16            grid points per side  [--set: 32]\n")
    code, _, err = run({ "s.lua", "--params", "--set", "on=maybe" }, dir)
    assert.are.equal(2, code)
    has(err, "--set on=maybe: boolean expected (true, false, 1, 0) for parameter 'on'")
    code, out, err = run({ "s.lua", "--params", "--strict", "--set", "nn=1" }, dir)
    assert.are.equal(2, code)
    has(out, "parameters of s.lua")
    assert.are.equal("odebench: --set nn=1 names no parameter of the scenario "
                     .. "(--strict; 'odebench SCENARIO.lua --params' lists them)\n", err)
    assert.are.same({ "s.lua" }, entries(dir))
  end)
end)

describe("odebench --strict", function()
  it("refuses a --set no ob.param names before the run, and writes nothing", function()
    local dir = tmpdir()
    write(dir .. "/s.lua", SCENARIO)
    local code, out, err = run({ "s.lua", "--strict", "--ui", "none", "--out", "o",
                                 "--set", "typo=1" }, dir)
    assert.are.equal(2, code)
    assert.are.equal("", out)
    has(err, "odebench: --set typo=1 names no parameter of the scenario (--strict;")
    assert.are.same({ "s.lua" }, entries(dir))
  end)

  it("refuses at the end a --set the run never read, and writes nothing", function()
    local dir = tmpdir()
    write(dir .. "/s.lua", 'local ob = require "odebench"\n'
          .. 'if false then ob.param("never", 1) end\nob.metric("m", 1)\n')
    local code, _, err = run({ "s.lua", "--strict", "--ui", "none", "--out", "o",
                               "--set", "never=2" }, dir)
    assert.are.equal(2, code)
    assert.are.equal("odebench: --set never=2 was never used by the scenario "
                     .. "(--strict: nothing written)\n", err)
    assert.are.same({ "s.lua" }, entries(dir))
    -- without --strict the same run is written, with a warning
    code, _, err = run({ "s.lua", "--ui", "none", "--out", "o", "--set", "never=2" }, dir)
    assert.are.equal(0, code, err)
    has(err, "warning: --set never=2 was never used")
    assert.is_truthy(exists(dir .. "/o/results.json"))
  end)
end)

describe("the scenarios' suggested commands", function()
  -- Every "--   odebench scenarios/X.lua ..." line of a scenario's header
  -- (with its "\" continuations), checked with --params --strict: each --set
  -- names a parameter and its value has the parameter's type.
  local function commands(path)
    local list, pending = {}, nil
    for line in io.lines(path) do
      if not line:match("^%-%-") then break end
      local text = line:gsub("^%-%-%s*", "")
      if pending then
        pending = pending .. " " .. text
      elseif text:match("^odebench scenarios/") then
        pending = text
      end
      if pending and not pending:match("\\%s*$") then
        list[#list + 1] = pending
        pending = nil
      elseif pending then
        pending = pending:gsub("\\%s*$", "")
      end
    end
    return list
  end

  it("every --set they suggest is a parameter with a value it takes", function()
    local p = assert(io.popen("ls " .. q(SRC .. "/scenarios") .. "/*.lua"))
    local n = 0
    for path in p:lines() do
      for _, cmd in ipairs(commands(path)) do
        local args = {}
        -- the words up to a comment ("-- ...") or a note in parentheses
        for w in cmd:gsub("%s+%-%-%s.*$", ""):gsub("%s+%(.*$", ""):gmatch("%S+") do
          args[#args + 1] = w
        end
        table.remove(args, 1)   -- "odebench"
        args[#args + 1] = "--params"
        args[#args + 1] = "--strict"
        local code, _, err = run(args, SRC)
        assert.are.equal(0, code, cmd .. "\n" .. err)
        n = n + 1
      end
    end
    p:close()
    assert.is_true(n >= 16, "only " .. n .. " commands found")
  end)
end)

describe("environment variables", function()
  -- getenv("NAME") in the program's sources (dist/ included); SKIP names
  -- files not checked (none at present); COMMON the names that are not
  -- ours (false: read, but not ours to document either).
  local COMMON = { XDG_CACHE_HOME = true, HOME = true, CUDA_HOME = true,
                   TERM = true, NO_COLOR = true,
                   OMPI_COMM_WORLD_SIZE = false }   -- mpirun's own, not ours to list
  local SKIP = {}

  it("every one read is ODEBENCH_* or common, and help env and docs/cli.md name it", function()
    local _, env_help = run { "help", "env" }
    local doc = assert(slurp(SRC .. "/docs/cli.md"))
    local p = assert(io.popen("cd " .. q(SRC) .. " && grep -rl getenv core gpu dist lua cli ui"))
    local names = 0
    for file in p:lines() do
      if not SKIP[file] then
        local text = assert(slurp(SRC .. "/" .. file))
        for name in text:gmatch('getenv%("([%w_]+)"%)') do
          if COMMON[name] ~= false then
            assert.is_truthy(COMMON[name] or name:match("^ODEBENCH_"),
                             file .. " reads " .. name)
            has(env_help, name)
            has(doc, "`" .. name)
            names = names + 1
          end
        end
      end
    end
    p:close()
    assert.is_true(names >= 10)
  end)
end)

-- Tools other than odebench itself (groff, man, meson, cc) run without the
-- sanitizer runtime that the sanitizer build preloads for lua5.4: they are
-- not instrumented, and the preloaded runtime only gets in their way.
local NOPRELOAD = "env -u LD_PRELOAD "

describe("the man page", function()
  it("is built from docs/cli.md and renders", function()
    local page = BUILD .. "/odebench.1"
    assert.is_truthy(exists(page), "no " .. page)
    local text = slurp(page)
    assert.is_truthy(text:match("^%.TH ODEBENCH 1 "), text:sub(1, 80))
    has(text, '.SH "EXIT STATUS"')
    if H.sh_ok("command -v groff >/dev/null") then
      local code, out = sh(NOPRELOAD .. "groff -man -Tutf8 -ww -z " .. q(page))
      assert.are.equal(0, code, out)
      assert.are.equal("", out)   -- no warning
      code, out = sh(NOPRELOAD .. "MANWIDTH=80 man -l " .. q(page) .. " | col -b")
      assert.are.equal(0, code, out)
      has(out, "ODEBENCH(1)")
      has(out, "odebench SCENARIO.lua --params [--set KEY=VALUE ...] [--strict]")
      has(out, "--strict")
      has(out, "ODEBENCH_SPARSE_THREADS=N")
    end
  end)
end)

describe("the installed library", function()
  it("builds and runs a program with pkg-config and <odebench/odebench.h>", function()
    local dest = tmpdir()
    local code, out = sh((NOPRELOAD .. "meson install -C %s --destdir %s --no-rebuild --quiet")
                         :format(q(BUILD), q(dest)))
    assert.are.equal(0, code, out)
    local _, pc = sh("find " .. q(dest) .. " -name odebench.pc")
    pc = assert(pc:match("[^\n]+"), "no odebench.pc installed")
    local pcdir = pc:match("^(.*)/[^/]+$")
    local libdir = pcdir:match("^(.*)/pkgconfig$")
    write(dest .. "/prog.c", "#include <odebench/odebench.h>\n#include <stdio.h>\n"
          .. "int main(void) { printf(\"%s\\n\", odb_version()); return 0; }\n")
    local pkg = ("env PKG_CONFIG_PATH=%s PKG_CONFIG_SYSROOT_DIR=%s pkg-config")
                :format(q(pcdir), q(dest))
    code, out = sh(("cd %s && " .. NOPRELOAD .. "cc $(%s --cflags odebench) prog.c -o prog "
                    .. "$(%s --libs odebench) && LD_LIBRARY_PATH=%s "
                    -- a sanitizer build's library brings its runtime along
                    .. "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 ./prog")
                   :format(q(dest), pkg, pkg, q(libdir)))
    assert.are.equal(0, code, out)
    local _, version = run { "--version" }
    -- the program's line is the last: the linker may warn before it (a
    -- sanitizer build's runtime names tmpnam)
    assert.are.equal(version:match("^odebench (%S+)"), out:match("([^\n]+)\n$"), out)
    local _, man = sh("find " .. q(dest) .. " -path '*/man1/odebench.1'")
    assert.is_truthy(man:find("man1/odebench.1", 1, true), "odebench.1 not installed")
  end)
end)

describe("a script under plain lua5.4", function()
  local function lua(script)
    local dir = tmpdir()
    write(dir .. "/s.lua", script)
    local code, out = sh(("cd %s && ODEBENCH_OUT=%s ODEBENCH_QUIET=1 %s s.lua")
                         :format(q(dir), q(dir .. "/out"), LUA))
    return code, out, dir
  end

  it("is warned at exit when it recorded rows and never called ob.finish", function()
    local code, out, dir = lua('local ob = require "odebench"\nob.metric("a", 1)\n'
                               .. 'ob.metric("b", 2)\n')
    assert.are.equal(0, code, out)
    assert.are.equal("odebench: warning: 2 result rows recorded but never written: "
                     .. "call ob.finish() at the end of the script to write them to "
                     .. dir .. "/out\n", out)
    assert.is_nil(entries(dir .. "/out"))
  end)

  it("is not warned after ob.finish or without rows", function()
    local code, out = lua('local ob = require "odebench"\nob.metric("a", 1)\nob.finish()\n')
    assert.are.equal(0, code, out)
    assert.are.equal("", out)
    code, out = lua('local ob = require "odebench"\nprint(ob.param("n", 1))\n')
    assert.are.equal(0, code, out)
    assert.are.equal("1\n", out)
  end)
end)

describe("odebench info", function()
  it("says 'no GPU visible' and why on the next line when there is none", function()
    local code, out, err = run { "info" }
    assert.are.equal(0, code, err)
    local gpu = assert(out:match("\ngpu +([^\n]*)\n([^\n]*)"), out)
    local _, version = run { "--version" }
    if version:find("CUDA not built", 1, true) then
      assert.is_truthy(out:find("\ngpu        no GPU visible\n           this build has "
                                .. "no CUDA (configure with -Dcuda=enabled and nvcc "
                                .. "available)\n", 1, true), out)
    elseif gpu == "no GPU visible" then
      local why = out:match("\ngpu +no GPU visible\n +(%S[^\n]*)\n")
      assert.is_truthy(why, out)
      assert.is_falsy(why:find("^cuda: "), why)
    end
  end)
end)
