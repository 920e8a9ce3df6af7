#!/usr/bin/env python3
"""The RoCE tester's end of the wire, run in its own network namespace (roce-testbed.ts).

Reads hex lines on stdin, each a whole IPv4 packet (header, UDP, RoCEv2 datagram) built by
the TypeScript tester, and sends it through a raw socket with IP_HDRINCL, so the IP
identification the ICRC covers is the tester's own (a UDP socket's kernel picks it).
Writes every datagram received on UDP port 4791 to stdout as a hex line. Node has no raw
sockets; this is the only part of the tester outside TypeScript.
"""
import os
import select
import socket
import sys

PORT = 4791


def main() -> None:
    destination = sys.argv[1] if len(sys.argv) > 1 else "203.0.113.1"
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    raw.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("0.0.0.0", PORT))
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    stdin = sys.stdin.fileno()
    pending = b""
    while True:
        readable, _, _ = select.select([stdin, udp], [], [])
        if udp in readable:
            data = udp.recv(65535)
            out.write(data.hex() + "\n")
            out.flush()
        if stdin in readable:
            chunk = os.read(stdin, 65536)
            if not chunk:
                return
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                line = line.strip()
                if line:
                    raw.sendto(bytes.fromhex(line.decode()), (destination, 0))


if __name__ == "__main__":
    main()
