"""Run configurations: load a YAML file, apply ``key.path=value`` overrides, validate.

The schema itself (keys, types, defaults) is declared once, in
:mod:`ai_economist.warp_drive.training.schema`; this module adds the file handling and the
command-line overrides, so every message names the key and the file it came from.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

from ai_economist.moved_modules import deprecated_attributes
from ai_economist.training.overrides import apply_overrides, parse_override
from ai_economist.training.preflight import accepted_kwargs, unknown_keys
from ai_economist.warp_drive.training.schema import ConfigError, describe_schema, validate_config

LEGACY_RUN_CONFIG_DIR = Path(__file__).resolve().parent / "run_configs"
"""Where the run configs lived before they moved beside their environments (1.7.1's
``ai_economist/training/run_configs/``); a path there still loads, with a DeprecationWarning."""

__all__ = [
    "ConfigError",
    "apply_overrides",
    "check_env_kwargs",
    "default_config_path",
    "describe_schema",
    "find_run_config",
    "packaged_config_names",
    "packaged_config_path",
    "load_run_config",
    "load_yaml",
    "parse_override",
    "validate_config",
]


def _packaged() -> dict[str, Path]:
    from ai_economist.warp_drive.registry import ENVIRONMENTS

    return ENVIRONMENTS.packaged_configs()


def default_config_path(env_name: str) -> Path:
    """The packaged run config ``<env_name>.yaml`` in the registered environment's
    ``config_dir`` (the path there even when the file is missing: reading it then says "file
    not found"); for a name that is no environment, the packaged config of that name (e.g.
    ``covid_and_economy_gpu_learning``); else ``ConfigError`` with the close matches."""
    from ai_economist.warp_drive.errors import UnknownNameError
    from ai_economist.warp_drive.registry import ENVIRONMENTS

    try:
        entry = ENVIRONMENTS[env_name]
    except (UnknownNameError, ImportError) as exc:
        packaged = packaged_config_path(env_name)
        if packaged is not None:
            return packaged
        raise ConfigError(f"--env {env_name}: {exc}") from exc
    if entry.config_dir is None:
        raise ConfigError(
            f"--env {env_name}: the environment ships no run configs (registered by "
            f"{entry.origin}); give --config PATH"
        )
    return entry.config_dir / f"{env_name}.yaml"


def packaged_config_names() -> list[str]:
    """Names of the run configs shipped with the registered environments."""
    return sorted(_packaged())


def packaged_config_path(name: str) -> Path | None:
    """The packaged run config ``name`` (with or without ``.yaml``), or ``None``."""
    return _packaged().get(name[: -len(".yaml")] if name.endswith(".yaml") else name)


def legacy_config_path(path: Path) -> Path | None:
    """The packaged config a path under the old ``ai_economist/training/run_configs/`` names
    (which no longer holds files), with a DeprecationWarning naming the new path."""
    try:
        under_legacy = path.resolve().parent == LEGACY_RUN_CONFIG_DIR
    except OSError:
        return None
    legacy_suffix = path.parent.as_posix().endswith("ai_economist/training/run_configs")
    if path.exists() or not (under_legacy or legacy_suffix):
        return None
    found = packaged_config_path(path.name)
    if found is not None:
        warnings.warn(
            f"run config {path}: ai_economist/training/run_configs/ is deprecated; the "
            f"packaged config now lives beside its environment: {found}",
            DeprecationWarning,
            stacklevel=3,
        )
    return found


def find_run_config(name_or_path: str | Path) -> Path:
    """A run-config file: ``name_or_path`` itself if it exists, else the packaged config of
    that name (``covid_and_economy_cpu_demo`` or ``covid_and_economy_cpu_demo.yaml``), else
    (deprecated) the packaged config an old ``ai_economist/training/run_configs/`` path names.

    Raises:
        ConfigError: none exists; the message lists the packaged names.
    """
    path = Path(name_or_path)
    if path.exists():
        return path
    if path.name == str(name_or_path):  # a bare name, no directory part
        packaged = packaged_config_path(path.name)
        if packaged is not None:
            return packaged
    legacy = legacy_config_path(path)
    if legacy is not None:
        return legacy
    raise ConfigError(
        f"--config {name_or_path}: no such file, and no packaged run config of that name; "
        f"packaged: {', '.join(packaged_config_names())}"
    )


__getattr__ = deprecated_attributes(
    __name__,
    {
        "RUN_CONFIG_DIR": (
            "run configs live beside their environments; use default_config_path(env_name) or "
            "packaged_config_path(name)",
            lambda: LEGACY_RUN_CONFIG_DIR,
        )
    },
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
    path = legacy_config_path(path) or path
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
