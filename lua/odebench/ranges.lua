-- odebench.ranges: lists of whole numbers in a scenario parameter, such as
-- --set widths=1,8,32 or --set widths=1-64 or --set widths=5-9,63.
--
-- integers(name, text, lo, hi) returns the numbers in order (a range a-b
-- gives a, a + 1, ..., b; an empty text gives none). A token that is not a whole number or a range
-- a <= b, or a number outside lo..hi, raises an error naming the parameter,
-- the token and what is allowed; odebench then exits with status 2 before
-- any output is written.

local M = {}

-- The whole number in s (blanks around it allowed), or nil.
local function whole(s)
  local d = s:match("^%s*(%d+)%s*$")
  return d and tonumber(d)
end

function M.integers(name, text, lo, hi)
  local out = {}
  local function bad(tok, why)
    error(string.format("%s: '%s' %s (allowed: whole numbers %d..%d and "
                        .. "ranges a-b of them, comma-separated, e.g. "
                        .. "1,8,32 or %d-%d)", name, tok, why, lo, hi, lo,
                        hi), 0)
  end
  for tok in tostring(text):gmatch("[^,]+") do
    local a, b = tok:match("^(.-)%-(.*)$")
    if a then
      a, b = whole(a), whole(b)
      if not a or not b or a > b then bad(tok, "is not a range a-b with a <= b") end
    else
      a = whole(tok)
      if not a then bad(tok, "is not a whole number") end
      b = a
    end
    if a < lo or b > hi then bad(tok, "is outside " .. lo .. ".." .. hi) end
    for v = a, b do out[#out + 1] = v end
  end
  return out
end

return M
