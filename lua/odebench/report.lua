-- odebench.report: the human table that ob.report prints.
--
-- format(list) takes result tables (from s:integrate, kind = "solve") and
-- metric tables (from ob.metric, kind = "metric"), possibly nested in plain
-- lists, and returns the text. Scenarios may replace the whole module
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
  { "time/step", "right", function(r) return M.duration(r.time_per_step) end },
  { "GB/s", "right", function(r) return num("%.2f", r.gbs) end },
  { "% floor", "right", function(r) return num("%.1f", r.floor_pct) end },
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
    for _, r in ipairs(solves) do
      if type(r.floor_pct) == "number" and r.floor_pct > 100 then
        lines[#lines + 1] = "% floor above 100: the data stays in a cache; " ..
          "the floor is main memory's bandwidth (odebench info)"
        break
      end
    end
  end
  for _, m in ipairs(metrics) do
    lines[#lines + 1] = string.format("%s = %.6g%s", tostring(m.name),
                                      m.value, m.unit and (" " .. m.unit) or "")
  end
  if #lines == 0 then return "" end
  return table.concat(lines, "\n") .. "\n"
end

return M
