#!/usr/bin/env python3
"""scripts/check-exports.py on small trees it is shown (the test
check_exports_self): an export only a test calls passes when its
prototype is in the component's *_testapi.h and fails otherwise; a
production file that includes a *_testapi.h and defines nothing it
declares fails, as does a production header that includes one or
declares what one does.

    tests/tools/check_exports_self.py SOURCE_DIR
"""
import os
import subprocess
import sys
import tempfile

DEF = "int\nfoo_{0}(void)\n{{\n\treturn 0;\n}}\n"


def tree(files):
    d = tempfile.mkdtemp(prefix="check-exports-")
    files = dict(files)
    files.setdefault("scripts/check-exports.allow", "")
    for path, text in files.items():
        os.makedirs(os.path.join(d, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(d, path), "w", encoding="utf-8") as fh:
            fh.write(text)
    return d


def run(check, files):
    d = tree(files)
    p = subprocess.run([sys.executable, check, d], capture_output=True,
                       text=True, check=False)
    return p.returncode, p.stdout + p.stderr


def expect(check, name, files, rc, needle):
    got, out = run(check, files)
    if got != rc or needle not in out:
        print(f"{name}: exit {got} (want {rc}), output lacks "
              f"{needle!r}:\n{out}")
        return 1
    return 0


def main():
    check = os.path.join(sys.argv[1], "scripts", "check-exports.py")
    base = {"common/foo.c": '#include "common/foo.h"\n' + DEF.format("a"),
            "common/foo.h": "int foo_a(void);\n"}
    api = {"common/foo.c": '#include "common/foo_testapi.h"\n' +
           DEF.format("a"),
           "common/foo_testapi.h": "int foo_a(void);\n"}
    bad = 0
    bad |= expect(check, "unused export", base, 1,
                  "common/foo.c:3: foo_a: exported")
    bad |= expect(check, "in its testapi header", api, 0, "")
    bad |= expect(check, "testapi included by a file defining none of it",
                  dict(api, **{"common/bar.c": '#include '
                               '"common/foo_testapi.h"\n' +
                               DEF.format("b") + "int\nbar(void)\n{\n"
                               "\treturn foo_b();\n}\n"}), 1,
                  "common/bar.c: includes common/foo_testapi.h")
    bad |= expect(check, "testapi included by a production header",
                  dict(api, **{"common/baz.h":
                               '#include "common/foo_testapi.h"\n'}), 1,
                  "common/baz.h: includes common/foo_testapi.h")
    bad |= expect(check, "declared in a production header too",
                  dict(api, **{"common/foo.h": "int foo_a(void);\n"}), 1,
                  "common/foo.h: declares foo_a")
    return bad


if __name__ == "__main__":
    sys.exit(main())
