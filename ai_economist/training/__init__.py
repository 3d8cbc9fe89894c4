"""Training entry points: ``training_script`` (train), ``evaluate`` (replay a saved policy)
and ``config`` (run-config loading and validation)."""
