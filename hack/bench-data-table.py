#!/usr/bin/env python3
"""Prints hack/bench-data.sh's results as a Markdown table: each row's value per target and its
ratio to the pool's own filesystem (the first target), with issue 11's target and whether every
volume met it. Usage: bench-data-table.py RESULTS_DIR RAW TARGET..."""
import json
import sys

results, raw, volumes = sys.argv[1], sys.argv[2], sys.argv[3:]
targets = [raw] + volumes


def fio(job, target):
    with open(f"{results}/{job}-{target}.json") as f:
        return json.load(f)["jobs"][0]


def kib(name, target):
    with open(f"{results}/{name}-{target}.kib") as f:
        return int(f.read())


def sync_pct(pct):
    return lambda t: fio("fdatasync", t)["sync"]["lat_ns"]["percentile"][pct] / 1000


# (label, value of a target, target as (kind, bound)). "min": ratio >= bound; "max": ratio <=
# bound; "abs": the value itself <= bound; "raw+": the value <= the raw pool's value + bound.
rows = [
    ("randread 4k QD1 (IOPS)", lambda t: fio("randread-qd1", t)["read"]["iops"], ("min", 0.9)),
    ("randread 4k QD32 (IOPS)", lambda t: fio("randread-qd32", t)["read"]["iops"], ("min", 0.9)),
    ("randwrite 4k QD1 (IOPS)", lambda t: fio("randwrite-qd1", t)["write"]["iops"], ("min", 0.9)),
    ("randwrite 4k QD32 (IOPS)", lambda t: fio("randwrite-qd32", t)["write"]["iops"], ("min", 0.9)),
    ("seq read 1M QD8 (MB/s)", lambda t: fio("seqread", t)["read"]["bw_bytes"] / 1e6, ("min", 0.9)),
    ("seq write 1M QD8 (MB/s)", lambda t: fio("seqwrite", t)["write"]["bw_bytes"] / 1e6, ("min", 0.9)),
    ("4k write+fdatasync (IOPS)", lambda t: fio("fdatasync", t)["write"]["iops"], None),
    ("fdatasync p50 (us)", sync_pct("50.000000"), ("max", 1.2)),
    ("fdatasync p99 (us)", sync_pct("99.000000"), ("max", 1.5)),
    # Growth of Cached per byte read: 1.0 is one copy, about 2 is the volume's and the image's.
    (
        "page cache growth / data read",
        lambda t: kib("cached", t) * 1024 / fio("pagecache", t)["read"]["io_bytes"],
        ("abs", 1.1),
    ),
    # Growth of Dirty right after 4k O_DIRECT random writes at QD32. Other writers on the host add
    # to it alike for every target, so "none" is: within 8 MiB of the raw pool's in the same run.
    ("dirty after O_DIRECT writes (MiB)", lambda t: max(0, kib("dirty", t)) / 1024, ("raw+", 8)),
]


def show(v):
    return f"{v:.2f}" if v < 10 else f"{v:.0f}"


head = ["row"] + targets + [f"{v}/{raw}" for v in volumes] + ["target", "met"]
print("| " + " | ".join(head) + " |")
print("|---|" + "---:|" * (len(targets) + len(volumes)) + "---|---|")
for label, value, target in rows:
    values = {t: value(t) for t in targets}
    ratios = {v: values[v] / values[raw] if values[raw] else float("inf") for v in volumes}
    shown = {v: "-" if ratios[v] == float("inf") else f"{ratios[v]:.2f}" for v in volumes}
    cells = [show(values[t]) for t in targets] + [shown[v] for v in volumes]
    if target is None:
        goal, met = "", ""
    else:
        kind, bound = target
        if kind == "min":
            goal, ok = f">= {bound}x", [ratios[v] >= bound for v in volumes]
        elif kind == "max":
            goal, ok = f"<= {bound}x", [ratios[v] <= bound for v in volumes]
        elif kind == "raw+":
            goal, ok = f"<= raw + {bound}", [values[v] <= values[raw] + bound for v in volumes]
        else:
            goal, ok = f"<= {bound}", [values[v] <= bound for v in volumes]
        met = "yes" if all(ok) else "NO (" + ", ".join(v for v, k in zip(volumes, ok) if not k) + ")"
    print(f"| {label} | " + " | ".join(cells) + f" | {goal} | {met} |")
