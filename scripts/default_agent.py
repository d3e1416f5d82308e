#!/usr/bin/env python3
"""Plays inlining episodes following clang's own decision (reward 0 expected).

    scripts/default_agent.py --connect unix:/tmp/mlgo.sock --episodes 10
    scripts/default_agent.py --connect stdio -- build/src/mlgo-env --problem=inlining
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import random_agent  # noqa: E402

if __name__ == "__main__":
    random_agent.main(policy="default", doc=__doc__)
