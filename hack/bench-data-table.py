#!/usr/bin/env python3
"""Prints hack/bench-data.sh's results as a Markdown table: each row's value per target and its
ratios, with the data-path target and whether every ratio met it (the ones that did not are named).

Usage: bench-data-table.py RESULTS_DIR RAW TARGET...   each TARGET against RAW, the first one;
       bench-data-table.py RESULTS_DIR TARGET... A/B...  the TARGETs' values, then the ratios A/B
                                                         (a volume and the filesystem it is judged
                                                         against), for several limits in one table."""
import json
import sys

results, args = sys.argv[1], sys.argv[2:]
targets = [a for a in args if "/" not in a]
pairs = [tuple(a.split("/")) for a in args if "/" in a]
# A verdict names what failed: the volume when all share one raw side, else the ratio.
failure = "/".join
if not pairs:
    pairs, failure = [(t, targets[0]) for t in targets[1:]], lambda pair: pair[0]
for pair in pairs:
    if len(pair) != 2 or not set(pair) <= set(targets):
        sys.exit(f"ratio {'/'.join(pair)}: both sides must be among the targets {targets}")


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


head = ["row"] + targets + ["/".join(p) for p in pairs] + ["target", "met"]
print("| " + " | ".join(head) + " |")
print("|---|" + "---:|" * (len(targets) + len(pairs)) + "---|---|")
for label, value, target in rows:
    values = {t: value(t) for t in targets}
    ratios = {p: values[p[0]] / values[p[1]] if values[p[1]] else float("inf") for p in pairs}
    shown = {p: "-" if ratios[p] == float("inf") else f"{ratios[p]:.2f}" for p in pairs}
    cells = [show(values[t]) for t in targets] + [shown[p] for p in pairs]
    if target is None:
        goal, met = "", ""
    else:
        kind, bound = target
        if kind == "min":
            goal, ok = f">= {bound}x", {p: ratios[p] >= bound for p in pairs}
        elif kind == "max":
            goal, ok = f"<= {bound}x", {p: ratios[p] <= bound for p in pairs}
        elif kind == "raw+":
            goal, ok = f"<= raw + {bound}", {p: values[p[0]] <= values[p[1]] + bound for p in pairs}
        else:
            goal, ok = f"<= {bound}", {p: values[p[0]] <= bound for p in pairs}
        # A bound on a volume's own value fails the volume, once, not each ratio it appears in.
        who = (lambda p: p[0]) if kind == "abs" else failure
        failed = dict.fromkeys(who(p) for p in pairs if not ok[p])
        met = "NO (" + ", ".join(failed) + ")" if failed else "yes"
    print(f"| {label} | " + " | ".join(cells) + f" | {goal} | {met} |")
