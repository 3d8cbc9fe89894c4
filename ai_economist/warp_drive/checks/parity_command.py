"""``python -m ai_economist.warp_drive.checks.parity``: any registered environment's GPU kernels
against its reference, from the command line.

::

    python -m ai_economist.warp_drive.checks.parity --env ring_chase --backend numba \\
        --num_envs 8 --num_steps 20

Builds the reference and the backend of the environment registered under ``--env`` with its
registry entry's ``parity`` hook (``EnvEntry.parity``; every ``GpuEnvironment`` class has one:
its default arguments against its numpy reference), steps both side by side with the same
random allowed actions (``check_case``), and exits 0 printing ``consistent``, 1 printing the
first field / env / agent / step that differs, or 2 for an unknown environment (with the close
matches) or bad arguments; ``--list`` prints the environments the backend can check. Under
``NUMBA_ENABLE_CUDASIM=1`` the Numba backend runs on the CPU.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ai_economist.warp_drive.backend_names import EnvBackend

KERNEL_BACKENDS = (EnvBackend.NUMBA.value, EnvBackend.PYCUDA.value)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ai_economist.warp_drive.checks.parity",
        description="Check a registered environment's GPU kernels against its reference.",
    )
    parser.add_argument("--env", help="registered environment name")
    parser.add_argument("--list", action="store_true", help="list the checkable environments")
    parser.add_argument("--backend", required=True, choices=KERNEL_BACKENDS)
    parser.add_argument("--num_envs", type=int, default=4, help="environments (default 4)")
    parser.add_argument("--num_steps", type=int, default=20, help="steps (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="initial state and actions seed")
    return parser


def gpu_environment_classes(backend: str) -> dict[str, type]:
    """Every ``GpuEnvironment`` class registered with kernels for ``backend`` (the training
    registry's registration modules are imported first, so scenarios registered there count;
    kernel sources registered without a ``GpuEnvironment`` class are left out)."""
    from ai_economist.warp_drive.registrar import default_registrar
    from ai_economist.warp_drive.registry import env_names
    from ai_economist.warp_drive.scenario import GpuEnvironment

    env_names()  # imports every registration module
    classes = {}
    for name in default_registrar.env_names(backend):
        try:
            cls = default_registrar.get(name, env_backend=backend)
        except KeyError:  # a kernel source without a class
            continue
        if isinstance(cls, type) and issubclass(cls, GpuEnvironment):
            classes[name] = cls
    return classes


def parity_hooks(backend: str) -> dict[str, Callable[[str, int, int], Any]]:
    """Every registered environment's ``parity`` hook for ``backend``: the registry's entries
    that offer ``backend`` and a hook, then the ``GpuEnvironment`` classes registered with
    kernels for ``backend`` in WarpDrive's registrar (their default hook)."""
    from ai_economist.warp_drive.registrar import gpu_parity_hook
    from ai_economist.warp_drive.registry import ENVIRONMENTS

    hooks = {}
    for name in ENVIRONMENTS:
        entry = ENVIRONMENTS[name]
        offered = callable(entry.backends) or EnvBackend(backend) in entry.backends
        if entry.parity is not None and offered:
            hooks[name] = entry.parity
    for name, cls in gpu_environment_classes(backend).items():
        hooks.setdefault(name, gpu_parity_hook(cls))
    return hooks


def _unknown(name: str, backend: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return (
        f"error: no environment {name!r} with {backend} kernels and a parity check is "
        f"registered.{hint} Registered for {backend}: {', '.join(known) or 'none'}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the check; the exit status (0 consistent, 1 a difference, 2 bad input)."""
    args = _parser().parse_args(argv)
    for key in ("num_envs", "num_steps"):
        if getattr(args, key) < 1:
            print(f"error: --{key} must be >= 1, got {getattr(args, key)}", file=sys.stderr)
            return 2
    known = parity_hooks(args.backend)
    if args.list:
        print("\n".join(sorted(known)))
        return 0
    if args.env is None:
        print("error: --env NAME is required (or --list)", file=sys.stderr)
        return 2
    if args.env not in known:
        print(_unknown(args.env, args.backend, sorted(known)), file=sys.stderr)
        return 2
    from ai_economist.warp_drive.checks.parity import check_case

    case = known[args.env](args.backend, args.num_envs, args.seed)
    result = check_case(case, args.num_steps, seed=args.seed)
    if result.ok:
        print(
            f"{args.env}: {args.backend} consistent with {case.reference_name} "
            f"({args.num_envs} envs x {args.num_steps} steps, seed {args.seed})"
        )
        return 0
    print(f"inconsistent: {result.message}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
