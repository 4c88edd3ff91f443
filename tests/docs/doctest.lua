-- doctest.lua: runs every ```lua block of README.md and docs/*.md and prints
-- TAP, one test per block ("ok 3 - docs/lua-api.md:57"), then one test per
-- file for its relative links (each must name a file that exists).
--
--   lua5.4 tests/docs/doctest.lua SRC_ROOT [FILE.md ...]
--
-- The odebench module must be on LUA_CPATH (build/lua/?.so); meson's test
-- 'docs' sets it. Each block runs alone in a fresh lua5.4 process, in a
-- scratch directory, with ODEBENCH_OUT, XDG_CACHE_HOME (tuning database)
-- and ODEBENCH_QUIET pointing into it, so blocks share nothing and write
-- nothing outside it. A block's line numbers are the document's: an error
-- reads "docs/lua-api.md:61: ...".
--
-- Fences: ```lua runs. ```lua-gpu (or any ```lua-TAG) is a Lua block that
-- needs something CI lacks; it is reported as skipped with the tag as the
-- reason (it is still compiled, so a syntax error fails it), and runs only
-- when ODEBENCH_DOCTEST_TAGS lists the tag (ODEBENCH_DOCTEST_TAGS=gpu on a
-- GPU machine). Every block assumes nothing
-- but the module: it does its own require "odebench".
--
-- A block may take up to ODEBENCH_DOCTEST_TIMEOUT seconds (default 300).

local LUA = arg[-1] or "lua5.4"
local SELF = arg[0]

-- {====== helpers

local function q(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

local function read_lines(path)
  local f = assert(io.open(path, "rb"))
  local lines = {}
  for l in f:lines() do lines[#lines + 1] = l end
  f:close()
  return lines
end

local function slurp(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() return true end
  return os.execute("test -e " .. q(path)) == true
end

local function popen_lines(cmd)
  local p = assert(io.popen(cmd))
  local t = {}
  for l in p:lines() do t[#t + 1] = l end
  p:close()
  return t
end

-- }======

-- {====== child: run one block

-- doctest.lua --run PATH SHOWN FIRST LAST: runs lines FIRST..LAST of PATH as
-- a chunk named SHOWN, padded so that its line numbers are the file's.
if arg[1] == "--run" then
  local path, shown = arg[2], arg[3]
  local first, last = tonumber(arg[4]), tonumber(arg[5])
  local lines = read_lines(path)
  local body = table.concat(lines, "\n", first, last)
  local chunk, err = load(string.rep("\n", first - 1) .. body, "@" .. shown, "t")
  if not chunk then
    io.stderr:write(err, "\n")
    os.exit(1)
  end
  local ok, msg = xpcall(chunk, debug.traceback)
  if not ok then
    io.stderr:write(tostring(msg), "\n")
    os.exit(1)
  end
  os.exit(0)
end

-- }======

-- {====== parent: find the blocks, run them, print TAP

local src = assert(arg[1], "usage: doctest.lua SRC_ROOT [FILE.md ...]")
-- The children run in scratch directories: every path they get is absolute.
local cwd = popen_lines("pwd")[1]
local function absolute(p) return p:sub(1, 1) == "/" and p or (cwd .. "/" .. p) end
src, SELF = absolute(src), absolute(SELF)
if LUA:find("/") then LUA = absolute(LUA) end
local files = {}
if arg[2] then
  for i = 2, #arg do files[#files + 1] = arg[i] end
else
  files[1] = "README.md"
  for _, f in ipairs(popen_lines("cd " .. q(src) .. " && ls docs/*.md 2>/dev/null")) do
    files[#files + 1] = f
  end
  table.sort(files, function(a, b)
    if a == "README.md" then return b ~= "README.md" end
    if b == "README.md" then return false end
    return a < b
  end)
end

local tags = {}
for t in (os.getenv("ODEBENCH_DOCTEST_TAGS") or ""):gmatch("[^,%s]+") do
  tags[t] = true
end
local timeout = tonumber(os.getenv("ODEBENCH_DOCTEST_TIMEOUT") or "") or 300

-- The blocks of one file: {file, line (of the opening fence), first, last,
-- tag}, and its relative links {target, line}.
local function scan(rel)
  local lines = read_lines(src .. "/" .. rel)
  local blocks, links = {}, {}
  local open, tag, start = false, nil, nil
  for i, l in ipairs(lines) do
    if open then
      if l:match("^%s*```%s*$") then
        if tag then
          blocks[#blocks + 1] = { file = rel, line = start, first = start + 1,
                                  last = i - 1, tag = tag ~= "lua" and tag:sub(5) or nil }
        end
        open, tag = false, nil
      end
    else
      local fence = l:match("^%s*```%s*([%w%-_]*)%s*$")
      if fence then
        open, start = true, i
        if fence == "lua" or fence:match("^lua%-") then tag = fence end
      else
        for target in l:gmatch("%]%(([^)%s]+)%)") do
          if not target:match("^%a[%w+.-]*:") and not target:match("^#") then
            links[#links + 1] = { target = target:gsub("#.*$", ""), line = i }
          end
        end
      end
    end
  end
  if open then
    blocks[#blocks + 1] = { file = rel, line = start, unclosed = true }
  end
  return blocks, links
end

local all, linksets = {}, {}
for _, rel in ipairs(files) do
  if not exists(src .. "/" .. rel) then
    io.stderr:write("doctest: no file ", rel, " under ", src, "\n")
    os.exit(2)
  end
  local blocks, links = scan(rel)
  for _, b in ipairs(blocks) do all[#all + 1] = b end
  linksets[#linksets + 1] = { file = rel, links = links }
end

local scratch = popen_lines("mktemp -d /tmp/odebench-doctest.XXXXXX")[1]
assert(scratch, "doctest: mktemp failed")
-- A bandwidth figure the user's cache already holds spares every block a
-- measurement of several seconds; the tuning database stays a scratch one.
os.execute("mkdir -p " .. q(scratch .. "/cache/odebench"))
do
  local home = os.getenv("XDG_CACHE_HOME")
  home = (home and home ~= "") and home or ((os.getenv("HOME") or "") .. "/.cache")
  local bw = home .. "/odebench/bandwidth.json"
  if exists(bw) then
    os.execute("cp " .. q(bw) .. " " .. q(scratch .. "/cache/odebench/") .. " 2>/dev/null")
  end
end
local have_timeout = os.execute("command -v timeout >/dev/null 2>&1") == true

print("1.." .. (#all + #linksets))
local n, failed = 0, 0

for _, b in ipairs(all) do
  n = n + 1
  local name = b.file .. ":" .. b.line
  if b.unclosed then
    print(("not ok %d - %s"):format(n, name))
    print("# the fence opened here is never closed")
    failed = failed + 1
  elseif b.tag and not tags[b.tag] then
    -- not run, but it must still be Lua
    local lines = read_lines(src .. "/" .. b.file)
    local chunk = string.rep("\n", b.first - 1) .. table.concat(lines, "\n", b.first, b.last)
    local ok, err = load(chunk, "@" .. b.file, "t")
    if ok then
      print(("ok %d - %s # SKIP fenced as lua-%s (set ODEBENCH_DOCTEST_TAGS=%s to run it)")
            :format(n, name, b.tag, b.tag))
    else
      failed = failed + 1
      print(("not ok %d - %s"):format(n, name))
      print("# " .. err)
    end
  else
    local dir = ("%s/block%03d"):format(scratch, n)
    os.execute("mkdir -p " .. q(dir))
    local log = dir .. "/log"
    local cmd = ("cd %s && ODEBENCH_OUT=%s XDG_CACHE_HOME=%s ODEBENCH_QUIET=1 %s%s %s --run %s %s %d %d >%s 2>&1")
      :format(q(dir), q(dir .. "/out"), q(scratch .. "/cache"),
              have_timeout and ("timeout " .. timeout .. " ") or "",
              q(LUA), q(SELF), q(src .. "/" .. b.file), q(b.file), b.first, b.last, q(log))
    local ok, _, code = os.execute(cmd)
    if ok then
      print(("ok %d - %s"):format(n, name))
    else
      failed = failed + 1
      print(("not ok %d - %s"):format(n, name))
      if code == 124 then print(("# timed out after %d s"):format(timeout)) end
      local out = slurp(log) or ""
      for l in out:gmatch("[^\n]+") do print("# " .. l) end
    end
  end
end

for _, set in ipairs(linksets) do
  n = n + 1
  local base = set.file:match("^(.*)/[^/]*$") or "."
  local missing = {}
  for _, l in ipairs(set.links) do
    if l.target ~= "" and not exists(src .. "/" .. base .. "/" .. l.target) then
      missing[#missing + 1] = ("%s:%d: link to %s, which does not exist"):format(set.file, l.line, l.target)
    end
  end
  if #missing == 0 then
    print(("ok %d - %s: every relative link names a file that exists"):format(n, set.file))
  else
    failed = failed + 1
    print(("not ok %d - %s: every relative link names a file that exists"):format(n, set.file))
    for _, m in ipairs(missing) do print("# " .. m) end
  end
end

os.execute("rm -rf " .. q(scratch))
os.exit(failed == 0 and 0 or 1)

-- }======
