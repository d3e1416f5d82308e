"""Runs mlgo_env.training.evaluate.main (python -m mlgo_env.evaluate)."""

import sys

from ..training.evaluate import main

sys.exit(main())
