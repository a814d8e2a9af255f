#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Print the blocks of a pcapng file, one line per packet, from its bytes:
the tests' check of what xdp-rlctl capture writes, with no third-party
module (tcpdump does not print a packet's comment, and tshark is not in
the test set). Exits 1 on a malformed file.

  pcapng-dump.py FILE|-   ->  "EPB if=0 caplen=N len=N flags=0x1 comment=..."
"""
import struct
import sys


def main():
    data = (sys.stdin.buffer.read() if sys.argv[1] == "-" else open(sys.argv[1], "rb").read())
    off, end = 0, "<"
    ifaces = []
    while off < len(data):
        if len(data) - off < 12:
            sys.exit(f"truncated block at {off}")
        btype = struct.unpack_from(end + "I", data, off)[0]
        if btype == 0x0A0D0D0A:
            bom = data[off + 8:off + 12]
            end = "<" if bom == b"\x4d\x3c\x2b\x1a" else ">"
            if struct.unpack_from(end + "I", data, off + 8)[0] != 0x1A2B3C4D:
                sys.exit("bad byte-order magic")
        btype, blen = struct.unpack_from(end + "II", data, off)
        if blen % 4 or blen < 12 or off + blen > len(data):
            sys.exit(f"bad block length {blen} at {off}")
        if struct.unpack_from(end + "I", data, off + blen - 4)[0] != blen:
            sys.exit(f"trailing length differs at {off}")
        body = data[off + 8:off + blen - 4]
        if btype == 0x0A0D0D0A:
            print("SHB")
        elif btype == 1:
            link, _, snap = struct.unpack_from(end + "HHI", body, 0)
            opts = parse_opts(body[8:], end)
            name = opts.get(2, [b""])[0].decode()
            ifaces.append(name)
            print(f"IDB link={link} snaplen={snap} name={name} tsresol={opts.get(9, [b'?'])[0][0]}")
        elif btype == 6:
            ifid, th, tl, cap, orig = struct.unpack_from(end + "IIIII", body, 0)
            pad = (cap + 3) & ~3
            if ifid >= len(ifaces):
                sys.exit(f"packet of interface {ifid} before its description")
            opts = parse_opts(body[20 + pad:], end)
            flags = struct.unpack(end + "I", opts[2][0])[0] if 2 in opts else 0
            comment = opts.get(1, [b""])[0].decode()
            ts = (th << 32 | tl)
            print(f"EPB if={ifid} ts={ts} caplen={cap} len={orig} flags={flags:#x} comment={comment}")
        else:
            print(f"block {btype:#x}")
        off += blen


def parse_opts(b, end):
    opts, i = {}, 0
    while i + 4 <= len(b):
        code, ln = struct.unpack_from(end + "HH", b, i)
        if code == 0:
            break
        opts.setdefault(code, []).append(b[i + 4:i + 4 + ln])
        i += 4 + ((ln + 3) & ~3)
    return opts


if __name__ == "__main__":
    main()
