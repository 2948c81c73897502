#!/usr/bin/env bash
# By hand, not in CI (root; docs/failover.md): three etcd members and real flanneld (vxlan) in network
# namespaces on one bridge, plain HTTP; the Reaper (testdata/reaper) beside flanneld, as the launcher runs it
# under bpm. Black-holes member $1 (1-3; "watch": the one whose connection from flanneld has received the most,
# which carries its watch) at a random point of a tick, writes a new lease through another member, and prints
# when the worker has the lease's route.
#
#   go build -o /tmp/reaper ./src/flannel-launcher/keepalive/testdata/reaper
#   REAPER=/tmp/reaper src/flannel-launcher/keepalive/testdata/blackhole-flanneld.sh 1
set -euo pipefail
cut=${1:-1}
E=${ETCD_DIR:-/var/cache/flannel-dns/etcd-3.6.16}
F=${FLANNELD:-$(ls /var/cache/flannel-dns/compiled/flannel/*/bin/flanneld | head -1)}
R=${REAPER:?path to the built testdata/reaper}
d=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.5
  for ns in rp-br rp-e1 rp-e2 rp-e3 rp-w; do ip netns delete $ns 2>/dev/null || true; done
  rm -rf "$d"
}
trap cleanup EXIT
ip netns add rp-br; ip -n rp-br link add br0 type bridge; ip -n rp-br link set br0 up
node() { # ns ip
  ip netns add $1; ip -n $1 link set lo up
  ip link add veth0 netns $1 type veth peer name $1 netns rp-br
  ip -n rp-br link set $1 master br0 up
  ip -n $1 address add $2/24 dev veth0; ip -n $1 link set veth0 up
}
cluster=rp1=http://198.51.100.11:2380,rp2=http://198.51.100.12:2380,rp3=http://198.51.100.13:2380
for i in 1 2 3; do
  node rp-e$i 198.51.100.1$i
  ip netns exec rp-e$i $E/etcd --name rp$i --data-dir $d/e$i --listen-client-urls http://198.51.100.1$i:2379 \
    --advertise-client-urls http://198.51.100.1$i:2379 --listen-peer-urls http://198.51.100.1$i:2380 \
    --initial-advertise-peer-urls http://198.51.100.1$i:2380 --initial-cluster $cluster >$d/e$i.log 2>&1 &
  pids+=($!)
done
node rp-w 198.51.100.21
eps=http://198.51.100.11:2379,http://198.51.100.12:2379,http://198.51.100.13:2379
for _ in $(seq 50); do ip netns exec rp-w $E/etcdctl --endpoints=$eps endpoint health >/dev/null 2>&1 && break; sleep 0.2; done
ip netns exec rp-w $E/etcdctl --endpoints=$eps put /coreos.com/network/config '{"Network":"198.18.0.0/16","Backend":{"Type":"vxlan"}}' >/dev/null
ip netns exec rp-w $F -etcd-endpoints=$eps -iface=veth0 -ip-masq=false -iptables-forward-rules=false \
  -subnet-file=$d/subnet.env >$d/flanneld.log 2>&1 &
fpid=$!; pids+=($fpid)
for _ in $(seq 100); do [ -f $d/subnet.env ] && break; sleep 0.1; done
ip netns exec rp-w $R $fpid 2379 >$d/reaper.log 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ "$(grep -c 'answers ICMP' $d/reaper.log)" -ge 3 ] && break; sleep 0.2; done
received() { # peer-number bytes, for each of flanneld's connections
  ip netns exec rp-w ss -Htni state established dport = 2379 | paste - - |
    sed -E 's/.* 198\.51\.100\.1([1-3]):2379[[:space:]].*bytes_received:([0-9]+).*/\1 \2/' | sort
}
if [ "$cut" = watch ]; then # as src/e2e/cluster's WatchCarrier: a delete event reaches the watch's connection alone
  etcdctl() { ip netns exec rp-w $E/etcdctl --endpoints=$eps "$@"; }
  lease=$(etcdctl lease grant 60 | awk '{print $2}')
  etcdctl put /coreos.com/network/subnets/198.18.98.0-24 --lease=$lease \
    '{"PublicIP":"198.51.100.98","BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"02:00:00:00:98:01"}}' >/dev/null
  sleep 1; before=$(received)
  etcdctl del /coreos.com/network/subnets/198.18.98.0-24 >/dev/null
  sleep 1; after=$(received)
  cut=$(join <(echo "$before") <(echo "$after") | awk '$3 > $2 {print $1}')
  [ "$(echo "$cut" | wc -w)" = 1 ] || { echo "could not tell which member carries the watch: $cut"; exit 1; }
fi
sleep $(awk 'BEGIN{srand(); printf "%.2f", rand()*0.5}') # the Reaper ticks every 0.5 s
ip netns exec rp-e$cut nft add table inet blackhole
ip netns exec rp-e$cut nft 'add chain inet blackhole input { type filter hook input priority 0; policy drop; }'
ip netns exec rp-e$cut nft 'add chain inet blackhole output { type filter hook output priority 0; policy drop; }'
t0=$(date +%s.%N)
other=$(( cut % 3 + 1 ))
for _ in $(seq 20); do # a cut leader makes the first tries time out until the others elect one
  ip netns exec rp-w $E/etcdctl --command-timeout=1s --endpoints=http://198.51.100.1$other:2379 put /coreos.com/network/subnets/198.18.99.0-24 \
    '{"PublicIP":"198.51.100.99","PublicIPv6":null,"BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"02:00:00:00:99:01"}}' >/dev/null 2>&1 && break
done
written=$(echo "$(date +%s.%N) - $t0" | bc)
while :; do
  now=$(date +%s.%N)
  if ip -n rp-w route | grep -q '^198.18.99.0/24'; then echo "cut=e$cut route after $(echo "$now - $t0" | bc) s (lease written at $written s)"; break; fi
  if (( $(echo "$now - $t0 > 40" | bc) )); then echo "cut=e$cut no route after 40 s"; break; fi
  sleep 0.05
done
grep -E "missed|Destroyed" $d/reaper.log | sed "s/^/  /" || true
