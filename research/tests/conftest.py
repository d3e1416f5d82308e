"""The research scripts' tests share the package tests' helpers (python/tests: the demo
corpora, run_module) and import the scripts' own modules (research/)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
for path in (os.path.join(HERE, "..", "..", "python", "tests"), os.path.join(HERE, "..")):
    path = os.path.abspath(path)
    if path not in sys.path:
        sys.path.insert(0, path)
