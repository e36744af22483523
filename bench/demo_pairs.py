#!/usr/bin/env python3
# The demo run (scripts/demo.sh's task and cassette, replayed) under
# variants, each once per round, interleaved so that a change of load hits
# them alike, after one unmeasured round; a private XDG_STATE_HOME each.
# Prints the median (min-max) wall time of each.
#
#   python3 bench/demo_pairs.py N LABEL=BUILD[:OPTIONS] ...
#   python3 bench/demo_pairs.py 41 tmpfs=build "disk=build:--disk-max 0"
import os, shutil, statistics, subprocess, sys, tempfile, time

TASK = ("Explain how this project is structured and list the TODO and "
        "FIXME notes left in its code.")
WS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                  "examples", "demo")

def once(build, opts, state):
    shutil.rmtree(state, ignore_errors=True)
    env = dict(os.environ, XDG_STATE_HOME=state,
               XDG_CONFIG_HOME=os.path.join(state, "config"),
               WARREN_WORKER_BIN=os.path.join(build, "worker",
                                              "warren-worker"))
    argv = [os.path.join(build, "cli", "warren"), "run", "--workspace", WS,
            "--replay", os.path.join(WS, "session.cassette")] + opts + [TASK]
    t0 = time.monotonic()
    rc = subprocess.call(argv, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    dt = (time.monotonic() - t0) * 1000
    if rc != 0:
        sys.exit("demo_pairs: %s exited %d" % (" ".join(argv), rc))
    return dt

def main():
    n = int(sys.argv[1])
    variants = []
    for a in sys.argv[2:]:
        label, rest = a.split("=", 1)
        build, _, opts = rest.partition(":")
        variants.append((label, os.path.abspath(build), opts.split()))
    tmp = tempfile.mkdtemp(prefix="demo-pairs.")
    times = {v[0]: [] for v in variants}
    for r in range(n + 1):
        for label, build, opts in variants:
            dt = once(build, opts, os.path.join(tmp, label))
            if r > 0:
                times[label].append(dt)
    shutil.rmtree(tmp, ignore_errors=True)
    for label, _, _ in variants:
        t = times[label]
        print("%-16s median %.1f ms (%.1f-%.1f), n = %d" %
              (label, statistics.median(t), min(t), max(t), len(t)))

main()
