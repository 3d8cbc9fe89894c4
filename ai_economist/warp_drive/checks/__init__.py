"""Checks users run on their own environments: declaration checks and reference parity."""
