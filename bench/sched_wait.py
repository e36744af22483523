#!/usr/bin/env python3
"""For each kind of task in a whole run, how long it ran, how long it
waited runnable, and how much of that wait the other CPU sat idle
(docs/benchmarks.md, "Profiles of a whole run"). Two CPUs.

    perf sched record -o sched.data -- warren run ...
    perf sched timehist -i sched.data --state > timehist.txt
    bench/sched_wait.py timehist.txt SUPERVISOR_PID SPAWND_PID

The supervisor is the `warren` with the most switches in timehist.txt,
the spawn server the next.
"""
import bisect
import collections
import sys


def rows(path):
    """(start, end, cpu, task, sched delay, state) per switch-out."""
    out = []
    with open(path) as fp:
        for line in fp.read().splitlines()[3:]:
            col = line.split()
            if len(col) < 7:
                continue
            end = float(col[0])
            run, delay = float(col[-2]) / 1e3, float(col[-3]) / 1e3
            out.append((end - run, end, col[1], col[2], delay, col[-1]))
    return out


def overlap(spans, lo, hi):
    starts = [s for s, _ in spans]
    i, total = max(0, bisect.bisect_left(starts, lo) - 1), 0.0
    while i < len(spans) and spans[i][0] < hi:
        total += max(0.0, min(hi, spans[i][1]) - max(lo, spans[i][0]))
        i += 1
    return total


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    path, sup, spd = sys.argv[1:]

    def kind(task):
        if task.startswith("warren[%s]" % sup):
            return "supervisor"
        if task.startswith("warren[%s]" % spd):
            return "spawn server"
        if task.startswith("warren["):
            return "child before exec"
        if task.startswith("warren-worker"):
            return "worker"
        return "other"

    rs = rows(path)
    idle = collections.defaultdict(list)
    for s, e, cpu, task, _, _ in rs:
        if task.startswith("<idle>"):
            idle[cpu].append((s, e))
    for spans in idle.values():
        spans.sort()
    cpus = sorted({r[2] for r in rs})
    ran, waited, idle_meanwhile = (collections.Counter() for _ in range(3))
    for s, e, cpu, task, delay, _ in rs:
        if task.startswith("<idle>"):
            continue
        k = kind(task)
        ran[k] += e - s
        if delay > 0:
            waited[k] += delay
            for other in cpus:
                if other != cpu:
                    idle_meanwhile[k] += overlap(idle[other], s - delay, s)
    print("idle per CPU (ms):", {c: round(sum(e - s for s, e in idle[c]) * 1e3)
                                 for c in cpus})
    for k in sorted(ran):
        print("%-18s ran %7.1f ms  waited runnable %7.1f ms  "
              "other CPU idle meanwhile %6.1f ms"
              % (k, ran[k] * 1e3, waited[k] * 1e3, idle_meanwhile[k] * 1e3))


if __name__ == "__main__":
    main()
