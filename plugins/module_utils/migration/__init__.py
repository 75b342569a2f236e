# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The migration rehearsal: the same generated requests through a baseline data plane
(ingress-nginx) and through each target (Traefik's providers, later a Gateway API
translation), every difference named with its cause.

corpus: the requests, generated from the Ingresses' rules and annotations.
replay: sending them, raw, to each data plane's address and reading what the echo backend saw.
compare: per request and per field, with noise (two baseline samples) and "served by neither".
causes: which rule or annotation explains a difference.
dataplanes: the baseline and targets (the seam a new kind of target plugs into).
rehearse: the ingress_migration module's flow.
"""
