# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the offline kind lab's ingress-nginx image (hack/kind-images/ingress-nginx: the real
controller and its rendered nginx.conf on Debian's nginx 1.22, with small Lua stand-ins for the
libraries Debian lacks) cannot do as upstream's image does. The migration rehearsal marks the
requests these annotations affect "baseline not faithful, not compared" instead of comparing a
target against a data plane that differs from what users run.
"""
from __future__ import annotations

# Images of that build (KIND_OFFLINE_INGRESS_NGINX_IMAGE without its tag).
OFFLINE_IMAGE = "kindlab/ingress-nginx-controller"

# ingress-nginx annotation (without its prefix) -> why the offline data plane does not do what upstream's does.
UNFAITHFUL_ANNOTATIONS: dict[str, str] = {
    "upstream-hash-by": "resty.chash is a hash-mod stand-in here, not consistent hashing",
    "load-balance": "EWMA's locking (resty.lock) is a no-op stand-in here",
    "global-rate-limit": "the global throttle (resty.global_throttle) is a stub here",
    "global-rate-limit-window": "the global throttle (resty.global_throttle) is a stub here",
    "backend-protocol": "HTTP/2 is off (Debian's nginx 1.22 has no `http2 on`), so GRPC and H2C backends differ",
    "enable-modsecurity": "Debian's nginx here loads no ModSecurity module",
    "enable-owasp-core-rules": "Debian's nginx here loads no ModSecurity module",
    "modsecurity-snippet": "Debian's nginx here loads no ModSecurity module",
    "enable-opentelemetry": "Debian's nginx here loads no OpenTelemetry module",
    "auth-tls-verify-client": "OCSP checks (resty.ocsp) are not available here",
}


def is_offline_image(image: str) -> bool:
    return image.split("@", 1)[0].rsplit(":", 1)[0] == OFFLINE_IMAGE
