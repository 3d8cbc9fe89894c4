"""Code derived from an environment's declaration: the C state header and parameter lists.

``generate_header(env_name, spec, constants)`` writes ``<env name>_state.h`` for the ``.cu``
files of an environment:

* ``#define``s of the constants (the environment's dimensions in upper case, e.g.
  ``NUM_AGENTS``, and ``KernelSpec.defines``), each guarded by ``#ifndef``;
* ``<PREFIX>_STATE_PARAMS``: the kernel parameter list (every ``kernel_arg`` field in
  declaration order, scalar constants by value), so a kernel can be declared as
  ``extern "C" __global__ void step(RING_CHASE_STATE_PARAMS)``; ``<PREFIX>`` is the
  environment name in upper case with non-identifier characters replaced by ``_``;
* a comment line per field (shape, per-env or constant, reset policy, doc).

With ``KernelSpec.state_struct`` the header also defines ``struct <state_struct>``, one device
pointer per ``kernel_arg`` field in declaration order, and ``pointer_table`` builds the
matching device table (kernels then take one ``const <state_struct>* d``).

``numba_parameter_names(spec)`` is the matching Numba kernel parameter list.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ai_economist.warp_drive.state import StateField, StateSpec


def c_prefix(env_name: str) -> str:
    """``"ring_chase"`` -> ``"RING_CHASE"`` (a valid C identifier prefix)."""
    text = re.sub(r"\W", "_", str(env_name)).upper()
    return text if re.match(r"[A-Z_]", text) else f"ENV_{text}"


def header_name(env_name: str) -> str:
    """The generated header's file name, ``<env name>_state.h``."""
    return f"{re.sub(r'[^A-Za-z0-9_.-]', '_', str(env_name))}_state.h"


def params_macro(env_name: str) -> str:
    """The name of the parameter-list macro, ``<PREFIX>_STATE_PARAMS``."""
    return f"{c_prefix(env_name)}_STATE_PARAMS"


def c_literal(value: int | float | bool) -> str:
    """A C literal: ints as ints, floats as exact float32 literals (``0.1f``)."""
    if isinstance(value, (bool, np.bool_, int, np.integer)):
        return str(int(value))
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"non-finite constant {value}")
    text = repr(float(np.float32(value)))
    if "e" not in text and "." not in text:
        text += ".0"
    return text + "f"


def dim_defines(dims: Mapping[str, int]) -> dict[str, int]:
    """``{"NUM_AGENTS": 5, ...}``: the environment's dimensions as C constants."""
    out = {}
    for name, value in dims.items():
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise ValueError(f"dimension name {name!r} is not a valid C identifier")
        out[name.upper()] = int(value)
    return out


def field_summary(field: StateField) -> str:
    """``[shape] per-env, reset <policy>`` or ``[shape] constant`` (a header comment)."""
    shape = "x".join(str(d) for d in field.shape) or "scalar"
    if not field.per_env:
        return f"[{shape}] constant"
    return f"[{shape}] per-env, reset {field.reset}"


def header_text(guard: str, generated_by: list[str], body: list[str]) -> str:
    """A generated header: the ``generated_by`` comment lines, then ``body`` inside the
    include guard ``guard``."""
    lines = [*generated_by, f"#ifndef {guard}", f"#define {guard}", "", *body]
    return "\n".join([*lines, "", f"#endif  // {guard}", ""])


def struct_lines(struct_name: str, spec: StateSpec) -> list[str]:
    """``struct <struct_name> { float* x; const int* k; ... };``: one device pointer per
    ``kernel_arg`` field, in declaration order (the order of ``pointer_table``)."""
    if not re.fullmatch(r"[A-Za-z_]\w*", struct_name):
        raise ValueError(f"state_struct {struct_name!r} is not a valid C identifier")
    lines = [
        "// ---- device state: one pointer per kernel_arg field, in declaration order;",
        "// per-env fields hold num_envs consecutive slices of the listed shape.",
        f"struct {struct_name} {{",
    ]
    for f in spec.kernel_fields():
        if f.is_scalar_constant:
            raise ValueError(
                f"{struct_name}: scalar constant {f.name!r} cannot be a struct pointer; give it "
                "as a KernelSpec.defines constant (or declare it with kernel_arg=False)"
            )
        lines.append(f"  {f.c_declaration()};  // {field_summary(f)} ({f.name})")
    return [*lines, "};"]


def generate_header(
    env_name: str,
    spec: StateSpec,
    constants: Mapping[str, int | float],
    state_struct: str | None = None,
) -> str:
    """The text of ``<env name>_state.h`` for a resolved spec and its constants; with
    ``state_struct`` also the struct of device pointers (``KernelSpec.state_struct``)."""
    lines = ["// ---- constants"]
    for name, value in constants.items():
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise ValueError(f"{env_name}: constant name {name!r} is not a valid C identifier")
        lines += [f"#ifndef {name}", f"#define {name} {c_literal(value)}", "#endif"]
    lines += ["", "// ---- state fields, in declaration order"]
    for f in spec:
        arg = "" if f.kernel_arg else ", not a kernel argument"
        doc = f": {f.doc}" if f.doc else ""
        lines.append(f"// {f.cname} {field_summary(f)}{arg}{doc}")
    decls = spec.c_declarations()
    lines += ["", "// ---- the step kernels' parameters (kernel_arg fields, declaration order)"]
    lines.append(f"#define {params_macro(env_name)} \\")
    lines += [f"    {d}, \\" for d in decls[:-1]] + (
        [f"    {decls[-1]}"] if decls else ["    void"]
    )
    if state_struct is not None:
        lines += ["", *struct_lines(state_struct, spec)]
    generated_by = [
        "// Generated by ai_economist/warp_drive/codegen.py from the state declaration of",
        f"// the environment {env_name!r}. Do not edit.",
    ]
    return header_text(f"AI_ECONOMIST_{c_prefix(env_name)}_STATE_H_", generated_by, lines)


def expand_params_macro(source: str, env_name: str, spec: StateSpec) -> str:
    """``source`` with ``<PREFIX>_STATE_PARAMS`` replaced by the parameter list (for checks)."""
    return re.sub(rf"\b{params_macro(env_name)}\b", ", ".join(spec.c_declarations()), source)


def header_cache_dir(subdir: str = "state_headers") -> Path:
    """``${AI_ECONOMIST_CACHE_DIR:-~/.cache/ai_economist}/<subdir>``."""
    root = os.environ.get("AI_ECONOMIST_CACHE_DIR") or "~/.cache/ai_economist"
    return Path(root).expanduser() / subdir


def write_header(env_name: str, text: str, directory: str | os.PathLike | None = None) -> Path:
    """Write the header ``<env name>_state.h`` into a folder named after its content; returns
    that folder (pass it to nvcc with ``-I``)."""
    return write_header_file(header_name(env_name), text, directory)


def write_header_file(
    file_name: str,
    text: str,
    directory: str | os.PathLike | None = None,
    cache_subdir: str = "state_headers",
) -> Path:
    """Write ``text`` as ``file_name`` into ``directory``, by default the folder
    ``header_cache_dir(cache_subdir)/<digest of text>``, atomically and only if it differs;
    returns the folder."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    folder = Path(directory) if directory is not None else header_cache_dir(cache_subdir) / digest
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / file_name
    if not target.is_file() or target.read_text() != text:
        tmp = folder / f"{target.name}.{os.getpid()}.tmp"
        tmp.write_text(text)
        os.replace(tmp, target)
    return folder


def pointer_table(data_manager, spec: StateSpec):
    """int64 tensor (on the data manager's device) of the ``kernel_arg`` fields' ``data_ptr()``
    in declaration order: the ``struct`` of ``struct_lines``, filled once."""
    import torch

    ptrs = []
    for f in spec.kernel_fields():
        tensor = data_manager.data_on_device_via_torch(f.name)
        if not tensor.is_contiguous():
            raise ValueError(f"{f.name} is not contiguous on the device")
        ptrs.append(tensor.data_ptr())
    table = np.asarray(ptrs, dtype=np.uint64).view(np.int64)
    return torch.from_numpy(table.copy()).to(data_manager.device)


def numba_parameter_names(spec: StateSpec) -> list[str]:
    """The Numba kernels' parameters: the ``kernel_arg`` fields' C names, in declaration order."""
    return [f.cname for f in spec.kernel_fields()]
