"""Assistant stage: cited answers, the reading planner and the CLI."""
