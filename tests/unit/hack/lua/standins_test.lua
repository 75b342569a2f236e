-- The Lua stand-ins of the ingress-nginx image (hack/kind-images/ingress-nginx/lua), run by
-- tests/unit/hack/test_lua_standins.py with LuaJIT from their directory; ngx is faked.
package.path = "./?.lua;" .. package.path
ngx = { crc32_long = function(s) local h = 0; for i = 1, #s do h = (h * 31 + s:byte(i)) % 4294967296 end; return h end }
local rr = require("resty.roundrobin")
local b = rr:new({ ["10.0.0.2:80"] = 1, ["10.0.0.1:80"] = 1 })
assert(b:find() == "10.0.0.1:80" and b:find() == "10.0.0.2:80" and b:find() == "10.0.0.1:80")
b:reinit({ ["10.0.0.3:80"] = 1 })
assert(b:find() == "10.0.0.3:80" and b.nodes["10.0.0.3:80"] == 1)
assert(rr:new({}):find() == nil)
local ch = require("resty.chash")
local c = ch:new({ ["a:1"] = 1, ["b:1"] = 1, ["c:1"] = 1 })
local first = c:find("key")
assert(first and c:find("key") == first)
c:reinit({ ["z:1"] = 1 }); assert(c:find("key") == "z:1")
print("lua stand-ins ok")
