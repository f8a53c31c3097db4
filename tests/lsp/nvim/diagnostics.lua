-- Attach hexplore-lsp to the current buffer (vim.lsp.start; on Neovim 0.7, which lacks it,
-- start_client + buf_attach_client), wait for its diagnostics, write them as JSON to
-- $HEXPLORE_OUT and quit.
local out = vim.env.HEXPLORE_OUT
local cmd = vim.fn.json_decode(vim.env.HEXPLORE_LSP_CMD)

local function finish(result)
  local f = assert(io.open(out, "w"))
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd("qall!")
end

local config = {
  name = "hexplore",
  cmd = cmd,
  root_dir = vim.fn.expand("%:p:h"),
  init_options = { hexplore = { target = "cuda" } },
}
local client_id
if vim.lsp.start then -- 0.8 and later: start and attach to the current buffer
  client_id = vim.lsp.start(config)
else -- 0.7
  client_id = vim.lsp.start_client(config)
  if client_id then
    vim.lsp.buf_attach_client(0, client_id)
  end
end
if not client_id then
  finish({ error = "could not start hexplore-lsp" })
  return
end

local ok = vim.wait(30000, function()
  return #vim.diagnostic.get(0) > 0
end, 50)

local items = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  local lsp = (d.user_data or {}).lsp or {}
  table.insert(items, {
    lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
    severity = d.severity, message = d.message, source = d.source,
    code = lsp.code or d.code,
  })
end
finish({ ok = ok, client = vim.lsp.get_client_by_id(client_id).name, diagnostics = items })
