#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Drive a page in a headless Chromium through the DevTools protocol, with
nothing but the standard library (a minimal WebSocket client): wait until a
JavaScript condition holds on the page, in real time, then write its DOM
and a screenshot. The tests' browser: the page's own clock runs as a user's
would (--virtual-time-budget would run its timers faster than the data
path's counters move).

  cdp-page.py PORT URL CONDITION DOM_OUT PNG_OUT [TIMEOUT_S]

PORT: a Chromium started with --remote-debugging-port=PORT (on loopback).
Exits 0 when the condition held, 1 when it did not within TIMEOUT_S (the
DOM and the screenshot are written either way), 2 when Chromium could not
be reached.
"""
import base64
import json
import os
import socket
import struct
import sys
import time
import urllib.request


class WebSocket:
    def __init__(self, url):
        assert url.startswith("ws://")
        hostport, path = url[5:].split("/", 1)
        host, port = hostport.rsplit(":", 1)
        self.s = socket.create_connection((host, int(port)), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall((f"GET /{path} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\n"
                        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                        "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.s.recv(1)
            if not chunk:
                raise OSError("handshake: connection closed")
            head += chunk
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise OSError("handshake refused: " + head.split(b"\r\n", 1)[0].decode())

    def send(self, text):
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        hdr = bytes([0x81])
        if n < 126:
            hdr += bytes([0x80 | n])
        elif n < 65536:
            hdr += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            hdr += bytes([0x80 | 127]) + struct.pack(">Q", n)
        self.s.sendall(hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.s.recv(n - len(buf))
            if not chunk:
                raise OSError("connection closed")
            buf += chunk
        return buf

    def recv(self):
        msg = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            payload = self._exact(n)
            if b0 & 0x0F == 8:
                raise OSError("closed by the browser")
            if b0 & 0x0F in (0, 1, 2):
                msg += payload
                if b0 & 0x80:
                    return msg.decode()


class Page:
    def __init__(self, ws):
        self.ws, self.id = ws, 0

    def call(self, method, **params):
        self.id += 1
        self.ws.send(json.dumps({"id": self.id, "method": method, "params": params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == self.id:
                if "error" in m:
                    raise OSError(f"{method}: {m['error']}")
                return m["result"]

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True)
        return r.get("result", {}).get("value")


def main():
    port, url, cond, dom_out, png_out = sys.argv[1:6]
    timeout = float(sys.argv[6]) if len(sys.argv) > 6 else 30
    deadline = time.monotonic() + timeout
    targets = None
    while time.monotonic() < deadline and targets is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=2) as r:
                targets = [t for t in json.load(r) if t.get("type") == "page"]
        except OSError:
            time.sleep(0.2)
    if not targets:
        print("cdp-page: no page target", file=sys.stderr)
        return 2
    page = Page(WebSocket(targets[0]["webSocketDebuggerUrl"]))
    page.call("Page.enable")
    # the screenshot's size, whatever the window's decorations take
    page.call("Emulation.setDeviceMetricsOverride", width=1280, height=900,
              deviceScaleFactor=1, mobile=False)
    page.call("Page.navigate", url=url)
    ok = False
    while time.monotonic() < deadline:
        if page.eval(f"!!({cond})"):
            ok = True
            break
        time.sleep(0.25)
    with open(dom_out, "w") as f:
        f.write(page.eval("document.documentElement.outerHTML") or "")
    shot = page.call("Page.captureScreenshot", format="png")
    with open(png_out, "wb") as f:
        f.write(base64.b64decode(shot["data"]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
