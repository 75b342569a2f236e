#!/usr/bin/env bash
# The offline node image's pod network (kindnetd's job, which no reachable registry or Go
# module serves): on every node, a ptp + host-local CNI configuration for the node's own
# podCIDR, and a route to each other node's podCIDR through that node's address. Runs as a
# hostNetwork DaemonSet pod (default-cni.yaml) with the API reached through its Service.
set -u
API="https://${KUBERNETES_SERVICE_HOST}:${KUBERNETES_SERVICE_PORT}"
SA=/var/run/secrets/kubernetes.io/serviceaccount
CONF_DIR=/etc/cni/net.d
CONF="$CONF_DIR/10-kindlab.conflist"

log() { echo "kindlab-cni: $*"; }

conflist() {  # $1: this node's podCIDR
    jq -n --arg subnet "$1" '{
      cniVersion: "0.4.0", name: "kindlab",
      plugins: [
        {type: "ptp", ipMasq: true, mtu: 1500,
         ipam: {type: "host-local", dataDir: "/run/cni-ipam-state",
                routes: [{dst: "0.0.0.0/0"}], ranges: [[{subnet: $subnet}]]}},
        {type: "portmap", capabilities: {portMappings: true}}
      ]}'
}

sync_once() {
    local nodes
    nodes="$(curl -sS --fail --max-time 10 --cacert "$SA/ca.crt" \
        -H "Authorization: Bearer $(cat "$SA/token")" "$API/api/v1/nodes")" || return 1
    # name, InternalIP, podCIDR per node (nodes without a podCIDR yet are skipped)
    while read -r name ip cidr; do
        if [ -z "$cidr" ] || [ "$cidr" = null ]; then continue; fi
        if [ "$ip" = "$HOST_IP" ]; then
            local want
            want="$(conflist "$cidr")"
            if [ "$(cat "$CONF" 2>/dev/null)" != "$want" ]; then
                printf '%s\n' "$want" >"$CONF.tmp" && mv "$CONF.tmp" "$CONF"
                log "wrote $CONF for $name ($cidr)"
            fi
        elif ! ip route show "$cidr" | grep -q "via $ip "; then
            ip route replace "$cidr" via "$ip" && log "route $cidr via $ip ($name)"
        fi
    done < <(jq -r '.items[] | [.metadata.name,
        (.status.addresses[] | select(.type == "InternalIP") | .address),
        (.spec.podCIDR // "null")] | @tsv' <<<"$nodes" | tr '\t' ' ')
}

log "node $HOST_IP, API $API"
while :; do
    sync_once || log "listing nodes failed; retrying"
    sleep 5
done
