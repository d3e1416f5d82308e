"""`python -m mlgo_env.tune`: tune a project's own modules into a table its build applies."""
