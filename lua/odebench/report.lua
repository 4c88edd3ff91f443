-- odebench.report: the human table that ob.report prints.
--
-- format(list) takes result tables (from s:integrate, kind = "solve") and
-- metric tables (from ob.metric, kind = "metric"), possibly nested in plain
-- lists, and returns the text. A solve row's seconds are the median of its
-- timed runs, shown with its spread ((q3 - q1) / median, "+-") and the
-- runs (reps); when several rows share a label, a line ranks their
-- time per step with ties marked "=" (M.ranking). Scenarios may replace the whole module
-- (package.loaded["odebench.report"] = my_report) to print their own way.

local M = {}

-- Seconds as a short string with a unit: "1.23 s", "45.6 ms", "789 us".
function M.duration(s)
  if type(s) ~= "number" then return "-" end
  if s >= 1 then return string.format("%.3g s", s) end
  if s >= 1e-3 then return string.format("%.3g ms", s * 1e3) end
  if s >= 1e-6 then return string.format("%.3g us", s * 1e6) end
  return string.format("%.3g ns", s * 1e9)
end

-- A number with a fixed format, or "-" when absent.
local function num(fmt, v)
  if type(v) ~= "number" or v ~= v then return "-" end
  return string.format(fmt, v)
end

-- Whether medians m1 and m2 with relative spreads s1 and s2 ((q3 - q1) /
-- median) are within each other's spread: |m1 - m2| <= max(s1 m1, s2 m2),
-- odb_measure_tied's rule (core/rt/odb_measure.c; ob.tied in C). Neither
-- is then faster than the other.
function M.tied(m1, s1, m2, s2)
  if type(m1) ~= "number" or type(m2) ~= "number" or m1 ~= m1 or m2 ~= m2
     or m1 == math.huge or m2 == math.huge then
    return false
  end
  local a = (type(s1) == "number" and s1 > 0) and s1 * m1 or 0
  local b = (type(s2) == "number" and s2 > 0) and s2 * m2 or 0
  return math.abs(m1 - m2) <= math.max(a, b)
end

-- "1.57e-04 +-3.1% (9)": a median with its relative spread and the number
-- of timed runs it comes from (fmt formats the median; default %.3g).
function M.with_spread(median, spread, reps, fmt)
  if type(median) ~= "number" then return "-" end
  local s = string.format(fmt or "%.3g", median)
  if type(spread) == "number" and spread == spread then
    s = s .. string.format(" +-%.1f%%", 100 * spread)
  end
  if type(reps) == "number" then s = s .. string.format(" (%d)", reps) end
  return s
end

-- The ranking of items, fastest first, as "A < B = C": items are sorted by
-- median (key(item) -> median, spread; default item.median, item.spread)
-- and one that is tied (M.tied) with the fastest of the group before it
-- joins that group with "=" instead of being ordered after it. name(item)
-- gives the text (default item.label). Returns the text and the groups
-- (lists of items).
function M.ranking(items, name, key)
  name = name or function(x) return tostring(x.label) end
  key = key or function(x) return x.median, x.spread end
  local sorted = {}
  for i, x in ipairs(items) do sorted[i] = x end
  table.sort(sorted, function(a, b)
    local ma, mb = key(a), key(b)
    return ma < mb
  end)
  local groups, parts = {}, {}
  for _, x in ipairs(sorted) do
    local g = groups[#groups]
    local m, s = key(x)
    if g then
      local m0, s0 = key(g[1])
      if M.tied(m0, s0, m, s) then
        g[#g + 1] = x
        goto next
      end
    end
    groups[#groups + 1] = { x }
    ::next::
  end
  for i, g in ipairs(groups) do
    local names = {}
    for j, x in ipairs(g) do names[j] = name(x) end
    parts[i] = table.concat(names, " = ")
  end
  return table.concat(parts, " < "), groups
end

-- Appends the solve and metric tables found in t (recursing into lists).
local function collect(t, solves, metrics)
  if type(t) ~= "table" then return end
  if t.kind == "solve" then
    solves[#solves + 1] = t
  elseif t.kind == "metric" then
    metrics[#metrics + 1] = t
  else
    for _, v in ipairs(t) do collect(v, solves, metrics) end
  end
end

-- A row's share of its floor as printed: "86.1", "118.6*" when the row
-- carries a floor_note (above 100%: see M.floor_notes), "-" without one.
-- The row computed it (floor_pct: the fewest bytes of its operation at the
-- measured bandwidth named by floor_bw); scenarios print this, never a
-- floor of their own.
function M.floor(r, fmt)
  if type(r) ~= "table" or type(r.floor_pct) ~= "number" then return "-" end
  return string.format(fmt or "%.1f", r.floor_pct) .. (r.floor_note and "*" or "")
end

-- The footnote lines for the rows printed with a '*' (empty when none):
-- one per note, saying what it means.
function M.floor_notes(rows)
  local seen, lines = {}, {}
  local text = {
    ["in cache"] = "* above 100% of the floor, in cache: the bytes touched fit " ..
      "the last-level cache (CPU LLC, GPU L2), which is faster than the " ..
      "memory bandwidth the floor uses",
    ["floor to fix"] = "* above 100% of the floor with a working set beyond the " ..
      "cache: the floor's bytes or bandwidth figure are wrong (floor to fix)",
  }
  for _, r in ipairs(rows or {}) do
    local n = type(r) == "table" and r.floor_note
    if n and not seen[n] then
      seen[n] = true
      lines[#lines + 1] = text[n] or ("* " .. tostring(n))
    end
  end
  return lines
end

local columns = {
  { "label", "left",
    function(r) return tostring(r.label or r.problem or "") end },
  { "method", "left", function(r) return tostring(r.method or "") end },
  { "variant", "left", function(r) return tostring(r.variant or "") end },
  { "steps (acc/rej)", "right", function(r)
      return string.format("%d (%d/%d)", r.steps or 0, r.accepted or 0,
                           r.rejected or 0)
    end },
  { "seconds", "right", function(r) return num("%.4g", r.seconds) end },
  { "+-", "right", function(r)
      return r.spread and num("%.1f%%", 100 * r.spread) or "-"
    end },
  { "reps", "right", function(r) return num("%d", r.reps) end },
  { "time/step", "right", function(r) return M.duration(r.time_per_step) end },
  { "GB/s", "right", function(r) return num("%.2f", r.gbs) end },
  { "% floor", "right", function(r) return M.floor(r) end },
  { "err", "right", function(r) return num("%.2e", r.err) end },
}

-- Pads s to width w on the given side.
local function pad(s, w, side)
  local fill = string.rep(" ", w - #s)
  if side == "left" then return s .. fill end
  return fill .. s
end

-- The table of solve rows as lines (header first).
local function solve_lines(solves)
  local cols = {}
  for i, c in ipairs(columns) do cols[i] = c end
  for _, r in ipairs(solves) do
    if r.status and r.status ~= "ok" then
      cols[#cols + 1] = { "status", "left",
                          function(x) return tostring(x.status or "") end }
      break
    end
  end
  local cells, widths = {}, {}
  for j, c in ipairs(cols) do widths[j] = #c[1] end
  for i, r in ipairs(solves) do
    cells[i] = {}
    for j, c in ipairs(cols) do
      local s = c[3](r)
      cells[i][j] = s
      if #s > widths[j] then widths[j] = #s end
    end
  end
  local lines, head = {}, {}
  for j, c in ipairs(cols) do head[j] = pad(c[1], widths[j], c[2]) end
  lines[1] = table.concat(head, "  ")
  for i = 1, #solves do
    local row = {}
    for j, c in ipairs(cols) do row[j] = pad(cells[i][j], widths[j], c[2]) end
    lines[#lines + 1] = table.concat(row, "  ")
  end
  return lines
end

-- Text for the given list of results; "" when there is nothing to show.
function M.format(list)
  local solves, metrics = {}, {}
  collect(list, solves, metrics)
  local lines = {}
  if #solves > 0 then
    for _, l in ipairs(solve_lines(solves)) do
      lines[#lines + 1] = (l:gsub("%s+$", ""))
    end
    local by_label, order = {}, {}
    for _, r in ipairs(solves) do
      local l = tostring(r.label or r.problem or "")
      if type(r.time_per_step) == "number" then
        if not by_label[l] then
          by_label[l] = {}
          order[#order + 1] = l
        end
        local t = by_label[l]
        t[#t + 1] = r
      end
    end
    for _, l in ipairs(order) do
      local rows = by_label[l]
      if #rows > 1 then
        local text = M.ranking(rows, function(r)
          return tostring(r.variant or "") .. "/" .. tostring(r.method or "")
        end, function(r) return r.time_per_step, r.spread end)
        lines[#lines + 1] = string.format("%s, time per step: %s", l, text)
      end
    end
    for _, l in ipairs(M.floor_notes(solves)) do lines[#lines + 1] = l end
  end
  for _, m in ipairs(metrics) do
    lines[#lines + 1] = string.format("%s = %.6g%s", tostring(m.name),
                                      m.value, m.unit and (" " .. m.unit) or "")
  end
  if #lines == 0 then return "" end
  return table.concat(lines, "\n") .. "\n"
end

-- A scenario's own table as a CSV file: a header of cols, then one line
-- per row of rows with row[col] for each column (tostring; fmt, when
-- given, formats the numbers, e.g. "%.6g"). Assumes no value holds a
-- comma or a newline (column names and numbers, as the scenarios write).
function M.write_csv(path, cols, rows, fmt)
  local f = assert(io.open(path, "w"))
  f:write(table.concat(cols, ","), "\n")
  for _, r in ipairs(rows) do
    local v = {}
    for i, c in ipairs(cols) do
      local x = r[c]
      v[i] = fmt and type(x) == "number" and string.format(fmt, x)
             or tostring(x)
    end
    f:write(table.concat(v, ","), "\n")
  end
  f:close()
end

return M
