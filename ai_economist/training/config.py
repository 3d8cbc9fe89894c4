"""Run configurations: load a YAML file, apply ``key.path=value`` overrides, validate.

The schema itself (keys, types, defaults) is declared once, in
:mod:`ai_economist.warp_drive.training.schema`; this module adds the file handling and the
command-line overrides, so every message names the key and the file it came from.
"""

from __future__ import annotations

import copy
import difflib
import inspect
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

from ai_economist.warp_drive.training.schema import ConfigError, describe_schema, validate_config

RUN_CONFIG_DIR = Path(__file__).resolve().parent / "run_configs"

__all__ = [
    "ConfigError",
    "RUN_CONFIG_DIR",
    "apply_overrides",
    "check_env_kwargs",
    "default_config_path",
    "describe_schema",
    "load_run_config",
    "load_yaml",
    "parse_override",
    "validate_config",
]


def default_config_path(env_name: str) -> Path:
    """``run_configs/<env_name>.yaml`` next to this module."""
    return RUN_CONFIG_DIR / f"{env_name}.yaml"


def load_yaml(path: str | Path) -> dict:
    """Read a YAML mapping; missing files and syntax errors become :class:`ConfigError`."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"run config {path}: file not found")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ConfigError(f"run config {path}: invalid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"run config {path}: the top level must be a mapping of keys")
    return data


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
    except yaml.YAMLError:
        value = raw
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
    """A copy of ``config`` with every ``key.path=value`` override set (sub-blocks created)."""
    out = copy.deepcopy(config)
    for text in overrides:
        keys, value = parse_override(text)
        node = out
        for depth, key in enumerate(keys[:-1]):
            child = node.get(key)
            if child is None:
                child = node[key] = {}
            if not isinstance(child, dict):
                dotted = ".".join(keys[: depth + 1])
                raise ConfigError(f"override {text!r}: '{dotted}' is a value, not a block")
            node = child
        node[keys[-1]] = value
    return out


def check_env_kwargs(env_block: dict, env_factory: Callable | None, source: str) -> None:
    """Reject ``env`` keys that the environment's constructor does not accept.

    Skipped when the constructor takes ``**kwargs`` (it then validates them itself).
    """
    if env_factory is None:
        return
    params = inspect.signature(env_factory).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    known = [n for n, p in params.items() if p.kind is not inspect.Parameter.VAR_POSITIONAL]
    bad = []
    for key in env_block:
        if key not in known:
            hint = difflib.get_close_matches(str(key), known, n=1)
            bad.append(
                f"unknown key 'env.{key}'" + (f" (did you mean 'env.{hint[0]}'?)" if hint else "")
            )
    if bad:
        raise ConfigError(f"run config {source}: " + "; ".join(bad))


def load_run_config(
    path: str | Path | None = None,
    overrides: Iterable[str] = (),
    base: dict | None = None,
    source: str | None = None,
) -> dict:
    """Load (or take ``base``), apply the overrides and validate; return the resolved config.

    Raises:
        ConfigError: naming the file (and the overrides) and every offending key.
    """
    overrides = list(overrides)
    if base is None:
        if path is None:
            raise ValueError("load_run_config needs a path or a base config")
        base = load_yaml(path)
    source = source or str(path)
    if overrides:
        source += " (with command-line overrides " + " ".join(overrides) + ")"
    try:
        merged = apply_overrides(base, overrides)
    except ConfigError as exc:
        raise ConfigError(f"run config {source}: {exc}") from exc
    return validate_config(merged, source)
