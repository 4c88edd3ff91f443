-- tests/mpi/dist_check.lua: what the scenarios of this folder that
-- compare distributed solvers and matrices with one process share. Not a
-- scenario itself (tests/registered.py passes over *_check.lua here); a
-- scenario loads it from its own folder, which is not on LUA_PATH:
--
--   local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
--   local C = dofile(here .. "dist_check.lua")
--
-- Every rank loads it, so the folder must be readable on every host of the
-- run. A failed check raises an error without a position (level 0): the
-- message names the case, and the odebench program ends every rank with
-- status 2. Each scenario keeps its own count of checks (the line its
-- driver reads); C.checker is one way to keep it.
local C = {}

-- Raises string.format(fmt, ...) as the error message.
function C.fail(fmt, ...)
  error(string.format(fmt, ...), 0)
end
local fail = C.fail

-- |a - b| relative to the larger magnitude; 0 when both are 0.
function C.rel(a, b)
  local m = math.max(math.abs(a), math.abs(b))
  return m == 0 and 0 or math.abs(a - b) / m
end
local rel = C.rel

-- FNV-1a, 64 bits: the offset basis, and one number x folded into hsh.
-- Lua's integers wrap, which is the arithmetic modulo 2^64 the hash
-- assumes; "%a" writes every bit of a double, so two numbers fold alike
-- only when they are the same to the last bit.
C.FNV_BASIS = -3750763034362895579
function C.fnv(hsh, x)
  for c in string.format("%a;", x):gmatch(".") do
    hsh = (hsh ~ c:byte()) * 0x100000001b3
  end
  return hsh
end

-- A counting check: check(ok, fmt, ...) raises as C.fail when ok is
-- false and counts one more passed check otherwise; count() says how many.
function C.checker()
  local n = 0
  local function check(ok, fmt, ...)
    if not ok then fail(fmt, ...) end
    n = n + 1
  end
  return check, function() return n end
end

-- Calls fn(...) expecting an error whose text holds want (plain text, not
-- a pattern). Returns nil when it does; false when fn returned instead;
-- the error's text when it says something else.
function C.refusal(want, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then return false end
  err = tostring(err)
  if err:find(want, 1, true) then return nil end
  return err
end

-- The same, raising "<what>: expected the refusal '<want>'" when fn
-- returned and "<what>: refused with '<text>', expected '<want>'" when its
-- error says something else.
function C.refused(what, want, fn, ...)
  local got = C.refusal(want, fn, ...)
  if got == false then fail("%s: expected the refusal '%s'", what, want) end
  if got then fail("%s: refused with '%s', expected '%s'", what, got, want) end
end

-- Steps solver a (the reference, named o.ref in the messages) and b side
-- by side until a.t reaches o.t1, each step a:step(o.h), b:step(o.h), and
-- checks at every step the same accepted/rejected counts, then:
--   h: rel(h) == 0 when o.exact; at most o.h_tol (times the steps taken
--      when o.h_per_step); no bound when o.h_tol is nil;
--   t, with o.with_t only (the message then names t too): 0 when o.exact,
--      at most o.t_tol times the steps taken when o.t_tol is given;
--   the state, every o.every steps and at the end (never when o.every is
--      nil): b:state():max_rel_err(a:state()) 0 when o.exact, at most
--      o.y_tol times the steps taken (no bound when o.y_tol is nil).
-- The tolerances are the caller's: each scenario's header says what
-- rounding R ranks add to the one process and how far it travels.
-- o.fingerprint: FNV-1a over every step's t and h of b, from C.FNV_BASIS.
-- Returns { steps, dh (largest rel(h)), dh_step (largest rel(h)/steps),
-- y_step (largest state difference / steps), fp }.
function C.side_by_side(a, b, o)
  local r = { steps = 0, dh = 0, dh_step = 0, y_step = 0,
              fp = o.fingerprint and C.FNV_BASIS or nil }
  local steps = 0
  while a.t < o.t1 do
    local ra, rb = a:step(o.h), b:step(o.h)
    steps = steps + 1
    if r.fp then r.fp = C.fnv(C.fnv(r.fp, rb.t), rb.h) end
    if ra.accepted ~= rb.accepted or ra.rejected ~= rb.rejected then
      fail("%s: step %d: accepted/rejected %d/%d, %s %d/%d", o.label, steps,
           rb.accepted, rb.rejected, o.ref, ra.accepted, ra.rejected)
    end
    local dh = rel(ra.h, rb.h)
    r.dh = math.max(r.dh, dh)
    r.dh_step = math.max(r.dh_step, dh / steps)
    local hbad = (o.exact and dh ~= 0) or
                 (o.h_tol and dh > o.h_tol * (o.h_per_step and steps or 1))
    if o.with_t then
      local dt = rel(ra.t, rb.t)
      if hbad or (o.exact and dt ~= 0) or (o.t_tol and dt > o.t_tol * steps)
      then
        fail("%s: step %d: h %.17g t %.17g, %s h %.17g t %.17g", o.label,
             steps, rb.h, rb.t, o.ref, ra.h, ra.t)
      end
    elseif hbad then
      fail("%s: step %d: h %.17g, %s %.17g", o.label, steps, rb.h, o.ref,
           ra.h)
    end
    if o.every and (steps % o.every == 0 or a.t >= o.t1) then
      local e = b:state():max_rel_err(a:state())
      r.y_step = math.max(r.y_step, e / steps)
      if (o.exact and e ~= 0) or (o.y_tol and e > o.y_tol * steps) then
        fail("%s: step %d: state off by %.3g relative", o.label, steps, e)
      end
    end
  end
  r.steps = steps
  return r
end

-- One s:integrate of each from a's state at t = 0, to o.t1, one timed
-- run without warm-up (a repetition count that a measure chose from the
-- time it sees would differ from rank to rank): the same step and accepted
-- counts; with o.y_tol the end states as in C.side_by_side, o.y_tol times
-- the steps. Returns both rows.
local ONE_RUN = { warmup = 0, min_reps = 1, max_reps = 1 }
function C.integrate_alike(a, b, o)
  a:set_state(a:state(), 0)
  b:set_state(a:state(), 0)
  local ia = a:integrate { t1 = o.t1, measure = ONE_RUN }
  local ib = b:integrate { t1 = o.t1, measure = ONE_RUN }
  if ia.steps ~= ib.steps or ia.accepted ~= ib.accepted then
    fail("%s: integrate: %d steps (%d accepted), %s %d (%d)", o.label,
         ib.steps, ib.accepted, o.ref, ia.steps, ia.accepted)
  end
  if o.y_tol then
    local e = b:state():max_rel_err(a:state())
    if (o.exact and e ~= 0) or e > o.y_tol * ia.steps then
      fail("%s: integrate: state off by %.3g relative", o.label, e)
    end
  end
  return ia, ib
end

return C
