#!/usr/bin/env python3
"""Every function a production file exports is used by another production
file: one only its own file calls is static, one nobody calls (or only a
test calls) is removed.

    scripts/check-exports.py [SOURCE_DIR]

Production files are the .c files of the components in DIRS; tests/,
bench/ and generated files are not. Comments and string literals do not
count as a use; a macro a header defines does (its users are the
files that expand it).

A unit tests exercise directly, but production reaches only through
another function of its file (a parser the fuzzers feed, a test clock),
may stay exported when its prototype is in the component's
NAME_testapi.h: a header only tests include, besides the production
files that define what it declares (a production file that includes one
and defines none of it fails, as does a production header that includes
one or declares what one does). Prints each offender as FILE:LINE: NAME and exits 1 if
there is one that scripts/check-exports.allow does not name, or if that
list names a function that is no longer one (the list only shrinks).
Registered as the test check_exports (tests/tools/CMakeLists.txt).
"""
import os
import re
import sys

DIRS = ("agent", "cli", "common", "ipc", "llm", "queue", "sandbox", "spawnd",
        "store", "supervisor", "worker", "workspace")
STRIP = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'
                   r"'(?:\\.|[^'\\\n])*'", re.S)
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MACRO = re.compile(r"^[ \t]*#[ \t]*define\b(?:[^\n]*\\\n)*[^\n]*", re.M)
NAME_AT_0 = re.compile(r"^([a-z_][a-z0-9_]*)\(")
PROTO = re.compile(r"\b([a-z_][a-z0-9_]*)\(")
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
TESTAPI = "_testapi.h"


def strip(text):
    """Comments and literals out, newlines kept (line numbers stay)."""
    return STRIP.sub(lambda m: "\n" * m.group(0).count("\n") + " ", text)


def definitions(code):
    """(line, name) of each function defined at column 0 not static."""
    lines = code.split("\n")
    out = []
    for i, line in enumerate(lines):
        m = NAME_AT_0.match(line)
        if m is None or i == 0 or m.group(1) == "main":
            continue
        prev = lines[i - 1]
        if (not prev.strip() or prev.startswith("#") or
                re.search(r"(^|\s)(static|extern)\s", prev) or
                prev.rstrip().endswith((";", ",", ")", "{", "}"))):
            continue
        for nxt in lines[i:]:
            if nxt.startswith("{"):
                out.append((i + 1, m.group(1)))
                break
            if nxt.rstrip().endswith(";"):
                break
    return out


def testapi_includes(files, headers, code, testapi):
    """1 if production includes a *_testapi.h it need not: a header, or
    a .c file that defines nothing the header declares."""
    bad = 0
    for f in files + headers:
        with open(f, encoding="utf-8", errors="replace") as fh:
            incs = INCLUDE.findall(fh.read())
        for inc in incs:
            if not inc.endswith(TESTAPI):
                continue
            mine = {n for _, n in definitions(code.get(f, ""))}
            if any(testapi.get(n, "").endswith(os.path.basename(inc))
                   for n in mine):
                continue
            print(f"{f}: includes {inc}, which only tests and the files "
                  "defining what it declares include")
            bad = 1
    return bad


def testapi_twice(headers, testapi):
    """1 if a *_testapi.h declares what another production header does:
    production could then call it without the test header."""
    bad = 0
    for h in headers:
        if h.endswith(TESTAPI):
            continue
        with open(h, encoding="utf-8", errors="replace") as fh:
            names = set(PROTO.findall(strip(fh.read())))
        for name in sorted(names & set(testapi)):
            print(f"{h}: declares {name}, which {testapi[name]} declares "
                  "for tests: keep one prototype, in the test header")
            bad = 1
    return bad


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..")
    os.chdir(src)
    files = sorted(os.path.join(root, f)
                   for d in DIRS if os.path.isdir(d)
                   for root, _, names in os.walk(d)
                   for f in names if f.endswith(".c"))
    headers = sorted(os.path.join(root, f)
                     for d in DIRS if os.path.isdir(d)
                     for root, _, names in os.walk(d)
                     for f in names if f.endswith(".h"))
    if not files:
        print(f"check-exports: no sources under {src}", file=sys.stderr)
        return 2
    code, users = {}, {}
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            code[f] = strip(fh.read())
        for ident in set(IDENT.findall(code[f])):
            users.setdefault(ident, set()).add(f)
    for h in headers:
        with open(h, encoding="utf-8", errors="replace") as fh:
            for macro in MACRO.findall(strip(fh.read())):
                for ident in set(IDENT.findall(macro)):
                    users.setdefault(ident, set()).add(h)
    testapi, bad = {}, 0
    for h in headers:
        if h.endswith(TESTAPI):
            with open(h, encoding="utf-8", errors="replace") as fh:
                for name in PROTO.findall(strip(fh.read())):
                    testapi[name] = h
    bad |= testapi_includes(files, headers, code, testapi)
    bad |= testapi_twice(headers, testapi)
    allow = {}
    with open("scripts/check-exports.allow", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.split("#", 1)[0].strip()
            if line:
                allow[line.split()[0]] = n
    seen = set()
    for f in files:
        for line, name in definitions(code[f]):
            if users.get(name, set()) - {f}:
                continue
            if name in testapi:
                continue
            seen.add(name)
            if name in allow:
                continue
            print(f"{f}:{line}: {name}: exported, but no other production "
                  "file uses it (make it static, or remove it)")
            bad = 1
    for name, n in sorted(allow.items(), key=lambda x: x[1]):
        if name not in seen:
            print(f"scripts/check-exports.allow:{n}: {name} is no longer an "
                  "unused export: take it off the list")
            bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
