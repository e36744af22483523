#!/usr/bin/env python3
"""Every function a production file exports is used by another production
file: one only its own file calls is static, one nobody calls (or only a
test calls) is removed.

    scripts/check-exports.py [SOURCE_DIR]

Production files are the .c files of the components in DIRS; tests/,
bench/ and generated files are not. Comments and string literals do not
count as a use; a macro a header defines does (its users are the
files that expand it). Prints each offender as FILE:LINE: NAME and exits 1 if
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
    allow = {}
    with open("scripts/check-exports.allow", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.split("#", 1)[0].strip()
            if line:
                allow[line.split()[0]] = n
    bad, seen = 0, set()
    for f in files:
        for line, name in definitions(code[f]):
            if users.get(name, set()) - {f}:
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
