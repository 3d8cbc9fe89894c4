"""Parse ``__global__`` kernel parameter lists and check them against a ``StateSpec``.

Used by tests to keep CUDA C signatures and the Python-side state declaration in sync.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def normalize_c_declaration(decl: str, ignore_const: bool = False) -> str:
    """Canonical spelling of a parameter declaration (``float *x`` -> ``float* x``)."""
    decl = re.sub(r"\b__restrict__\b|\b__restrict\b", " ", decl)
    if ignore_const:
        decl = re.sub(r"\bconst\b", " ", decl)
    decl = re.sub(r"\s*\*\s*", "* ", decl)
    return re.sub(r"\s+", " ", decl).strip()


def parse_kernel_parameters(source: str, kernel_name: str) -> list[str]:
    """The normalised parameter declarations of ``__global__`` kernel ``kernel_name``."""
    text = _strip_comments(source)
    for match in re.finditer(rf"\b{re.escape(kernel_name)}\s*\(", text):
        prefix = text[max(0, match.start() - 200) : match.start()]
        if "__global__" not in prefix.split(";")[-1].split("}")[-1]:
            continue
        depth, i = 1, match.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        body = text[match.end() : i - 1].strip()
        if not body or body == "void":
            return []
        return [normalize_c_declaration(p) for p in body.split(",")]
    raise ValueError(f"No __global__ kernel named {kernel_name!r} in the source.")


def check_kernel_signature(
    source: str,
    kernel_name: str,
    spec,
    names: Iterable[str] | None = None,
    scalars: str = "args",
    check_names: bool = True,
    ignore_const: bool = False,
) -> None:
    """Raise ``ValueError`` listing every mismatch between a kernel's parameters and ``spec``.

    The kernel must take exactly the declared arguments, in order. ``check_names=False``
    compares only types; ``ignore_const=True`` ignores ``const`` qualifiers.
    """
    actual = parse_kernel_parameters(source, kernel_name)
    expected = [normalize_c_declaration(d) for d in spec.c_declarations(names, scalars)]

    def key(decl: str) -> str:
        decl = normalize_c_declaration(decl, ignore_const)
        return decl if check_names else decl.rsplit(" ", 1)[0]

    problems = []
    if len(actual) != len(expected):
        problems.append(f"{len(actual)} parameters in the kernel, {len(expected)} declared")
    for i, (a, e) in enumerate(zip(actual, expected, strict=False)):
        if key(a) != key(e):
            problems.append(f"#{i}: kernel has '{a}', spec declares '{e}'")
    if problems:
        raise ValueError(
            f"Signature of {kernel_name} does not match the StateSpec: " + "; ".join(problems)
        )
