#!/usr/bin/python3
# tests/layers/check.py [--graph|--folders] [--self-test] [SRCDIR]: heureka's
# layering check (docs/ARCHITECTURE.md), run by `make check`.
#
# Every source folder holds a `.may_include` file, in the spirit of Tor's:
# one rule per line, `#` starts a comment.
#   common/*.h            headers (paths from the top, globs allowed) that
#                         files of this folder may include with "..."
#   -common/tls.h         a project header they may not include, even if a
#                         glob above allows it
#   -<event2/*>           a system header (glob) they may not include
#   -call clock_now       a function they may not call (time is passed in)
#   json.c xml.c: RULE    the rule holds only for those files of the folder
#   private peers_int.h: replicate.c sync.c
#                         who besides its own module may include a private
#                         header of this folder
# One rule holds everywhere, without a line: only common/clock.c reads a
# clock (clock.h); a call of clock_gettime(), gettimeofday(), time(),
# clock() or timespec_get() in any other file fails.
# The check fails when a file includes a project header its folder does not
# list, includes a forbidden system header, calls a forbidden function, or
# when the modules form a ring: A uses B's header and B, through any path,
# uses A's. A module is x.h with x.c, and also x_int.h (its private
# header) and every x_*.c that has no header of its own (registry.c,
# registry_delta.c, ... behind registry_int.h are the module registry). A
# private header `x_int.h` may be included only by its module's files and
# by the files its folder names in a `private` line. A function an _int.h
# declares is attributed to the module of the .c that defines it, so a
# file that includes it and names that function uses the defining module
# (two modules calling each other through one _int.h are a ring, not two
# users of a header; the ring's report names the functions).
#
# Sizes, as Tor's practracker: no file of the source folders over
# MAX_FILE_LINES lines and no function over MAX_FUNC_LINES (from the line
# with its name to its closing brace), except those listed with a reason
# in tests/layers/lengths.allow. --graph prints the module graph instead
# (`module: the modules it uses`), --folders the same folded onto folders
# (`folder -> folder  edges`); --self-test
# builds small trees that must fail and one that must pass.
import fnmatch
import os
import re
import sys
import tempfile

FOLDERS = ["common", "server/core", "server/loop", "server/front", "server",
           "client"]
INC = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
CLOCK_OWNER = "common/clock.c"
CLOCK_READS = re.compile(
    r"\b(clock_gettime|gettimeofday|time|clock|timespec_get)\s*\(")
MAX_FILE_LINES = 1500
MAX_FUNC_LINES = 150
ALLOW = "tests/layers/lengths.allow"
# A definition in OpenBSD style: the name at column 0, "{" on a line of
# its own before any ";".
FUNC_DEF = re.compile(r"^\**([A-Za-z_]\w*)\([^;{]*\)\s*\n\{", re.M)


def strip_comments(text):
    """C source without comments and string literals (for call checks)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def strip_keep_lines(text):
    """strip_comments(), but every line stays where it was."""
    def blank(m):
        return " " + "\n" * m.group(0).count("\n")
    text = re.sub(r"/\*.*?\*/", blank, text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def functions(code):
    """(name, first line, lines) of each function defined in code (comments
    stripped, lines kept): from the line with the name to its closing
    brace at column 0."""
    out = []
    lines = code.split("\n")
    for m in FUNC_DEF.finditer(code):
        first = code.count("\n", 0, m.start())
        end = first
        while end < len(lines) and not lines[end].startswith("}"):
            end += 1
        out.append((m.group(1), first + 1, end - first + 1))
    return out


def load_allow(src):
    """tests/layers/lengths.allow: `path` or `path:function`, then why."""
    allow = {}
    path = os.path.join(src, ALLOW)
    if not os.path.exists(path):
        return allow
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 1)
            if len(parts) < 2:
                raise SystemExit(f"layers: {ALLOW}:{n}: no reason given")
            allow[parts[0]] = parts[1]
    return allow


def load_rules(path, privates=None):
    rules = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.match(r"^private\s+(\S+_int\.h)\s*:\s*(.*)$", line)
            if m:
                if privates is not None:
                    privates[m.group(1)] = m.group(2).split()
                continue
            files = None
            m = re.match(r"^([\w.*\[\]\s]+?)\s*:\s*(.*)$", line)
            if m and not line.startswith("-"):
                files, line = m.group(1).split(), m.group(2).strip()
            if not (line.startswith("-") or "/" in line):
                raise SystemExit(f"layers: {path}:{n}: not a rule: {line}")
            rules.append((files, line, f"{path}:{n}"))
    return rules


def applies(files, name):
    return files is None or any(fnmatch.fnmatch(name, g) for g in files)


def module_of(d, name, names):
    """The module a file belongs to: x_int.h and a header-less x_*.c
    belong to x when x.c or x.h is in the folder."""
    stem = name[:-2]
    if name.endswith(".h") and stem.endswith("_int"):
        return f"{d}/{stem[:-4]}"
    if name.endswith(".c") and f"{stem}.h" not in names:
        parts = stem.split("_")
        for k in range(len(parts) - 1, 0, -1):
            p = "_".join(parts[:k])
            if f"{p}.c" in names or f"{p}.h" in names:
                return f"{d}/{p}"
    return f"{d}/{stem}"


def scan(src):
    """Map each project header name to its path; list each folder's files."""
    headers, files = {}, {}
    for d in FOLDERS:
        full = os.path.join(src, d)
        if not os.path.isdir(full):
            continue
        names = sorted(n for n in os.listdir(full)
                       if n.endswith((".c", ".h")))
        if not names:
            continue
        files[d] = names
        for n in names:
            if n.endswith(".h"):
                if n in headers:
                    raise SystemExit(f"layers: {n} is in both "
                                     f"{headers[n]} and {d}")
                headers[n] = f"{d}/{n}"
    return headers, files


DECL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
DEFN = re.compile(r"^([A-Za-z_]\w*)\s*\(", re.M)
NOT_FUNC = {"if", "for", "while", "switch", "return", "sizeof", "defined",
            "__attribute__", "__typeof__"}


def int_owners(src, headers, files):
    """For each *_int.h: {function it declares: module whose .c defines
    it}. Definitions start a line (return type on the line above)."""
    owners = {}
    for name, path in headers.items():
        if not name.endswith("_int.h"):
            continue
        d = os.path.dirname(path)
        with open(os.path.join(src, path), errors="replace") as f:
            code = strip_comments(f.read())
        code = re.sub(r"^\s*#.*$", " ", code, flags=re.M)
        code = re.sub(r"\(\s*\*\s*\w+\s*\)", " ", code)  # (*fnptr)
        declared = set(DECL.findall(code)) - NOT_FUNC
        found = {}
        for c in files.get(d, []):
            if not c.endswith(".c"):
                continue
            with open(os.path.join(src, d, c), errors="replace") as f:
                text = strip_comments(f.read())
            for fn in DEFN.findall(text):
                if fn in declared:
                    found[fn] = module_of(d, c, files[d])
        owners[path] = found
    return owners


def check(src, quiet=False):
    headers, files = scan(src)
    errors = []
    edges = {}                      # module -> set of modules it uses
    why = {}                        # (module, module) -> what makes it
    rules_of, privates = {}, {}
    allow = load_allow(src)
    used_allow = set()
    texts = {}
    for d, names in files.items():
        for name in names:
            with open(os.path.join(src, d, name), errors="replace") as f:
                texts[(d, name)] = f.read()
    owners = int_owners(src, headers, files)
    for d in files:
        mi = os.path.join(src, d, ".may_include")
        privates[d] = {}
        rules_of[d] = []
        if os.path.exists(mi):
            rules_of[d] = load_rules(mi, privates[d])
        else:
            errors.append(f"{d}/: no .may_include")
    for d, names in files.items():
        rules = rules_of[d]
        for name in names:
            text = texts[(d, name)]
            mod = module_of(d, name, names)
            edges.setdefault(mod, set())
            code = strip_comments(text)
            rel = f"{d}/{name}"
            nlines = text.count("\n")
            if nlines > MAX_FILE_LINES:
                if rel in allow:
                    used_allow.add(rel)
                else:
                    errors.append(f"{rel}: {nlines} lines, over "
                                  f"{MAX_FILE_LINES} ({ALLOW})")
            for fn, at, n in (functions(strip_keep_lines(text))
                              if name.endswith(".c") else ()):
                if n > MAX_FUNC_LINES:
                    if f"{rel}:{fn}" in allow:
                        used_allow.add(f"{rel}:{fn}")
                    else:
                        errors.append(f"{rel}:{at}: {fn}() is {n} lines, "
                                      f"over {MAX_FUNC_LINES} ({ALLOW})")
            for kind, inc in INC.findall(text):
                if kind == '"':
                    target = headers.get(os.path.basename(inc))
                    if target is None:
                        continue        # generated (heureka-config.h...)
                    td, tname = os.path.split(target)
                    tmod = module_of(td, tname, files[td])
                    if tmod != mod:
                        edges[mod].add(tmod)
                    for fn, omod in owners.get(target, {}).items():
                        if omod != mod and re.search(
                                r"\b%s\b" % re.escape(fn), code):
                            edges[mod].add(omod)
                            why.setdefault((mod, omod), f"{name} uses "
                                           f"{fn}() through {tname}")
                    if target == f"{d}/{name}":
                        continue
                    if tname.endswith("_int.h") and tmod != mod and not (
                            td == d and any(fnmatch.fnmatch(name, g) for g in
                                            privates[td].get(tname, ()))):
                        errors.append(f"{d}/{name}: includes {target}, "
                                      f"private to {tmod} and the files "
                                      f"{td}/.may_include names for it")
                        continue
                    ok = any(applies(fs, name) and not r.startswith("-")
                             and fnmatch.fnmatch(target, r)
                             for fs, r, _ in rules) and not any(
                        applies(fs, name) and r.startswith("-") and
                        not r.startswith(("-<", "-call ")) and
                        fnmatch.fnmatch(target, r[1:])
                        for fs, r, _ in rules)
                    if not ok:
                        errors.append(f"{d}/{name}: includes {target}, "
                                      f"which {d}/.may_include does not "
                                      f"allow")
                else:
                    for fs, r, where in rules:
                        if (r.startswith("-<") and applies(fs, name) and
                                fnmatch.fnmatch(inc, r[2:-1])):
                            errors.append(f"{d}/{name}: includes <{inc}>, "
                                          f"forbidden by {where}")
            if f"{d}/{name}" != CLOCK_OWNER:
                for fn in sorted(set(CLOCK_READS.findall(code))):
                    errors.append(f"{d}/{name}: calls {fn}(): only "
                                  f"{CLOCK_OWNER} reads a clock (clock.h)")
            for fs, r, where in rules:
                if r.startswith("-call ") and applies(fs, name):
                    for fn in r.split()[1:]:
                        if re.search(r"\b%s\s*\(" % re.escape(fn), code):
                            errors.append(f"{d}/{name}: calls {fn}(), "
                                          f"forbidden by {where}")
    for ring in rings(edges):
        errors.append("ring: " + " -> ".join(ring + [ring[0]]))
        for a in ring:
            for b in ring:
                if (a, b) in why and b in edges[a]:
                    errors.append(f"  {a} -> {b}: {why[(a, b)]}")
    for k in sorted(set(allow) - used_allow):
        if not quiet:
            print(f"layers: note: {ALLOW}: {k} is within the limits now; "
                  f"drop it")
    if not quiet:
        for e in errors:
            print("layers:", e)
    return errors, edges


def folder_graph(edges):
    """The module graph folded onto folders: `a -> b  n` when n module
    edges lead from a module of folder a to one of folder b (a != b),
    then each folder's module count."""
    count, mods = {}, {}
    for m, deps in edges.items():
        fa = os.path.dirname(m)
        mods[fa] = mods.get(fa, 0) + 1
        for t in deps:
            fb = os.path.dirname(t)
            if fa != fb:
                count[(fa, fb)] = count.get((fa, fb), 0) + 1
    out = [f"{a} -> {b}  {n}" for (a, b), n in sorted(count.items())]
    out += [f"{f}: {n} modules" for f, n in sorted(mods.items())]
    return out


def rings(edges):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def self_test():
    """Trees that must fail (a ring, a forbidden include, a forbidden call,
    a header from a layer above) and one that must pass."""
    def tree(spec):
        root = tempfile.mkdtemp(prefix="layers.")
        for rel, body in spec.items():
            p = os.path.join(root, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(body)
        return root

    base = {
        "common/.may_include": "common/*.h\n",
        "common/a.h": "", "common/a.c": '#include "a.h"\n',
        "server/core/.may_include":
            "common/*.h\nserver/core/*.h\n-<event2/*>\n-call clock_now\n",
        "server/core/r.h": '#include "a.h"\n',
        "server/core/r.c": '#include "r.h"\n',
        "server/front/.may_include":
            "common/*.h\nserver/core/*.h\nserver/front/*.h\n",
        "server/front/x.h": "", "server/front/x.c": '#include "r.h"\n',
    }
    cases = {
        "clean": ({}, False),
        "ring": ({"server/front/y.h": "", "server/front/y.c":
                  '#include "x.h"\n', "server/front/x.c":
                  '#include "y.h"\n'}, True),
        "upward include": ({"server/core/r.c": '#include "x.h"\n'}, True),
        "excluded header": ({"server/core/.may_include":
                             "common/*.h\nserver/core/*.h\n-common/a.h\n"},
                            True),
        "libevent in core": ({"server/core/r.c":
                              "#include <event2/event.h>\n"}, True),
        "clock read in core": ({"server/core/r.c":
                                "int f(void) { return clock_now(); }\n"},
                               True),
        "comment is not a call": ({"server/core/r.c":
                                   "/* clock_now() */\n"}, False),
        "per-file rule": ({"common/.may_include":
                           "common/*.h\na.c: -call foo\n",
                           "common/b.c": "long t(void) { return foo(0); }\n",
                           }, False),
        "ring behind an _int.h": ({
            "server/front/.may_include":
                "common/*.h\nserver/core/*.h\nserver/front/*.h\n"
                "private p_int.h: a.c b.c\n",
            "server/front/p_int.h": "void a_go(int);\nint b_go(void);\n",
            "server/front/a.c": '#include "p_int.h"\nvoid\na_go(int x)\n'
                                '{ b_go(); }\n',
            "server/front/b.c": '#include "p_int.h"\nint\nb_go(void)\n'
                                '{ a_go(1); return 0; }\n'}, True),
        "one way through an _int.h": ({
            "server/front/.may_include":
                "common/*.h\nserver/core/*.h\nserver/front/*.h\n"
                "private p_int.h: a.c b.c\n",
            "server/front/p_int.h": "void a_go(int);\n"
                                    "struct s { void (*cb)(int); };\n",
            "server/front/a.c": '#include "p_int.h"\nvoid\na_go(int x)\n'
                                '{ }\n',
            "server/front/b.c": '#include "p_int.h"\nint\nb_go(void)\n'
                                '{ a_go(1); return 0; }\n'}, False),
        "per-file rule hits": ({"common/.may_include":
                                "common/*.h\nb.c: -call foo\n",
                                "common/b.c":
                                "long t(void) { return foo(0); }\n"}, True),
        "module in files behind its _int.h": ({
            "server/core/r_int.h": '#include "r.h"\n',
            "server/core/r.c": '#include "r.h"\n#include "r_int.h"\n',
            "server/core/r_part.c": '#include "r_int.h"\n'}, False),
        "private header from another module": ({
            "server/core/r_int.h": "", "server/core/q.h": "",
            "server/core/q.c": '#include "r_int.h"\n'}, True),
        "private header from another folder": ({
            "server/core/r_int.h": "",
            "server/front/x.c": '#include "r_int.h"\n'}, True),
        "private header shared by name": ({
            "server/core/.may_include": "common/*.h\nserver/core/*.h\n"
                                        "private r_int.h: q.c\n",
            "server/core/r_int.h": "", "server/core/q.h": "",
            "server/core/q.c": '#include "r_int.h"\n'}, False),
    }
    body = "\tx++;\n" * (MAX_FUNC_LINES - 4)
    longfn = "int\nf(int x)\n{\n" + body + "\treturn (x);\n}\n"
    longerfn = "int\nf(int x)\n{\n" + body + "\tx++;\n\treturn (x);\n}\n"
    longfile = "/* x */\n" * (MAX_FILE_LINES + 1)
    cases.update({
        "function at the limit": ({"common/a.c": longfn}, False),
        "function over the limit": ({"common/a.c": longerfn}, True),
        "long function allowed": ({"common/a.c": longerfn,
                                   ALLOW: "common/a.c:f  a reason\n"},
                                  False),
        "file over the limit": ({"common/a.c": longfile}, True),
        "long file allowed": ({"common/a.c": longfile,
                               ALLOW: "common/a.c  a reason\n"}, False),
        "long file allowed with no reason": ({"common/a.c": longfile,
                                              ALLOW: "common/a.c\n"},
                                             True),
    })
    bad = 0
    for name, case in cases.items():
        over, want_fail = case
        spec = dict(base)
        spec.update(over)
        try:
            errs, _ = check(tree(spec), quiet=True)
        except SystemExit as e:
            errs = [str(e)]
        if bool(errs) != want_fail:
            print(f"layers self-test: {name}: expected "
                  f"{'failure' if want_fail else 'success'}, got {errs}")
            bad += 1
    return bad


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    src = args[0] if args else os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__))))
    if "--self-test" in sys.argv:
        bad = self_test()
        print("layers self-test:", "FAIL" if bad else "ok")
        return 1 if bad else 0
    if "--graph" in sys.argv or "--folders" in sys.argv:
        _, edges = check(src, quiet=True)
        if "--folders" in sys.argv:
            for line in folder_graph(edges):
                print(line)
            return 0
        for m in sorted(edges):
            print(f"{m}: {' '.join(sorted(edges[m]))}")
        return 0
    errors, edges = check(src)
    print(f"layers: {len(edges)} modules, "
          f"{sum(len(v) for v in edges.values())} dependencies, "
          f"{len(errors)} violation(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
