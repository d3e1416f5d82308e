"""Runs mlgo_env.training.train.main (python -m mlgo_env.train)."""

import sys

from ..training.train import main

sys.exit(main())
