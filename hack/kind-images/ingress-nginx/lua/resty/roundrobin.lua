-- kindlab stand-in for lua-resty-balancer's resty.roundrobin (not packaged by Debian):
-- plain round robin over ingress-nginx's node table {"ip:port" = weight}; weights are ignored.
local nodes = require("kindlab.nodes")

local _M = { reinit = nodes.reinit }

function _M.new(_, node_table)
  return nodes.new(_M, node_table)
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
