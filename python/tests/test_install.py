"""The package as pip installs it (ctest python.install, run without the conftest, which
imports the checkout's package; python.package leaves this file out).

The wheel is built from a copy of python/ with the build's core ($MLGO_ENV_CORE_DIR, else the
checkout's build/python), by Debian's pip, setuptools and wheel with no network; a fresh venv
(`/usr/bin/python3 -m venv --system-site-packages`, for Debian's numpy) installs it with no
network. Then, from a directory outside the checkout, with no PYTHONPATH and no
MLGO_ENV_CORE_DIR:

- walking the installed package with pkgutil finds every module of the source tree (and the
  core), each imports, and each is the venv's file;
- `python -m mlgo_env.X --help` exits 0 with a usage line for X in tune, train, evaluate,
  agents and demo, and every package with a `__main__` is one of them.

Nothing is left behind: the copy, the wheel and the venv live in one temporary directory.
Blocks for about a minute (the wheel, the venv, five programs).
"""
import glob
import json
import os
import shutil
import subprocess
import tempfile

PYTHON = "/usr/bin/python3"
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
CHECKOUT = os.path.dirname(PACKAGE_ROOT)
ENTRY_POINTS = ("tune", "train", "evaluate", "agents", "demo")

#: run by the venv's interpreter: every module of the installed package, imported
WALK = r"""
import importlib, json, pkgutil, sys
import mlgo_env
from mlgo_env import _native
core = _native.load_core()  # first: the walk then finds it loaded
names, files, failed = [], {}, {}
def onerror(name):
    failed[name] = repr(sys.exc_info()[1])
for m in pkgutil.walk_packages(mlgo_env.__path__, "mlgo_env.", onerror=onerror):
    names.append(m.name)
    if m.name.endswith(".__main__"):
        continue  # importing it runs the program: the --help runs cover it
    try:
        files[m.name] = importlib.import_module(m.name).__file__
    except BaseException as e:
        failed[m.name] = f"{type(e).__name__}: {e}"
files["mlgo_env"] = mlgo_env.__file__
print(json.dumps({"names": names, "files": files, "failed": failed, "core": core.__file__}))
"""


def source_modules():
    """Dotted names of the .py files under python/mlgo_env, and the core's."""
    names = {"mlgo_env._core"}
    for dirpath, dirs, files in os.walk(os.path.join(PACKAGE_ROOT, "mlgo_env")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        package = os.path.relpath(dirpath, PACKAGE_ROOT).replace(os.sep, ".")
        for name in files:
            if name == "__init__.py":
                names.add(package)
            elif name.endswith(".py"):
                names.add(f"{package}.{name[:-3]}")
    names.discard("mlgo_env")  # pkgutil walks below the package
    return names


def run(argv, cwd, env, what):
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{what} failed ({done.returncode}):\n{done.stdout}{done.stderr}"
    return done.stdout


def clean_env():
    """The environment with nothing that points into the checkout or a user's site."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "MLGO_ENV_CORE_DIR", "PYTHONHOME", "PIP_INDEX_URL")}
    return dict(env, PYTHONNOUSERSITE="1", PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")


def test_the_wheel_installs_into_a_fresh_venv_and_runs_from_outside_the_checkout():
    core_dir = os.environ.get("MLGO_ENV_CORE_DIR") or os.path.join(CHECKOUT, "build", "python")
    with tempfile.TemporaryDirectory(prefix="mlgo-install-test-") as tmp:
        src, dist = os.path.join(tmp, "src"), os.path.join(tmp, "dist")
        venv, outside = os.path.join(tmp, "venv"), os.path.join(tmp, "elsewhere")
        shutil.copytree(PACKAGE_ROOT, src, ignore=shutil.ignore_patterns(
            "build", "*.egg-info", "__pycache__"))
        os.mkdir(outside)
        env = clean_env()
        run([PYTHON, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index",
             "--no-cache-dir", "-w", dist, src], tmp, dict(env, MLGO_ENV_CORE_DIR=core_dir),
            "pip wheel")
        wheels = glob.glob(os.path.join(dist, "mlgo_env-*.whl"))
        assert len(wheels) == 1, os.listdir(dist)
        run([PYTHON, "-m", "venv", "--system-site-packages", venv], tmp, env, "venv")
        python = os.path.join(venv, "bin", "python")
        run([python, "-m", "pip", "install", "--no-index", "--no-deps", "--no-cache-dir",
             wheels[0]], outside, env, "pip install")

        walked = json.loads(run([python, "-c", WALK], outside, env, "the import walk"))
        assert walked["failed"] == {}, walked["failed"]
        assert set(walked["names"]) == source_modules(), (
            f"missing: {sorted(source_modules() - set(walked['names']))}, "
            f"extra: {sorted(set(walked['names']) - source_modules())}")
        for name, path in [*walked["files"].items(), ("mlgo_env._core", walked["core"])]:
            assert path.startswith(venv + os.sep), f"{name} is {path}, not the venv's"

        mains = {n[:-len(".__main__")] for n in walked["names"] if n.endswith(".__main__")}
        assert mains <= {f"mlgo_env.{p}" for p in ENTRY_POINTS}, mains
        for program in ENTRY_POINTS:
            out = run([python, "-m", f"mlgo_env.{program}", "--help"], outside, env,
                      f"python -m mlgo_env.{program} --help")
            assert "usage:" in out.lower(), f"mlgo_env.{program} --help:\n{out}"
