"""The fused sampling kernel's twins (CUDA C and Triton) on a GPU: the same actions and
log-probabilities as ``sample_masked`` (torch on CUDA), inside CUDA graphs and on side streams,
and training with either samples exactly as training without it.  Run on a GPU machine with
``pytest -m gpu``."""

from __future__ import annotations

import pytest
import torch

from ai_economist.training.config import default_config_path, load_run_config
from ai_economist.training.training_script import build_trainer as build_registered
from ai_economist.warp_drive.training import fused_sampling as fs
from ai_economist.warp_drive.training.models import MASKED_LOGIT, draw_gumbel, sample_masked
from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config
from ai_economist.warp_drive.training.trainer import Trainer

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]

CUDA = torch.device("cuda")
TWINS = ["cuda_c", "triton"]


@pytest.fixture(params=TWINS)
def twin(request) -> str:
    """Each twin of the kernel (skipped where it is unavailable: no nvcc, no Triton)."""
    if fs.fused_sampling_kernel(request.param) != request.param:
        pytest.skip(f"the {request.param} twin is not available here")
    return request.param


def hard_case(n: int, num_actions: int, dtype: torch.dtype, seed: int = 0) -> tuple:
    """Logits as a view of a joint ``(n, A + 1)`` head output whose last column is the value;
    rows with one allowed action, with none, with ties (equal logits and noise) and with
    huge negative logits; the noise drawn as the rollout draws it."""
    gen = torch.Generator(device=CUDA).manual_seed(seed)
    joint = torch.randn(n, num_actions + 1, generator=gen, device=CUDA) * 4
    joint[::5, 1] = MASKED_LOGIT  # -inf-like logits
    joint[2::13, 0] = -1e38
    logits, values = joint[:, :-1], joint[:, -1]
    masks = torch.rand(n, num_actions, generator=gen, device=CUDA) > 0.4
    masks[::7] = False
    masks[::7, 2] = True  # one allowed action
    masks[3::11] = False  # none allowed: every score rounds to the fill, action 0 as in torch
    gumbel = draw_gumbel(torch.empty(n, num_actions, device=CUDA), gen)
    logits[1::9, :4], gumbel[1::9, :4] = 1.5, 0.25  # ties: the first index wins
    return (logits.to(dtype) if dtype != torch.float32 else logits), masks, gumbel, values


def fused(logits, masks, gumbel, values, env_dtype=torch.int32, twin="auto") -> tuple:
    n = values.numel()
    out = (
        torch.full((n,), -1, device=CUDA),
        torch.full((n,), 7.0, device=CUDA),
        torch.zeros(n, device=CUDA),
    )
    env_actions = torch.full((n,), -1, dtype=env_dtype, device=CUDA)
    fs.fused_sample(logits, masks, gumbel, values, out, env_actions, kernel=twin)
    return (*out, env_actions)


def assert_matches_torch(logits, masks, gumbel, values, result) -> None:
    actions, log_probs = sample_masked(logits, masks, gumbel=gumbel)
    fused_actions, fused_log_probs, fused_values, env_actions = result
    assert torch.equal(fused_actions, actions)
    assert torch.equal(env_actions.long(), actions)
    assert torch.equal(fused_values, values.float())
    if logits.dtype == torch.float32:  # only the order of the sum over the actions differs
        torch.testing.assert_close(fused_log_probs, log_probs, atol=1e-6, rtol=1e-6)
    else:  # torch returns bfloat16: float32 math rounded once, as the kernel rounds it
        assert torch.equal(fused_log_probs.to(logits.dtype).float(), fused_log_probs)
        torch.testing.assert_close(fused_log_probs, log_probs.float(), atol=1e-6, rtol=2**-7)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("n", [1, 60 * 51, 1200 * 51 + 7])
@pytest.mark.parametrize("num_actions", [11, 21])
def test_fused_sampling_matches_sample_masked(dtype, n, num_actions, twin):
    case = hard_case(n, num_actions, dtype, seed=n)
    assert_matches_torch(*case, fused(*case, twin=twin))


def test_the_cuda_c_twin_takes_float32_values_of_bfloat16_logits_and_int32_masks():
    if fs.fused_sampling_kernel("cuda_c") != "cuda_c":
        pytest.skip("no nvcc")
    logits, masks, gumbel, values = hard_case(3060, 21, torch.bfloat16, seed=5)
    result = fused(logits, masks.int(), gumbel, values.float(), twin="cuda_c")
    assert_matches_torch(logits, masks, gumbel, values, result)


@pytest.mark.parametrize("env_dtype", [torch.int32, torch.int64])
def test_batched_shapes_float_masks_and_env_dtypes(env_dtype, twin):
    logits, masks, gumbel, values = hard_case(60 * 51, 11, torch.float32)
    shape = (60, 51)
    result = fused(
        logits.reshape(*shape, 11),  # still a strided view of the joint output
        masks.float().reshape(*shape, 11),  # the env's float masks: nonzero = allowed
        gumbel.reshape(*shape, 11),
        values.reshape(shape),
        env_dtype,
        twin,
    )
    assert result[3].dtype == env_dtype
    assert_matches_torch(logits, masks, gumbel, values, [r.reshape(-1) for r in result])


def test_fused_sampling_replays_from_a_cuda_graph_on_a_side_stream(twin):
    logits, masks, gumbel, values = hard_case(3060, 11, torch.float32, seed=1)
    n = values.numel()
    out = (torch.zeros(n, dtype=torch.long, device=CUDA), torch.zeros(n, device=CUDA),
           torch.zeros(n, device=CUDA))  # fmt: skip
    env_actions = torch.zeros(n, dtype=torch.int32, device=CUDA)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # compiled and run once outside the graph
        fs.fused_sample(logits, masks, gumbel, values, out, env_actions, kernel=twin)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fs.fused_sample(logits, masks, gumbel, values, out, env_actions, kernel=twin)
    new = hard_case(3060, 11, torch.float32, seed=2)  # fresh inputs at the captured addresses
    for static, fresh in zip((logits, masks, gumbel, values), new, strict=True):
        static.copy_(fresh)
    graph.replay()
    torch.cuda.synchronize()
    assert_matches_torch(*new, (*out, env_actions))


def covid_trainer(tmp_path, fused_sampling: bool, num_envs: int = 4, steps: int = 45,
                  twin: str = "auto"):  # fmt: skip
    overrides = [
        f"trainer.num_envs={num_envs}",
        f"trainer.train_batch_size={num_envs * steps}",
        "trainer.num_episodes=100",
        "trainer.device=cuda",
        "trainer.env_backend=pycuda",
        "trainer.cuda_graphs=true",
        "trainer.cuda_graph_update=false",  # the rollout graph alone
        f"trainer.fused_sampling={str(fused_sampling).lower()}",
        f"trainer.fused_sampling_kernel={twin}",
        "trainer.progress_bar=false",
        "saving.tensorboard=false",
    ]
    config = load_run_config(default_config_path("covid_and_economy_environment"), overrides)
    return build_registered(config, CUDA, results_directory=tmp_path, verbose=False)


def toy_trainer(tmp_path, fused_sampling: bool, twin: str = "auto"):
    config = toy_run_config(num_episodes=40, cuda_graphs=True, fused_sampling=fused_sampling,
                            fused_sampling_kernel=twin)  # fmt: skip
    env = ToyTargetEnv(num_envs=config["trainer"]["num_envs"], device="cuda", **config["env"])
    agents = {"a": ["0", "1", "2"], "p": ["p"]}
    return Trainer(env, config, agents, True, "first", results_directory=tmp_path, verbose=False)


def buffers(trainer) -> dict[str, torch.Tensor]:
    torch.cuda.synchronize()
    names = ("obs", "masks", "actions", "log_probs", "values", "rewards")
    return {
        f"{tag}/{name}": getattr(p.buffer, name).clone()
        for tag, p in trainer.policies.items()
        for name in names
    }


@pytest.mark.parametrize("env", ["covid", "toy"])  # whole-rollout graph / per-step graphs
def test_training_samples_the_same_with_and_without_the_fused_kernel(tmp_path, env, twin):
    make = covid_trainer if env == "covid" else toy_trainer
    plain = make(tmp_path / "plain", False)
    fused_run = make(tmp_path / "fused", True, twin=twin)
    assert fused_run.rollout.fused_sampling and not plain.rollout.fused_sampling
    runs = []
    for trainer in (plain, fused_run):
        trainer.train_iteration()  # captures the graphs, then replays them
        first = buffers(trainer)
        trainer.train_iteration()
        trainer.train_iteration()
        runs.append((trainer.rollout.graph_mode, first, buffers(trainer)))
        trainer.graceful_close()
    (mode_p, first_p, last_p), (mode_f, first_f, last_f) = runs
    assert mode_p == mode_f == ("rollout" if env == "covid" else "policy")
    for key, value in first_p.items():  # the same weights: the same rollout, bit for bit
        if key.endswith("log_probs"):  # the sum over the actions in another order
            torch.testing.assert_close(first_f[key], value, atol=1e-6, rtol=1e-6)
        else:
            assert torch.equal(first_f[key], value), key
    for key in ("a/actions", "p/actions"):  # after two updates (old log-probs ~1e-7 apart)
        assert torch.equal(last_f[key], last_p[key]), key
