#!/usr/bin/env python3
"""The ideal of one algorithm for a paced flood: how many of N packets sent
at START_NS + i / PPS (CLOCK_MONOTONIC, the data path's clock) the algorithm
admits when run sequentially on exact times, with the maths of
include/xrl_meter.h (integers; sliding-window weight in microseconds).

  algo_ideal.py ALGO START_NS PPS N LIMIT WINDOW_S [BURST]
"""
import sys

algo, start, pps, n, limit, window = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
burst = int(sys.argv[7]) if len(sys.argv) > 7 else limit
W = window * 10**9
ok = 0
if algo == "token-bucket":		# GCRA: rate limit/window, burst
    T = W // limit
    tat = 0
    for i in range(n):
        t = start + i * 10**9 // pps
        base = max(tat, t)
        if base + T - t <= burst * T:
            tat = base + T
            ok += 1
else:
    counts = {}
    for i in range(n):
        t = start + i * 10**9 // pps
        w, e = divmod(t, W)
        cur = counts.get(w, 0)
        est = cur
        if algo == "sliding-window":
            wus, eus = W // 1000, e // 1000
            est += counts.get(w - 1, 0) * (wus - eus) // wus
        if est + 1 <= limit:
            counts[w] = cur + 1
            ok += 1
print(ok)
