#!/usr/bin/env python3
"""Paper estimate: how the closed form's statistics all-reduce scales to 64 ranks, against
gathering the features instead (docs/benchmarks.md "Beyond one machine").

Per step, a ring all-reduce of S bytes sends 2 (N-1)/N * S bytes per rank in 2 (N-1) messages;
Gloo's halving-doubling needs 2 log2 N messages for the same bytes. An all-gather of every rank's
B/N feature rows (d+1 features + k targets, float64) sends (N-1)/N * B (d+1+k) * 8 bytes per rank.
Time = bytes / bandwidth + messages * latency. Assumed network: 10 Gb/s Ethernet (1.25 GB/s),
30 us per message (TCP); a 100 Gb/s fabric divides the bandwidth term by 10."""
import math

BW = 1.25e9       # bytes/s, 10 Gb/s
LAT = 30e-6       # s per message
F64 = 8


def stats_bytes(d, k):
    p = d + 1
    return (p * p + p * k + 1) * F64


def allreduce_time(S, N):
    if N == 1:
        return 0.0
    return 2 * (N - 1) / N * S / BW + 2 * math.log2(N) * LAT


def gather_bytes(B, d, k, N):
    return (N - 1) / N * B * (d + 1 + k) * F64


cases = [
    ("cf-regression, d=64, k=4, batch 1024", 64, 4, 1024),
    ("cf-full over 1M samples, d=64, k=4", 64, 4, 1_000_000),
    ("wide head, d=1024, k=10, batch 256", 1024, 10, 256),
    ("FNO grid rows, d=128, k=1, 20x1024 rows", 128, 1, 20 * 1024),
]
print(f"{'case':<42} {'N':>3} {'stats/rank':>11} {'t_stats':>9} {'gather/rank':>12} {'t_gather':>9}")
for name, d, k, B in cases:
    S = stats_bytes(d, k)
    for N in (2, 8, 64):
        g = gather_bytes(B, d, k, N)
        ts = allreduce_time(S, N)
        tg = g / BW + (N - 1) * LAT
        sent = 2 * (N - 1) / N * S
        print(f"{name:<42} {N:>3} {sent / 1e3:>9.1f}kB {ts * 1e3:>7.2f}ms {g / 1e6:>10.2f}MB {tg * 1e3:>7.2f}ms")
