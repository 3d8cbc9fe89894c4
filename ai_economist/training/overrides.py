"""Command-line ``key.path=value`` overrides of a run config: parsed as YAML, applied to a copy.

Kept apart from :mod:`ai_economist.training.config` so that the checks of
:mod:`ai_economist.training.preflight` can re-apply single overrides without an import circle.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Iterable
from typing import Any

import yaml

from ai_economist.warp_drive.training.schema import ConfigError


def parse_override(text: str) -> tuple[list[str], Any]:
    """Split ``trainer.num_envs=4`` into ``(["trainer", "num_envs"], 4)``.

    The value is read as YAML, so ``4`` is an int, ``1e-3`` a float, ``true`` a bool,
    ``[64,64]`` a list and ``/tmp/run`` a string.
    """
    key, sep, raw = text.partition("=")
    if not sep or not key.strip() or any(not part for part in key.strip().split(".")):
        raise ConfigError(f"override {text!r}: expected key.path=value, e.g. trainer.num_envs=4")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except (yaml.YAMLError, ValueError):  # ValueError: a date such as 2020-13-45
        value = raw
    if isinstance(value, datetime.date):
        value = raw.strip()  # env.start_date=2020-03-22 stays the string the env expects
    if isinstance(value, str) and _looks_like_float(raw):
        value = float(raw)  # YAML 1.1 reads "1e-3" as a string
    return key.strip().split("."), value


def _looks_like_float(raw: str) -> bool:
    try:
        float(raw)
    except ValueError:
        return False
    return True


def apply_overrides(config: dict, overrides: Iterable[str]) -> dict:
    """A copy of ``config`` with every ``key.path=value`` override set (sub-blocks created).

    A key may name an entry of a list of one-key blocks, such as a component of
    ``env.components``: ``env.components.PeriodicBracketTax.period=50``."""
    out = copy.deepcopy(config)
    for text in overrides:
        keys, value = parse_override(text)
        node = out
        for depth, key in enumerate(keys[:-1]):
            child = (
                _named_entry(node, key, text, keys[:depth])
                if isinstance(node, list)
                else node.get(key)
            )
            if child is None:
                child = node[key] = {}
            if not isinstance(child, (dict, list)) or (
                isinstance(child, list) and not all(_is_named_block(e) for e in child)
            ):
                dotted = ".".join(keys[: depth + 1])
                raise ConfigError(f"override {text!r}: '{dotted}' is a value, not a block")
            node = child
        if isinstance(node, list):
            raise ConfigError(
                f"override {text!r}: '{'.'.join(keys)}' names a list entry; set one of its keys "
                f"instead, e.g. {'.'.join(keys)}.<key>=value"
            )
        node[keys[-1]] = value
    return out


def _is_named_block(entry: Any) -> bool:
    return isinstance(entry, dict) and len(entry) == 1


def _named_entry(entries: list, key: str, text: str, parents: list[str]) -> dict:
    """The block of the entry ``{key: block}`` of ``entries`` (created empty when None)."""
    for entry in entries:
        if key in entry:
            if entry[key] is None:
                entry[key] = {}
            return entry[key]
    names = [next(iter(e)) for e in entries]
    raise ConfigError(
        f"override {text!r}: '{'.'.join(parents)}' has no entry {key!r}; its entries: "
        f"{', '.join(names) or 'none'}"
    )
