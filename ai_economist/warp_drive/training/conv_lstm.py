"""A convolutional LSTM actor-critic (run-config ``model.type: conv_lstm``).

The family of the original's ``keras_conv_lstm`` (RLlib tutorial ``tf_models.KerasConvLSTM``):
the observation's map segments (declared by the env, :mod:`~ai_economist.warp_drive.obs_layout`)
go through convolutions -- index maps (integer codes) embedded first -- are flattened and joined
with the plain segments, then dense ReLU layers, a layer norm, an LSTM cell and the policy and
value heads.  Logits are masked outside the model, as for every model (:func:`.models.mask_logits`).

Recurrent state: one ``(h, c)`` per agent, packed as a ``(..., 2 * lstm_size)`` tensor
(:attr:`ConvLSTMActorCritic.state_size`).  :meth:`~ConvLSTMActorCritic.step` acts one step;
:meth:`~ConvLSTMActorCritic.forward_sequence` re-runs stored sequences in the update (truncated
back-propagation through time from a stored state, see :mod:`.recurrent`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from ai_economist.warp_drive.obs_layout import Layout, ObsSegment, flat_layout, spatial_segments


def orthogonal_linear(n_in: int, n_out: int, std: float) -> nn.Linear:
    """A linear layer with orthogonal weights of gain ``std`` and zero bias (both models')."""
    layer = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(layer.weight, std)
    nn.init.zeros_(layer.bias)
    return layer


def relu_layers(n_in: int, widths: Sequence[int]) -> tuple[nn.Sequential, int]:
    """``Linear`` + ``ReLU`` layers of ``widths`` (orthogonal weights of gain sqrt(2)) and their
    output size (both models' dense stacks)."""
    layers: list[nn.Module] = []
    for width in widths:
        layers += [orthogonal_linear(n_in, int(width), math.sqrt(2.0)), nn.ReLU()]
        n_in = int(width)
    return nn.Sequential(*layers), n_in


class ConvLSTMActorCritic(nn.Module):
    """Convolutions over the maps, dense layers, an LSTM cell, policy and value heads.

    Args:
        layout: the segments of the observation vector (:func:`.obs_layout.flat_layout` when
            the env declares none: then the model is dense layers and an LSTM).
        num_actions: number of discrete actions (NO-OP included).
        conv_filters: output channels of each convolution (``[]``: the maps are flattened as
            they are).
        conv_kernel: square kernel size of every convolution.
        conv_stride: stride of every convolution (no padding).
        fc_dims: dense layer sizes after the join.
        lstm_size: size of the LSTM's hidden and cell state.
        index_vocab: index codes are clamped to ``[0, index_vocab)`` and embedded.
        index_embedding_dim: channels of each index map's embedding.
    """

    recurrent = True

    def __init__(
        self,
        layout: Sequence[ObsSegment],
        num_actions: int,
        conv_filters: Sequence[int] = (16, 32),
        conv_kernel: int = 3,
        conv_stride: int = 2,
        fc_dims: Sequence[int] = (128, 128),
        lstm_size: int = 128,
        index_vocab: int = 100,
        index_embedding_dim: int = 4,
    ) -> None:
        super().__init__()
        self.layout: Layout = tuple(layout)
        self.obs_dim = sum(s.size for s in self.layout)
        self.num_actions = num_actions
        self.lstm_size = int(lstm_size)
        self.index_vocab = int(index_vocab)
        maps, plain = spatial_segments(self.layout)
        self._offsets = [0]
        for s in self.layout:
            self._offsets.append(self._offsets[-1] + s.size)
        self._maps, self._plain = maps, plain
        n_join = sum(self.layout[i].size for i in plain)
        self.embedding: nn.Embedding | None = None
        self.convs = nn.ModuleList()
        if maps:
            value_ch = sum(self.layout[i].shape[0] for i in maps if self.layout[i].kind == "value")
            index_ch = sum(self.layout[i].shape[0] for i in maps if self.layout[i].kind == "index")
            if index_ch:
                self.embedding = nn.Embedding(self.index_vocab, int(index_embedding_dim))
            channels = value_ch + index_ch * int(index_embedding_dim)
            h, w = self.layout[maps[0]].shape[1:]
            for filters in conv_filters:
                h, w = (
                    _conv_out(h, conv_kernel, conv_stride),
                    _conv_out(w, conv_kernel, conv_stride),
                )
                if h < 1 or w < 1:
                    raise ValueError(
                        f"model.conv_filters {list(conv_filters)} with conv_kernel {conv_kernel} "
                        f"and conv_stride {conv_stride} shrink the {self.layout[maps[0]].shape[1:]} "
                        f"maps to nothing; use fewer or smaller convolutions"
                    )
                conv = nn.Conv2d(channels, int(filters), conv_kernel, stride=conv_stride)
                nn.init.orthogonal_(conv.weight, math.sqrt(2.0))
                nn.init.zeros_(conv.bias)
                self.convs.append(conv)
                channels = int(filters)
            n_join += channels * h * w
        self.dense, n_in = relu_layers(n_join, fc_dims)
        self.norm = nn.LayerNorm(n_in)
        self.lstm = nn.LSTMCell(n_in, self.lstm_size)
        self.policy_head = orthogonal_linear(self.lstm_size, num_actions, 0.01)
        self.value_head = orthogonal_linear(self.lstm_size, 1, 1.0)

    @property
    def state_size(self) -> int:
        """Length of one agent's packed recurrent state ``[h, c]``."""
        return 2 * self.lstm_size

    def initial_state(self, *lead: int, device: torch.device | str = "cpu") -> torch.Tensor:
        """Zero states of shape ``(*lead, state_size)`` (the state at an episode's start)."""
        return torch.zeros(*lead, self.state_size, device=device)

    def encode(self, obs: torch.Tensor) -> torch.Tensor:
        """The LSTM's input ``(..., n)`` of observations ``(..., obs_dim)``."""
        lead = obs.shape[:-1]
        flat = obs.reshape(-1, obs.shape[-1])
        parts = [self._segment(flat, i) for i in self._plain]
        if self._maps:
            parts.append(self._conv(flat))
        joined = torch.cat(parts, dim=-1) if len(parts) > 1 else parts[0]
        hidden = self.norm(self.dense(joined))
        return hidden.reshape(*lead, hidden.shape[-1])

    def step(
        self, obs: torch.Tensor, state: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One step: ``(logits (..., A), values (...), new_state (..., state_size))``."""
        return self._cell(self.encode(obs), state)

    def forward(
        self, obs: torch.Tensor, state: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits and values of one step from ``state`` (zeros: an episode's first step).
        Acting over several steps needs :meth:`step`, which also returns the next state."""
        if state is None:
            state = self.initial_state(*obs.shape[:-1], device=obs.device)
        logits, values, _ = self.step(obs, state)
        return logits, values

    def forward_sequence(
        self, obs: torch.Tensor, state: torch.Tensor, resets: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Re-run sequences: ``obs`` (S, L, obs_dim) from ``state`` (S, state_size); the state
        is zeroed before step l where ``resets[:, l]`` (an episode began there; step 0 uses
        ``state`` as given).  Returns logits (S, L, A) and values (S, L)."""
        inputs = self.encode(obs)
        keep = (~resets.bool()).to(inputs.dtype).unsqueeze(-1)
        logits, values = [], []
        for t in range(obs.shape[1]):
            if t > 0:
                state = state * keep[:, t]
            step_logits, step_values, state = self._cell(inputs[:, t], state)
            logits.append(step_logits)
            values.append(step_values)
        return torch.stack(logits, dim=1), torch.stack(values, dim=1)

    # ------------------------------------------------------------------ internals
    def _cell(
        self, inputs: torch.Tensor, state: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        lead = inputs.shape[:-1]
        h, c = state.reshape(-1, self.state_size).to(inputs.dtype).chunk(2, dim=-1)
        h, c = self.lstm(inputs.reshape(-1, inputs.shape[-1]), (h.contiguous(), c.contiguous()))
        out = h.float() if h.dtype != torch.float32 else h
        logits = self.policy_head(out).reshape(*lead, self.num_actions)
        values = self.value_head(out).reshape(lead)
        new_state = torch.cat([h, c], dim=-1).float().reshape(*lead, self.state_size)
        return logits, values, new_state

    def _segment(self, flat: torch.Tensor, i: int) -> torch.Tensor:
        return flat[:, self._offsets[i] : self._offsets[i + 1]]

    def _conv(self, flat: torch.Tensor) -> torch.Tensor:
        values, indices = [], []
        for i in self._maps:
            seg = self.layout[i]
            grid = self._segment(flat, i).reshape(-1, *seg.shape)
            (indices if seg.kind == "index" else values).append(grid)
        if indices:
            codes = torch.cat(indices, dim=1).round().long().clamp_(0, self.index_vocab - 1)
            embedded = self.embedding(codes)  # (B, C, H, W, D)
            values.append(embedded.permute(0, 1, 4, 2, 3).flatten(1, 2).to(flat.dtype))
        hidden = torch.cat(values, dim=1) if len(values) > 1 else values[0]
        # on the CPU, oneDNN's set-up costs more than these small convolutions (measured:
        # ~10x slower at a rollout step's batch); its plain kernels give the same values
        with torch.backends.mkldnn.flags(enabled=hidden.device.type != "cpu"):
            for conv in self.convs:
                hidden = torch.relu(conv(hidden))
        return hidden.flatten(1)


def _conv_out(size: int, kernel: int, stride: int) -> int:
    return (size - kernel) // stride + 1


def build_conv_lstm(
    model_config: dict, obs_dim: int, num_actions: int, layout: Layout | None
) -> ConvLSTMActorCritic:
    """The ``conv_lstm`` model of a policy's ``model`` block."""
    return ConvLSTMActorCritic(
        layout or flat_layout(obs_dim),
        num_actions,
        conv_filters=model_config.get("conv_filters", [16, 32]),
        conv_kernel=model_config.get("conv_kernel", 3),
        conv_stride=model_config.get("conv_stride", 2),
        fc_dims=model_config.get("fc_dims", [128, 128]),
        lstm_size=model_config.get("lstm_size", 128),
        index_vocab=model_config.get("index_vocab", 100),
        index_embedding_dim=model_config.get("index_embedding_dim", 4),
    )


def is_recurrent(model: nn.Module) -> bool:
    """Whether ``model`` carries a recurrent state (acts with ``step``)."""
    return bool(getattr(model, "recurrent", False))
