"""Where the research scripts live, for the tests that load or run them."""

import pathlib

RESEARCH = pathlib.Path(__file__).resolve().parents[1]
ROOT = RESEARCH.parent
