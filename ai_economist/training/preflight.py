"""Checks that run before any training work: the ``env`` block, its components and the output
directory.  Each failure is a :class:`ConfigError` naming the key, the value and what was
expected, so the command line can stop with exit status 2 instead of a traceback.

The ``env`` block is checked in three steps: its keys against the environment's constructor
(following ``**kwargs`` up the class hierarchy), its ``components`` against the component
registry and their constructors, and finally by building one environment on the CPU, which
runs every value check the environment itself makes.
"""

from __future__ import annotations

import difflib
import inspect
import os
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ai_economist.training.overrides import apply_overrides
from ai_economist.warp_drive.training.schema import ConfigError

ENV_ERRORS = (ValueError, TypeError, LookupError, OSError, EOFError, zipfile.BadZipFile)
"""What an environment constructor raises for bad arguments (turned into ConfigError)."""

_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def accepted_kwargs(factory: Callable) -> list[str] | None:
    """Keyword arguments ``factory`` accepts, or None when it accepts any.

    For a class, ``**kwargs`` of an ``__init__`` are taken to be passed on to the parent
    class, so the names of the parents' ``__init__`` are added until one has no ``**kwargs``.
    """
    if inspect.isclass(factory):
        inits = [c.__dict__["__init__"] for c in factory.__mro__ if c is not object
                 and "__init__" in c.__dict__]  # fmt: skip
    else:
        inits = [factory]
    names: list[str] = []
    for init in inits:
        params = inspect.signature(init).parameters
        names += [n for n, p in params.items() if p.kind in _NAMED and n != "self"]
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            return names
    return None


def unknown_keys(keys: Any, known: list[str] | None, prefix: str) -> list[str]:
    """``unknown key 'env.foo' (did you mean 'env.food'?)`` for every key not in ``known``."""
    if known is None:
        return []
    out = []
    for key in keys:
        if key not in known:
            hint = difflib.get_close_matches(str(key), known, n=1)
            out.append(
                f"unknown key '{prefix}{key}'" + (f" (did you mean '{prefix}{hint[0]}'?)" if hint else "")
            )  # fmt: skip
    return out


def component_errors(components: Any) -> list[str]:
    """Unknown component names and unknown component arguments of an ``env.components`` list."""
    from ai_economist.foundation.base.validation import parse_component_specs
    from ai_economist.foundation.components import component_registry

    try:
        specs = parse_component_specs(components)
    except (TypeError, ValueError) as exc:
        return [f"'env.components': {exc}"]
    known = component_registry.entries
    errors = []
    for i, (name, kwargs) in enumerate(specs):
        if not component_registry.has(name):
            hint = difflib.get_close_matches(name, known, n=1)
            errors.append(
                f"'env.components[{i}]': unknown component {name!r}"
                + (f" (did you mean {hint[0]!r}?)" if hint else "")
                + f"; known: {', '.join(known)}"
            )
            continue
        accepted = accepted_kwargs(component_registry.get(name))
        errors += unknown_keys(kwargs, accepted, f"env.components[{i}].{name}.")
    return errors


def check_env_block(
    env_block: Mapping,
    env_class: Callable | None,
    build_one: Callable[[dict], Any] | None,
    source: str,
    overrides: Sequence[str] = (),
    file_env: Mapping | None = None,
) -> Any:
    """Check the ``env`` block before any work; return the environment built from it (or None
    without ``build_one``).

    Args:
        env_block: the run config's ``env`` mapping.
        env_class: the environment's class (or factory), for the key check.
        build_one: builds one environment on the CPU from the block (runs its value checks).
        source: the run config's file, for the messages.
        overrides: the command-line ``key.path=value`` overrides applied to the file's block
            ``file_env``: a rejected block is blamed on the one ``env.`` override that fails
            alone, when the file's own block builds.

    Raises:
        ConfigError: ``run config <source>: ...`` (or ``command-line override '...'``) naming
            the key or component, the value and what was expected.
    """

    def head() -> str:
        culprit = blame_env_override(build_one, file_env, overrides)
        if culprit is None:
            return f"run config {source}: "
        return f"command-line override {culprit!r} (applied to run config {source}): "

    errors = unknown_keys(env_block, accepted_kwargs(env_class) if env_class else None, "env.")
    if "components" in env_block:
        errors += component_errors(env_block["components"])
    if errors:
        raise ConfigError(head() + "; ".join(errors))
    if build_one is None:
        return None
    try:
        return build_one(dict(env_block))
    except ConfigError as exc:
        raise ConfigError(head() + str(exc)) from exc
    except ENV_ERRORS as exc:
        name = rejecting_component(exc, env_block) or getattr(env_class, "__name__", "the env")
        text = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        raise ConfigError(f"{head()}the 'env' block was rejected by {name}: {text}") from exc


def rejecting_component(exc: BaseException, env_block: Mapping) -> str | None:
    """``component Build (env.components[0])`` when a component's method raised ``exc``
    (the innermost one on the traceback), else None."""
    from ai_economist.foundation.base.base_component import BaseComponent

    found, tb = None, exc.__traceback__
    while tb is not None:
        owner = tb.tb_frame.f_locals.get("self")
        if isinstance(owner, BaseComponent):
            found = type(owner).name or type(owner).__name__
        tb = tb.tb_next
    if found is None:
        return None
    components = env_block.get("components") or []
    names = [next(iter(c)) if isinstance(c, Mapping) and len(c) == 1 else c for c in components]
    where = f" (env.components[{names.index(found)}])" if found in names else ""
    return f"component {found}{where}"


def blame_env_override(
    build_one: Callable[[dict], Any] | None, file_env: Mapping | None, overrides: Sequence[str]
) -> str | None:
    """The ``env.`` command-line override that makes the ``env`` block fail: the first that,
    applied alone to the file's block ``file_env``, fails to build; None when there is none,
    or when the file's own block fails too (then the file is to blame)."""
    candidates = [o for o in overrides if o.partition("=")[0].strip().split(".")[0] == "env"]
    if not candidates or build_one is None or file_env is None:
        return None

    def builds(extra: Sequence[str]) -> bool:
        try:
            build_one(dict(apply_overrides({"env": dict(file_env)}, extra)["env"]))
        except Exception:  # noqa: BLE001  (a probe: any failure counts)
            return False
        return True

    if not builds([]):
        return None
    return next((text for text in candidates if not builds([text])), None)


def check_output_dir(path: str | Path, key: str) -> None:
    """``path`` (a run directory, created later) must be a directory or creatable, writable.

    The deepest existing folder on the path is probed with a temporary file (removed at
    once), so read-only file systems and permissions are caught whoever runs the command.

    Raises:
        ConfigError: naming ``key`` and ``path``, saying what is in the way.
    """
    path = Path(path)
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        what = "is" if existing == path else f"is under {existing}, which is"
        raise ConfigError(
            f"{key} {path}: {what} a file, not a directory; give a directory path for the run"
        )
    try:
        fd, probe = tempfile.mkstemp(prefix=".write_probe_", dir=existing)
    except OSError as exc:
        raise ConfigError(
            f"{key} {path}: cannot write into {existing} ({exc.strerror}); choose a writable "
            "directory"
        ) from exc
    os.close(fd)
    os.unlink(probe)


def check_model_files(config: dict, source: str) -> None:
    """Every ``policy.<tag>.model.model_ckpt_filepath`` is empty or an existing file.

    Raises:
        ConfigError: naming the key and the path.
    """
    for tag, policy in config["policy"].items():
        path = policy["model"]["model_ckpt_filepath"]
        if path and not Path(path).is_file():
            what = "is a directory" if Path(path).is_dir() else "file not found"
            raise ConfigError(
                f"run config {source}: 'policy.{tag}.model.model_ckpt_filepath' = {path!r}: "
                f'{what}; expected a checkpoint or state_dict file, or "" for fresh weights'
            )
