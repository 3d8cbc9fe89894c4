"""Gather-trade-build scenarios (``*/simple_wood_and_stone``); importing registers them."""

from ai_economist.foundation.scenarios.simple_wood_and_stone.dynamic_layout import Uniform
from ai_economist.foundation.scenarios.simple_wood_and_stone.layout_from_file import LayoutFromFile

__all__ = ["LayoutFromFile", "Uniform"]
