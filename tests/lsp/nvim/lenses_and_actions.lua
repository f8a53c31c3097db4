-- Run after the documented snippet (lsp/PROTOCOL.md) attached hexplore-lsp to the current buffer
-- (actions.c): run the "show CUDA" code lens of `mm` (the server executes it and shows the
-- result with window/showMessage), then apply the "interchange loops" code action on its `for i`
-- and the "skew" one on skew's, and write what happened as JSON to $HEXPLORE_OUT.
local out = vim.env.HEXPLORE_OUT
local result = { messages = {}, notes = {} }

local function finish()
  local f = assert(io.open(out, "w"))
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd("qall!")
end

local show = vim.lsp.handlers["window/showMessage"]
vim.lsp.handlers["window/showMessage"] = function(err, params, ctx, config)
  table.insert(result.messages, params.message)
  return show(err, params, ctx, config)
end
vim.notify = function(msg) table.insert(result.notes, msg) end
local choose -- the title vim.ui.select picks
vim.ui.select = function(items, opts, on_choice)
  for _, item in ipairs(items) do
    if opts.format_item(item):find(choose, 1, true) then return on_choice(item) end
  end
  on_choice(nil)
end

result.attached = vim.wait(30000, function() return #vim.lsp.buf_get_clients(0) > 0 end, 50)
result.diagnostics = vim.wait(30000, function() return #vim.diagnostic.get(0) > 0 end, 50)

vim.lsp.codelens.refresh() -- the snippet refreshes on attach; this one may be skipped as a duplicate
vim.wait(30000, function() return #vim.lsp.codelens.get(vim.api.nvim_get_current_buf()) > 0 end, 50)
result.lenses = {}
for _, lens in ipairs(vim.lsp.codelens.get(vim.api.nvim_get_current_buf())) do
  table.insert(result.lenses, { line = lens.range.start.line, title = lens.command.title })
end
vim.api.nvim_win_set_cursor(0, { 3, 5 }) -- `void mm(...)`: its lenses
choose = "show CUDA"
vim.lsp.codelens.run()
result.shown = vim.wait(30000, function()
  for _, m in ipairs(result.messages) do
    if m:find("hexplore: CUDA of mm", 1, true) then return true end
  end
  return false
end, 50)

vim.api.nvim_win_set_cursor(0, { 5, 4 }) -- `for (int i = 0; ...)` in mm
choose = "interchange loops"
vim.lsp.buf.code_action()
result.interchanged = vim.wait(30000, function()
  return vim.api.nvim_buf_get_lines(0, 4, 5, false)[1] == "  for (int j = 0; j < n; j++)"
end, 50)
result.lines = vim.api.nvim_buf_get_lines(0, 4, 6, false)

-- then "skew `j` by 1*`i`" on skew's `for i` (asked again until the server has analysed the
-- interchanged text: actions come from an analysis of the current text only)
vim.api.nvim_win_set_cursor(0, { 13, 4 })
choose = "skew `j` by 1*`i`"
result.skewed = vim.wait(30000, function()
  if vim.api.nvim_buf_get_lines(0, 13, 14, false)[1]:find("j_s", 1, true) then return true end
  vim.lsp.buf.code_action()
  return false
end, 1000)
result.skew_lines = vim.api.nvim_buf_get_lines(0, 12, 15, false)
finish()
