#!/usr/bin/env python3
"""Checks that every #include in src/, include/ and tools/ respects Kiln's layering (CONTRIBUTING.md, "Layers").

The layers and what each may include come from the top-level CMakeLists.txt: `kiln_add_layer(NAME DEPS ...)`
declares a layer and the layers it links (transitively, the layers it may include); tools/ sits on top of all of
them. A layer with sub-layers, declared bottom up by `kiln_sublayers(LAYER ORDER SUB...)` in src/<layer>/layer.cmake
(the engine: ops, core, backends), has them checked the same way: a folder src/<layer>/<sub>/ includes only the
sub-layers before it. Two rules:

  1. an include of another layer's header points down: the included layer is one the including layer links;
  2. no file includes another layer's private header (a header under src/<layer>/, reached as "<layer>/x.h" or
     by a relative path), public headers live in include/kiln/<layer>/ (SHARED_PUBLIC, SHARED_PRIVATE: the
     runtime's two layers).

Known violations that an issue will remove are listed in ALLOWED, each with that issue; the check passes today
and fails on any new violation (and on an ALLOWED entry that no longer occurs, so the list only shrinks).
Standard library only; runs in well under a second. `--self-test` checks the checker on made-up trees.

Usage: scripts/check_layering.py [--root DIR] [--self-test]
"""

import argparse
import os
import re
import shutil
import sys
import tempfile

# Public header folders that several layers share, attributed to the lowest of them: include/kiln/runtime/ holds
# the torch-free runtime_core's headers and runtime's (runtime_core is compiled without libtorch's include paths, so
# the compiler already keeps it off runtime's torch headers).
SHARED_PUBLIC = {"runtime": "runtime_core"}

# Private headers a layer shares with the layers above it that are halves of the same component: runtime_core's with
# runtime (the torch-free runtime and its libtorch half, issue 18.2: "what both runtimes need goes there").
SHARED_PRIVATE = {"runtime_core": {"runtime"}}

# Known violations, (including file, included header) as the check reports them, each with the issue point that
# removes it. Remove an entry with the violation: a stale entry fails the check.
ALLOWED = set()

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
LAYER_RE = re.compile(r"kiln_add_layer\(\s*(\w+)((?:\s+DEPS)?[^)]*)\)")
SUBLAYERS_RE = re.compile(r"^\s*kiln_sublayers\(\s*(\w+)\s+ORDER\s+([^)]*)\)", re.MULTILINE)
SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh")


def layer_deps(root):
    """Maps each layer to the set of layers it may include (itself and its link dependencies, transitively)."""
    with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as f:
        text = f.read()
    direct = {}
    for name, rest in LAYER_RE.findall(text):
        direct[name] = {d[len("kiln_"):] for d in rest.split() if d.startswith("kiln_")}
    closure = {}

    def walk(layer, seen):
        for dep in direct.get(layer, ()):
            if dep not in seen:
                seen.add(dep)
                walk(dep, seen)
        return seen

    for layer in direct:
        closure[layer] = walk(layer, {layer})
    closure["tools"] = set(direct) | {"tools"}
    return closure


def sublayer_orders(root):
    """Maps each layer that declares sub-layers (`kiln_sublayers` in src/<layer>/layer.cmake) to their order,
    bottom up."""
    orders = {}
    src = os.path.join(root, "src")
    for layer in sorted(os.listdir(src)) if os.path.isdir(src) else []:
        path = os.path.join(src, layer, "layer.cmake")
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for name, subs in SUBLAYERS_RE.findall(text):
            orders[name] = subs.split()
    return orders


def unit_of(path, orders):
    """The (layer, sub-layer or None) a repository-relative path belongs to, or None outside the layers."""
    parts = path.split("/")
    if parts[0] == "tools":
        return ("tools", None)
    if parts[0] == "src" and len(parts) > 2:
        layer = parts[1]
    elif parts[0] == "include" and len(parts) > 3 and parts[1] == "kiln":
        layer = SHARED_PUBLIC.get(parts[2], parts[2])
    else:
        return None
    sub = None
    if layer in orders and parts[0] == "src" and len(parts) > 3:
        sub = parts[2]
    return (layer, sub)


def resolve(root, including, target):
    """The repository-relative path `target` (as written in `including`) names, or None for outside headers."""
    here = os.path.dirname(including)
    for base in (here, "include", "src"):
        candidate = os.path.normpath(os.path.join(base, target))
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate.replace(os.sep, "/")
    return None


def violations(root):
    """Every (including file, included header, reason) that breaks a rule, sorted."""
    deps = layer_deps(root)
    orders = sublayer_orders(root)
    found = []
    for top in ("src", "include", "tools"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                full = os.path.join(dirpath, name)
                path = os.path.relpath(full, root).replace(os.sep, "/")
                unit = unit_of(path, orders)
                if unit is None:
                    continue
                with open(full, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for target in INCLUDE_RE.findall(text):
                    header = resolve(root, path, target)
                    other = unit_of(header, orders) if header else None
                    if other is None or other == unit:
                        continue
                    why = rule_broken(deps, orders, unit, other, header)
                    if why:
                        found.append((path, header, why))
    return sorted(found)


def rule_broken(deps, orders, unit, other, header):
    """Why including `header` (of `other`) from a file of `unit` breaks the layering, or "" when it does not."""
    layer, sub = unit
    other_layer, other_sub = other
    if layer != other_layer:
        if other_layer not in deps.get(layer, {layer}):
            return f"layer {layer} includes {other_layer}, which is not below it (CMakeLists.txt link order)"
        if header.startswith("src/") and layer not in SHARED_PRIVATE.get(other_layer, ()):
            return f"layer {layer} includes a header private to layer {other_layer}"
        return ""
    # Same layer: only declared sub-layers are ordered.
    order = orders.get(layer, [])
    if sub in order and other_sub in order and order.index(other_sub) > order.index(sub):
        return (f"{layer}/{sub} includes {layer}/{other_sub}, which is above it ({' < '.join(order)}, "
                f"src/{layer}/layer.cmake)")
    return ""


def check(root):
    """Prints what breaks the layering; returns the exit status (0 when only ALLOWED violations remain)."""
    found = violations(root)
    seen = {(a, b) for a, b, _ in found}
    status = 0
    for path, header, why in found:
        if (path, header) not in ALLOWED:
            print(f"{path}: includes {header}: {why}")
            status = 1
    for path, header in sorted(ALLOWED - seen):
        print(f"scripts/check_layering.py: ALLOWED entry ({path}, {header}) no longer occurs: remove it")
        status = 1
    return status


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as f:
        f.write(text)


def self_test():
    """Builds small trees with one made-up violation each; the check must find exactly that one."""
    cmake = "kiln_add_layer(support DEPS Threads::Threads)\nkiln_add_layer(ir DEPS kiln_support)\n" \
            "kiln_add_layer(frontend DEPS kiln_ir)\nkiln_add_layer(engine DEPS kiln_support)\n" \
            "kiln_add_layer(runtime_core DEPS kiln_ir kiln_engine)\nkiln_add_layer(runtime DEPS kiln_runtime_core)\n"
    base = {
        "CMakeLists.txt": cmake,
        "include/kiln/support/error.h": "",
        "include/kiln/ir/graph.h": '#include "kiln/support/error.h"\n',
        "src/ir/graph.cpp": '#include "kiln/ir/graph.h"\n#include "ir/internal.h"\n#include <vector>\n',
        "src/ir/internal.h": "",
        "src/frontend/reader.cpp": '#include "kiln/ir/graph.h"\n#include "nlohmann/json.hpp"\n',
        "src/engine/core/plan.cpp": '#include "engine/ops/ref.h"\n',
        "src/engine/ops/ref.h": "",
        "src/engine/layer.cmake": "kiln_sublayers(engine ORDER ops core backends)\n",
        "tools/kiln/main.cpp": '#include "kiln/frontend/program.h"\n',
        "include/kiln/frontend/program.h": "",
        "include/kiln/runtime/host.h": "",
        "src/runtime_core/steps.h": "",
        "src/runtime/module.cpp": '#include "runtime_core/steps.h"\n#include "kiln/runtime/host.h"\n',
    }
    cases = {
        "clean tree": ({}, []),
        "upward include": ({"src/ir/up.cpp": '#include "kiln/frontend/program.h"\n'},
                           [("src/ir/up.cpp", "include/kiln/frontend/program.h")]),
        "sideways include": ({"src/engine/core/x.cpp": '#include "kiln/ir/graph.h"\n'},
                             [("src/engine/core/x.cpp", "include/kiln/ir/graph.h")]),
        "private header": ({"src/frontend/y.cpp": '#include "ir/internal.h"\n'},
                           [("src/frontend/y.cpp", "src/ir/internal.h")]),
        "private header by relative path": ({"src/frontend/z.cpp": '#include "../ir/internal.h"\n'},
                                            [("src/frontend/z.cpp", "src/ir/internal.h")]),
        "runtime's public header below runtime_core": ({"src/engine/core/h.cpp": '#include "kiln/runtime/host.h"\n'},
                                                       [("src/engine/core/h.cpp", "include/kiln/runtime/host.h")]),
        "runtime_core's private header outside the runtime": (
            {"src/frontend/s.cpp": '#include "runtime_core/steps.h"\n'}, [("src/frontend/s.cpp", "src/runtime_core/steps.h")]),
        "engine sub-layer upward": ({"src/engine/ops/r.cpp": '#include "engine/core/c.h"\n',
                                     "src/engine/core/c.h": ""},
                                    [("src/engine/ops/r.cpp", "src/engine/core/c.h")]),
        "engine sub-layer two steps upward": ({"src/engine/ops/b.cpp": '#include "engine/backends/b.h"\n',
                                               "src/engine/backends/b.h": ""},
                                              [("src/engine/ops/b.cpp", "src/engine/backends/b.h")]),
        "sub-layer order read from layer.cmake": (
            {"src/engine/layer.cmake": "# kiln_sublayers(engine ORDER backends core ops) in a comment is no order\n"
                                       "kiln_sublayers(engine ORDER core ops backends)\n",
             "src/engine/ops/r.cpp": '#include "engine/core/c.h"\n', "src/engine/core/c.h": ""},
            [("src/engine/core/plan.cpp", "src/engine/ops/ref.h")]),
        "no sub-layers declared: folders unordered": (
            {"src/engine/layer.cmake": "", "src/engine/ops/r.cpp": '#include "engine/core/c.h"\n',
             "src/engine/core/c.h": ""}, []),
        "another layer's sub-layers": (
            {"src/ir/layer.cmake": "kiln_sublayers(ir ORDER graph passes)\n", "src/ir/graph/g.cpp":
             '#include "ir/passes/p.h"\n', "src/ir/passes/p.h": "", "src/ir/passes/p.cpp": '#include "ir/graph/g.h"\n',
             "src/ir/graph/g.h": ""},
            [("src/ir/graph/g.cpp", "src/ir/passes/p.h")]),
    }
    failures = 0
    for name, (extra, expected) in cases.items():
        root = tempfile.mkdtemp(prefix="kiln_layering_")
        try:
            for path, text in {**base, **extra}.items():
                write(root, path, text)
            got = [(a, b) for a, b, _ in violations(root)]
        finally:
            shutil.rmtree(root)
        if got != expected:
            print(f"self-test '{name}': expected {expected}, found {got}")
            failures += 1
    print(f"check_layering self-test: {len(cases) - failures} of {len(cases)} cases pass")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    parser.add_argument("--self-test", action="store_true", help="check the checker on made-up trees")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    return check(os.path.abspath(args.root))


if __name__ == "__main__":
    sys.exit(main())
