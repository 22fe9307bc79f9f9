#!/usr/bin/env python3
"""Finds file-local names that would meet in a unity batch.

The build compiles each target's sources several to a translation unit (LIFTLAB_UNITY_BUILD), so
two .cpp files of one target that both define a helper of the same name in an anonymous namespace
(or as a `static` function) either fail to compile or, worse, become overloads of each other and
silently change which one a call picks. Which files share a batch shifts whenever a file is added,
so this check looks at every pair in a target, not only today's batches.

usage: check-unity-names.py DIR [DIR ...]   one DIR per target's sources (searched recursively)
Exits 1 and lists the names defined in more than one file of a DIR; 0 when there are none.
Shared helpers belong in a header (engine/core/numeric.h, tests/engine/test_helpers.h, ...).
"""
import collections
import os
import re
import sys

KEYWORDS = {"if", "for", "while", "return", "switch", "catch", "sizeof", "decltype"}
# File-scope declarations, at column 0 inside `namespace {`: constants, types, aliases, functions.
CONSTANT = re.compile(r"^(?:inline\s+)?(?:static\s+)?(?:constexpr|const)\b[^=;(]*?\b(\w+)\s*(?:=|\{|\[)")
TYPE = re.compile(r"^(?:struct|class|enum(?:\s+class)?|union)\s+(\w+)\b(?!\s*;)")
ALIAS = re.compile(r"^using\s+(\w+)\s*=")
FUNCTION = re.compile(r"^(?:template\s*<.*>\s*)?(?:inline\s+)?[A-Za-z_][\w:<>,\s*&]*?[\s*&](\w+)\s*\(")
STATIC_FUNCTION = re.compile(r"^static\s+[^=;]*?\b(\w+)\s*\(")


def file_local_names(path):
    names = set()
    depth = 0  # nesting of `namespace {` blocks (named namespaces are transparent)
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if re.match(r"^namespace\s*\{", line):
                depth += 1
                continue
            if depth and re.match(r"^\}\s*//\s*namespace\s*$", line):
                depth -= 1
                continue
            if line.startswith((" ", "\t", "#", "/", "}")):
                continue
            if not depth:
                m = STATIC_FUNCTION.match(line)
                if m and m.group(1) not in KEYWORDS:
                    names.add(m.group(1))
                continue
            for pattern in (CONSTANT, TYPE, ALIAS, FUNCTION):
                m = pattern.match(line)
                if m and m.group(1) not in KEYWORDS:
                    names.add(m.group(1))
                    break
    return names


def main(dirs):
    clashes = 0
    for top in dirs:
        where = collections.defaultdict(list)
        for root, _, files in os.walk(top):
            for name in sorted(files):
                if name.endswith(".cpp"):
                    path = os.path.join(root, name)
                    for local in file_local_names(path):
                        where[local].append(os.path.relpath(path, top))
        for local, paths in sorted(where.items()):
            if len(paths) > 1:
                clashes += 1
                print(f"{top}: '{local}' is file-local in {len(paths)} files: {', '.join(sorted(paths))}")
    if clashes:
        print(f"{clashes} file-local name(s) shared within a target: give each a file-unique name "
              "or move the shared one into a header")
        return 1
    print(f"no file-local name is shared within a target ({', '.join(dirs)})")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
