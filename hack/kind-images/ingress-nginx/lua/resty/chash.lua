-- kindlab stand-in for lua-resty-balancer's resty.chash (not packaged by Debian): the same key
-- always picks the same node while the nodes stay the same (hash modulo, not a consistent ring).
local _M = {}
local mt = { __index = _M }

local function ids(nodes)
  local list = {}
  for id in pairs(nodes) do
    list[#list + 1] = id
  end
  table.sort(list)
  return list
end

function _M.new(_, nodes)
  return setmetatable({ nodes = nodes, ids = ids(nodes) }, mt)
end

function _M.reinit(self, nodes)
  self.nodes = nodes
  self.ids = ids(nodes)
end

function _M.find(self, key)
  local count = #self.ids
  if count == 0 then
    return nil
  end
  return self.ids[ngx.crc32_long(tostring(key)) % count + 1]
end

return _M
