-- spec_helpers.lua: what the specs that drive the odebench program share.
-- Loaded with dofile (it is not a spec itself):
--   local H = dofile(os.getenv("ODEBENCH_SRC") .. "/tests/lua/spec_helpers.lua")
local H = {}

H.BIN = assert(os.getenv("ODEBENCH_BIN"), "set ODEBENCH_BIN")
H.SRC = assert(os.getenv("ODEBENCH_SRC"), "set ODEBENCH_SRC")
H.FIX = H.SRC .. "/tests/lua/fixtures"

-- Single-quotes s for sh.
function H.q(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- true when the shell command succeeds.
function H.sh_ok(cmd)
  return os.execute(cmd) == true
end

-- Temporary directories, removed by H.cleanup (a spec file passes it to
-- teardown).
local made = {}

function H.tmpdir(tag)
  local p = assert(io.popen("mktemp -d /tmp/odebench-" .. (tag or "spec") .. ".XXXXXX"))
  local d = p:read("l")
  p:close()
  made[#made + 1] = d
  return d
end

function H.cleanup()
  for _, d in ipairs(made) do os.execute("rm -rf " .. H.q(d)) end
  made = {}
end

-- The whole file, or nil when it cannot be read.
function H.slurp(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

function H.exists(path)
  return H.sh_ok("test -e " .. H.q(path))
end

return H
