"""Tuning: searching the decisions of a project's own modules, and the tables that carry them
into its build.

- inlining_search.py: callee groups (every call site of one callee flipped together) added
  greedily per module, from clang's default or a one-number policy;
- regalloc_search.py: per-function greedy departures from the emulation of clang's default
  eviction advisor;
- baselines.py: the one-number inlining policies (constant shifts of clang's margin, no
  optional inline) and their evaluation; replay.py: replays of recorded trajectories.

Above the env API, its policies and its cluster runners; the trainer (mlgo_env.training)
may import it, nothing lower does. Modules are imported by name; importing this package
loads none of them.
"""
