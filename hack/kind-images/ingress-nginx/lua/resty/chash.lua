-- kindlab stand-in for lua-resty-balancer's resty.chash (not packaged by Debian): the same key
-- always picks the same node while the nodes stay the same (hash modulo, not a consistent ring).
local nodes = require("kindlab.nodes")

local _M = { reinit = nodes.reinit }

function _M.new(_, node_table)
  return nodes.new(_M, node_table)
end

function _M.find(self, key)
  local count = #self.ids
  if count == 0 then
    return nil
  end
  return self.ids[ngx.crc32_long(tostring(key)) % count + 1]
end

return _M
