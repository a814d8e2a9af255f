#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Crafted captures for the replay tests, written by hand (no scapy).

  pcapgen.py SCENARIO OUT [--format pcap|pcap-ns|pcapng]

Scenarios (what each holds is what tests/e2e/test_replay.sh expects):
  mixed   Ethernet: plain, VLAN-tagged (one and two tags) IPv4, IPv6 (two
          addresses of one /64), frames cut by the snaplen (inside and after
          the IP header), frames shorter than 14 bytes, a 4000-byte frame,
          ARP, all at 1 ms intervals from 2024-05-01T00:00:00Z
  hour    198.18.0.1 sends 5 frames at t0, then 5 at t0 + 3601 s: under a
          rate of 1/h with burst 3, 3 then 1 pass. t0 is 30 minutes before
          6 * 2^58 ns after the epoch (2024-10-20T00:37:36Z), where the
          program's time units (ns << 6) wrap around 2^64
  sll     the 'mixed' IPv4/IPv6 sources as a Linux cooked capture (SLL)
  sll2    the same as SLL2 (tcpdump -i any)
  ppp     one frame of link type PPP: replay refuses it
  flood   a flood of FLOOD_FRAMES (1,000,000) frames, one every FLOOD_GAP_NS
          (1,000: a microsecond) from
          2024-05-01T00:00:00Z: of each ten, seven from 198.18.0.1 (one
          source over its limit), one from 256 sources of 198.18.1.0/24, one
          from 1,024 sources of 2001:db8:1::/64, one from 65,536 sources of
          198.19.0.0/16 (a spoofed spread); tests/bench/replay.sh
"""
import struct
import sys

DLT_EN10MB, DLT_PPP, DLT_LINUX_SLL, DLT_LINUX_SLL2 = 1, 9, 113, 276
SEC = 1_000_000_000
T_MIXED = 1714521600 * SEC          # 2024-05-01T00:00:00Z
T_WRAP = 6 * (1 << 58)              # ns << 6 wraps here


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ip4(a):
    return bytes(int(x) for x in a.split("."))


def ip6(a):
    import socket
    return socket.inet_pton(socket.AF_INET6, a)


def udp(payload=b"x" * 18, sport=1234, dport=9):
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def ipv4(src, dst="198.19.0.1", payload=None):
    payload = udp() if payload is None else payload
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 1, 0, 64, 17, 0,
                    ip4(src), ip4(dst))
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + payload


def ipv6(src, dst="2001:db8:ffff::1", payload=None):
    payload = udp() if payload is None else payload
    return struct.pack("!IHBB16s16s", 6 << 28, len(payload), 17, 64,
                       ip6(src), ip6(dst)) + payload


def eth(l3, proto, vlans=()):
    h = b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01"
    for tpid, vid in vlans:
        h += struct.pack("!HH", tpid, vid)
    return h + struct.pack("!H", proto) + l3


def e4(src, **kw):
    return eth(ipv4(src), 0x0800, **kw)


def e6(src, **kw):
    return eth(ipv6(src), 0x86DD, **kw)


def arp():
    return eth(b"\x00\x01\x08\x00\x06\x04\x00\x01" + b"\0" * 20, 0x0806)


# ---- writers: frames are (ts_ns, captured bytes, length on the wire) ----

def write_pcap(f, dlt, frames, nano):
    magic = 0xA1B23C4D if nano else 0xA1B2C3D4
    f.write(struct.pack("<IHHiIII", magic, 2, 4, 0, 0, 65535, dlt))
    for ts, data, wire in frames:
        frac = ts % SEC if nano else ts % SEC // 1000
        f.write(struct.pack("<IIII", ts // SEC, frac, len(data), wire) + data)


def pad4(b):
    return b + b"\0" * (-len(b) % 4)


def block(btype, body):
    n = 12 + len(body)
    return struct.pack("<II", btype, n) + body + struct.pack("<I", n)


def write_pcapng(f, dlt, frames):
    f.write(block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)))
    # if_tsresol (9) = 9: nanoseconds; then opt_endofopt
    opts = struct.pack("<HHB", 9, 1, 9) + b"\0" * 3 + struct.pack("<HH", 0, 0)
    f.write(block(1, struct.pack("<HHI", dlt, 0, 65535) + opts))
    for ts, data, wire in frames:
        f.write(block(6, struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF,
                                     len(data), wire) + pad4(data)))


# ---- scenarios ----

def mixed():
    fr = []
    t = T_MIXED

    def add(data, cut=None):
        nonlocal t
        fr.append((t, data[:cut] if cut else data, len(data)))
        t += SEC // 1000

    for _ in range(6):
        add(e4("198.18.0.1"))                                   # plain IPv4
    for _ in range(6):
        add(e4("198.18.0.2", vlans=((0x8100, 10),)))            # one tag
    for _ in range(6):
        add(e4("198.18.0.3", vlans=((0x88A8, 20), (0x8100, 10))))  # two tags
    for i in range(6):                                          # one /64
        add(e6("2001:db8:1::%d" % (1 + i % 2)))
    for _ in range(6):
        add(e4("198.18.0.4"), cut=38)     # cut after the IPv4 header: metered
    for _ in range(2):
        add(e4("198.18.0.5"), cut=20)     # cut inside it: malformed
    for _ in range(3):
        add(e4("198.18.0.1")[:10])        # shorter than Ethernet: skipped
    add(eth(ipv4("198.18.0.6", payload=udp(b"y" * 3950)), 0x0800))  # 4000 bytes
    add(arp())
    return fr


def hour():
    t0 = T_WRAP - 1800 * SEC
    fr = [(t0 + i * 1000, e4("198.18.0.1"), 60) for i in range(5)]
    fr += [(t0 + 3601 * SEC + i * 1000, e4("198.18.0.1"), 60) for i in range(5)]
    return [(ts, d, len(d)) for ts, d, _ in fr]


def cooked(v2):
    fr = []
    t = T_MIXED
    for l3, proto in [(ipv4("198.18.0.1"), 0x0800)] * 6 + \
                     [(ipv6("2001:db8:1::1"), 0x86DD)] * 6:
        mac = b"\x02\x00\x00\x00\x00\x01" + b"\0\0"
        if v2:  # protocol, reserved, ifindex, hatype, pkttype, halen, addr
            h = struct.pack("!HHIHBB8s", proto, 0, 2, 1, 0, 6, mac)
        else:   # pkttype, hatype, halen, addr, protocol
            h = struct.pack("!HHH8sH", 0, 1, 6, mac, proto)
        fr.append((t, h + l3, len(h) + len(l3)))
        t += SEC // 1000
    return fr


def flood(n, gap):
    """A generator: 1M frames in a list would take ~150 MB."""
    hot = e4("198.18.0.1")
    spread = [e4("198.18.1.%d" % i) for i in range(256)]
    six = [e6("2001:db8:1::%x" % (i + 1)) for i in range(1024)]
    t = T_MIXED
    for i in range(n):
        k = i % 10
        if k < 7:
            d = hot
        elif k == 7:
            d = spread[(i // 10) % 256]
        elif k == 8:
            d = six[(i // 10 * 7) % 1024]
        else:
            j = (i // 10 * 40503) & 0xFFFF
            d = e4("198.19.%d.%d" % (j >> 8, j & 0xFF))
        yield (t + i * gap, d, len(d))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    scen, out = sys.argv[1], sys.argv[2]
    fmt = "pcap"
    if len(sys.argv) > 4 and sys.argv[3] == "--format":
        fmt = sys.argv[4]
    dlt = DLT_EN10MB
    if scen == "mixed":
        fr = mixed()
    elif scen == "hour":
        fr = hour()
    elif scen in ("sll", "sll2"):
        fr = cooked(scen == "sll2")
        dlt = DLT_LINUX_SLL2 if scen == "sll2" else DLT_LINUX_SLL
    elif scen == "flood":
        import os
        fr = flood(int(os.environ.get("FLOOD_FRAMES", "1000000")),
                   int(os.environ.get("FLOOD_GAP_NS", "1000")))
    elif scen == "ppp":
        fr = [(T_MIXED, b"\xff\x03\x00\x21" + ipv4("198.18.0.1"), 52)]
        dlt = DLT_PPP
    else:
        sys.exit("unknown scenario " + scen)
    with open(out, "wb") as f:
        if fmt == "pcapng":
            write_pcapng(f, dlt, fr)
        else:
            write_pcap(f, dlt, fr, fmt == "pcap-ns")


if __name__ == "__main__":
    main()
