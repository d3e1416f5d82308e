#!/usr/bin/python3
"""Checks that code and CMake follow the layers (docs/architecture.md).

One folder = one layer = one CMake library (mlgo::<layer>), with its public
headers in include/mlgo/<layer>/. Arrows point down only:

    support protocol corpus ir2vec   leaves: may use support only
    policy                           the policy runner: protocol and support
    table                            the tuning table and stream identity: protocol
                                     and support
    env                              may use the leaves and policy
    trace                            may use env, policy and the leaves, not launch
    launch                           may use env, policy, table and the leaves, not trace
    server                           may use env and the leaves, not trace or launch
    src                              the mlgo-env executable alone: anything
    python (python/src)              the pybind11 core: env, policy, table and the leaves

and inside the Python package python/mlgo_env/, by import (low to high; a
module may import its own layer and lower ones):

    api        the top-level modules (mlgo_env.env, vector, remote, episodes...)
    policies   mlgo_env/policies/: the policy file format and its forms
    cluster    mlgo_env/cluster/: task runners (in process, Dask)
    tuning     mlgo_env/tuning/: per-module searches of a project's decisions, the
               one-number baselines, replays, the tables tune writes
    training   mlgo_env/training/: trainer, evaluation, reports
    commands   mlgo_env/train/, mlgo_env/evaluate/, mlgo_env/tune/ (python -m entry points) and
               demo.py: may import anything; nothing imports them

Fails (exit 1), naming file, line and what it used, when:
  1. a layer's file (<layer>/**, include/mlgo/<layer>/**) includes
     "mlgo/<other>/..." of a layer it may not use, or a header of another
     layer's folder by a relative path ("../env/x.h"), or a folder under
     include/mlgo/ is not a layer;
  2. a layer's CMakeLists.txt links (target_link_libraries) a library of a
     layer it may not use;
  3. a target exports a source folder as an include root (a PUBLIC or
     INTERFACE include directory other than include/);
  4. a library lives under src/: an add_library in src/, a CMakeLists.txt in a
     subfolder of src/, or a subfolder of src/ other than cli/;
  5. a module of python/mlgo_env/ imports (anywhere in the file, lazy imports
     too) a module of a higher Python layer or a command, or a folder of
     python/mlgo_env/ is not a Python layer;
  6. anything outside research/ (the package, its tests, bench/, scripts/)
     imports research: the package `research` or a module of research/ by its
     name. research/ (diagnosis experiments) may import the package; nothing
     depends on it.

Usage: scripts/check_layers.py [--root DIR]    (default: the repository)
       scripts/check_layers.py --self-test     (checks that it catches each case)
"""
import argparse
import ast
import os
import re
import sys
import tempfile

LEAVES = ["support", "protocol", "corpus", "ir2vec"]
LAYERS = LEAVES + ["policy", "table", "env", "trace", "server", "launch"]
ALLOWED = {
    "support": {"support"},
    "protocol": {"support", "protocol"},
    "corpus": {"support", "corpus"},
    "ir2vec": {"support", "ir2vec"},
    "policy": {"support", "protocol", "policy"},
    "table": {"support", "protocol", "table"},
    "env": set(LEAVES) | {"env", "policy"},
    "trace": set(LEAVES) | {"env", "policy", "trace"},
    "server": set(LEAVES) | {"env", "server"},
    "launch": set(LEAVES) | {"env", "policy", "table", "launch"},
    "python": set(LEAVES) | {"env", "policy", "table"},
    "src": set(LAYERS),
}
# Folders checked, by layer (python/src is the package's compiled core).
FOLDERS = {layer: layer for layer in LAYERS}
FOLDERS["python"] = os.path.join("python", "src")
FOLDERS["src"] = "src"
# Library targets that are not named mlgo_<layer>, and the layer they belong to.
EXTRA_TARGETS = {
    "mlgo_env_testing": "env",
    "mlgo_env_fake": "env",
    "mlgo_fake_compiler": "env",
    "mlgo_demo_corpus": "corpus",
    "mlgo-env": "src",
    "mlgo_env_core": "python",
}
# Project targets that are no layer (toolchain wrappers).
NEUTRAL_TARGETS = {"mlgo_llvm", "mlgo_warnings"}
SOURCE_EXTENSIONS = (".h", ".cc", ".cpp", ".c", ".hpp")
# The Python package's layers, low to high; "commands" may import anything.
PY_LAYERS = ["api", "policies", "cluster", "tuning", "training", "commands"]
# Subpackages of mlgo_env by layer (anything else at the top level is "api").
PY_PACKAGES = {"policies": "policies", "cluster": "cluster", "tuning": "tuning",
               "training": "training", "tune": "commands",
               "train": "commands", "evaluate": "commands"}
PY_COMMAND_MODULES = {"demo"}
PY_PACKAGE = os.path.join("python", "mlgo_env")
# research/ is imported by nothing; these folders are checked for it (rule 6).
RESEARCH = "research"
NOT_RESEARCH = [PY_PACKAGE, os.path.join("python", "tests"), "bench", "scripts"]
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')


def relpath(root, path):
    return os.path.relpath(path, root)


def walk_files(root, folder, extensions):
    base = os.path.join(root, folder)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(extensions):
                yield os.path.join(dirpath, name)


def layer_of_path(root, path):
    """The layer whose folder (or include/mlgo/<layer>/) holds `path`, if any."""
    rel = relpath(root, os.path.abspath(path)).split(os.sep)
    if len(rel) >= 3 and rel[0] == "include" and rel[1] == "mlgo":
        return rel[2] if rel[2] in LAYERS else None
    if len(rel) >= 3 and rel[0] == "python" and rel[1] == "src":
        return "python"
    return rel[0] if rel[0] in ALLOWED else None


def check_includes(root, problems):
    mlgo_include = os.path.join(root, "include", "mlgo")
    if os.path.isdir(mlgo_include):
        for name in sorted(os.listdir(mlgo_include)):
            if name not in LAYERS:
                problems.append(f"include/mlgo/{name}: not a layer (layers: {', '.join(LAYERS)})")
    for layer, folder in FOLDERS.items():
        files = list(walk_files(root, folder, SOURCE_EXTENSIONS))
        if layer in LAYERS:
            files += walk_files(root, os.path.join("include", "mlgo", layer), SOURCE_EXTENSIONS)
        allowed = ALLOWED[layer]
        for path in files:
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    used = None
                    if target.startswith("mlgo/"):
                        parts = target.split("/")
                        used = parts[1] if len(parts) > 2 else None
                        if used not in LAYERS:
                            problems.append(f"{relpath(root, path)}:{number}: includes \"{target}\": "
                                            f"include/mlgo/{used}/ is not a layer")
                            continue
                    elif line.lstrip().startswith('#') and '"' in line and ".." in target:
                        resolved = os.path.normpath(os.path.join(os.path.dirname(path), target))
                        used = layer_of_path(root, resolved)
                        if used is not None and used != layer:
                            problems.append(f"{relpath(root, path)}:{number}: includes \"{target}\" "
                                            f"from another folder ({used}/); use \"mlgo/{used}/...\"")
                            continue
                    if used is not None and used not in allowed:
                        problems.append(f"{relpath(root, path)}:{number}: {layer} may not include "
                                        f"\"{target}\" (layer {used}; {layer} may use: "
                                        f"{', '.join(sorted(allowed))})")


def cmake_commands(text, name):
    """(line, arguments) of each call of command `name` in CMake source `text`."""
    text = re.sub(r"#[^\n]*", "", text)  # Comments (no '#' inside our strings).
    for m in re.finditer(r"\b" + name + r"\s*\(", text, re.IGNORECASE):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        yield text.count("\n", 0, m.start()) + 1, text[m.end():i - 1].split()


def target_layer(token):
    name = token.replace("mlgo::", "mlgo_")
    if name in EXTRA_TARGETS:
        return EXTRA_TARGETS[name]
    if name in NEUTRAL_TARGETS or not name.startswith("mlgo_"):
        return None
    layer = name[len("mlgo_"):]
    return layer if layer in LAYERS else "?"


def check_cmake(root, problems):
    lists = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if not d.startswith(".") and not d.startswith("build"))
        if "CMakeLists.txt" in filenames:
            lists.append(os.path.join(dirpath, "CMakeLists.txt"))
    for path in lists:
        rel = relpath(root, path)
        layer = layer_of_path(root, path)
        if rel.startswith("python" + os.sep):
            layer = "python"
        with open(path, encoding="utf-8") as f:
            text = f.read()
        # 2. Links.
        if layer is not None:
            for line, args in cmake_commands(text, "target_link_libraries"):
                for token in args[1:]:
                    used = target_layer(token)
                    if used == "?":
                        problems.append(f"{rel}:{line}: links {token}, which is no layer's library")
                    elif used is not None and used not in ALLOWED[layer] | {layer}:
                        problems.append(f"{rel}:{line}: {layer} may not link {token} (layer {used}; "
                                        f"{layer} may use: {', '.join(sorted(ALLOWED[layer]))})")
        # 3. Include roots.
        for line, args in cmake_commands(text, "target_include_directories"):
            scope = None
            for token in args[1:]:
                if token in ("PUBLIC", "INTERFACE", "PRIVATE"):
                    scope = token
                    continue
                if token in ("SYSTEM", "BEFORE", "AFTER"):
                    continue
                if scope in ("PUBLIC", "INTERFACE") and "SOURCE_DIR}" in token and \
                        token != "${PROJECT_SOURCE_DIR}/include":
                    problems.append(f"{rel}:{line}: {args[0]} exports {token} as an include root "
                                    f"(only ${{PROJECT_SOURCE_DIR}}/include may be one)")
    # 4. src/ holds the executable alone.
    src = os.path.join(root, "src")
    if os.path.isdir(src):
        for dirpath, dirnames, filenames in os.walk(src):
            dirnames.sort()
            rel = relpath(root, dirpath)
            if dirpath != src and "CMakeLists.txt" in filenames:
                problems.append(f"{rel}/CMakeLists.txt: a library folder under src/ "
                                f"(a layer is a top-level folder)")
        for name in sorted(os.listdir(src)):
            if os.path.isdir(os.path.join(src, name)) and name != "cli":
                problems.append(f"src/{name}/: only src/cli/ may live under src/ "
                                f"(move a library to a top-level folder)")
        src_lists = os.path.join(src, "CMakeLists.txt")
        if os.path.isfile(src_lists):
            with open(src_lists, encoding="utf-8") as f:
                for line, args in cmake_commands(f.read(), "add_library"):
                    problems.append(f"src/CMakeLists.txt:{line}: add_library({args[0] if args else ''}) "
                                    f"in src/ (src/ builds the executable only)")


def python_layer(parts):
    """The layer of module mlgo_env.<parts...> (parts may be empty: the package)."""
    if not parts:
        return "api"
    if parts[0] in PY_PACKAGES:
        return PY_PACKAGES[parts[0]]
    return "commands" if parts[0] in PY_COMMAND_MODULES else "api"


def imported_names(tree, package):
    """(line, dotted module name) of every import in `tree`, a module of `package` (its
    dotted name), relative imports resolved; `from X import y` names X.y, which is X's
    submodule y or a name of X (both count as X's layer or y's, see python_layer)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                yield node.lineno, f"{source}.{alias.name}"


def check_python(root, problems):
    package_dir = os.path.join(root, PY_PACKAGE)
    if not os.path.isdir(package_dir):
        return
    for name in sorted(os.listdir(package_dir)):
        if os.path.isdir(os.path.join(package_dir, name)) and name != "__pycache__" \
                and name not in PY_PACKAGES:
            problems.append(f"{PY_PACKAGE}/{name}: not a Python layer (folders: "
                            f"{', '.join(sorted(PY_PACKAGES))}; see scripts/check_layers.py)")
    for path in walk_files(root, PY_PACKAGE, (".py",)):
        rel = relpath(root, path)
        parts = os.path.relpath(path, package_dir).split(os.sep)
        module_parts = parts[:-1] + ([] if parts[-1] == "__init__.py" else [parts[-1][:-3]])
        layer = python_layer(module_parts)
        package = ".".join(["mlgo_env"] + parts[:-1])
        try:
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), filename=rel)
        except (SyntaxError, ValueError) as e:
            problems.append(f"{rel}: cannot be parsed: {e}")
            continue
        if layer == "commands":
            continue
        for line, name in imported_names(tree, package):
            dotted = name.split(".")
            if dotted[0] != "mlgo_env":
                continue
            used = python_layer(dotted[1:2])
            if PY_LAYERS.index(used) > PY_LAYERS.index(layer):
                problems.append(f"{rel}:{line}: python {layer} may not import "
                                f"{'.'.join(dotted[:2])} (layer {used}; {layer} may use: "
                                f"{', '.join(PY_LAYERS[:PY_LAYERS.index(layer) + 1])})")


def check_research(root, problems):
    """Rule 6. A module of research/ is imported as "research..." or by its own name (its
    scripts put research/ on their path)."""
    base = os.path.join(root, RESEARCH)
    names = {RESEARCH} | {n[:-3] for n in (os.listdir(base) if os.path.isdir(base) else [])
                          if n.endswith(".py")}
    for folder in NOT_RESEARCH:
        for path in walk_files(root, folder, (".py",)):
            rel = relpath(root, path)
            try:
                with open(path, encoding="utf-8") as f:
                    tree = ast.parse(f.read(), filename=rel)
            except (SyntaxError, ValueError):
                continue  # rule 5 names the package's unparsable files
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    used = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    used = [node.module]
                else:
                    continue
                for name in used:
                    if name.split(".")[0] in names:
                        problems.append(f"{rel}:{node.lineno}: imports {name} of research/ "
                                        f"(research imports the package; nothing imports it)")


def check(root):
    problems = []
    check_includes(root, problems)
    check_cmake(root, problems)
    check_python(root, problems)
    check_research(root, problems)
    return problems


def self_test():
    """Builds a small tree with one violation of each kind and checks each is named."""
    files = {
        "support/a.cc": '#include "mlgo/support/a.h"\n',
        "protocol/p.cc": '#include "mlgo/support/a.h"\n#include "mlgo/env/e.h"\n',
        "corpus/c.cc": '#include "../ir2vec/private.h"\n',
        "ir2vec/private.h": "\n",
        "env/e.cc": '#include "mlgo/corpus/c.h"\n#include "mlgo/trace/t.h"\n',
        "trace/t.cc": '#include "mlgo/env/e.h"\n#include "mlgo/server/s.h"\n',
        "server/s.cc": '#include "mlgo/env/e.h"\n#include <mlgo/trace/t.h>\n',
        "include/mlgo/corpus/c.h": '#include "mlgo/protocol/p.h"\n',
        "include/mlgo/misc/m.h": "\n",
        "src/main.cc": '#include "mlgo/server/s.h"\n#include "mlgo/trace/t.h"\n',
        "src/CMakeLists.txt": "add_library(mlgo_cli OBJECT x.cc)\nadd_executable(mlgo-env main.cc)\n",
        "src/lib/CMakeLists.txt": "add_library(hidden x.cc)\n",
        "env/CMakeLists.txt": "add_library(mlgo_env e.cc)\n"
                              "target_link_libraries(mlgo_env\n  PUBLIC mlgo::support\n"
                              "  PRIVATE mlgo::server mlgo::warnings) # comment (\n",
        "server/CMakeLists.txt": "target_link_libraries(mlgo_server PUBLIC mlgo::env mlgo::trace)\n"
                                 "target_include_directories(mlgo_server PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})\n",
        "trace/CMakeLists.txt": "target_link_libraries(mlgo_trace PUBLIC mlgo::env mlgo::llvm)\n"
                                "target_include_directories(mlgo_trace PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})\n",
        "python/mlgo_env/__init__.py": "from .env import Env\n",
        "python/mlgo_env/env.py": "import numpy\nfrom . import errors\n"
                                  "from .policies import Policy\n",
        "python/mlgo_env/episodes.py": '"""from .training import x (a docstring)"""\n'
                                       "def f():\n    from mlgo_env.cluster import runner\n",
        "python/mlgo_env/demo.py": "from mlgo_env.training import train\n",
        "python/mlgo_env/policies/p.py": "from .. import episodes\nfrom . import q\n"
                                         "from ..training.replay import ReplayCache\n",
        "python/mlgo_env/cluster/c.py": "from ..policies.policy import Policy\n"
                                        "from ..episodes import play\nimport mlgo_env.training.search\n",
        "python/mlgo_env/cluster/sub/d.py": "from ...trace_log import read\nfrom ... import demo\n",
        "python/mlgo_env/training/t.py": "from ..cluster import runner\nfrom .. import evaluate\n",
        "python/mlgo_env/train/__main__.py": "from ..training.train import main\n",
        "python/mlgo_env/wrappers/w.py": "\n",
        "research/probe.py": "from mlgo_env.training import train\n",
        "research/tests/test_probe.py": "import probe\n",
        "bench/b.py": "import probe\n",
        "scripts/s.py": "def f():\n    from research.probe import x\n",
    }
    expected = [
        'protocol/p.cc:2: protocol may not include "mlgo/env/e.h"',
        'corpus/c.cc:1: includes "../ir2vec/private.h" from another folder (ir2vec/)',
        'env/e.cc:2: env may not include "mlgo/trace/t.h"',
        'trace/t.cc:2: trace may not include "mlgo/server/s.h"',
        'server/s.cc:2: server may not include "mlgo/trace/t.h"',
        'include/mlgo/corpus/c.h:1: corpus may not include "mlgo/protocol/p.h"',
        "include/mlgo/misc: not a layer",
        "src/lib/CMakeLists.txt: a library folder under src/",
        "src/lib/: only src/cli/ may live under src/",
        "src/CMakeLists.txt:1: add_library(mlgo_cli)",
        "env/CMakeLists.txt:2: env may not link mlgo::server",
        "server/CMakeLists.txt:1: server may not link mlgo::trace",
        "server/CMakeLists.txt:2: mlgo_server exports ${CMAKE_CURRENT_SOURCE_DIR} as an include root",
        "python/mlgo_env/env.py:3: python api may not import mlgo_env.policies",
        "python/mlgo_env/episodes.py:3: python api may not import mlgo_env.cluster",
        "python/mlgo_env/policies/p.py:3: python policies may not import mlgo_env.training",
        "python/mlgo_env/cluster/c.py:3: python cluster may not import mlgo_env.training",
        "python/mlgo_env/cluster/sub/d.py:2: python cluster may not import mlgo_env.demo",
        "python/mlgo_env/training/t.py:2: python training may not import mlgo_env.evaluate",
        "python/mlgo_env/wrappers: not a Python layer",
        "bench/b.py:1: imports probe of research/",
        "scripts/s.py:2: imports research.probe of research/",
    ]
    with tempfile.TemporaryDirectory(prefix="mlgo-check-layers-") as root:
        for name, text in files.items():
            path = os.path.join(root, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        problems = check(root)
    ok = True
    for want in expected:
        if not any(p.startswith(want) for p in problems):
            print(f"check_layers self-test: not reported: {want}", file=sys.stderr)
            ok = False
    for problem in problems:
        if not any(problem.startswith(want) for want in expected):
            print(f"check_layers self-test: reported wrongly: {problem}", file=sys.stderr)
            ok = False
    print("check_layers self-test: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    problems = check(os.path.abspath(args.root))
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check_layers: {len(problems)} layering violation(s); see docs/architecture.md",
              file=sys.stderr)
        return 1
    print("check_layers: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
