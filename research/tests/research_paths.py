"""Where the research scripts live, for the tests that load or run them. Importing this
module also makes the package tests' helpers (python/tests: the demo corpora, run_module)
and the scripts' own modules (research/) importable. (Not a conftest.py: the package tests
import theirs by the name "conftest".)"""

import pathlib
import sys

RESEARCH = pathlib.Path(__file__).resolve().parents[1]
ROOT = RESEARCH.parent
for _path in (ROOT / "python" / "tests", RESEARCH):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))
