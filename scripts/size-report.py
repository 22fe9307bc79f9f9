#!/usr/bin/env python3
"""Lists the largest C++ source files and functions (issue 38: files of at most 600 lines, functions
of at most 80).

usage: scripts/size-report.py [--files N] [--functions N] [DIR ...]
       (default: engine app widgets, from the repository's root; files over 600 lines, functions
       over 80)

Files: every .cpp and .h, by line count (as `wc -l`).
Functions: a rough brace match, not a parser. Comments, string and character literals (raw strings
too) are blanked first; then each `{` outside a function whose text since the previous `;`, `{`
or `}` holds a parameter list `name(...)` (not `if`/`for`/`while`/`switch`/`catch`, not a
lambda `](`, no `=` before the `(`) opens a function, which ends at its matching `}`. Its length
is its lines from the header's first line to the closing brace, as an editor counts them.
Lambdas and local classes count towards the function that holds them. Not understood: macros
that open braces, and a constructor whose initialiser list uses braces (`x_{a}`: counted as a
one-line function, its body then not counted).
"""
import os
import re
import sys

KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignof",
            "static_assert", "noexcept", "requires"}


def blank(text):
    """`text` with comments and literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and i + 1 < n and text[i + 1] == '"' and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i + m.end())
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:end]))
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else text[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    # Preprocessor lines are not part of any declaration.
    return re.sub(r"(?m)^[ \t]*#.*$", lambda m: " " * len(m.group(0)), "".join(out))


def function_name(header):
    """The function's name when `header` (the text before a `{`) declares one, else None."""
    h = re.sub(r"\s+", " ", header).strip()
    if not h or h.startswith("#"):
        return None
    if re.match(r"^(?:template\s*<.*>\s*)?(class|struct|union|enum|namespace)\b", h):
        return None
    if h.startswith(("else", "do", "try", "extern")) or h.endswith(("else", "do", "try")):
        return None
    paren = h.find("(")
    if paren < 0:
        return None
    before = h[:paren].rstrip()
    if "=" in before.replace("operator=", "").replace("==", "") or before.endswith("]"):
        return None  # an initialiser or a lambda
    m = re.search(r"(~?[A-Za-z_][\w:]*(?:operator\s*\S+)?)$", before)
    if not m or m.group(1).split("::")[-1] in KEYWORDS:
        return None
    return m.group(1)


def functions(path):
    """(name, first line, line count) of every function defined in `path`."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = blank(f.read())
    found = []
    stack = []  # per open brace: (kind, name, first line)
    header_start = 0
    line = 1
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c in ";{}":
            if c == "{":
                inside = any(kind == "function" for kind, _, _ in stack)
                header = text[header_start:i]
                name = None if inside else function_name(header)
                if name:  # the header's first line
                    leading = header[: len(header) - len(header.lstrip())]
                    first = line - header.count("\n") + leading.count("\n")
                    stack.append(("function", name, first))
                else:
                    stack.append(("block", None, line))
            elif c == "}" and stack:
                kind, name, first = stack.pop()
                if kind == "function":
                    found.append((name, first, line - first + 1))
            header_start = i + 1
    return found


def main(argv):
    max_file, max_function, dirs = 600, 80, []
    args = iter(argv)
    for a in args:
        if a == "--files":
            max_file = int(next(args))
        elif a == "--functions":
            max_function = int(next(args))
        else:
            dirs.append(a)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = dirs or [os.path.join(root, d) for d in ("engine", "app", "widgets")]
    sources = []
    for d in dirs:
        for base, _, names in os.walk(d):
            sources += [os.path.join(base, n) for n in names if n.endswith((".cpp", ".h"))]
    big_files, long_functions = [], []
    for path in sorted(sources):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as f:
            count = sum(1 for _ in f)
        if count > max_file:
            big_files.append((count, rel))
        for name, first, length in functions(path):
            if length > max_function:
                long_functions.append((length, f"{rel}:{first}", name))
    print(f"Files over {max_file} lines ({len(big_files)}):")
    for count, rel in sorted(big_files, reverse=True):
        print(f"  {count:5d}  {rel}")
    print(f"Functions over {max_function} lines ({len(long_functions)}; rough brace matching):")
    for length, where, name in sorted(long_functions, reverse=True):
        print(f"  {length:5d}  {where}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
