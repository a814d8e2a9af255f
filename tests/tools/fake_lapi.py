#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""A lying CrowdSec Local API, for tests/e2e/test_crowdsec.sh.

Answers every request by the mode written in MODE_FILE (read at each
request, so that a test switches it without a restart):

  ok        a valid stream answer banning 198.18.0.8 for 1 h
  garbage   HTTP 200, a body that is not JSON
  html      HTTP 502 with an HTML body (a proxy in front of a dead LAPI)
  forbidden HTTP 403 {"message":"access forbidden"}
  wrongtype {"new": "198.18.0.9", "deleted": null}
  baddur    one ban whose duration is no Go duration, one valid (198.18.0.8)
  huge      Content-Length: 1 GiB, then a trickle of bytes
  bigchunk  chunked, a chunk size past any cap
  lying     Content-Length: 100, 10 bytes, then the connection held open
  stall     accept, read the request, send nothing
  trickle   the headers, then one byte of body a second
  deep      valid headers, 100,000 nested brackets
  badstatus "HTTP/1.1 2OO OK"
  close     accept and close at once
  many:N    N valid bans, 198.18.128.0 upwards (a blocklist's startup pull)

Each request is appended to LOG as "MODE PATH KEY".
"""
import argparse
import socket
import threading
import time

BAN = (b'{"duration":"59m59.5s","id":7,"origin":"cscli",'
       b'"scenario":"fake","scope":"Ip","type":"ban","value":"198.18.0.8"}')
ONE_BAN = b'{"deleted":null,"new":[' + BAN + b']}'


def answer(conn, mode):
    def send(b):
        conn.sendall(b)

    def ok(body, status="200 OK", extra=b""):
        send(b"HTTP/1.1 " + status.encode() + b"\r\nContent-Type: application/json\r\n"
             + extra + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)

    if mode.startswith("many:"):
        n = int(mode[5:])
        items = [b'{"duration":"1h","id":%d,"origin":"lists","scenario":"list","scope":"Ip",'
                 b'"type":"ban","value":"198.%d.%d.%d"}' % (i, 18 + (i >> 16), (i >> 8) & 255, i & 255)
                 for i in range(n)]
        ok(b'{"deleted":null,"new":[' + b",".join(items) + b"]}")
    elif mode == "ok":
        ok(ONE_BAN)
    elif mode == "garbage":
        ok(b"\x00\xffnot json at all {{{")
    elif mode == "html":
        ok(b"<html><body>502 Bad Gateway</body></html>", "502 Bad Gateway")
    elif mode == "forbidden":
        ok(b'{"message":"access forbidden"}', "403 Forbidden")
    elif mode == "wrongtype":
        ok(b'{"new": "198.18.0.9", "deleted": null}')
    elif mode == "baddur":
        ok(b'{"deleted":null,"new":[{"duration":"forever","id":8,"scope":"Ip","type":"ban",'
           b'"value":"198.18.0.9","scenario":"x","origin":"cscli"},' + BAN + b']}')
    elif mode == "huge":
        send(b"HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\n")
        for _ in range(30):
            send(b"[" * 1024)
            time.sleep(0.1)
    elif mode == "bigchunk":
        send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffff\r\n" + b"x" * 4096)
        time.sleep(5)
    elif mode == "lying":
        send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"new\":[]")
        time.sleep(30)
    elif mode == "stall":
        time.sleep(30)
    elif mode == "trickle":
        send(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
        for _ in range(30):
            send(b" ")
            time.sleep(1)
    elif mode == "deep":
        body = b"[" * 100000 + b"]" * 100000
        ok(body)
    elif mode == "badstatus":
        send(b"HTTP/1.1 2OO OK\r\nContent-Length: 2\r\n\r\n{}")
    elif mode == "close":
        pass


def serve(conn, args):
    try:
        conn.settimeout(5)
        req = b""
        while b"\r\n\r\n" not in req and len(req) < 65536:
            chunk = conn.recv(4096)
            if not chunk:
                return
            req += chunk
        lines = req.decode(errors="replace").split("\r\n")
        path = lines[0].split(" ")[1] if " " in lines[0] else "?"
        key = next((l.split(":", 1)[1].strip() for l in lines if l.lower().startswith("x-api-key:")), "-")
        with open(args.mode_file) as f:
            mode = f.read().strip()
        with open(args.log, "a") as f:
            f.write("%s %s %s\n" % (mode, path, key))
        answer(conn, mode)
    except OSError:
        pass
    finally:
        conn.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--mode-file", required=True)
    ap.add_argument("--log", required=True)
    args = ap.parse_args()
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((args.bind, args.port))
    s.listen(16)
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve, args=(conn, args), daemon=True).start()


if __name__ == "__main__":
    main()
