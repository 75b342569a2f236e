-- kindlab: Debian packages lua-resty-dns as nginx.dns.resolver (lua-nginx-dns).
return require("nginx.dns.resolver")
