"""A Gymnasium ``VectorEnv`` over any ``BatchedPolicyEnv``: the batched env as the trainer sees it.

:class:`BatchedVectorEnv` wraps a batch of ``num_envs`` environments that follows
:class:`~ai_economist.warp_drive.env_protocol.BatchedPolicyEnv` (any registered environment,
built by name with :func:`make_vector_env`). One sub-env is the whole scenario:

* observation ``Dict({tag: Box((N, obs_dim))})`` float32, one entry per policy tag (N = the
  policy's agents per env; a policy of one agent has no agent axis: ``Box((obs_dim,))``);
* action ``Dict({tag: MultiDiscrete([num_actions] * N)})`` (``Discrete`` for one agent), ints
  of shape ``(num_envs, N)`` (``(num_envs,)``); a missing tag is the NO-OP (action 0);
* reward: the rewards of ``reward_tag`` (default ``"p"`` where the env has a planner policy,
  else its first tag), summed over that policy's agents; ``infos["rewards_<tag>"]`` holds the
  other policies' rewards and ``infos["action_mask_<tag>"]`` every policy's int8 action mask.

Autoreset: ``"next_step"`` (the default, Gymnasium's ``AutoresetMode.NEXT_STEP``): when every
env ended its episode, the next ``step`` resets them all (its actions are ignored, its rewards
are 0); it needs envs that end together (a fixed ``episode_length``) and says so otherwise.
``"same_step"``: the envs that end are reset in the same ``step``; ``infos["final_obs"]`` holds
their last observations and ``infos["_final_obs"]`` which envs ended.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ai_economist.adapters.core import OBS_BOUND, check_masked_actions
from ai_economist.adapters.errors import ActionMaskError, UnknownAgentError

AUTORESET_MODES = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP}


def host_array(value: Any) -> np.ndarray:
    """A host numpy copy of a numpy array or a torch tensor (on any device)."""
    if hasattr(value, "detach"):
        return np.array(value.detach().cpu().numpy())
    return np.array(value)


class BatchedVectorEnv(VectorEnv):
    """``env.num_envs`` environments of a ``BatchedPolicyEnv`` as a Gymnasium ``VectorEnv``
    (spaces, rewards and autoreset in the module docstring).

    Args:
        env: the batched env (``FoundationEnvWrapper``, a registered env's ``build``, ...).
        masked_actions: ``"raise"`` (``ActionMaskError``) or ``"noop"`` for masked actions.
        reward_tag: the policy whose rewards are the reward (see the module docstring).
        autoreset_mode: ``"next_step"`` or ``"same_step"``.
    """

    def __init__(
        self,
        env: Any,
        masked_actions: str = "raise",
        reward_tag: str | None = None,
        autoreset_mode: str = "next_step",
    ) -> None:
        if autoreset_mode not in AUTORESET_MODES:
            raise ValueError(
                f"autoreset_mode must be one of {sorted(AUTORESET_MODES)}, got {autoreset_mode!r}"
            )
        self.batched_env = env
        self.masked_actions = check_masked_actions(masked_actions)
        self.metadata = {"render_modes": [], "autoreset_mode": AUTORESET_MODES[autoreset_mode]}
        self.num_envs = int(env.num_envs)
        self.specs = dict(env.policy_specs)
        self.tags = tuple(self.specs)
        self.reward_tag = self._check_reward_tag(reward_tag)
        self.single_observation_space = spaces.Dict(
            {tag: self._obs_space(spec) for tag, spec in self.specs.items()}
        )
        self.single_action_space = spaces.Dict(
            {tag: self._action_space(spec) for tag, spec in self.specs.items()}
        )
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._started = False
        self._needs_reset = False

    def _check_reward_tag(self, reward_tag: str | None) -> str:
        if reward_tag is None:
            return "p" if "p" in self.specs else self.tags[0]
        if reward_tag not in self.specs:
            raise UnknownAgentError(
                f"reward_tag {reward_tag!r} is not a policy tag of the env; "
                f"expected one of {list(self.tags)}"
            )
        return reward_tag

    @staticmethod
    def _obs_space(spec: Any) -> spaces.Box:
        shape = (spec.obs_dim,) if spec.num_agents == 1 else (spec.num_agents, spec.obs_dim)
        return spaces.Box(-OBS_BOUND, OBS_BOUND, shape, np.float32)

    @staticmethod
    def _action_space(spec: Any) -> spaces.Space:
        if spec.num_agents == 1:
            return spaces.Discrete(spec.num_actions)
        return spaces.MultiDiscrete([spec.num_actions] * spec.num_agents)

    def _squeeze(self, tag: str, array: np.ndarray) -> np.ndarray:
        return array[:, 0] if self.specs[tag].num_agents == 1 else array

    def _observe(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        env = self.batched_env
        obs = {tag: self._squeeze(tag, host_array(env.observations(tag))) for tag in self.tags}
        info = {
            f"action_mask_{tag}": self._squeeze(tag, host_array(env.action_masks(tag)) > 0).astype(
                np.int8
            )
            for tag in self.tags
        }
        return obs, info

    def _rewards(self, info: dict[str, Any], zero: bool = False) -> np.ndarray:
        for tag in self.tags:
            if tag != self.reward_tag:
                rewards = host_array(self.batched_env.rewards(tag))
                info[f"rewards_{tag}"] = np.zeros_like(rewards) if zero else rewards
        rewards = host_array(self.batched_env.rewards(self.reward_tag)).astype(np.float32)
        return np.zeros(self.num_envs, np.float32) if zero else rewards.sum(axis=1)

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Reset every env (``seed`` seeds ``np_random``; the env keeps its own seeding)."""
        if seed is not None:
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(
                seed if isinstance(seed, int) else seed[0]
            )
        self.batched_env.reset_all_envs()
        self._started, self._needs_reset = True, False
        return self._observe()

    def step(self, actions: dict[str, Any]) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Step every env with ``{tag: ints (num_envs, N)}`` (a missing tag is the NO-OP);
        autoreset as the module docstring says."""
        n = self.num_envs
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._needs_reset:  # every env ended on the last step: reset them (metrics kept)
            self.batched_env.reset_only_done_envs()
            self._needs_reset = False
            obs, info = self._observe()
            zeros = np.zeros(n, bool)
            return obs, self._rewards(info, zero=True), zeros, zeros.copy(), info
        self._write_actions(self._checked(actions))
        self.batched_env.step_all_envs()
        obs, info = self._observe()
        rewards = self._rewards(info)
        done = host_array(self.batched_env.done()).astype(bool).reshape(n)
        if done.any():
            obs, info = self._after_done(done, obs, info)
        return obs, rewards, done, np.zeros(n, bool), info

    def _after_done(self, done: np.ndarray, obs: dict, info: dict) -> tuple[dict, dict]:
        if self.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP:
            final = {"final_obs": obs, "_final_obs": done.copy()}
            self.batched_env.reset_only_done_envs()
            obs, masks = self._observe()
            info.update(masks)
            info.update(final)
            return obs, info
        if not done.all():
            raise RuntimeError(
                f"envs {np.flatnonzero(done).tolist()} of {self.num_envs} ended their episode "
                "before the others; autoreset_mode='next_step' needs envs that end together: "
                "pass autoreset_mode='same_step'"
            )
        self._needs_reset = True
        return obs, info

    def _checked(self, actions: dict[str, Any]) -> dict[str, np.ndarray]:
        if not isinstance(actions, dict):
            raise TypeError(
                f"actions must be a dict keyed by policy tag {list(self.tags)}, got {type(actions)}"
            )
        unknown = sorted(str(k) for k in actions if k not in self.specs)
        if unknown:
            raise UnknownAgentError(
                f"Unknown key(s) {unknown} in the actions; expected policy tags {list(self.tags)}"
            )
        _, masks = self._observe()
        out = {}
        for tag in self.tags:
            shape = self.action_space[tag].shape
            if tag not in actions:
                out[tag] = np.zeros(shape, np.int64)
                continue
            arr = np.asarray(actions[tag])
            if arr.shape != shape or arr.dtype.kind not in "iu":
                raise ValueError(f"actions[{tag!r}] must be ints of shape {shape}, got {arr.shape}")
            mask = masks[f"action_mask_{tag}"]
            if np.any(arr < 0) or np.any(arr >= mask.shape[-1]):
                raise ValueError(f"actions[{tag!r}] must be in 0..{mask.shape[-1] - 1}")
            allowed = np.take_along_axis(mask, arr[..., None], axis=-1)[..., 0] > 0
            if not allowed.all() and self.masked_actions == "raise":
                where = tuple(int(i) for i in np.argwhere(~allowed)[0])
                raise ActionMaskError(
                    f"actions[{tag!r}]{list(where)} = {int(arr[where])} is masked "
                    f"(infos['action_mask_{tag}']); pass masked_actions='noop' to replace it"
                )
            out[tag] = np.where(allowed, arr, 0)
        return out

    def _write_actions(self, actions: dict[str, np.ndarray]) -> None:
        for tag, arr in actions.items():
            buffer = self.batched_env.actions(tag)
            if isinstance(buffer, np.ndarray):
                buffer[...] = arr.reshape(buffer.shape)
                continue
            import torch

            buffer.copy_(torch.as_tensor(arr.reshape(tuple(buffer.shape)), dtype=buffer.dtype))

    def episode_metrics(self) -> dict[str, float]:
        """The metrics of the last finished episodes (averaged over the envs), available from
        the autoreset step after them."""
        return self.batched_env.episode_metrics()


def make_vector_env(
    env_name: str,
    num_envs: int = 1,
    env_backend: str = "auto",
    device: Any = "cpu",
    run_config: dict | None = None,
    **options: Any,
) -> BatchedVectorEnv:
    """A :class:`BatchedVectorEnv` over the registered environment ``env_name``
    (``ai_economist.warp_drive.registry``; unknown names list close matches).

    Args:
        env_name: a registered name (``training_script --env`` names).
        num_envs: environments stepped together (``trainer.num_envs``).
        env_backend: ``"auto"`` (the registry's one rule for ``device``) or a backend the env has.
        device: ``"cpu"`` or a CUDA device.
        run_config: the run config to build from (default: the env's packaged
            ``<env_name>.yaml``); its ``trainer.num_envs`` is replaced by ``num_envs``.
        **options: ``masked_actions``, ``reward_tag``, ``autoreset_mode`` of the VectorEnv.
    """
    from ai_economist.warp_drive.registry import get_env

    entry = get_env(env_name)
    config = dict(run_config) if run_config is not None else _packaged_config(env_name, entry)
    config["trainer"] = {**config.get("trainer", {}), "num_envs": int(num_envs)}
    return BatchedVectorEnv(entry.make(config, device, env_backend), **options)


def _packaged_config(env_name: str, entry: Any) -> dict:
    import yaml

    path = None if entry.config_dir is None else entry.config_dir / f"{env_name}.yaml"
    if path is None or not path.is_file():
        raise FileNotFoundError(
            f"env {env_name!r} has no packaged run config {env_name}.yaml (config_dir "
            f"{entry.config_dir}); pass run_config=..."
        )
    with open(path) as f:
        return yaml.safe_load(f)
