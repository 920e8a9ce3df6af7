#!/usr/bin/env bash
# capture-siw.sh <out.pcap>: records real Soft-iWARP traffic for the codec's golden tests.
# Runs inside the guest (or on a host with siw0 on 198.51.100.1), as root:
#   mkdir -p /tmp/capture && node dist/cli/main.js vm --share /tmp/capture -- \
#     bash scripts/capture-siw.sh /tmp/capture/siw-rping.pcap
#   cp /tmp/capture/siw-rping.pcap test/fixtures/
# (the share is the only place the guest writes that the host keeps).
# rping (rdmacm-utils) connects two QPs through rdma_cm on siw0 and, per iteration, does
# a Send (buffer advertisement), an RDMA Read, a Send, an RDMA Write and a final Send, so
# one iteration shows the MPA Request/Reply and every RFC 5040 data path. siw talks to its
# own address over the loopback device, so the capture is on lo, started before the
# connection (Wireshark's MPA dissector needs to see the MPA Request/Reply).
set -euo pipefail
out=${1:?usage: capture-siw.sh <out.pcap>}
address=198.51.100.1
port=7174
size=${RPING_SIZE:-64}

tcpdump -i lo -U -s 0 -w "$out" "tcp port $port" 2>/dev/null &
tcpdump_pid=$!
trap 'kill "$tcpdump_pid" 2>/dev/null || true' EXIT
sleep 1

rping -s -a "$address" -p "$port" -C 1 -S "$size" &
server_pid=$!
sleep 1
rping -c -a "$address" -p "$port" -C 1 -S "$size" -v
wait "$server_pid"

sleep 1
kill -INT "$tcpdump_pid"
wait "$tcpdump_pid" 2>/dev/null || true
trap - EXIT
echo "captured $(stat -c %s "$out") bytes into $out"
