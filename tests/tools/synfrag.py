#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""TCP SYNs, whole or as a tiny first fragment and the rest, and the
SYN-ACKs they get: the tests' probe of fragments that slip past a port rule.

  synfrag.py -i DEV --smac M --dmac M -s SRC -d DST -p PORT -n N
             [--split plain|inorder|reversed] [--sport BASE] [--wait S]
  synfrag.py --pcap FILE --smac M --dmac M -s SRC -d DST -p PORT -n N [--split ...]

Sends N SYNs from SRC (IPv4 or IPv6) to DST:PORT as Ethernet frames on DEV
(an AF_PACKET socket: the test's own veth end), each from its own source
port BASE + i, 20 ms apart. "inorder" splits each SYN's 20-byte TCP header
into an 8-byte first fragment (offset 0, more fragments) and the other 12
bytes at offset 1; "reversed" sends the second fragment first. Then waits
S seconds (default 1) and prints how many of the N source ports got a
SYN-ACK from DST:PORT. Bounded: N <= 1000, at most 30 s in all.
With --pcap, writes the same frames to FILE (pcap, Ethernet, 1 ms apart)
instead of sending them, for `xdp-rlctl replay`.
"""
import argparse
import ipaddress
import select
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def tcp_syn(src, dst, sport, dport, v6):
    hdr = struct.pack("!HHIIBBHHH", sport, dport, 1000 + sport, 0, 5 << 4, 0x02, 65535, 0, 0)
    if v6:
        pseudo = src.packed + dst.packed + struct.pack("!IxxxB", len(hdr), socket.IPPROTO_TCP)
    else:
        pseudo = src.packed + dst.packed + struct.pack("!xBH", socket.IPPROTO_TCP, len(hdr))
    c = csum(pseudo + hdr)
    return hdr[:16] + struct.pack("!H", c) + hdr[18:]


def ipv4(src, dst, ident, frag, payload):
    """frag: (offset in 8-byte units, more fragments) or None"""
    off = 0 if frag is None else (frag[0] | (0x2000 if frag[1] else 0))
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, off, 64,
                    socket.IPPROTO_TCP, 0, src.packed, dst.packed)
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + payload


def ipv6(src, dst, ident, frag, payload):
    if frag is None:
        nh, ext = socket.IPPROTO_TCP, b""
    else:
        nh = 44
        ext = struct.pack("!BBHI", socket.IPPROTO_TCP, 0, frag[0] << 3 | (1 if frag[1] else 0), ident)
    body = ext + payload
    return struct.pack("!IHBB16s16s", 6 << 28, len(body), nh, 64, src.packed, dst.packed) + body


def frames(args, src, dst, v6, i):
    sport = args.sport + i
    tcp = tcp_syn(src, dst, sport, args.port, v6)
    ip = ipv6 if v6 else ipv4
    ident = (args.sport + i) & 0xFFFF
    if args.split == "plain":
        pkts = [ip(src, dst, ident, None, tcp)]
    else:
        pkts = [ip(src, dst, ident, (0, True), tcp[:8]), ip(src, dst, ident, (1, False), tcp[8:])]
        if args.split == "reversed":
            pkts.reverse()
    eth = args.dmac + args.smac + struct.pack("!H", 0x86DD if v6 else 0x0800)
    return [eth + p for p in pkts]


def synack_sport(frame, src, dst, port, v6):
    """the SYN-ACK's destination port (our source port), or None"""
    if len(frame) < 14:
        return None
    et = struct.unpack("!H", frame[12:14])[0]
    if v6:
        if et != 0x86DD or len(frame) < 14 + 40 + 20 or frame[14 + 6] != socket.IPPROTO_TCP:
            return None
        if frame[22:38] != dst.packed or frame[38:54] != src.packed:
            return None
        t = frame[54:]
    else:
        if et != 0x0800 or len(frame) < 14 + 20 + 20 or frame[14 + 9] != socket.IPPROTO_TCP:
            return None
        hl = (frame[14] & 0xF) * 4
        if frame[26:30] != dst.packed or frame[30:34] != src.packed:
            return None
        t = frame[14 + hl:]
    if len(t) < 14:
        return None
    sp, dp = struct.unpack("!HH", t[:4])
    if sp != port or (t[13] & 0x12) != 0x12:
        return None
    return dp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-i")
    ap.add_argument("--pcap")
    ap.add_argument("--smac", required=True)
    ap.add_argument("--dmac", required=True)
    ap.add_argument("-s", required=True)
    ap.add_argument("-d", required=True)
    ap.add_argument("-p", "--port", type=int, required=True)
    ap.add_argument("-n", type=int, default=50)
    ap.add_argument("--split", choices=["plain", "inorder", "reversed"], default="plain")
    ap.add_argument("--sport", type=int, default=40000)
    ap.add_argument("--wait", type=float, default=1.0)
    args = ap.parse_args()
    if not 0 < args.n <= 1000 or args.wait > 10:
        sys.exit("Error: at most 1000 SYNs and 10 s of waiting")
    args.smac = bytes.fromhex(args.smac.replace(":", ""))
    args.dmac = bytes.fromhex(args.dmac.replace(":", ""))
    src, dst = ipaddress.ip_address(args.s), ipaddress.ip_address(args.d)
    v6 = src.version == 6

    if args.pcap:
        with open(args.pcap, "wb") as f:
            f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
            t = 1714521600 * 1000000
            for i in range(args.n):
                for fr in frames(args, src, dst, v6, i):
                    f.write(struct.pack("<IIII", t // 1000000, t % 1000000, len(fr), len(fr)) + fr)
                    t += 1000
        return
    if not args.i:
        sys.exit("Error: -i DEV or --pcap FILE")
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((args.i, 0))
    s.setblocking(False)
    answered = set()
    start = time.monotonic()

    def drain(until):
        while True:
            left = until - time.monotonic()
            if left <= 0 or time.monotonic() - start > 30:
                return
            r, _, _ = select.select([s], [], [], left)
            if not r:
                return
            try:
                data, addr = s.recvfrom(65535)
            except BlockingIOError:
                continue
            if addr[2] == PACKET_OUTGOING:
                continue
            dp = synack_sport(data, src, dst, args.port, v6)
            if dp is not None and args.sport <= dp < args.sport + args.n:
                answered.add(dp)

    for i in range(args.n):
        for f in frames(args, src, dst, v6, i):
            s.send(f)
        drain(time.monotonic() + 0.02)
    drain(time.monotonic() + args.wait)
    print(len(answered))


if __name__ == "__main__":
    main()
