#!/usr/bin/env python3
"""Checks that no #include in engine/ runs back up the layers.

The engine's directories form layers, lowest first (LAYERS below, the one place the order is
written). A file may include headers of its own directory and of any directory listed before it;
an include of a later directory is an upward include and an error. engine/ includes no Qt and
nothing of app/ or widgets/. A directory of engine/ missing from LAYERS is an error too, so a new
one gets its place here (and in docs/architecture.md's "Layers" diagram, which this script
compares with LAYERS).

usage: check-layers.py ROOT         checks ROOT/engine and ROOT/docs/architecture.md
       check-layers.py --self-test  shows on a temporary tree that a bad include is caught
Exits 1 and lists every offending include (file:line) or diagram difference; 0 when none.
"""
import os
import re
import shutil
import sys
import tempfile

LAYERS = [
    "pch",          # the precompiled LibTorch header
    "core",         # errors, numbers, BLAS, devices, bounded input: no other engine header
    "stats",        # hypothesis tests and intervals (the claims' verdicts)
    "run",          # the run folder, its records, state archives, the tensor cache
    "lastlayer",    # closed-form and gradient heads, the proximal solve
    "methods",      # the registry of methods and task kinds (torch-free lookups)
    "spec",         # the experiment spec: structs, parse, validate (reads the registry)
    "distributed",  # data-parallel statistics
    "diagnostics",  # spectra, landscapes, shoulder statistics
    "ebm",          # energy targets, quadrature, importance sampling
    "data",         # data sets and samplers
    "nn",           # backbones, TorchScript, kernels
    "icnn",         # the ICNN and its positivity strategies
    "flows",        # CP-Flow
    "export",       # model export
    "builtins",     # the registered entries: every head, strategy and task kind
    "training",     # runner, trainers, resume
    "claims",       # the seeds' claims: registry, runs, verdicts
]

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
FORBIDDEN_PREFIXES = ("app/", "widgets/")


def check_engine(engine_dir):
    rank = {name: i for i, name in enumerate(LAYERS)}
    errors = []
    for name in sorted(os.listdir(engine_dir)):
        if os.path.isdir(os.path.join(engine_dir, name)) and name not in rank:
            errors.append(f"engine/{name}/: a directory with no layer (add it to LAYERS)")
    for root, _, files in os.walk(engine_dir):
        rel_dir = os.path.relpath(root, engine_dir)
        if rel_dir == ".":
            continue
        own = rel_dir.split(os.sep)[0]
        if own not in rank:
            continue
        for f in sorted(files):
            if not f.endswith((".h", ".hpp", ".cpp", ".cc")):
                continue
            path = os.path.join(root, f)
            shown = os.path.join("engine", rel_dir, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                for number, line in enumerate(fh, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    bracket, target = m.groups()
                    close = ">" if bracket == "<" else '"'
                    where = f"{shown}:{number}: #include {bracket}{target}{close}"
                    if bracket == "<":
                        if re.match(r"Q[A-Za-z]*(/|$)", target):
                            errors.append(f"{where}: engine/ includes no Qt")
                        continue
                    if target.startswith(FORBIDDEN_PREFIXES):
                        errors.append(f"{where}: engine/ includes nothing of app/ or widgets/")
                        continue
                    if "/" not in target:
                        continue  # a header beside the file: its own layer
                    layer = target.split("/")[0]
                    if layer not in rank:
                        continue  # a third-party header in quotes (nlohmann/…)
                    if rank[layer] > rank[own]:
                        errors.append(f"{where}: upward include ({own} is below {layer};"
                                      f" order: {' < '.join(LAYERS)})")
    return errors


def check_diagram(architecture_md):
    """The diagram lists the layers highest first, one per line, between "## Layers" and the end
    of that section's first code block."""
    try:
        text = open(architecture_md, encoding="utf-8").read()
    except OSError as e:
        return [f"{architecture_md}: {e}"]
    m = re.search(r"^## Layers\n.*?^```\n(.*?)^```", text, re.S | re.M)
    if not m:
        return [f"{architecture_md}: no '## Layers' section with a code block"]
    shown = []
    for line in m.group(1).splitlines():
        word = re.match(r"\s*([a-z]+)\b", line)
        if word and word.group(1) in LAYERS:
            shown.append(word.group(1))
    expected = [name for name in reversed(LAYERS) if name != "pch"]
    if shown != expected:
        return [f"{architecture_md}: the Layers diagram lists {' > '.join(shown)}; "
                f"scripts/check-layers.py has {' > '.join(expected)}"]
    return []


def self_test():
    """A copy of a tiny tree: clean, then with one upward include, then with a Qt include."""
    with tempfile.TemporaryDirectory() as tmp:
        engine = os.path.join(tmp, "engine")
        for layer in LAYERS:
            os.makedirs(os.path.join(engine, layer))
        def write(rel, text):
            with open(os.path.join(engine, rel), "w") as fh:
                fh.write(text)
        write("core/a.h", "#pragma once\n#include <vector>\n")
        write("run/b.h", '#pragma once\n#include "core/a.h"\n#include "b_local.h"\n')
        write("training/c.cpp", '#include "run/b.h"\n#include <nlohmann/json.hpp>\n')
        problems = []
        if check_engine(engine):
            problems.append(f"a clean tree was flagged: {check_engine(engine)}")
        write("run/b.h", '#pragma once\n#include "core/a.h"\n#include "training/progress.h"\n')
        found = check_engine(engine)
        if len(found) != 1 or "engine/run/b.h:3" not in found[0] or "upward" not in found[0]:
            problems.append(f"run/b.h -> training/progress.h was not caught: {found}")
        shutil.rmtree(os.path.join(engine, "run"))
        os.makedirs(os.path.join(engine, "run"))
        write("core/a.h", "#pragma once\n#include <QString>\n")
        if not any("no Qt" in e for e in check_engine(engine)):
            problems.append("#include <QString> in engine/core was not caught")
        os.makedirs(os.path.join(engine, "newdir"))
        if not any("newdir" in e for e in check_engine(engine)):
            problems.append("a directory missing from LAYERS was not caught")
    return problems


def main():
    if sys.argv[1:] == ["--self-test"]:
        problems = self_test()
        for p in problems:
            print("self-test:", p)
        print("self-test:", "FAILED" if problems else "an upward include and a Qt include are caught")
        return 1 if problems else 0
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    root = sys.argv[1]
    errors = check_engine(os.path.join(root, "engine"))
    errors += check_diagram(os.path.join(root, "docs", "architecture.md"))
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} layering problem(s)")
        return 1
    print(f"engine/: no upward include ({' < '.join(LAYERS)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
