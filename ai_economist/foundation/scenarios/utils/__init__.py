"""Helpers shared by the economic scenarios: utility functions and social metrics."""

from ai_economist.foundation.scenarios.utils import rewards, social_metrics

__all__ = ["rewards", "social_metrics"]
