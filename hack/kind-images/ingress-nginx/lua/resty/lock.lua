-- kindlab stand-in for resty.lock (not packaged by Debian): ingress-nginx's EWMA balancer takes
-- this lock around its shared-dict updates; without it those updates may interleave.
local _M = {}
local mt = { __index = _M }

function _M.new(_, dict_name, opts)
  return setmetatable({ dict_name = dict_name, opts = opts }, mt)
end

function _M.lock(_, _key)
  return 0
end

function _M.unlock(_)
  return 1
end

return _M
