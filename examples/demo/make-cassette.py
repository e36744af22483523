#!/usr/bin/env python3
"""Write session.cassette: the scripted model of the offline demo.

No model is reachable when the demo runs offline, so the model's side of
the conversation is written here by hand, one cassette line per LLM turn,
keyed by agent path and step (docs/cassette.md). Everything else is real at
replay time: the supervisor forks sandboxed workers, the workers run glob,
grep and read on these files, and the orchestrator gets their results.

    python3 examples/demo/make-cassette.py > examples/demo/session.cassette
"""
import json
import sys

def call(i, name, **args):
    return {"id": "call_%s" % i, "name": name, "arguments": json.dumps(args)}

def turn(agent, step, calls, text=None, stop="tool_calls", tin=900, tout=80):
    reply = {"stop": stop, "usage": {"input": tin, "output": tout},
             "calls": calls}
    if text is not None:
        reply["text"] = text
    return {"agent": agent, "step": step, "purpose": "turn", "reply": reply}

lines = [{"warren_cassette": 1}]

# The orchestrator plans: three explore agents in parallel.
lines.append(turn("0", 1, [
    call("o1", "delegate", profile="explore",
         task="List every file of the project and explain how it is built "
              "(read the Makefile)."),
    call("o2", "delegate", profile="explore",
         task="Find every TODO and FIXME note in the sources and quote each "
              "with its file and line."),
    call("o3", "delegate", profile="explore",
         task="Read src/main.c and src/wordfreq.h and explain what the "
              "program does and its data structure."),
], text="Three independent questions: I will explore them in parallel."))

# 0.1: the layout and the build.
lines.append(turn("0.1", 1, [
    call("a1", "glob", pattern="**/*"),
    call("a2", "read", path="Makefile"),
]))
lines.append(turn("0.1", 2, [
    call("a3", "complete", result=
         "Files: Makefile, README.md, src/main.c, src/wordfreq.c, "
         "src/wordfreq.h, tests/run.sh. The Makefile builds `wordfreq` from "
         "src/main.o and src/wordfreq.o with $(CC) $(CFLAGS); `make test` "
         "runs tests/run.sh; `make clean` removes the binary and objects."),
]))

# 0.2: the notes left in the code.
lines.append(turn("0.2", 1, [
    call("b1", "grep", pattern="TODO|FIXME", path="src"),
]))
lines.append(turn("0.2", 2, [
    call("b2", "complete", result=
         "Two notes: src/wordfreq.c has a TODO asking for a hash table "
         "(table_add searches linearly, O(n^2) on large inputs); "
         "src/main.c has a FIXME: words longer than WORD_MAX (64) are "
         "silently cut."),
]))

# 0.3: what the program does.
lines.append(turn("0.3", 1, [
    call("c1", "read", path="src/main.c"),
    call("c2", "read", path="src/wordfreq.h"),
]))
lines.append(turn("0.3", 2, [
    call("c3", "complete", result=
         "main() reads stdin a character at a time, lowercases runs of "
         "letters into words, counts them in a `struct table` (a growable "
         "array of {text, count}), sorts by count then alphabetically, and "
         "prints `count word` lines."),
]))

# The orchestrator's synthesis.
lines.append(turn("0", 2, [
    call("o4", "complete", result=
         "wordfreq is a small C program that prints the words of its input "
         "with their counts, most frequent first.\n"
         "- Layout: src/main.c (reading and printing), src/wordfreq.c and "
         "src/wordfreq.h (the word table), tests/run.sh, a Makefile "
         "(`make`, `make test`, `make clean`).\n"
         "- Design: a growable array searched linearly, sorted with qsort.\n"
         "- Open notes: a TODO to replace the linear search with a hash "
         "table (O(n^2) today), and a FIXME: words over 64 letters are "
         "cut without warning."),
], tin=2400, tout=160))

for l in lines:
    sys.stdout.write(json.dumps(l, sort_keys=True) + "\n")
