"""Preallocated rollout storage, episode-return tracking and phase timing.

Nothing here talks to the host during a rollout: buffers are written in place on the env's
device, episode returns are accumulated on the device and only summarised when logged.
"""

from __future__ import annotations

import functools
import time
import warnings
from collections import defaultdict
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from ai_economist.warp_drive.env_protocol import GraphCapturableEnv, PolicySpec
from ai_economist.warp_drive.training.fused_sampling import (
    fused_sample,
    fused_sampling_supported,
    sample_reference,
)
from ai_economist.warp_drive.training.models import autocast, draw_gumbel
from ai_economist.warp_drive.training.recurrent import RecurrentStates
from ai_economist.warp_drive.training.streams import PolicyStreams

__all__ = ["EpisodeTracker", "PhaseTimer", "PolicyStreams", "RolloutBuffer", "RolloutCollector"]


@dataclass
class RolloutBuffer:
    """One policy's samples of one iteration: T steps x E envs x N agents."""

    obs: torch.Tensor  # (T, E, N, obs_dim) float32
    masks: torch.Tensor  # (T, E, N, num_actions) bool
    actions: torch.Tensor  # (T, E, N) int64
    log_probs: torch.Tensor  # (T, E, N)
    values: torch.Tensor  # (T, E, N)
    rewards: torch.Tensor  # (T, E, N)
    gumbel: torch.Tensor  # (T, E, N, num_actions) sampling noise, drawn once per iteration
    states: torch.Tensor | None = None  # (T, E, N, state_size) recurrent: each step's start state

    @classmethod
    def allocate(
        cls,
        spec: PolicySpec,
        num_steps: int,
        num_envs: int,
        device: torch.device,
        state_size: int = 0,
    ) -> RolloutBuffer:
        """Zeroed buffers (``state_size`` > 0: also the recurrent states, :mod:`.recurrent`)."""
        shape = (num_steps, num_envs, spec.num_agents)
        states = torch.zeros(*shape, state_size, device=device) if state_size else None
        return cls(
            obs=torch.zeros(*shape, spec.obs_dim, device=device),
            masks=torch.zeros(*shape, spec.num_actions, dtype=torch.bool, device=device),
            actions=torch.zeros(shape, dtype=torch.long, device=device),
            log_probs=torch.zeros(shape, device=device),
            values=torch.zeros(shape, device=device),
            rewards=torch.zeros(shape, device=device),
            gumbel=torch.zeros(*shape, spec.num_actions, device=device),
            states=states,
        )


class EpisodeTracker:
    """Per-policy episode returns (mean over a policy's agents), accumulated on the device.

    ``record`` takes a whole rollout at once (a handful of vectorised operations instead of
    bookkeeping at every step): steps that belong to an episode which ended inside the rollout
    are added to ``completed_sum``; the rest is carried into the next rollout in ``carry``.
    """

    def __init__(self, tags: list[str], num_envs: int, device: torch.device) -> None:
        self.carry = {t: torch.zeros(num_envs, device=device) for t in tags}
        self.completed_sum = {t: torch.zeros((), device=device) for t in tags}
        self.completed_count = torch.zeros((), device=device)

    def record(self, rewards: dict[str, torch.Tensor], dones: torch.Tensor) -> None:
        """Account for a rollout: ``rewards[tag]`` (T, E, N), ``dones`` (T, E)."""
        dones = dones.to(torch.float32)
        # finished[t, e]: an episode end follows (or is) step t in env e
        finished = dones.flip(0).cumsum(0).flip(0) > 0
        ended = finished[0]
        for tag, reward in rewards.items():
            per_env = reward.mean(-1)
            inside = torch.where(finished, per_env, 0.0).sum(0)
            self.completed_sum[tag] += torch.where(ended, inside + self.carry[tag], 0.0).sum()
            rest = torch.where(finished, 0.0, per_env).sum(0)
            self.carry[tag].copy_(torch.where(ended, 0.0, self.carry[tag]) + rest)
        self.completed_count += dones.sum()

    def pop(self) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        """Summed returns per policy and the number of episodes completed since the last call
        (device tensors); the counters restart from zero."""
        sums = {t: s.clone() for t, s in self.completed_sum.items()}
        count = self.completed_count.clone()
        for value in self.completed_sum.values():
            value.zero_()
        self.completed_count.zero_()
        return sums, count

    def state_dict(self) -> dict[str, torch.Tensor]:
        state = {f"carry/{t}": v.clone() for t, v in self.carry.items()}
        state.update({f"sum/{t}": v.clone() for t, v in self.completed_sum.items()})
        state["count"] = self.completed_count.clone()
        return state

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        for tag in self.carry:
            self.carry[tag].copy_(state[f"carry/{tag}"])
            self.completed_sum[tag].copy_(state[f"sum/{tag}"])
        self.completed_count.copy_(state["count"])


class PhaseTimer:
    """Wall-clock time per phase (env step, policy forward, sampling, update).

    With ``synchronize=False`` nothing waits for the GPU, so on a GPU the per-phase numbers are
    the host's launch times (their sum over an iteration still tracks the real time, because
    the host cannot run ahead of the GPU for long).  ``synchronize=True`` waits for the device
    around every phase: exact attribution, a little slower.
    """

    def __init__(self, device: torch.device, synchronize: bool = False) -> None:
        self.totals: dict[str, float] = defaultdict(float)
        self._sync = synchronize and device.type == "cuda"
        self._device = device
        self.disabled = False  # set while capturing a CUDA graph (no synchronisation allowed)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        if self.disabled:
            yield
            return
        if self._sync:
            torch.cuda.synchronize(self._device)
        start = time.perf_counter()
        try:
            yield
        finally:
            if self._sync:
                torch.cuda.synchronize(self._device)
            self.totals[name] += time.perf_counter() - start

    def pop(self) -> dict[str, float]:
        out = dict(self.totals)
        self.totals.clear()
        return out


def resolve_cuda_graphs(setting: bool | str, device: torch.device, env: Any) -> bool:
    """``trainer.cuda_graphs`` for this run: never on the CPU; ``"auto"``: on when the env's
    step can be captured (the whole rollout as one graph), else off."""
    if torch.device(device).type != "cuda":
        return False
    if setting == "auto":
        return isinstance(env, GraphCapturableEnv) and env.step_capturable()
    return bool(setting)


class RolloutCollector:
    """Steps the env ``num_steps`` times with the current policies, filling their buffers.

    ``policies`` maps tags to objects with ``act_model``, ``buffer`` and ``config`` (the
    trainer's ``Policy``).  With ``cuda_graphs=True`` (CUDA only) the rollout is replayed from
    CUDA graphs, captured at the first rollout:

    * ``graph_mode == "rollout"``: when the env's step can be captured
      (:class:`~ai_economist.warp_drive.env_protocol.GraphCapturableEnv` says so), every step
      of the rollout -- the policy's forward pass and sampling, the env step, the copies of
      rewards and done flags, the reset of finished envs -- is one graph: one launch a rollout;
    * ``graph_mode == "policy"``: otherwise (or if that capture fails, with a warning) the
      policy part of each step is a graph per step index and the env steps eagerly.

    Both need the env's tensors to stay at fixed addresses, which is checked every rollout.
    ``precision="bf16"`` runs the models' forward passes under bfloat16 autocast.
    ``fused_sampling=True`` (on CUDA, with nvcc or Triton) samples each policy's actions,
    log-probs and values into the buffers and the env in one kernel (:mod:`.fused_sampling`;
    ``fused_sampling_kernel`` picks its CUDA C or Triton twin).

    On a GPU with several policies, each policy's forward pass and sampling run on a CUDA
    stream of its own (:class:`PolicyStreams`), so that their small kernels execute side by
    side (also inside the captured graphs); the env step waits for all of them.
    """

    def __init__(self, env: Any, policies: dict[str, Any], num_steps: int,
                 generator: torch.Generator, cuda_graphs: bool = False,
                 precision: str = "fp32", fused_sampling: bool = False,
                 fused_sampling_kernel: str = "auto") -> None:  # fmt: skip
        self.env = env
        self.policies = policies
        self.num_steps = num_steps
        self.generator = generator
        self.device = torch.device(env.device)
        self.precision = precision
        self.dones = torch.zeros(num_steps, env.num_envs, device=self.device)
        self.last_values: dict[str, torch.Tensor] = {}
        self.use_graphs = cuda_graphs and self.device.type == "cuda"
        self.graph_mode = "off"
        self._graphs: list[torch.cuda.CUDAGraph] = []
        self._rollout_graph: torch.cuda.CUDAGraph | None = None
        self._graph_addresses: list[int] = []
        self.streams = PolicyStreams(self.device, list(policies))
        self.fused_sampling = fused_sampling_supported(
            self.device, fused_sampling, fused_sampling_kernel
        )
        # the same signature and results; the fused kernel is one launch instead of seven
        self.sample = (
            functools.partial(fused_sample, kernel=fused_sampling_kernel)
            if self.fused_sampling
            else sample_reference
        )
        # recurrent policies' current states, carried across steps and rollouts
        self.recurrent = RecurrentStates(policies, env.num_envs, self.device)

    def _env_addresses(self) -> list[int]:
        env = self.env
        tensors = [env.done()]
        for tag in self.policies:
            tensors += [env.observations(tag), env.action_masks(tag), env.actions(tag),
                        env.rewards(tag)]  # fmt: skip
        return [t.data_ptr() for t in tensors]

    def _policy_step(self, t: int, timer: PhaseTimer) -> None:
        env = self.env
        streams = self.streams
        for p in self.policies.values():
            buf = p.buffer
            obs, masks = env.observations(p.tag), env.action_masks(p.tag)
            direct = streams.enabled and obs.dtype == torch.float32 and masks.dtype == torch.bool
            with streams.on(p.tag, side=direct):  # the buffer copies beside the forward pass
                buf.obs[t].copy_(obs)
                buf.masks[t].copy_(masks)
            if not direct:
                obs, masks = buf.obs[t], buf.masks[t]
            with streams.on(p.tag):
                with timer.phase("policy_forward"):
                    logits, values = self._forward(p, obs, t)  # in the caller's autocast
                with timer.phase("sampling"):
                    out = (buf.actions[t], buf.log_probs[t], buf.values[t])
                    self.sample(logits, masks, buf.gumbel[t], values, out, env.actions(p.tag))
        streams.join()

    def _env_step(self, t: int, timer: PhaseTimer) -> None:
        env = self.env
        with timer.phase("env_step"):
            env.step_all_envs()
            for p in self.policies.values():
                with self.streams.on(p.tag):
                    p.buffer.rewards[t].copy_(env.rewards(p.tag))
            self.dones[t].copy_(env.done())
            self.streams.join()
            self.recurrent.reset_done(self.dones[t])  # the next step starts an episode
            env.reset_only_done_envs()

    def _warm_up_policy(self, timer: PhaseTimer) -> None:
        """Run the policy part twice outside any graph (cuBLAS workspaces, the allocator)."""
        saved = self.recurrent.state_dict()  # the warm-up must not move the memory on
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side), self._autocast():
            for _ in range(2):
                self._policy_step(0, timer)
        torch.cuda.current_stream(self.device).wait_stream(side)
        self.recurrent.load_state_dict(saved)

    def _capture_rollout(self, timer: PhaseTimer) -> bool:
        """Capture the whole rollout as one graph; False when the env cannot be captured."""
        if not self.env_capturable():
            return False
        graph = torch.cuda.CUDAGraph()
        try:
            with (
                self.env.graph_capture(),
                torch.cuda.graph(graph),
                self._autocast(cache=True),
                self._frozen_weights(),
            ):
                for t in range(self.num_steps):  # weights are cast once a rollout (bf16)
                    self._policy_step(t, timer)
                    self._env_step(t, timer)
        except Exception as exc:  # noqa: BLE001 - any capture failure: keep the policy graphs
            torch.cuda.synchronize(self.device)
            warnings.warn(
                f"trainer.cuda_graphs: the env step could not be captured in a CUDA graph "
                f"({type(exc).__name__}: {exc}); replaying only the policy part from graphs",
                RuntimeWarning,
                stacklevel=4,
            )
            return False
        self._rollout_graph = graph
        return True

    def _capture_graphs(self, timer: PhaseTimer) -> None:
        timer.disabled = True
        try:
            self._warm_up_policy(timer)
            if self._capture_rollout(timer):
                self.graph_mode = "rollout"
            else:
                pool = torch.cuda.graph_pool_handle()
                for t in range(self.num_steps):
                    graph = torch.cuda.CUDAGraph()
                    with (
                        torch.cuda.graph(graph, pool=pool),
                        self._autocast(),
                        self._frozen_weights(),
                    ):
                        self._policy_step(t, timer)
                    self._graphs.append(graph)
                self.graph_mode = "policy"
        finally:
            timer.disabled = False
        self._graph_addresses = self._env_addresses()

    @torch.no_grad()
    def collect(self, timer: PhaseTimer) -> None:
        """One rollout; afterwards the buffers, ``dones`` and ``last_values`` are filled."""
        self.draw_noise(timer)
        if self.use_graphs:
            if self.graph_mode == "off":
                self._capture_graphs(timer)
            else:
                self.check_addresses()
        if self._rollout_graph is not None:
            with timer.phase("rollout (graph)"):
                self._rollout_graph.replay()
                self.after_replay()
        else:
            with self._autocast(cache=True), self._frozen_weights():
                for t in range(self.num_steps):
                    if self._graphs:
                        with timer.phase("policy (graph)"):
                            self._graphs[t].replay()
                    else:
                        self._policy_step(t, timer)
                    self._env_step(t, timer)
        self._record_last_values(timer)

    def draw_noise(self, timer: PhaseTimer) -> None:
        """Draw the rollout's sampling noise (from the trainer's generator, outside graphs)."""
        with timer.phase("sampling"):
            for p in self.policies.values():
                draw_gumbel(p.buffer.gumbel, self.generator)

    @torch.no_grad()
    def capture_steps(self, timer: PhaseTimer) -> None:
        """Record every step of a rollout and the values that follow it into the CUDA graph
        that the caller is capturing (``torch.cuda.graph``); the env must be capturable
        (:meth:`env_capturable`).  Replay it after :meth:`draw_noise`, then call
        :meth:`after_replay`."""
        with self.env.graph_capture(), self._autocast(cache=True), self._frozen_weights():
            for t in range(self.num_steps):  # weights are cast once a rollout (bf16)
                self._policy_step(t, timer)
                self._env_step(t, timer)
        self._record_last_values(timer)
        self._graph_addresses = self._env_addresses()

    def env_capturable(self) -> bool:
        """Whether the env's step can be recorded in a CUDA graph."""
        env = self.env
        return isinstance(env, GraphCapturableEnv) and env.step_capturable()

    def check_addresses(self) -> None:
        """Raise if the env's tensors moved since a graph recorded their addresses."""
        if self._env_addresses() != self._graph_addresses:
            raise RuntimeError(
                "trainer.cuda_graphs: the env's observation/mask/action/reward/done tensors "
                "moved in memory since the graphs were captured; turn cuda_graphs off for "
                "this env"
            )

    def after_replay(self) -> None:
        """The host's part of a replayed rollout: the env's step counter moves on."""
        self.env.advance_host_steps(self.num_steps)

    def _record_last_values(self, timer: PhaseTimer) -> None:
        env = self.env
        with timer.phase("policy_forward"), self._autocast():
            for tag, p in self.policies.items():
                if p.config["to_train"]:
                    obs = env.observations(tag).float()
                    if tag in self.recurrent:
                        self.last_values[tag] = p.act_model.step(obs, self.recurrent[tag])[1]
                    else:
                        self.last_values[tag] = p.act_model(obs)[1]

    def _forward(self, p: Any, obs: torch.Tensor, t: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits and values of step ``t``; a recurrent policy stores the state the step
        starts from and moves its state on, in place (:mod:`.recurrent`)."""
        if p.tag not in self.recurrent:
            return p.act_model(obs)
        state = self.recurrent[p.tag]
        p.buffer.states[t].copy_(state)
        logits, values, new_state = p.act_model.step(obs, state)
        state.copy_(new_state)
        return logits, values

    def _frozen_weights(self) -> ExitStack:
        """Every model's heads stacked once for the enclosed forward passes (models that
        offer ``frozen_weights``; see :class:`~.models.FullyConnectedActorCritic`)."""
        stack = ExitStack()
        for p in self.policies.values():
            frozen = getattr(p.model, "frozen_weights", None)
            if frozen is not None:
                stack.enter_context(frozen())
        return stack

    def _autocast(self, cache: bool = False) -> AbstractContextManager:
        """The models' precision (``trainer.precision``) for the enclosed forward passes."""
        return autocast(self.device, self.precision, cache)
