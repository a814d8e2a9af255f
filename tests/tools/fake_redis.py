#!/usr/bin/env python3
# A small RESP server of the tests' own (tests/e2e/test_fleet_hostile.sh): it
# answers the commands xdp-rld's fleet client sends, the way a broken or
# hostile server could, where a real redis-server cannot misbehave so.
#
#   fake_redis.py --bind ADDR --port PORT [--pass PASS] [options]
#
# Commands: AUTH, PING, SCRIPT LOAD|FLUSH, EVALSHA (the hosts, hot and lease
# scripts, told apart by their bodies), EVAL (a host leaving), CLUSTER SLOTS.
# Well-behaved by default: N live hosts, no hot keys, a grant of what was
# asked. Options (each reply, or only the calls of --on):
#   --trickle-ms N     every reply sent one byte every N ms
#   --grant G          the lease script grants G (-1, 1000000000, ...)
#   --hosts N          the hosts script says N
#   --stall            a bulk header, then one byte every 2 ms, for ever
#   --huge array|bulk  "*2000000000" then ":1" every 2 ms; or "$2000000000"
#                      then as fast as the client reads (at most --max-mb)
#   --moved HOST:PORT  the lease script answers MOVED to HOST:PORT
#   --slots LO:HI:HOST:PORT,...     the CLUSTER SLOTS reply (any integers)
#   --slots-later SPEC the CLUSTER SLOTS reply from the second one on
#   --on lease|hosts|any  which EVALSHA calls misbehave (default any)
#   --ask HOST:PORT    the lease script answers ASK to HOST:PORT
#   --importing        as the node an ASK names: a lease call not right
#                      after ASKING answers MOVED to --moved; a script is
#                      forgotten at each lease call (every one NOSCRIPT first)
#   --extra            after the last reply to a pipeline of EVALSHA calls,
#                      one reply too many (":7", a live-host count)
import argparse
import hashlib
import socket
import threading
import time


def crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def key_slot(key):
    o = key.find(b"{")
    if o >= 0:
        c = key.find(b"}", o + 1)
        if c > o + 1:
            key = key[o + 1:c]
    return crc16(key) % 16384


def enc(v):
    if isinstance(v, bytes):
        return b"$%d\r\n%s\r\n" % (len(v), v)
    if isinstance(v, str):
        return enc(v.encode())
    if isinstance(v, int):
        return b":%d\r\n" % v
    if isinstance(v, list):
        return b"*%d\r\n" % len(v) + b"".join(enc(x) for x in v)
    raise TypeError(v)


def slots_reply(spec):
    out = []
    for ent in spec.split(","):
        lo, hi, host, port = ent.split(":")
        out.append([int(lo), int(hi), [host.encode(), int(port)]])
    return enc(out)


class State:
    def __init__(self, a):
        self.a = a
        self.scripts = {}  # sha -> kind
        self.slot_calls = 0
        self.lock = threading.Lock()


def parse(buf):
    """One command off buf: (argv, rest), or (None, buf) if incomplete."""
    if not buf:
        return None, buf
    if buf[:1] != b"*":
        line, sep, rest = buf.partition(b"\r\n")
        if not sep:
            return None, buf
        return line.split(), rest
    nl = buf.find(b"\r\n")
    if nl < 0:
        return None, buf
    n = int(buf[1:nl])
    pos = nl + 2
    argv = []
    for _ in range(n):
        nl = buf.find(b"\r\n", pos)
        if nl < 0:
            return None, buf
        ln = int(buf[pos + 1:nl])
        pos = nl + 2
        if len(buf) < pos + ln + 2:
            return None, buf
        argv.append(buf[pos:pos + ln])
        pos += ln + 2
    return argv, buf[pos:]


def kind_of(body):
    if b"HGETALL" in body:
        return "lease"
    if b"ZRANGE" in body or b"ZREVRANGE" in body:
        return "hot"
    return "hosts"


def answer(st, argv, conn_st=None):
    """(reply bytes, hostile) for one command."""
    a = st.a
    cmd = argv[0].upper() if argv else b""
    # ASKING holds for the next command only, whatever it is
    asking = conn_st is not None and conn_st.pop("asking", False)
    if cmd == b"AUTH":
        if a.password and argv[-1].decode() != a.password:
            return b"-WRONGPASS invalid username-password pair\r\n", False
        return b"+OK\r\n", False
    if cmd == b"PING":
        return b"+PONG\r\n", False
    if cmd == b"ASKING":
        if conn_st is not None:
            conn_st["asking"] = True
        return b"+OK\r\n", False
    if cmd == b"SCRIPT" and len(argv) >= 2 and argv[1].upper() == b"LOAD":
        sha = hashlib.sha1(argv[2]).hexdigest()
        with st.lock:
            st.scripts[sha] = kind_of(argv[2])
        return enc(sha), a.on == "any"
    if cmd == b"SCRIPT" and len(argv) >= 2 and argv[1].upper() == b"FLUSH":
        with st.lock:
            st.scripts.clear()
        return b"+OK\r\n", False
    if cmd == b"CLUSTER" and len(argv) >= 2 and argv[1].upper() == b"SLOTS":
        with st.lock:
            st.slot_calls += 1
            later = st.slot_calls > 1 and a.slots_later
        return slots_reply(a.slots_later if later else a.slots), False
    if cmd == b"EVAL":
        return b":0\r\n", False
    if cmd == b"EVALSHA":
        with st.lock:
            kind = st.scripts.get(argv[1].decode())
        if not kind:
            return b"-NOSCRIPT No matching script. Please use EVAL.\r\n", False
        hostile = a.on in ("any", kind)
        if kind == "hosts":
            return enc(a.hosts), hostile
        if kind == "hot":
            return enc([]), hostile
        if a.importing:
            with st.lock:
                st.scripts.pop(argv[1].decode(), None)
            if not asking:
                return b"-MOVED %d %s\r\n" % (key_slot(argv[3]), a.moved.encode()), False
        elif a.ask and hostile:
            return b"-ASK %d %s\r\n" % (key_slot(argv[3]), a.ask.encode()), False
        elif a.moved and hostile:
            return b"-MOVED %d %s\r\n" % (key_slot(argv[3]), a.moved.encode()), False
        want = int(argv[7])
        g = want if a.grant is None else a.grant
        return enc([g, max(g, 0)]), hostile
    return b"-ERR unknown command\r\n", False


def send_hostile(conn, st, reply):
    a = st.a
    if a.stall:
        conn.sendall(b"$1000000\r\n")
        while True:
            conn.sendall(b"x")
            time.sleep(0.002)
    if a.huge == "array":
        conn.sendall(b"*2000000000\r\n")
        while True:
            conn.sendall(b":1\r\n")
            time.sleep(0.002)
    if a.huge == "bulk":
        conn.sendall(b"$2000000000\r\n")
        chunk = b"x" * 65536
        for _ in range(a.max_mb * 16):
            conn.sendall(chunk)
        time.sleep(3600)
    send(conn, st, reply)


def send(conn, st, reply):
    if st.a.trickle_ms:
        for i in range(len(reply)):
            conn.sendall(reply[i:i + 1])
            time.sleep(st.a.trickle_ms / 1000.0)
    else:
        conn.sendall(reply)


def serve(conn, st):
    buf = b""
    conn_st = {}
    try:
        while True:
            data = conn.recv(65536)
            if not data:
                return
            buf += data
            last = None
            while True:
                argv, buf = parse(buf)
                if argv is None:
                    if st.a.extra and last == b"EVALSHA" and not buf:
                        send(conn, st, b":7\r\n")
                    break
                last = argv[0].upper() if argv else None
                reply, hostile = answer(st, argv, conn_st)
                bad = st.a.stall or st.a.huge
                if hostile and bad:
                    send_hostile(conn, st, reply)
                else:
                    send(conn, st, reply)
    except (OSError, ValueError):
        pass
    finally:
        conn.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bind", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--pass", dest="password", default="")
    p.add_argument("--trickle-ms", type=float, default=0)
    p.add_argument("--grant", type=int)
    p.add_argument("--hosts", type=int, default=1)
    p.add_argument("--stall", action="store_true")
    p.add_argument("--huge", choices=["array", "bulk"])
    p.add_argument("--max-mb", type=int, default=128)
    p.add_argument("--moved")
    p.add_argument("--slots", default="0:16383::0")
    p.add_argument("--slots-later", default="")
    p.add_argument("--extra", action="store_true")
    p.add_argument("--ask")
    p.add_argument("--importing", action="store_true")
    p.add_argument("--on", choices=["lease", "hosts", "any"], default="any")
    a = p.parse_args()
    if a.slots == "0:16383::0":
        a.slots = "0:16383:%s:%d" % (a.bind, a.port)
    st = State(a)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((a.bind, a.port))
    s.listen(64)
    while True:
        conn, _ = s.accept()
        # each reply is its own send: without this, Nagle holds the second
        # reply of a pipeline for the client's delayed ACK (40 ms), past a
        # sync's deadline
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=serve, args=(conn, st), daemon=True).start()


if __name__ == "__main__":
    main()
