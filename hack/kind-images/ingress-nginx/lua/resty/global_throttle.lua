-- kindlab stand-in for resty.global_throttle (not packaged by Debian): every constructor fails, so the
-- feature that needs it (OCSP stapling fetches, global rate limiting) reports an error and stays off.
local _M = {}

function _M.new()
  return nil, "resty.global_throttle is not available in the kindlab image"
end

return _M
