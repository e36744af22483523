#!/usr/bin/env python3
"""Commands run once each, side by side, with a pause before every run.

    scripts/bench-oneshot.py ROUNDS PAUSE_S NAME=COMMAND ...

Each round runs every command once, in turn, each after PAUSE_S seconds
of sleep, so that no run finds the kernel warm from the one before it (a
cgroup join's RCU grace period, docs/benchmarks.md "cgroup join", is paid
only by the first join after a quiet spell: a loop of runs back to back
hides it). Prints each command's median wall and CPU time (user + system
of the command and its children, from getrusage) and its ratio to the
last command's median wall.
"""
import resource
import shlex
import statistics
import subprocess
import sys
import time


def run_once(argv):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter_ns()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    wall = (time.perf_counter_ns() - t0) / 1e6
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ((after.ru_utime - before.ru_utime) +
           (after.ru_stime - before.ru_stime)) * 1e3
    return wall, cpu


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: bench-oneshot.py ROUNDS PAUSE_S NAME=COMMAND ...")
    rounds, pause = int(sys.argv[1]), float(sys.argv[2])
    cmds = []
    for spec in sys.argv[3:]:
        name, _, cmd = spec.partition("=")
        if not cmd:
            sys.exit("bench-oneshot: %r is not NAME=COMMAND" % spec)
        cmds.append((name, shlex.split(cmd)))
    walls = {n: [] for n, _ in cmds}
    cpus = {n: [] for n, _ in cmds}
    for _ in range(rounds):
        for name, argv in cmds:
            time.sleep(pause)
            w, c = run_once(argv)
            walls[name].append(w)
            cpus[name].append(c)
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print("%d rounds, %.1f s pause, load %s" % (rounds, pause, load))
    ref = statistics.median(walls[cmds[-1][0]])
    print("%-12s %10s %10s %8s" % ("command", "wall ms", "cpu ms",
                                   "x " + cmds[-1][0]))
    for name, _ in cmds:
        w = statistics.median(walls[name])
        print("%-12s %10.2f %10.2f %8.2f" % (name, w,
                                             statistics.median(cpus[name]),
                                             w / ref))


if __name__ == "__main__":
    main()
