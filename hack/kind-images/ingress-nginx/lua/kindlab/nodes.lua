-- kindlab: what the balancer stand-ins (resty.roundrobin, resty.chash) share: a balancer over
-- ingress-nginx's node table {"ip:port" = weight}, its ids in a stable order.
local _M = {}

local function ids(node_table)
  local list = {}
  for id in pairs(node_table) do
    list[#list + 1] = id
  end
  table.sort(list)
  return list
end

function _M.reinit(self, node_table)
  self.nodes = node_table
  self.ids = ids(node_table)
  self.last = 0
end

-- A balancer with METHODS (the stand-in module) over NODE_TABLE.
function _M.new(methods, node_table)
  local self = setmetatable({}, { __index = methods })
  _M.reinit(self, node_table)
  return self
end

return _M
