"""Packs the compiled core into the wheel.

`_core` is built by the project's CMake (scripts/setup.sh, or
`cmake --build build --target mlgo_env_core`), not by setuptools: this file
copies it from $MLGO_ENV_CORE_DIR or ../build/python into the package. Then

    pip install --no-build-isolation ./python

installs a package whose core needs no checkout (it still drives clang-22,
and the default demo corpus and IR2Vec vocabulary are those of the build
tree it was built in).
"""

import glob
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))


def find_core():
    dirs = [os.environ.get("MLGO_ENV_CORE_DIR", ""), os.path.join(HERE, "..", "build", "python")]
    for directory in dirs:
        found = sorted(glob.glob(os.path.join(directory, "_core*.so"))) if directory else []
        if found:
            return found[0]
    raise SystemExit("mlgo_env: the compiled core _core*.so was not found in "
                     + " or ".join(d for d in dirs if d)
                     + "; build it first (scripts/setup.sh) or set MLGO_ENV_CORE_DIR")


class BuildWithCore(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "mlgo_env")
        os.makedirs(target, exist_ok=True)
        shutil.copy2(find_core(), target)


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithCore}, distclass=BinaryDistribution)
