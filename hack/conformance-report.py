#!/usr/bin/env python3
"""Counts one pass of Kubernetes' storage suite from ginkgo's JSON report.

  conformance-report.py LABEL REPORT.json   prints `conformance [LABEL]: N passed, N failed, N skipped`,
                                            then each failed spec, and why specs skipped themselves
  conformance-report.py --metrics REPORT   prints the metrics the provisioning gate measured
  conformance-report.py --check REPORT...   exits 1 if a spec failed, a pass ran no spec, or none passed

Specs the pass's focus and skip rules filtered out are not counted: they never ran. "skipped" counts
the specs that started and skipped themselves (a capability the driver definition lacks, one node).
A failed suite-level node (BeforeSuite, AfterSuite) counts as a failure.
"""
import collections
import json
import re
import sys

FAILED = {"failed", "panicked", "interrupted", "aborted", "timedout"}


def specs(path):
    with open(path) as f:
        for suite in json.load(f):
            yield from suite.get("SpecReports") or []


def name(spec):
    return " ".join((spec.get("ContainerHierarchyTexts") or []) + [spec.get("LeafNodeText", "")]).strip()


def tally(path):
    passed, failed, skipped, reasons = 0, [], 0, collections.Counter()
    for spec in specs(path):
        state = spec.get("State")
        message = (spec.get("Failure") or {}).get("Message", "")
        if state in FAILED:
            failed.append(f"{name(spec)} [{spec.get('LeafNodeType')}]: {message.splitlines()[0] if message else state}")
        elif spec.get("LeafNodeType") != "It":
            continue
        elif state == "passed":
            passed += 1
        elif state == "skipped" and message:
            skipped += 1
            # The reason without the parts that name a test's own objects.
            reasons[re.sub(r'"[^"]*"|\S*-\d+\S*', "…", message.splitlines()[0])[:160]] += 1
    if passed + len(failed) + skipped == 0:
        # A pass is chosen to run specs: none means its focus matched nothing or the suite refused
        # its flags (e.g. a driver definition it cannot read) before it started.
        failed.append("no spec ran: the focus matched none, or the suite did not start (see ginkgo.log)")
    return passed, failed, skipped, reasons


def metrics(path):
    """The gate's measured figures, which the suite logs only to the spec's captured output."""
    for spec in specs(path):
        out = spec.get("CapturedGinkgoWriterOutput") or ""
        latency = re.search(r"AvgLatency: \(time.Duration\) (\d+)", out)
        throughput = re.search(r"Throughput: \(float64\) ([\d.]+)", out)
        if latency and throughput:
            yield int(latency.group(1)) / 1e9, float(throughput.group(1))


def main(argv):
    if argv[:1] == ["--metrics"]:
        for latency, throughput in metrics(argv[1]):
            print(f"  measured: average PVC -> Bound latency {latency:.1f} s, throughput {throughput:.2f} PVC/s")
        return 0
    if argv[:1] == ["--check"]:
        total, bad = 0, 0
        for path in argv[1:]:
            try:
                passed, failed, _, _ = tally(path)
            except (OSError, ValueError) as e:
                passed, failed = 0, [str(e)]
            total += passed
            if failed:
                print(f"conformance: {path}: {len(failed)} failed", file=sys.stderr)
                bad += 1
        if total == 0:
            print("conformance: no spec passed", file=sys.stderr)
        return 1 if bad or total == 0 else 0
    label, path = argv
    try:
        passed, failed, skipped, reasons = tally(path)
    except (OSError, ValueError) as e:
        # A pass that wrote no report (the suite did not start) has failed.
        print(f"conformance [{label}]: 0 passed, 1 failed, 0 skipped")
        print(f"  no report: {e}")
        return 0
    print(f"conformance [{label}]: {passed} passed, {len(failed)} failed, {skipped} skipped")
    for line in failed:
        print(f"  FAILED {line}")
    for reason, count in reasons.most_common():
        print(f"  skipped {count}x: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
