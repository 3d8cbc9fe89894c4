"""Actor-critic models (fully connected here, ``conv_lstm`` in :mod:`.conv_lstm`) and masked
categorical sampling.

One model serves every agent of a policy (shared weights): the agents' observations are
stacked into the batch dimension.  Action masks are applied to the logits before sampling,
so a masked action is never drawn and carries no probability mass in the losses.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import torch
from torch import nn

from ai_economist.warp_drive.env_protocol import PolicySpec
from ai_economist.warp_drive.obs_layout import Layout, ObsSegment
from ai_economist.warp_drive.training.checkpoint import verify_checkpoint
from ai_economist.warp_drive.training.conv_lstm import (
    build_conv_lstm,
    orthogonal_linear,
    relu_layers,
)
from ai_economist.warp_drive.training.fused_layers import (
    fused_dtype,
    linear_relu,
    linear_wide,
    training_dtype,
)
from ai_economist.warp_drive.training.schema import ConfigError

MASKED_LOGIT = torch.finfo(torch.float32).min
"""Logit written into masked actions: finite, so entropies stay free of ``0 * -inf``."""


class FullyConnectedActorCritic(nn.Module):
    """An MLP trunk (ReLU) with a policy head (logits) and a value head.

    Args:
        obs_dim: length of one agent's flat observation.
        num_actions: number of discrete actions (NO-OP included).
        fc_dims: hidden layer sizes of the trunk, e.g. ``[256, 256]``.
    """

    def __init__(self, obs_dim: int, num_actions: int, fc_dims: Sequence[int]) -> None:
        super().__init__()
        self.trunk, n_in = relu_layers(obs_dim, fc_dims)
        self.policy_head = orthogonal_linear(n_in, num_actions, 0.01)
        self.value_head = orthogonal_linear(n_in, 1, 1.0)
        self.obs_dim = obs_dim
        self.num_actions = num_actions
        self._joint_head: tuple[torch.Tensor, torch.Tensor] | None = None
        self._frozen_trunk: list[tuple[torch.Tensor, torch.Tensor]] | None = None
        self.fused_layers = False  # trainer.fused_layers: fused matmul+ReLU when training on a GPU
        self.bf16_heads = False  # trainer.bf16_heads: heads read a bf16 hidden layer in training

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits ``(..., num_actions)`` and values ``(...)`` of observations ``(..., obs_dim)``."""
        hidden = self._trunk(obs)
        if (
            self.bf16_heads
            and hidden.is_cuda
            and hidden.dtype == torch.bfloat16
            and torch.is_grad_enabled()
        ):
            return self._bf16_heads(hidden)
        if hidden.dtype != torch.float32:  # under bf16 autocast: the small heads in float32
            with torch.autocast(device_type=hidden.device.type, enabled=False):
                return self._heads(hidden.float())
        return self._heads(hidden)

    def _trunk(self, obs: torch.Tensor) -> torch.Tensor:
        """The hidden layers.  Without autograd on a GPU (acting), in float32 or under bfloat16
        autocast, each layer's ReLU runs in its matrix product's epilogue (one kernel instead
        of two; the same values as ``relu(addmm)`` up to the GEMM algorithm cuBLAS picks)."""
        dtype = _acting_dtype(obs)
        if dtype is None:
            return self._training_trunk(obs)
        layers = self._frozen_trunk
        if layers is None or layers[0][0].dtype != dtype:
            layers = self._trunk_weights(dtype)
        hidden = obs.reshape(-1, obs.shape[-1]).to(dtype)
        for weight, bias in layers:
            hidden = torch._addmm_activation(bias, hidden, weight.t())
        return hidden.reshape(*obs.shape[:-1], hidden.shape[-1])

    def _training_trunk(self, obs: torch.Tensor) -> torch.Tensor:
        """The hidden layers with autograd (or on the CPU): with ``fused_layers`` on a GPU each
        layer's ReLU in its matrix product's epilogue, forward and backward
        (:mod:`.fused_layers`); else ``nn.Linear`` and ``nn.ReLU``."""
        dtype = training_dtype(obs) if self.fused_layers else None
        if dtype is None:
            return self.trunk(obs)
        hidden = obs.reshape(-1, obs.shape[-1])
        for layer in self.trunk[::2]:
            hidden = linear_relu(hidden, layer.weight, layer.bias, dtype)
        return hidden.reshape(*obs.shape[:-1], hidden.shape[-1])

    def _trunk_weights(self, dtype: torch.dtype) -> list[tuple[torch.Tensor, torch.Tensor]]:
        return [(layer.weight.to(dtype), layer.bias.to(dtype)) for layer in self.trunk[::2]]

    def _heads(self, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Both heads as one matrix product (a GEMM with 1 or 11 outputs is slow on a GPU)."""
        if self._joint_head is not None:
            weight, bias = self._joint_head
        else:
            weight, bias = self.joint_head()
        out = nn.functional.linear(hidden, weight, bias)
        return out[..., :-1], out[..., -1]

    def _bf16_heads(self, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Both heads of a bfloat16 hidden layer (a bf16 update on a GPU) without a float32 copy
        of it: bfloat16 products accumulated and returned in float32 (:func:`linear_wide`)."""
        weight, bias = self.joint_head()
        out = linear_wide(hidden.reshape(-1, hidden.shape[-1]), weight, bias, torch.bfloat16)
        out = out.reshape(*hidden.shape[:-1], out.shape[-1])
        return out[..., :-1], out[..., -1]

    def joint_head(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The policy and value heads stacked into one weight matrix and bias."""
        weight = torch.cat([self.policy_head.weight, self.value_head.weight])
        bias = torch.cat([self.policy_head.bias, self.value_head.bias])
        return weight, bias

    @contextmanager
    def frozen_weights(self) -> Iterator[None]:
        """Prepare the weights once for every forward pass of the block (e.g. a rollout, where
        the weights do not change) instead of at every call: the heads stacked, and under
        bfloat16 autocast the hidden layers' weights cast.  No gradients flow through them."""
        with torch.no_grad():
            self._joint_head = self.joint_head()
            weight = self.policy_head.weight
            if weight.is_cuda and _autocast_bf16():
                self._frozen_trunk = self._trunk_weights(torch.bfloat16)
        try:
            yield
        finally:
            self._joint_head = None
            self._frozen_trunk = None


def _autocast_bf16() -> bool:
    return torch.is_autocast_enabled("cuda") and torch.get_autocast_dtype("cuda") == torch.bfloat16


def _acting_dtype(obs: torch.Tensor) -> torch.dtype | None:
    """The dtype of the fused hidden layers when acting (no autograd) on a GPU: float32, or
    bfloat16 under bfloat16 autocast; None where the plain layers run."""
    return None if torch.is_grad_enabled() else fused_dtype(obs)


MODEL_TYPES = ("fully_connected", "conv_lstm")
"""The ``model.type`` values :func:`build_model` knows."""


def build_model(
    model_config: dict, obs_dim: int, num_actions: int, layout: Layout | None = None
) -> nn.Module:
    """The model named by a policy's ``model`` block: ``fully_connected`` (an MLP on the flat
    vector) or ``conv_lstm`` (:mod:`.conv_lstm`; ``layout``: the observation's segments as the
    env declares them, :func:`~ai_economist.warp_drive.obs_layout.env_layout`)."""
    kind = model_config.get("type", "fully_connected")
    if kind == "conv_lstm":
        return build_conv_lstm(model_config, obs_dim, num_actions, layout)
    if kind != "fully_connected":
        raise ValueError(f"unknown model type {kind!r}; supported: {list(MODEL_TYPES)}")
    return FullyConnectedActorCritic(obs_dim, num_actions, model_config.get("fc_dims", [256, 256]))


def build_policy_model(
    tag: str,
    policy_config: dict,
    spec: PolicySpec,
    device: torch.device,
    layout: Layout | None = None,
) -> torch.nn.Module:
    """The model of policy ``tag``, with the initial weights named by its config loaded."""
    model = build_model(policy_config["model"], spec.obs_dim, spec.num_actions, layout)
    set_initial_logits(model, policy_config["model"].get("initial_logits") or [], tag)
    model = model.to(device)
    path = policy_config["model"].get("model_ckpt_filepath", "")
    if path:
        verify_checkpoint(path)  # a trainer checkpoint's SHA-256 sidecar, when it has one
        state = torch.load(path, map_location=device, weights_only=True)
        if "policies" in state:  # a full trainer checkpoint: take this policy's weights
            state = state["policies"][tag]["model"]
        model.load_state_dict(state)
    return model


def set_initial_logits(model: nn.Module, logits: Sequence[float], tag: str) -> None:
    """Write ``logits`` (``policy.<tag>.model.initial_logits``, one per action) into the policy
    head's bias; nothing for ``[]``.

    Raises:
        ConfigError: ``logits`` does not have one number per action of the model.
    """
    if not len(logits):
        return
    head = model.policy_head
    if len(logits) != head.out_features:
        raise ConfigError(
            f"policy.{tag}.model.initial_logits has {len(logits)} numbers; policy {tag!r} has "
            f"{head.out_features} actions (NO-OP first): give one number per action"
        )
    with torch.no_grad():
        head.bias.copy_(torch.as_tensor(list(logits), dtype=head.bias.dtype))


def load_policy_models(state: dict, policy_specs: dict) -> dict[str, nn.Module]:
    """``{tag: model}`` of a loaded checkpoint ``state`` (``load_checkpoint``) for the policies
    of ``policy_specs``: built from the checkpoint's config (and, for a ``conv_lstm``, the
    observation layout it saved), on the CPU, in eval mode."""
    models = {}
    for tag, spec in policy_specs.items():
        policy_config = copy.deepcopy(state["config"]["policy"][tag])
        policy_config["model"]["model_ckpt_filepath"] = ""
        saved = state["policies"][tag]
        layout = None
        if "observation_layout" in saved:
            layout = tuple(ObsSegment.from_plain(s) for s in saved["observation_layout"])
        model = build_policy_model(tag, policy_config, spec, torch.device("cpu"), layout)
        model.load_state_dict(saved["model"])
        models[tag] = model.eval()
    return models


def mask_logits(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Logits with the actions whose mask is 0 set to a huge negative value (the most negative
    finite value of the logits' dtype)."""
    fill = MASKED_LOGIT if logits.dtype == torch.float32 else torch.finfo(logits.dtype).min
    if masks.dtype == torch.bool:  # one kernel
        return torch.where(masks, logits, fill)
    return logits.masked_fill(masks == 0, fill)


def sample_masked(
    logits: torch.Tensor,
    masks: torch.Tensor,
    generator: torch.Generator | None = None,
    gumbel: torch.Tensor | None = None,
    out: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw one allowed action per row with the Gumbel-max trick.

    ``argmax(logits + G)`` with standard Gumbel noise ``G = -log(Exp(1))`` is a draw from
    ``softmax(logits)``; no host synchronisation is needed.  Pass pre-drawn noise as ``gumbel``
    (same shape as ``logits``), or let the function draw it from ``generator``.  ``out``:
    int64 and float tensors of shape ``(...)`` to write the actions and log-probabilities into
    (saves two copies, e.g. straight into rollout buffers).

    Returns:
        ``(actions, log_probs)``: int64 ``(...)`` and float ``(...)``.
    """
    masked = mask_logits(logits, masks)
    if gumbel is None:
        gumbel = draw_gumbel(torch.empty_like(masked), generator)
    if out is None:
        actions = (masked + gumbel).argmax(dim=-1)
        log_probs = torch.log_softmax(masked, dim=-1).gather(-1, actions.unsqueeze(-1))
        return actions, log_probs.squeeze(-1)
    actions, log_probs = out
    torch.argmax(masked + gumbel, dim=-1, out=actions)
    log_p = torch.log_softmax(masked, dim=-1)
    torch.gather(log_p, -1, actions.unsqueeze(-1), out=log_probs.unsqueeze(-1))
    return actions, log_probs


def draw_gumbel(out: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """Fill ``out`` with standard Gumbel noise in place (three kernels for any size)."""
    return out.exponential_(generator=generator).log_().neg_()


def greedy_masked(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """The most likely allowed action of each row."""
    return mask_logits(logits, masks).argmax(dim=-1)


def masked_log_prob_entropy(
    logits: torch.Tensor, masks: torch.Tensor, actions: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probabilities of ``actions`` and entropies of the masked distributions."""
    log_p = torch.log_softmax(mask_logits(logits, masks), dim=-1)
    log_prob = log_p.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)
    entropy = -(log_p.exp() * log_p).sum(-1)
    return log_prob, entropy


PRECISIONS = {"fp32": None, "bf16": torch.bfloat16}
"""``trainer.precision`` values and the autocast dtype of each (None: no autocast)."""


@contextmanager
def autocast(device: torch.device, precision: str, cache: bool = False) -> Iterator[None]:
    """Run the enclosed model calls in ``precision`` (``"fp32"``: as they are; ``"bf16"``:
    bfloat16 autocast on a CUDA device).  ``cache=True`` casts each weight once for the whole
    block (right when the weights do not change inside it, e.g. a rollout)."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {sorted(PRECISIONS)}, got {precision!r}")
    dtype = PRECISIONS[precision]
    if dtype is None or device.type != "cuda":
        yield
        return
    with torch.autocast("cuda", dtype=dtype, cache_enabled=cache):
        yield
