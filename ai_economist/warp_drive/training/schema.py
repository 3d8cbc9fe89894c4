"""The declared schema of a run configuration, and its validator.

A run configuration has four blocks (plus the env ``name``)::

    name: covid_and_economy_environment      # the environment's registered name
    env: {...}                               # the environment's constructor arguments
    trainer: {num_envs, num_episodes, train_batch_size, ...}
    policy: {<tag>: {algorithm, lr, gamma, ..., model: {...}}, ...}
    saving: {metrics_log_freq, model_params_save_freq, basedir, name, tag, ...}

``SCHEMA`` below is the single source of truth: each leaf is a :class:`Field` with a type, a
default (or ``REQUIRED``) and a description.  :func:`validate_config` checks a configuration
against it (unknown keys, wrong types, missing fields, out-of-range values), fills in the
defaults and returns a new, fully resolved dictionary.  Every problem is reported with the
dotted key and the source of the configuration, e.g.
``run config /path/x.yaml: unknown key 'trainer.num_env' (did you mean 'trainer.num_envs'?)``.
"""

from __future__ import annotations

import copy
import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class ConfigError(ValueError):
    """A run configuration does not match the schema; the message lists every problem."""


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Field:
    """One leaf of the schema.

    ``kind`` is one of ``int``, ``float``, ``bool``, ``auto_bool`` (``true``, ``false`` or
    ``"auto"``), ``str``, ``schedule`` (a number or a
    list of ``[step, value]`` pairs), ``int_list``, ``float_list`` and ``mapping`` (free-form
    dictionary).
    Numbers (and every value of a schedule) must be finite and within ``minimum`` (excluded
    when ``exclusive_minimum``) and ``maximum`` when those are given.
    """

    kind: str
    default: Any = REQUIRED
    doc: str = ""
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    anneal_to_minimum: bool = False  # a schedule's later points may reach an excluded minimum

    def range_text(self) -> str:
        """The allowed range in words, e.g. ``in (0, 1]`` or ``>= 0``."""
        low = "(" if self.exclusive_minimum else "["
        if self.minimum is not None and self.maximum is not None:
            return f"in {low}{self.minimum:g}, {self.maximum:g}]"
        if self.minimum is not None:
            return f"{'>' if self.exclusive_minimum else '>='} {self.minimum:g}"
        if self.maximum is not None:
            return f"<= {self.maximum:g}"
        return "finite"

    def in_range(self, value: float, minimum_allowed: bool = False) -> bool:
        """``value`` is finite and within the declared bounds (``minimum_allowed``: an
        excluded minimum is allowed, for the later points of an annealing schedule)."""
        if not math.isfinite(value):
            return False
        exclusive = self.exclusive_minimum and not minimum_allowed
        if self.minimum is not None and (
            value < self.minimum or (exclusive and value == self.minimum)
        ):
            return False
        return self.maximum is None or value <= self.maximum


@dataclass(frozen=True)
class PerTag:
    """A mapping from policy tags to blocks that all follow ``schema``."""

    schema: dict


MODEL_SCHEMA: dict[str, Any] = {
    "type": Field(
        "str",
        "fully_connected",
        "model architecture: fully_connected (an MLP on the flat observation) or conv_lstm "
        "(convolutions over the maps the env declares, dense layers, layer norm, an LSTM; "
        "the original's keras_conv_lstm)",
        choices=("fully_connected", "conv_lstm"),
    ),
    "fc_dims": Field("int_list", [256, 256], "hidden layer sizes (conv_lstm: after the join)"),
    "conv_filters": Field(
        "int_list", [16, 32], "conv_lstm: output channels of each convolution over the maps"
    ),
    "conv_kernel": Field("int", 3, "conv_lstm: square kernel size of the convolutions", minimum=1),
    "conv_stride": Field("int", 2, "conv_lstm: stride of the convolutions", minimum=1),
    "lstm_size": Field("int", 128, "conv_lstm: size of the LSTM's hidden state", minimum=1),
    "index_vocab": Field(
        "int", 100, "conv_lstm: index-map codes are clamped to [0, index_vocab)", minimum=1
    ),
    "index_embedding_dim": Field(
        "int", 4, "conv_lstm: embedding channels of each index map", minimum=1
    ),
    "seq_len": Field(
        "int",
        0,
        "conv_lstm: length of the sequences the update re-runs from their stored state "
        "(truncated back-propagation through time); 0: the whole rollout; must divide "
        "train_batch_size / num_envs",
        minimum=0,
    ),
    "model_ckpt_filepath": Field("str", "", "initial weights (checkpoint or state_dict file)"),
    "initial_logits": Field(
        "float_list",
        [],
        "the policy head's initial bias, one number per action (NO-OP first): the initial "
        "policy is about softmax(initial_logits) for every observation (the head's weights "
        "start small); [] (default): zeros, a near-uniform initial policy; a "
        "model_ckpt_filepath's weights replace it",
    ),
}

POLICY_SCHEMA: dict[str, Any] = {
    "to_train": Field("bool", True, "update this policy (False: act with fixed weights)"),
    "algorithm": Field("str", "PPO", "PPO or A2C", choices=("PPO", "A2C")),
    "gamma": Field(
        "schedule", 0.99, "discount factor", minimum=0.0, maximum=1.0, exclusive_minimum=True
    ),
    "gae_lambda": Field(
        "float",
        0.95,
        "GAE lambda (1.0: discounted returns minus the value, as in WarpDrive)",
        minimum=0.0,
        maximum=1.0,
    ),
    "lr": Field(
        "schedule",
        1e-4,
        "Adam learning rate (a schedule may anneal it to 0)",
        minimum=0.0,
        exclusive_minimum=True,
        anneal_to_minimum=True,
    ),
    "vf_loss_coeff": Field("schedule", 1.0, "weight of the value loss", minimum=0.0),
    "entropy_coeff": Field("schedule", 0.01, "weight of the entropy bonus", minimum=0.0),
    "clip_param": Field("float", 0.2, "PPO ratio clip range", minimum=0.0, exclusive_minimum=True),
    "clip_grad_norm": Field("bool", True, "clip the gradient norm"),
    "max_grad_norm": Field(
        "float", 10.0, "gradient-norm limit", minimum=0.0, exclusive_minimum=True
    ),
    "normalize_advantage": Field("bool", True, "normalise advantages per minibatch"),
    "normalize_value": Field(
        "bool",
        False,
        "PopArt: the value head learns returns scaled to zero mean and unit variance "
        "(running statistics; its weights are rescaled when they move); the value_loss "
        "metric is then in those units",
    ),
    "num_epochs": Field("int", 1, "passes over each rollout (PPO)", minimum=1),
    "num_mini_batches": Field(
        "int", 1, "minibatches per pass (at most train_batch_size)", minimum=1
    ),
    "model": MODEL_SCHEMA,
}

TRAINER_SCHEMA: dict[str, Any] = {
    "num_envs": Field("int", REQUIRED, "environments stepped together (per GPU)", minimum=1),
    "num_episodes": Field("int", REQUIRED, "episodes to train for (per GPU)", minimum=1),
    "train_batch_size": Field(
        "int", REQUIRED, "env-steps per iteration (per GPU); a multiple of num_envs", minimum=1
    ),
    "seed": Field("int", 0, "seed of the model initialisation and of action sampling"),
    "device": Field("str", "auto", "where to train", choices=("auto", "cpu", "cuda")),
    "num_gpus": Field("int", 1, "GPUs of this machine to train on", minimum=1),
    "env_backend": Field(
        "str",
        "auto",
        "where the env steps; auto: the fastest backend the env has that the device allows "
        "(on cuda its GPU backend, pycuda before numba; else numpy, then cpu); the run's "
        "config.yaml records the resolved value",
        choices=("auto", "cpu", "numpy", "pycuda", "numba"),
    ),
    "num_threads": Field(
        "int",
        0,
        "torch CPU threads when training on the CPU; 0: the machine's cores shared out among "
        "the training processes",
        minimum=0,
    ),
    "compile": Field("bool", False, "torch.compile the models"),
    "compile_update": Field(
        "bool",
        False,
        "torch.compile (Inductor) each minibatch's loss, forward and backward: fused "
        "elementwise kernels; the first iterations compile (about a minute); needs Triton",
    ),
    "cuda_graphs": Field(
        "auto_bool",
        "auto",
        "replay the rollout from CUDA graphs: the whole rollout (policy and env step) when the "
        "env's step can be captured, else each step's policy work; auto (the default): on for "
        "CUDA runs whose env step can be captured (e.g. COVID-19 on pycuda or numba: the same "
        "numbers, a faster run), off otherwise and on the CPU",
    ),
    "cuda_graph_update": Field(
        "bool",
        True,
        "with cuda_graphs, on one GPU, when the env's step can be captured and the trainer "
        "steps its own optimizers: the whole iteration (rollout, GAE, losses, backward, "
        "gradient clipping, Adam) is one CUDA graph, replayed with one launch (captured "
        "after two eager iterations; the same numbers as without it); false: only the rollout",
    ),
    "fused_sampling": Field(
        "bool",
        True,
        "on a GPU: each policy's masked sampling, log-probability and buffer copies of a "
        "rollout step in one fused kernel (the same actions and log-probabilities; faster at "
        "60, 1,200 and 10,000 envs on an H200); false, or without CUDA or a kernel "
        "(fused_sampling_kernel): the torch operations one by one",
    ),
    "fused_sampling_kernel": Field(
        "str",
        "auto",
        "the fused sampling kernel's twin: cuda_c (built by nvcc once, cached; no Triton "
        "import at start-up), triton, or auto (the default): cuda_c where nvcc is found, "
        "else triton",
        choices=("auto", "cuda_c", "triton"),
    ),
    "fused_layers": Field(
        "bool",
        True,
        "on a GPU: in the update, each hidden layer's matrix product and ReLU in one kernel "
        "(the ReLU in the GEMM's epilogue; the backward masks with the layer's output), "
        "the same values as nn.Linear and nn.ReLU up to the GEMM algorithm (10% faster "
        "training in fp32 and 3-6% in bf16 at 1,200-10,000 envs on an H200); ignored on the CPU",
    ),
    "bf16_heads": Field(
        "bool",
        True,
        "in a bf16 update on a GPU (precision bf16): the policy and value heads multiply the "
        "bfloat16 hidden layer by bfloat16-rounded weights, accumulated and returned in "
        "float32, instead of copying the hidden layer to float32 first; false: float32 heads "
        "(ignored in fp32 and on the CPU)",
    ),
    "tf32": Field(
        "bool",
        True,
        "TF32 tensor cores for float32 matmuls on the GPU (torch's process-wide flags: they "
        "stay on after the trainer)",
    ),
    "precision": Field(
        "str",
        "fp32",
        "numerics of the models' hidden layers on the GPU: fp32, or bf16 (autocast; weights, "
        "losses and optimizer stay float32, the heads return float32: see bf16_heads)",
        choices=("fp32", "bf16"),
    ),
    "acting_precision": Field(
        "str",
        "",
        "numerics of the policies' forward passes in rollouts: '' (as trainer.precision), fp32 "
        "or bf16; fp32 acting with a bf16 update was faster on an H200 at 1,200 envs and more",
        choices=("", "fp32", "bf16"),
    ),
    "profile_phases": Field("bool", False, "synchronise to time each phase exactly (slower)"),
    "nan_check_freq": Field("int", 10, "iterations between NaN checks (host syncs)", minimum=1),
    "progress_bar": Field("bool", True, "show a tqdm progress bar"),
}

SAVING_SCHEMA: dict[str, Any] = {
    "metrics_log_freq": Field("int", 100, "iterations between metric logs", minimum=1),
    "model_params_save_freq": Field("int", 500, "iterations between checkpoints", minimum=1),
    "checkpoint_interval_s": Field(
        "float",
        300.0,
        "also write a checkpoint after the first iteration that ends this many seconds after "
        "the previous checkpoint, so at most about this much work is lost; 0: off",
        minimum=0.0,
    ),
    "basedir": Field(
        "str", "./runs", "root of the run directories (relative to the working folder)"
    ),
    "name": Field("str", "experiment", "experiment name (a sub-directory)"),
    "tag": Field("str", "default", "experiment tag (a sub-directory)"),
    "run_name": Field("str", "", "run directory name; empty: a timestamp"),
    "keep_checkpoints": Field("int", 0, "checkpoints to keep; 0 keeps all", minimum=0),
    "tensorboard": Field("bool", True, "write TensorBoard event files"),
}

SCHEMA: dict[str, Any] = {
    "name": Field("str", REQUIRED, "registered environment name"),
    "env": Field("mapping", {}, "environment constructor arguments"),
    "trainer": TRAINER_SCHEMA,
    "policy": PerTag(POLICY_SCHEMA),
    "saving": SAVING_SCHEMA,
}


def _type_name(value: Any) -> str:
    return type(value).__name__


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _yaml_float(value: Any) -> Any:
    """``"1e-4"`` -> ``1e-4``: YAML 1.1 (PyYAML) reads exponents without a dot as strings."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def _check_schedule(field: Field, value: Any, key: str, errors: list[str]) -> Any:
    """Check a ``[[step, value], ...]`` schedule: increasing steps, every value in range."""
    if isinstance(value, list):  # PyYAML reads 1e-4 and 5e7 as strings
        value = [[_yaml_float(x) for x in p] if isinstance(p, list) else p for p in value]
    pairs_ok = (
        isinstance(value, list)
        and value
        and all(
            isinstance(p, list) and len(p) == 2 and all(_is_number(x) for x in p) for p in value
        )
    )
    if not pairs_ok:
        expected = "a number or a schedule [[step, value], ...]"
        errors.append(f"'{key}' must be {expected}, got {value!r} ({_type_name(value)})")
        return value
    steps = [p[0] for p in value]
    if (
        not all(math.isfinite(s) for s in steps)
        or steps[0] < 0
        or any(b <= a for a, b in zip(steps, steps[1:], strict=False))
    ):
        errors.append(f"'{key}': schedule steps must be >= 0 and increasing, got {value!r}")
        return value
    for i, (step, point) in enumerate(value):
        relaxed = field.anneal_to_minimum and i > 0
        if not field.in_range(point, minimum_allowed=relaxed):
            if relaxed:
                where = f">= {field.minimum:g} after the first schedule point"
            elif field.anneal_to_minimum:
                where = f"{field.range_text()} at the first schedule point"
            else:
                where = f"{field.range_text()} at every schedule point"
            errors.append(f"'{key}' must be {where}, got {point!r} at step {step!r}")
    return [[int(p[0]) if float(p[0]).is_integer() else p[0], float(p[1])] for p in value]


def _check_leaf(field: Field, value: Any, key: str, errors: list[str]) -> Any:
    """Check (and normalise) one value; append a message to ``errors`` if it is wrong."""
    kind = field.kind
    if kind in ("float", "schedule"):
        value = _yaml_float(value)
    bad = f"'{key}' must be {{}}, got {value!r} ({_type_name(value)})"
    if kind == "int":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            errors.append(bad.format("an integer"))
            return value
    elif kind == "float":
        if not _is_number(value):
            errors.append(bad.format("a number"))
            return value
        value = float(value)
    elif kind == "bool":
        if not isinstance(value, bool):
            errors.append(bad.format("true or false"))
            return value
    elif kind == "auto_bool":
        if isinstance(value, str) and value.lower() == "auto":
            return "auto"
        if not isinstance(value, bool):
            errors.append(bad.format("true, false or 'auto'"))
            return value
    elif kind == "str":
        if not isinstance(value, str):
            errors.append(bad.format("a string"))
            return value
        if field.choices:
            match = {c.lower(): c for c in field.choices}.get(value.lower())
            if match is None:
                errors.append(f"'{key}' must be one of {list(field.choices)}, got {value!r}")
            return match or value
    elif kind == "int_list":
        ok = isinstance(value, list) and all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value
        )
        if not ok:
            errors.append(bad.format("a list of positive integers"))
        return value
    elif kind == "float_list":
        ok = isinstance(value, list) and all(
            _is_number(v) and math.isfinite(float(v)) for v in value
        )
        if not ok:
            errors.append(bad.format("a list of finite numbers"))
            return value
        return [float(v) for v in value]
    elif kind == "schedule":
        if not _is_number(value):
            return _check_schedule(field, value, key, errors)
        value = float(value)
    elif kind == "mapping":
        if not isinstance(value, Mapping):
            errors.append(bad.format("a mapping"))
        return copy.deepcopy(dict(value)) if isinstance(value, Mapping) else value
    if _is_number(value) and not field.in_range(value):
        errors.append(f"'{key}' must be {field.range_text()}, got {value!r}")
    return value


def _check_block(schema: dict, block: Any, prefix: str, errors: list[str]) -> dict:
    """Validate a nested block against ``schema``; return it with the defaults filled in."""
    if block is None:
        block = {}
    if not isinstance(block, Mapping):
        errors.append(f"'{prefix.rstrip('.')}' must be a mapping, got {_type_name(block)}")
        return {}
    out: dict[str, Any] = {}
    for key in block:
        if key not in schema:
            hint = difflib.get_close_matches(str(key), list(schema), n=1)
            msg = f"unknown key '{prefix}{key}'"
            if hint:
                msg += f" (did you mean '{prefix}{hint[0]}'?)"
            errors.append(msg)
    for key, spec in schema.items():
        dotted = f"{prefix}{key}"
        present = key in block
        if isinstance(spec, Field):
            if not present:
                if spec.default is REQUIRED:
                    errors.append(f"missing required key '{dotted}' ({spec.doc})")
                else:
                    out[key] = copy.deepcopy(spec.default)
            else:
                out[key] = _check_leaf(spec, block[key], dotted, errors)
        elif isinstance(spec, PerTag):
            tags = block.get(key) if present else None
            if not isinstance(tags, Mapping) or not tags:
                errors.append(f"'{dotted}' must map policy tags to policy blocks")
                continue
            out[key] = {
                str(t): _check_block(spec.schema, b, f"{dotted}.{t}.", errors)
                for t, b in tags.items()
            }
        else:
            out[key] = _check_block(spec, block.get(key), f"{dotted}.", errors)
    return out


def _batch_errors(resolved: dict) -> list[str]:
    """What the rollout needs of ``train_batch_size``: every env runs ``train_batch_size //
    num_envs`` steps per iteration (so a positive multiple of ``num_envs``), and each policy's
    batch -- at least ``train_batch_size`` agent-steps for a one-agent policy such as the
    planner -- is cut into ``num_mini_batches`` non-empty minibatches."""
    errors = []
    num_envs, batch = resolved["trainer"]["num_envs"], resolved["trainer"]["train_batch_size"]
    if batch % num_envs != 0:
        lower = max(num_envs, batch // num_envs * num_envs)
        errors.append(
            f"'trainer.train_batch_size' ({batch}) must be a multiple of 'trainer.num_envs' "
            f"({num_envs}): each iteration runs train_batch_size // num_envs steps in every "
            f"env; use {lower} or {lower + num_envs}"
        )
    for tag, policy in resolved["policy"].items():
        if policy["num_mini_batches"] > batch:
            errors.append(
                f"'policy.{tag}.num_mini_batches' ({policy['num_mini_batches']}) must be <= "
                f"'trainer.train_batch_size' ({batch}): a one-agent policy has "
                f"train_batch_size samples per iteration, one at least per minibatch"
            )
        errors += _sequence_errors(tag, policy, batch // max(num_envs, 1), num_envs)
    return errors


def _sequence_errors(tag: str, policy: dict, num_steps: int, num_envs: int) -> list[str]:
    """A ``conv_lstm`` policy's update re-runs sequences of ``model.seq_len`` steps: the
    length must divide the rollout (the trainer checks the minibatch count against the
    number of sequences, which depends on the env's agents)."""
    model = policy["model"]
    if model["type"] != "conv_lstm" or num_steps < 1:
        return []
    seq_len = model["seq_len"] or num_steps
    if num_steps % seq_len:
        return [
            f"'policy.{tag}.model.seq_len' ({seq_len}) must divide the rollout's "
            f"train_batch_size / num_envs = {num_steps} steps (or be 0: the whole rollout)"
        ]
    return []


def check_episode_budget(config: dict, episode_length: int, source: str = "<dict>") -> None:
    """One iteration must fit in the run: ``train_batch_size`` env-steps at most
    ``num_episodes * episode_length`` (otherwise the run trains on more than it was asked to).

    Raises:
        ConfigError: naming both keys, their values and the env's episode length.
    """
    trainer = config["trainer"]
    budget = trainer["num_episodes"] * episode_length
    if trainer["train_batch_size"] > budget:
        raise ConfigError(
            f"run config {source}: 'trainer.train_batch_size' ({trainer['train_batch_size']}) "
            f"must be <= 'trainer.num_episodes' x the episode length ({trainer['num_episodes']} "
            f"x {episode_length} = {budget} env-steps): one iteration would run past the "
            f"episodes of the whole run; raise trainer.num_episodes or lower the batch"
        )


def validate_config(config: Any, source: str = "<dict>") -> dict:
    """Check ``config`` against :data:`SCHEMA` and return a resolved copy with defaults.

    Raises:
        ConfigError: naming ``source`` and every offending dotted key.
    """
    errors: list[str] = []
    resolved = _check_block(SCHEMA, config, "", errors)
    if not errors:
        errors += _batch_errors(resolved)
    if errors:
        head = f"run config {source}: "
        if len(errors) == 1:
            raise ConfigError(head + errors[0])
        raise ConfigError(head + f"{len(errors)} problems:\n  - " + "\n  - ".join(errors))
    return resolved


def describe_schema(schema: dict | None = None, prefix: str = "") -> list[str]:
    """One line per key: dotted name, type, default and description (for ``--help``/docs)."""
    lines: list[str] = []
    for key, spec in (SCHEMA if schema is None else schema).items():
        if isinstance(spec, Field):
            default = "required" if spec.default is REQUIRED else f"default {spec.default!r}"
            bounds = spec.minimum is not None or spec.maximum is not None
            doc = f"{spec.doc} ({spec.range_text()})" if bounds else spec.doc
            lines.append(f"{prefix}{key}: {spec.kind}, {default} -- {doc}")
        elif isinstance(spec, PerTag):
            lines += describe_schema(spec.schema, f"{prefix}{key}.<tag>.")
        else:
            lines += describe_schema(spec, f"{prefix}{key}.")
    return lines
