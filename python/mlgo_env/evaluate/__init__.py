"""``python -m mlgo_env.evaluate``: the evaluator's command (mlgo_env.training.evaluate
does the work; this entry point keeps its name wherever the evaluator lives)."""
