"""``python -m mlgo_env.train``: the trainer's command (mlgo_env.training.train does the
work; this entry point keeps its name wherever the trainer lives)."""
