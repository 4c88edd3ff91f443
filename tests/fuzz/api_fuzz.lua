-- api_fuzz.lua: calls every ob.* function and every method of the objects
-- they return with mutated arguments, under pcall; it must never crash (a
-- sanitizer build aborts on a memory error) nor hang.
--
--   ODEBENCH_FUZZ_SEED=S ODEBENCH_FUZZ_SECONDS=T lua5.4 api_fuzz.lua [S]
--
-- Each round starts from a valid call (the templates below, taken from the
-- specs in tests/lua) and changes one argument or one field of a table
-- argument to a boundary value: wrong types, nil, sizes near the 32, 53
-- and 63-bit limits, NaN, inf, fractions, huge tables, strings with quotes
-- and control characters, tables whose metamethods raise, callbacks that
-- call back into ob.* (or close what is running them). Then it calls
-- methods of what it got back the same way. Every call runs under a time
-- guard (a count hook that raises once a wall-clock deadline has passed).
-- Sizes that would pass validation but really allocate a lot are not tried
-- (a legal big size is a slow test, not a bug): see too_big.
-- ODEBENCH_FUZZ_VERBOSE=1 prints each call before it is made, so that the
-- last line before a sanitizer report names the call that failed; the
-- run is the same for the same seed.
local ob = require "odebench"

local seed = math.tointeger(tonumber(arg and arg[1] or os.getenv("ODEBENCH_FUZZ_SEED") or ""))
             or os.time()
local seconds = tonumber(os.getenv("ODEBENCH_FUZZ_SECONDS") or "") or 10
local verbose = (os.getenv("ODEBENCH_FUZZ_VERBOSE") or "") ~= ""
-- ODEBENCH_FUZZ_SKIP=kernel,batched leaves those ob.* functions out (to
-- look past a crash already known).
local skip = {}
for name in (os.getenv("ODEBENCH_FUZZ_SKIP") or ""):gmatch("[^,%s]+") do skip[name] = true end
local CALL_LIMIT = 5            -- seconds one call may take (wall clock)
math.randomseed(seed)
io.stdout:setvbuf("line")
print(("api_fuzz: seed=%d iterations=0 (budget %g s; replay with "
       .. "ODEBENCH_FUZZ_SEED=%d ODEBENCH_FUZZ_VERBOSE=1)"):format(seed, seconds, seed))

local function pick(t) return t[math.random(#t)] end

-- The wall-clock deadline of the call running now. The engine may call
-- back into Lua on a thread of its own (the count hook is per thread), so
-- every callback made here checks it too.
local deadline = math.huge
local function check_deadline()
  if os.time() > deadline then error("api_fuzz: time guard", 0) end
end

-- {====== values

local big = {}
for i = 1, 100000 do big[i] = i * 0.5 end

local raising = setmetatable({}, {
  __index = function() error("raising __index") end,
  __len = function() error("raising __len") end,
  __pairs = function() error("raising __pairs") end,
})
local long_len = setmetatable({}, { __len = function() return math.maxinteger end })

local numbers = {
  0, 1, -1, 2, 3, 2.5, -0.0, 0 / 0, math.huge, -math.huge, 1e308, 4.9e-324,
  1 << 31, (1 << 31) - 1, (1 << 32) + 1, 1 << 53, (1 << 53) + 1, 1 << 62,
  math.maxinteger, math.mininteger, -(1 << 31), 2.0 ^ 31, 2.0 ^ 32 + 1,
  2.0 ^ 53, 2.0 ^ 63, -2.0 ^ 63, 2.0 ^ 64, 1e-300, 0.1,
}
local strings = {
  "", "x", "'", '"', "\0", "a\0b", "\27[2J", "\27]0;pwned\7", "a\nb", "%s%n%d",
  "nan", "inf", "1e309", "-1", "2.5", "cpu", "cuda", "auto", "bruss2d",
  "dopri5", "csr", "compact", "interleaved", "tsmm", string.rep("a", 10000),
  "\255\254", "'; DROP TABLE evals; --",
}
local others = {
  true, false, {}, { 1, 2, 3 }, { 0 / 0, 1 / 0 }, { "a", "b" }, { {} }, big,
  raising, long_len, { x = 1 }, { [1.5] = 1 }, { [-1] = 1, [0] = 2 },
  function() check_deadline() return 1 end,
  function() error("callback error") end,
  function() check_deadline() return 0 / 0 end,
  function() check_deadline() return "junk" end,
  coroutine.create(function() end), io.stdout,
}

-- Live objects of every kind (handed to functions that want another kind).
local live = {}
local function keep(v)
  if type(v) == "userdata" or type(v) == "table" then
    live[#live + 1] = v
    if #live > 64 then table.remove(live, math.random(#live)) end
  end
  return v
end

local reentrant                 -- set below: callbacks that call ob.*

-- A boundary value of any type; mild: none of the big finite numbers (for
-- the work calls, whose legal big values only take long).
local function value(mild)
  local r = math.random(100)
  if r <= 40 then
    local n = pick(numbers)
    if mild and n == n and n > -math.huge and n < math.huge and math.abs(n) > 64 then
      return pick({ -1, 0, 0.5, 2.5, 0 / 0, math.huge, -math.huge })
    end
    return n
  elseif r <= 62 then return pick(strings)
  elseif r <= 82 then return pick(others)
  elseif r <= 88 then return nil
  elseif r <= 94 then return pick(reentrant)
  else return #live > 0 and pick(live) or nil
  end
end

-- }======

-- {====== the time guard and the calls

local calls, errors = 0, 0
local function describe(v, depth)
  local t = type(v)
  if t == "string" then
    return ("%q"):format(#v > 40 and v:sub(1, 40) .. "..." or v):gsub("\n", "n")
  elseif t == "table" and (depth or 0) < 1 then
    local parts, n = {}, 0
    for k, x in next, v do
      n = n + 1
      if n > 8 then parts[#parts + 1] = "..." break end
      parts[#parts + 1] = tostring(k) .. "=" .. describe(x, 1)
    end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  return t == "number" and ("%.17g"):format(v) or tostring(v)
end

-- Calls fn(...) under pcall with the time guard; returns ok, results...
local function call(name, fn, ...)
  local args = table.pack(...)
  calls = calls + 1
  if verbose then
    local parts = {}
    for i = 1, args.n do parts[i] = describe(args[i]) end
    print(("call %d: %s(%s)"):format(calls, name, table.concat(parts, ", ")))
  end
  local outer = deadline
  deadline = math.min(outer, os.time() + CALL_LIMIT)
  debug.sethook(check_deadline, "", 1000)
  local res = table.pack(pcall(fn, table.unpack(args, 1, args.n)))
  debug.sethook()
  deadline = outer
  if not res[1] then
    errors = errors + 1
    if type(res[2]) ~= "string" and type(res[2]) ~= "table" and res[2] ~= nil then
      error(("%s raised a %s, not a message"):format(name, type(res[2])))
    end
  end
  return table.unpack(res, 1, res.n)
end

-- }======

-- {====== re-entrant callbacks

local function any_ob_call()
  local names = {}
  for k, v in pairs(ob) do if type(v) == "function" then names[#names + 1] = k end end
  table.sort(names)
  local k = pick(names)
  if k == "finish" or k == "report" or k == "info" or skip[k] then k = "seed" end
  check_deadline()
  return pcall(ob[k], value(true), value(true))
end

reentrant = {
  function() any_ob_call() return 1 end,
  function(t, y, f) check_deadline() any_ob_call() if type(f) == "userdata" or type(f) == "table" then
      pcall(function() f[1] = 0 end) end end,
  function(...) check_deadline() for _, v in ipairs(live) do
      if math.random(4) == 1 then pcall(function() v:close() end) end end return 1 end,
  function() check_deadline() collectgarbage("collect") return 1 end,
  function() coroutine.yield(1) end,
  function(t, y, f) check_deadline() if type(f) == "userdata" then
      pcall(function() f[1] = "x" end) pcall(function() f[1e9] = 1 end)
      pcall(function() f[0] = 1 end) pcall(function() f[-1] = 1 end) end end,
  function() check_deadline() return ob.tune { target = function() return 1 end, space = { x = { 1 } },
                              cache = "off" } end,
}

-- }======

-- {====== templates: valid calls, fresh each time

local function user_problem(f)
  return { n = 3, y0 = { 1, 1, 1 },
           f = f or function(t, y, f)
             check_deadline()
             for i = 1, 3 do f[i] = -y[i] end
           end }
end

-- Files the calls read and write (ob.matrix, ob.load, A:write, v:save)
-- live in a scratch directory: a fuzzed file name is put inside it.
local scratch = os.tmpname()
os.remove(scratch)
assert(os.execute("mkdir -p '" .. scratch .. "'"))
ob.reservoir { J = 2, H = 2, I = 2, k = 2, wells = 1 }:matrix("csr"):write(scratch .. "/m.mtx")
ob.vector { 1, 2, 3, 4, 5, 6 }:save(scratch .. "/v.npy", { shape = { 2, 3 } })

local P8 = ob.problem("bruss2d", { N = 8 })
local U3 = ob.problem(user_problem())

-- name, fn, args builder, work (the mild values only), fixed fields
local templates = {
  { "problem", ob.problem, function() return "bruss2d", { N = 8 } end },
  { "problem", ob.problem, function() return user_problem() end },
  { "solver", ob.solver, function() return { problem = P8, method = "dopri5", tol = 1e-6 } end },
  { "solver", ob.solver, function() return { problem = U3, method = "rk4", h = 1e-3 } end },
  { "vector", ob.vector, function() return 4 end },
  { "vector", ob.vector, function() return { 1, 2, 3 } end },
  { "reference", ob.reference, function() return U3, { t1 = 0.01 } end, true },
  { "tune", ob.tune, function()
      return { target = function(c) check_deadline() return 1 + (c.x or 0) end,
               space = { x = { 1, 2 } }, cache = "off" } end, true, { cache = true } },
  { "reservoir", ob.reservoir, function() return { J = 2, H = 2, I = 2 } end },
  { "krylov", ob.krylov, function()
      local g = ob.reservoir { J = 2, H = 2, I = 2 }
      local A = g:matrix("csr")
      return { A = A, b = g:rhs(A) } end, true },
  { "blocktridiag", ob.blocktridiag, function() return { lines = 2, length = 2, block = 2 } end },
  { "batched", ob.batched, function() return { n = 4, block = 3 } end },
  { "kernel", ob.kernel, function() return "tsmm", { M = 4, N = 4, K = 100, backend = "cpu" } end },
  { "gpu_barrier", ob.gpu_barrier, function() return { kind = "A", wg_per_barrier = 2, iters = 10 } end, true },
  { "metric", ob.metric, function() return "x", 1, "u" end },
  { "progress", ob.progress, function() return 0, 3, "l" end },
  { "param", ob.param, function() return "fuzz_n", 8 end },
  { "info", ob.info, function() return { bandwidth = false } end, false, { bandwidth = true } },
  { "plot", ob.plot, function() return { name = "g", x = "n", y = "gbs" } end },
  { "list", ob.list, function() return end },
  { "matrix", ob.matrix, function() return { file = scratch .. "/m.mtx", format = "ell" } end },
  { "load", ob.load, function() return scratch .. "/v.npy" end },
  { "seed", ob.seed, function() return end },
  { "random", ob.random, function() return end },
  { "outdir", ob.outdir, function() return end },
}

for i = #templates, 1, -1 do
  if skip[templates[i][1]] then table.remove(templates, i) end
end

-- Valid arguments of the methods of the objects above (the others get
-- random ones).
local method_args = {
  integrate = function() return { t0 = 0, t1 = 0.01 } end,
  step = function() return end,
  state = function() return end,
  initial = function() return end,
  totable = function() return end,
  copy = function() return end,
  norm_inf = function() return end,
  max_rel_err = function(o) return o end,
  info = function() return end,
  matrix = function() return "csr" end,
  random = function() return 1 end,
  get = function() return 1, 1 end,
  set = function() return 1, 1, 0.5 end,
  lu = function() return end,
  factor = function() return end,
  check = function() return end,
  convert = function() return "ell" end,
}
local work_methods = { integrate = true, bench = true, tune = true, time = true,
                       compare = true, cublas = true, solve = true, step = true,
                       copy = true, matrix = true, convert = true, gpu = true,
                       random = true, factor = true, lu = true }

-- Sizes that pass validation but would take gigabytes or hours: a call
-- of a constructor or of a work method is not tried when one of the whole
-- positive numbers of its arguments (table fields included), or the
-- product of those above 64, lies between 2^20 and 2^40. Sizes at 2^40
-- and beyond are tried: the engine must refuse them (a memory estimate).
local function too_big(args)
  local prod, any, single = 1, false, false
  local function visit(v, depth)
    if type(v) == "number" and v == math.floor(v) and v < 2^63 and v > 64 then
      prod = prod * v
      any = true
      single = single or (v >= 2^20 and v < 2^40)
    elseif type(v) == "table" and depth < 1 and v ~= big then
      for _, x in next, v do visit(x, depth + 1) end
    end
  end
  for i = 1, args.n do visit(args[i], 0) end
  return single or (any and prod >= 2^20 and prod < 2^40)
end

-- Changes one argument, or one field of a table argument, in args.
local function mutate(args, mild, fixed)
  local i = math.random(args.n + 1)
  if i > args.n then args.n = i end
  local a = args[i]
  if type(a) == "table" and a ~= big and getmetatable(a) == nil and math.random(4) > 1 then
    local keys = {}
    for k in pairs(a) do if not (fixed and fixed[k]) then keys[#keys + 1] = k end end
    table.sort(keys, function(x, y) return tostring(x) < tostring(y) end)
    if #keys > 0 and math.random(5) > 1 then
      a[pick(keys)] = value(mild)
    else
      a[pick({ "n", "N", "x", "backend", "layout", "t1", "bogus", 1 })] = value(mild)
    end
  else
    args[i] = value(mild)
  end
end

-- }======

-- {====== objects: their methods and metamethods

local function methods_of(o)
  local mt = getmetatable(o)
  if type(mt) ~= "table" then return {} end
  local idx = rawget(mt, "__index")
  if type(idx) == "function" then
    local _, up = debug.getupvalue(idx, 1)
    idx = up
  end
  local names = {}
  if type(idx) == "table" then
    for k, v in pairs(idx) do
      if type(k) == "string" and type(v) == "function" then names[#names + 1] = k end
    end
  end
  table.sort(names)
  return names, idx
end

local function poke(obj, depth)
  if type(obj) ~= "userdata" and type(obj) ~= "table" then return end
  local names, idx = methods_of(obj)
  for _ = 1, math.random(1, 4) do
    if #names == 0 then break end
    local m = pick(names)
    if m ~= "close" or math.random(6) == 1 then
      local build = method_args[m]
      local args = table.pack(build and build(pick(live)) or nil)
      if not build then args.n = math.random(0, 3) for i = 1, args.n do args[i] = value(true) end
      elseif math.random(3) > 1 then mutate(args, work_methods[m]) end
      if (m == "save" or m == "write") and (type(args[1]) == "string" or type(args[1]) == "number") then
        args[1] = scratch .. "/" .. tostring(args[1]):gsub("/", "_")
      end
      local self = math.random(12) == 1 and value(true) or obj
      if not (work_methods[m] and too_big(args)) then
        local res = table.pack(call(m, idx[m], self, table.unpack(args, 1, args.n)))
        if res[1] and depth < 2 then
          for i = 2, res.n do keep(res[i]) poke(res[i], depth + 1) end
        end
      end
    end
  end
  -- fields and metamethods: tostring, #, reading and writing junk keys
  call("tostring", tostring, obj)
  call("index", function() return obj[pick(strings)] end)
  call("index", function() return obj[value()] end)
  call("newindex", function() obj[pick(strings)] = value() end)
  call("len", function() return #obj end)
end

-- }======

-- {====== rounds

local function round()
  local tpl = pick(templates)
  local name, fn, build, mild, fixed = tpl[1], tpl[2], tpl[3], tpl[4], tpl[5]
  local ok, a1, a2, a3 = pcall(build)
  if not ok then return end
  local args = table.pack(a1, a2, a3)
  while args.n > 0 and args[args.n] == nil do args.n = args.n - 1 end
  local k = math.random(10)
  if k <= 7 then
    mutate(args, mild, fixed)
    if math.random(4) == 1 then mutate(args, mild, fixed) end
  end
  if too_big(args) then return end
  local where = math.random(8)
  local res
  if where == 1 then             -- made inside a coroutine that then ends
    local co = coroutine.create(function() return call(name, fn, table.unpack(args, 1, args.n)) end)
    res = table.pack(select(2, coroutine.resume(co)))
  else
    res = table.pack(call(name, fn, table.unpack(args, 1, args.n)))
  end
  if res[1] then
    for i = 2, res.n do keep(res[i]) poke(res[i], 0) end
  end
  if math.random(20) == 1 then collectgarbage("collect") end
end

-- Every other ob.* function (not in the templates) with random arguments.
local function stray()
  local known = {}
  for _, t in ipairs(templates) do known[t[1]] = true end
  known.finish, known.report = true, true   -- write results / print tables
  for k in pairs(skip) do known[k] = true end
  local names = {}
  for k, v in pairs(ob) do
    if type(v) == "function" and not known[k] then names[#names + 1] = k end
  end
  table.sort(names)
  return names
end
local strays = stray()

local t0 = os.time()
local rounds = 0
while os.time() - t0 < seconds do
  rounds = rounds + 1
  if #strays > 0 and math.random(10) == 1 then
    local name = pick(strays)
    local args = table.pack(value(true), value(true))
    if not too_big(args) then
      local res = table.pack(call(name, ob[name], table.unpack(args, 1, args.n)))
      if res[1] then for i = 2, res.n do keep(res[i]) poke(res[i], 0) end end
    end
  else
    round()
  end
end
live = {}
collectgarbage("collect")
os.execute("rm -rf '" .. scratch .. "'")
print(("api_fuzz: seed=%d iterations=%d (%d calls, %d raised errors) in %d s: no crash, no hang")
      :format(seed, rounds, calls, errors, os.time() - t0))

-- }======
