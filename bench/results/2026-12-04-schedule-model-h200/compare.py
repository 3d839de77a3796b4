#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The schedule model's predictions against the H200 measurements of 2026-12-04.

Reads ../2026-12-04-nvidia-h200/gpu.json (real_time of each benchmark) and the model outputs in this
folder (model-*.txt), and prints the table of README.md section 2 (measured time / measured read,
the model before and after the recalibration, their errors) and the numbers of section 4.

    python3 bench/results/2026-12-04-schedule-model-h200/compare.py > comparison.txt
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
GPU = json.load(open(os.path.join(HERE, "..", "2026-12-04-nvidia-h200", "gpu.json")))
T = {b["name"].replace("/manual_time", ""): b["real_time"] for b in GPU["benchmarks"]}  # us

N30 = 1 << 30
READ30 = T["gpu_read/float/n:1073741824"]
READ24 = T["gpu_read/float/n:16777216"]
SLOTS = 132 * 4 * 1.98e9  # schedulers x clock: instructions per second at e = 1
E_BEFORE = {"chacha20": 1.81 / 4, "philox": 2.49 / 4}  # the per-lane kernel's Executed Ipc Elapsed / 4 (H100)
E_AFTER = {"chacha20": 0.776, "philox": 0.625}         # fused_pass.hpp: k*ImplementedIssueRate
READ_H200_BEFORE, READ_H200_AFTER = 976.0, 956.0       # kReadH200Ms, us

MECH = {"exponential": "EM", "permute-and-flip": "PF", "laplace-noisy-max": "Laplace"}
SHAPES = [("bench", None, "uniform"), ("steep-i", "steep_ascending", "steep u = i"),
          ("linear-i/32", "linear_ascending", "linear u = i/32"), ("gentle-i/1024", "gentle_ascending", "gentle u = i/1024"),
          ("equal", "all_equal", "all equal")]


def rows_of(path, first):
    """The table rows of a model output whose first column is `first`, split."""
    out = []
    for line in open(os.path.join(HERE, path)):
        f = line.split()
        if f and f[0] == first:
            out.append(f)
    return out


def fused(path):
    # policy gen shape warps pass% races/t draws/t rtile% lanes_r lanes winst/t wi_race wi_draw issue_ms pass_ms x_read x_read1 x_h200
    return {(f[1], f[2]): {"winst": float(f[10]), "race": float(f[11]), "draw": float(f[12]), "x_h200": float(f[17])}
            for f in rows_of(path, "implemented")}


before = fused("model-fused-before.txt")
before24 = fused("model-fused-2e24-before.txt")
after = {m: fused(f"model-fused-{m}.txt") for m in MECH}
after24 = fused("model-fused-2e24.txt")


def err(model, measured):
    return f"{100 * (model / measured - 1):+.0f} %"


print("| configuration | measured | measured / read | model before | error | model after | error |")
print("|---|---:|---:|---:|---:|---:|---:|")
for shape, bench_shape, label in SHAPES:
    for gen in ("chacha20", "philox"):
        for mech, short in MECH.items():
            name = (f"gpu_select/float/{mech}/{gen}/n:{N30}" if bench_shape is None
                    else f"gpu_select_shape/float/{bench_shape}/{mech}/{gen}/n:{N30}")
            measured = T[name] / READ30
            b = before[(gen, shape)]["x_h200"]
            a = after[mech][(gen, shape)]["x_h200"]
            note = "" if mech == "exponential" else " (EM's)"
            print(f"| 2^30 {label}, {short}, {gen} | {T[name]:.0f} us | **{measured:.2f}** | {b:.2f}{note} | {err(b, measured)} "
                  f"| {a:.2f} | {err(a, measured)} |")
for gen in ("chacha20", "philox"):
    for mech, short in MECH.items():
        name = f"gpu_select/float/{mech}/{gen}/n:{1 << 24}"
        measured = T[name] / READ24
        tiles = (1 << 24) / 1024
        w_b, w_a = before24[(gen, "bench")]["winst"], after24[(gen, "bench")]["winst"]
        b = max(READ24, w_b * tiles / (SLOTS * E_BEFORE[gen]) * 1e6) / READ24
        a = max(READ24, w_a * tiles / (SLOTS * E_AFTER[gen]) * 1e6) / READ24
        print(f"| 2^24 uniform, {short}, {gen} | {T[name]:.1f} us | **{measured:.2f}** | {b:.2f} | {err(b, measured)} "
              f"| {a:.2f} | {err(a, measured)} |")

# rows: the layouts the library takes (warp per row for 4096 x 131072, 8 segments for 32 x 262144)
for rows, cols, layout in ((4096, 131072, "warp-per-row"), (32, 262144, "segmented")):
    read = READ30 * rows * cols / N30
    name = f"gpu_rows/float/rows:{rows}/cols:{cols}"
    measured = T[name] / read
    # what-if rows: ... time_ms read_ms x_read x_read1 x_occ x_time: time_ms is the 6th from the end
    tb = float(rows_of(f"model-rows-{rows}x{cols}-before.txt", layout)[0][-6]) * 1e3
    ta = float(rows_of(f"model-rows-{rows}x{cols}.txt", layout)[0][-6]) * 1e3
    b = max(1.0, tb / (READ_H200_BEFORE * rows * cols / N30))
    a = max(1.0, ta / (READ_H200_AFTER * rows * cols / N30))
    print(f"| rows {rows} x {cols} ({layout}), EM, chacha20 | {T[name]:.0f} us | **{measured:.2f}** | {b:.2f} "
          f"({tb:.0f} us, kernel) | {err(b, measured)} | {a:.2f} ({ta:.0f} us, kernel) | {err(a, measured)} |")

# top-k: before, the calibrated prediction ("cal"); after, the uncalibrated model (the H200 check)
for k in (16, 1024):
    name = f"gpu_top_k/float/k:{k}/n:{N30}"
    measured = T[name] / READ30
    fb = [f for f in rows_of("model-top-k-before.txt", "implemented") if f[3] == str(k)][0]
    fa = [f for f in rows_of("model-top-k.txt", "implemented") if f[3] == str(k)][0]
    cal_ms = float(fb[fb.index("cal") + 1])
    b = cal_ms * 1e3 / READ_H200_BEFORE
    a = float(fa[16]) * 1e3 / READ_H200_AFTER
    print(f"| top-k k = {k}, EM, chacha20 | {T[name]:.0f} us | **{measured:.2f}** | {b:.2f} (cal) | {err(b, measured)} "
          f"| {a:.2f} | {err(a, measured)} |")

print()
print("Issue rates implied by each issue-bound shape (EM, model instructions at the measured time):")
for gen in ("chacha20", "philox"):
    tot_i = tot_t = 0.0
    for shape, bench_shape, label in SHAPES[1:4]:
        w = after["exponential"][(gen, shape)]["winst"]
        t = T[f"gpu_select_shape/float/{bench_shape}/exponential/{gen}/n:{N30}"]
        tot_i += w
        tot_t += t
        print(f"  {gen} {shape}: {w:.0f} instructions per tile, {t:.0f} us: e = {w * 1024 * 1024 / (SLOTS * t * 1e-6):.3f}")
    print(f"  {gen}: the three together: e = {tot_i * 1024 * 1024 / (SLOTS * tot_t * 1e-6):.4f}")

print()
print("Two rates (analysis only): per-tile work at e_t, races and draws at e_r, fitted to uniform and steep (EM):")
for gen in ("chacha20", "philox"):
    def parts(shape):
        r = after["exponential"][(gen, shape)]
        return r["winst"] - r["race"] - r["draw"], r["race"] + r["draw"]
    # c = instructions / (SLOTS t) per tile: other / e_t + race / e_r = SLOTS t / 2^20
    def need(bench):
        return SLOTS * T[bench] * 1e-6 / (1024 * 1024)
    (o1, r1), (o2, r2) = parts("bench"), parts("steep-i")
    y1 = need(f"gpu_select/float/exponential/{gen}/n:{N30}")
    y2 = need(f"gpu_select_shape/float/steep_ascending/exponential/{gen}/n:{N30}")
    det = o1 * r2 - o2 * r1
    inv_t = (y1 * r2 - y2 * r1) / det
    inv_r = (o1 * y2 - o2 * y1) / det
    print(f"  {gen}: e_t = {1 / inv_t:.3f}, e_r = {1 / inv_r:.3f}")
    for shape, bench_shape, label in SHAPES:
        o, r = parts(shape)
        name = (f"gpu_select/float/exponential/{gen}/n:{N30}" if bench_shape is None
                else f"gpu_select_shape/float/{bench_shape}/exponential/{gen}/n:{N30}")
        model_us = (o * inv_t + r * inv_r) * 1024 * 1024 / SLOTS * 1e6
        print(f"    {shape}: {model_us:.0f} us against {T[name]:.0f} ({err(model_us, T[name])})")

print()
print("Permute-and-flip and Laplace against EM on the same shape (the replay's events are the same):")
for gen in ("chacha20", "philox"):
    for shape, bench_shape, label in SHAPES:
        em = (f"gpu_select/float/exponential/{gen}/n:{N30}" if bench_shape is None
              else f"gpu_select_shape/float/{bench_shape}/exponential/{gen}/n:{N30}")
        for mech in ("permute-and-flip", "laplace-noisy-max"):
            other = em.replace("exponential", mech)
            extra = (T[other] - T[em]) * 1e-6 * SLOTS * E_AFTER[gen] / (1024 * 1024)
            races = after[mech][(gen, shape)]
            print(f"  {gen} {shape} {MECH[mech]}: {T[other] - T[em]:+.0f} us ({100 * (T[other] / T[em] - 1):+.0f} %), "
                  f"{extra:+.0f} instructions per tile at e = {E_AFTER[gen]} (model: {races['winst']:.0f} against "
                  f"EM's {after['exponential'][(gen, shape)]['winst']:.0f})")
