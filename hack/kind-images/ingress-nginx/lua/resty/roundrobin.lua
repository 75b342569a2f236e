-- kindlab stand-in for lua-resty-balancer's resty.roundrobin (not packaged by Debian):
-- plain round robin over ingress-nginx's node table {"ip:port" = weight}; weights are ignored.
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
  return setmetatable({ nodes = nodes, ids = ids(nodes), last = 0 }, mt)
end

function _M.reinit(self, nodes)
  self.nodes = nodes
  self.ids = ids(nodes)
  self.last = 0
end

function _M.find(self)
  local count = #self.ids
  if count == 0 then
    return nil
  end
  self.last = self.last % count + 1
  return self.ids[self.last]
end

return _M
