"""``torch.optim.Adam``, minus the 1-4 s import of ``torch._dynamo`` that its first call costs.

Every public method of ``torch.optim.Optimizer`` (``add_param_group``, ``zero_grad``,
``state_dict``, ``load_state_dict``) is wrapped in ``torch._disable_dynamo``, and ``step`` in a
guard that calls ``torch._dynamo.graph_break()``. Both import ``torch._dynamo`` (with sympy and
the compiler stack) on their first call, even when nothing is ever compiled: 0.9 s of CPU time
on the development machine and 4.7 s of the published command's 9.7 s of imports on an H200
(``docs/results/h200-2026-12-02-session12.md``).

:class:`Adam` is ``torch.optim.Adam`` with those wrappers taken off: the same class (a
subclass, so ``isinstance(opt, torch.optim.Adam)`` holds), the same state, the same
``state_dict`` format, and the same arithmetic, because its step calls torch's own Adam
functional (``torch.optim.adam.adam`` without its wrapper) with the arguments torch's step
passes. The wrappers only matter while Dynamo traces code that calls the optimizer. So once
``torch._dynamo`` is loaded (``trainer.compile``, ``trainer.compile_update``, or the user's
own code), every method goes through torch's wrapped one again. The same happens on a torch
whose optimizer lacks the hooks this relies on. ``tests/warp_drive/training/test_adam.py``
holds the two equal step for step, and checks that a training run never imports
``torch._dynamo``.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any

import torch
from torch.optim import adam as torch_adam

_DYNAMO = "torch._dynamo"


def _raw(function: Any) -> Callable[..., Any] | None:
    """``function`` without torch's Dynamo wrapper (``functools.wraps`` keeps it as
    ``__wrapped__``), or None when this torch does not wrap it that way."""
    return getattr(function, "__wrapped__", None)


_RAW_ADAM = _raw(torch_adam.adam)
_ADAM_KEYWORDS = frozenset(inspect.signature(_RAW_ADAM).parameters) if _RAW_ADAM else frozenset()
_RAW_METHODS = {
    name: _raw(getattr(torch.optim.Optimizer, name))
    for name in ("add_param_group", "zero_grad", "state_dict", "load_state_dict")
}


def _dynamo_loaded() -> bool:
    return _DYNAMO in sys.modules


class Adam(torch.optim.Adam):
    """``torch.optim.Adam`` whose methods do not import ``torch._dynamo`` (see the module
    docstring); the constructor takes the same arguments."""

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        raw = _RAW_METHODS[name]
        if raw is None or _dynamo_loaded():
            return getattr(super(), name)(*args, **kwargs)
        return raw(self, *args, **kwargs)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """As ``torch.optim.Optimizer.add_param_group``."""
        self._call("add_param_group", param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """As ``torch.optim.Optimizer.zero_grad``."""
        self._call("zero_grad", set_to_none)

    def state_dict(self) -> dict[str, Any]:
        """As ``torch.optim.Optimizer.state_dict``."""
        return self._call("state_dict")

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """As ``torch.optim.Optimizer.load_state_dict``."""
        self._call("load_state_dict", state_dict)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One Adam step, as ``torch.optim.Adam.step`` (torch's own Adam functional)."""
        if _RAW_ADAM is None or _dynamo_loaded() or self.defaults.get("differentiable"):
            return super().step(closure)
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        with torch.no_grad():  # what torch's step guard sets for differentiable=False
            health_check = getattr(self, "_accelerator_graph_capture_health_check", None)
            if health_check is not None:
                health_check()
            for group in self.param_groups:
                self._step_group(group)
        return loss

    def _step_group(self, group: dict[str, Any]) -> None:
        params: list[torch.Tensor] = []
        grads: list[torch.Tensor] = []
        exp_avgs: list[torch.Tensor] = []
        exp_avg_sqs: list[torch.Tensor] = []
        max_exp_avg_sqs: list[torch.Tensor] = []
        state_steps: list[torch.Tensor] = []
        has_complex = self._init_group(
            group, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps
        )
        beta1, beta2 = group["betas"]
        options = {
            "amsgrad": group["amsgrad"],
            "has_complex": has_complex,
            "beta1": beta1,
            "beta2": beta2,
            "lr": group["lr"],
            "weight_decay": group["weight_decay"],
            "eps": group["eps"],
            "maximize": group["maximize"],
            "foreach": group["foreach"],
            "capturable": group["capturable"],
            "differentiable": group["differentiable"],
            "fused": group["fused"],
            "grad_scale": getattr(self, "grad_scale", None),
            "found_inf": getattr(self, "found_inf", None),
            "decoupled_weight_decay": group.get("decoupled_weight_decay", False),
        }
        options = {k: v for k, v in options.items() if k in _ADAM_KEYWORDS}
        _RAW_ADAM(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, **options)
