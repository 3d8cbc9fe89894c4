"""Run configurations: load a YAML file, apply ``key.path=value`` overrides, validate.

The schema itself (keys, types, defaults) is declared once, in
:mod:`ai_economist.warp_drive.training.schema`; this module adds the file handling and the
command-line overrides, so every message names the key and the file it came from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

from ai_economist.training.overrides import apply_overrides, parse_override
from ai_economist.training.preflight import accepted_kwargs, unknown_keys
from ai_economist.warp_drive.training.schema import ConfigError, describe_schema, validate_config

RUN_CONFIG_DIR = Path(__file__).resolve().parent / "run_configs"

__all__ = [
    "ConfigError",
    "RUN_CONFIG_DIR",
    "apply_overrides",
    "check_env_kwargs",
    "default_config_path",
    "describe_schema",
    "find_run_config",
    "packaged_config_names",
    "load_run_config",
    "load_yaml",
    "parse_override",
    "validate_config",
]


def default_config_path(env_name: str) -> Path:
    """``run_configs/<env_name>.yaml`` next to this module."""
    return RUN_CONFIG_DIR / f"{env_name}.yaml"


def packaged_config_names() -> list[str]:
    """Names of the run configs shipped with the package (``run_configs/*.yaml``)."""
    return sorted(p.stem for p in RUN_CONFIG_DIR.glob("*.yaml"))


def find_run_config(name_or_path: str | Path) -> Path:
    """A run-config file: ``name_or_path`` itself if it exists, else the packaged config of
    that name (``covid_and_economy_cpu_demo`` or ``covid_and_economy_cpu_demo.yaml``).

    Raises:
        ConfigError: neither exists; the message lists the packaged names.
    """
    path = Path(name_or_path)
    if path.exists():
        return path
    if path.name == str(name_or_path):  # a bare name, no directory part
        packaged = RUN_CONFIG_DIR / (path.name if path.suffix == ".yaml" else f"{path.name}.yaml")
        if packaged.is_file():
            return packaged
    raise ConfigError(
        f"--config {name_or_path}: no such file, and no packaged run config of that name; "
        f"packaged: {', '.join(packaged_config_names())}"
    )


class UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that rejects a key given twice in one mapping (PyYAML keeps the
    last silently, so a repeated ``trainer:`` block would drop the first one)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, yaml.Mark] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node.start_mark)
            except TypeError:  # an unhashable key: SafeLoader reports it below
                continue
            if first is not key_node.start_mark:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first given on line {first.line + 1}); "
                    "each key may appear once in a mapping",
                    key_node.start_mark,
                )
        return super().construct_mapping(node, deep=deep)


def _read_text(path: Path) -> str:
    """The file's text; unreadable, binary and non-UTF-8 files become :class:`ConfigError`."""
    if path.is_dir():
        raise ConfigError(f"run config {path}: is a directory, expected a YAML file")
    if not path.is_file():
        raise ConfigError(f"run config {path}: file not found")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"run config {path}: cannot be read ({exc.strerror})") from exc
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise ConfigError(
            f"run config {path}: is UTF-16 text; expected a UTF-8 YAML file (re-save it as UTF-8)"
        )
    nul = data.find(b"\0")
    if nul >= 0:
        raise ConfigError(
            f"run config {path}: looks like a binary file (NUL byte at offset {nul}); "
            "expected a UTF-8 YAML text file"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"run config {path}: byte {data[exc.start]:#04x} at offset {exc.start} is not "
            "UTF-8; expected a UTF-8 YAML text file (re-save it as UTF-8)"
        ) from exc


def load_yaml(path: str | Path) -> dict:
    """Read a YAML mapping; unreadable files, syntax errors and duplicate keys become
    :class:`ConfigError`."""
    path = Path(path)
    text = _read_text(path)
    try:
        data = yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 (a SafeLoader subclass)
    except yaml.YAMLError as exc:
        raise ConfigError(f"run config {path}: invalid YAML: {exc}") from exc
    except ValueError as exc:  # PyYAML reads 2020-13-45 as a date and fails to build it
        raise ConfigError(f"run config {path}: invalid value ({exc}), e.g. a date such as "
                          "2020-13-45; quote it or give a real date (YYYY-MM-DD)") from exc  # fmt: skip
    if not isinstance(data, dict):
        raise ConfigError(f"run config {path}: the top level must be a mapping of keys")
    return data


def check_env_kwargs(env_block: dict, env_factory: Callable | None, source: str) -> None:
    """Reject ``env`` keys that the environment's constructor does not accept.

    ``**kwargs`` of a class's ``__init__`` are followed to its parent classes; the check is
    skipped only when the chain never closes (see :func:`.preflight.accepted_kwargs`).
    """
    if env_factory is None:
        return
    bad = unknown_keys(env_block, accepted_kwargs(env_factory), "env.")
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
