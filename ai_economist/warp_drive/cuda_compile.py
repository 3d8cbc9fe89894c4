"""nvcc compilation of CUDA C sources to cubins, and the on-disk cubin cache (no GPU needed).

The cache lives in ``${AI_ECONOMIST_CACHE_DIR:-~/.cache/ai_economist}/cuda/<key>.cubin``; the
key is the sha256 of the source text (every ``#include``d project file included), the ``-D``
defines, the architecture, the flags and the nvcc version.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from ai_economist.warp_drive.errors import (
    GPURuntimeError,
    find_nvcc,
    nvcc_version,
    require_cuda_device,
)

_INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def cache_dir() -> Path:
    """``${AI_ECONOMIST_CACHE_DIR:-~/.cache/ai_economist}/cuda``."""
    root = os.environ.get("AI_ECONOMIST_CACHE_DIR") or "~/.cache/ai_economist"
    return Path(root).expanduser() / "cuda"


def normalize_arch(arch: str | int | tuple[int, int]) -> str:
    """``"sm_90"`` from ``"sm_90"``, ``"90"``, ``90`` or ``(9, 0)``."""
    if isinstance(arch, tuple):
        return f"sm_{arch[0]}{arch[1]}"
    text = str(arch).strip()
    if re.fullmatch(r"\d{2,3}a?", text):
        return f"sm_{text}"
    if re.fullmatch(r"sm_\d{2,3}a?", text):
        return text
    raise ValueError(f"Unrecognised GPU architecture {arch!r}; use e.g. 'sm_90' or (9, 0).")


def device_arch(device_index: int | None = None) -> str:
    """The ``sm_XY`` architecture of a visible GPU (``sm_90`` on an H200)."""
    device = require_cuda_device(device_index)
    import torch

    return normalize_arch(tuple(torch.cuda.get_device_capability(device)))


def format_define(name: str, value: int | float | bool | str) -> str:
    """``-DNAME=value``; floats become exact float32 literals (``0.1f``)."""
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise ValueError(f"Define name {name!r} is not a valid C identifier.")
    if isinstance(value, (bool, np.bool_)):
        text = str(int(value))
    elif isinstance(value, (int, np.integer)):
        text = str(int(value))
    elif isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            raise ValueError(f"Define {name}={value} is not finite.")
        text = repr(float(np.float32(value))) + "f"
    elif isinstance(value, str):
        text = value
    else:
        raise TypeError(f"Define {name}: unsupported value type {type(value).__name__}.")
    return f"-D{name}={text}"


def collect_sources(source_path: str | os.PathLike, include_dirs: Iterable = ()) -> list[Path]:
    """The source file and every file it includes that exists under its folder or
    ``include_dirs`` (recursively, each once, in discovery order; system headers skipped)."""
    include_dirs = [Path(d) for d in include_dirs]
    seen: list[Path] = []
    stack = [Path(source_path).resolve()]
    while stack:
        path = stack.pop(0)
        if path in seen:
            continue
        seen.append(path)
        for kind, name in _INCLUDE_RE.findall(path.read_text(errors="replace")):
            roots = ([path.parent] if kind == '"' else []) + include_dirs
            for root in roots:
                cand = (root / name).resolve()
                if cand.is_file():
                    stack.append(cand)
                    break
    return seen


def _build_command(
    nvcc: Path, source: Path, out: Path, arch: str, defines: Mapping, include_dirs, fast_math, extra
) -> list[str]:
    cmd = [str(nvcc), "-cubin", f"-arch={arch}", "-o", str(out), str(source)]
    for d in include_dirs:
        cmd += ["-I", str(d)]
    cmd += [format_define(k, v) for k, v in sorted(defines.items())]
    if fast_math:
        cmd += ["-O3", "--use_fast_math"]
    return cmd + list(extra)


def compile_cuda_source(
    source_path: str | os.PathLike,
    out_path: str | os.PathLike,
    arch: str | int | tuple[int, int] = "sm_90",
    defines: Mapping[str, int | float] | None = None,
    include_dirs: Iterable[str | os.PathLike] = (),
    *,
    fast_math: bool = False,
    nvcc: str | os.PathLike | None = None,
    extra_flags: Iterable[str] = (),
) -> Path:
    """Compile a ``.cu`` file to a cubin with nvcc; needs no GPU (usable in CI).

    Raises ``GPURuntimeError`` with nvcc's output when compilation fails.
    """
    source = Path(source_path)
    if not source.is_file():
        raise FileNotFoundError(f"CUDA source {source} does not exist.")
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = _build_command(
        find_nvcc(nvcc), source, out, normalize_arch(arch), dict(defines or {}),
        list(include_dirs), fast_math, list(extra_flags),
    )  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise GPURuntimeError(
            f"nvcc failed to compile {source} (exit {proc.returncode}).\ncommand: {' '.join(cmd)}\n"
            f"{proc.stderr.strip() or proc.stdout.strip()}"
        )
    return out


def cubin_cache_key(
    source_path, arch, defines=None, include_dirs=(), *, fast_math=False, nvcc=None, extra_flags=()
) -> str:
    """sha256 of the sources' text, the defines, the architecture, the flags and nvcc's version."""
    h = hashlib.sha256()
    for path in collect_sources(source_path, include_dirs):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    options = [format_define(k, v) for k, v in sorted(dict(defines or {}).items())]
    options += [normalize_arch(arch), f"fast_math={bool(fast_math)}", *extra_flags]
    h.update("\0".join(options).encode() + b"\0" + nvcc_version(nvcc).encode())
    return h.hexdigest()


def compile_cuda_cached(
    source_path, arch, defines=None, include_dirs=(), *, fast_math=False, nvcc=None, extra_flags=()
) -> Path:
    """The cached cubin for these inputs, compiled (atomically) when missing."""
    key = cubin_cache_key(
        source_path, arch, defines, include_dirs,
        fast_math=fast_math, nvcc=nvcc, extra_flags=tuple(extra_flags),
    )  # fmt: skip
    target = cache_dir() / f"{key}.cubin"
    if not target.is_file():
        tmp = target.with_name(f"{key}.{os.getpid()}.tmp.cubin")
        try:
            compile_cuda_source(
                source_path, tmp, arch, defines, include_dirs,
                fast_math=fast_math, nvcc=nvcc, extra_flags=extra_flags,
            )  # fmt: skip
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    return target
