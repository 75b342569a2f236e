-- kindlab: Debian packages lua-resty-cookie as nginx.cookie (lua-nginx-cookie).
return require("nginx.cookie")
