"""The one-step economy: the planner sets taxes, then agents choose how much to work."""
