"""``model.type: conv_lstm``: shapes, the observation layout, the recurrent state in the
rollout (reset on done, stored per step), the update's re-run of the stored sequences,
masks, determinism, and training on the toy env."""

from __future__ import annotations

import copy
import json

import pytest
import torch

from ai_economist.warp_drive.obs_layout import (
    ObsSegment,
    check_layout,
    flat_layout,
    layout_of_arrays,
)
from ai_economist.warp_drive.training.conv_lstm import ConvLSTMActorCritic
from ai_economist.warp_drive.training.models import build_model, masked_log_prob_entropy
from ai_economist.warp_drive.training.recurrent import RecurrentStates, sequence_fields
from ai_economist.warp_drive.training.schema import ConfigError, validate_config
from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config
from ai_economist.warp_drive.training.trainer import Trainer

LAYOUT = (
    ObsSegment("flat", (5,)),
    ObsSegment("world-map", (3, 7, 7)),
    ObsSegment("world-idx_map", (2, 7, 7), "index"),
)
OBS_DIM = 5 + 3 * 49 + 2 * 49
AGENT_MAP = {"a": ["0", "1", "2"], "p": ["p"]}


def small_model(**kwargs):
    torch.manual_seed(0)
    settings = dict(conv_filters=[4, 6], fc_dims=[16], lstm_size=8, index_vocab=10)
    return ConvLSTMActorCritic(LAYOUT, 6, **{**settings, **kwargs})


def random_obs(*lead):
    gen = torch.Generator().manual_seed(1)
    obs = torch.rand(*lead, OBS_DIM, generator=gen)
    idx = torch.randint(0, 6, (*lead, 2 * 49), generator=gen).float()
    obs[..., 5 + 3 * 49 :] = idx
    return obs


def conv_lstm_config(num_episodes=64, **model):
    config = toy_run_config(num_episodes=num_episodes)  # 8 iterations of 80 env-steps
    for tag in ("a", "p"):
        config["policy"][tag]["model"] = {"type": "conv_lstm", "fc_dims": [32], "lstm_size": 16}
        config["policy"][tag]["model"].update(model)
    return config


def make_trainer(tmp_path, config, env_seed=0):
    env = ToyTargetEnv(
        num_envs=config["trainer"]["num_envs"], **{**config["env"], "seed": env_seed}
    )
    return Trainer(env, config, AGENT_MAP, True, "first", results_directory=tmp_path, verbose=False)


def test_shapes_of_a_step_and_of_a_sequence():
    model = small_model()
    # 7x7 -> 3x3 -> 1x1 with kernel 3, stride 2; 3 value + 2 x 4 embedded index channels
    assert model.convs[0].in_channels == 3 + 2 * 4 and model.convs[1].out_channels == 6
    obs, state = random_obs(2, 3), model.initial_state(2, 3)
    logits, values, new_state = model.step(obs, state)
    assert logits.shape == (2, 3, 6) and values.shape == (2, 3) and new_state.shape == (2, 3, 16)
    assert not torch.equal(new_state, state)
    seq_logits, seq_values = model.forward_sequence(
        random_obs(4, 5), model.initial_state(4), torch.zeros(4, 5, dtype=torch.bool)
    )
    assert seq_logits.shape == (4, 5, 6) and seq_values.shape == (4, 5)
    # forward() is one step from the zero state
    torch.testing.assert_close(model(obs)[0], logits, rtol=0, atol=0)


def test_the_maps_are_read_as_maps_and_index_codes_are_embedded():
    model = small_model()
    obs = random_obs(1)
    base = model(obs)[0]
    moved = obs.clone()
    moved[0, 5 : 5 + 49] = obs[0, 5 : 5 + 49].roll(1)  # another arrangement of one map
    assert not torch.allclose(model(moved)[0], base)
    big = obs.clone()
    big[0, 5 + 3 * 49 :] = 99.0  # codes beyond the vocabulary are clamped, not an error
    assert torch.isfinite(model(big)[0]).all()


def test_bad_layouts_and_settings_are_named():
    with pytest.raises(ValueError, match="shrink the \\(7, 7\\) maps to nothing"):
        small_model(conv_filters=[4, 4, 4])
    with pytest.raises(ValueError, match="covers 10 entries .* has 12"):
        check_layout((ObsSegment("a", (4,)), ObsSegment("b", (6,))), 12, "policy 'a'")
    with pytest.raises(ValueError, match="share one height x width"):
        check_layout((ObsSegment("m", (1, 2, 2)), ObsSegment("n", (1, 3, 3))), 13, "policy 'a'")
    with pytest.raises(ValueError, match="kind must be one of"):
        ObsSegment("x", (3,), "category")
    with pytest.raises(ValueError, match="unknown model type 'cnn'.*conv_lstm"):
        build_model({"type": "cnn"}, 4, 2)
    import numpy as np

    layout = layout_of_arrays([("flat", np.zeros(3)), ("m", np.zeros((2, 4, 4), np.int16))])
    assert layout == (ObsSegment("flat", (3,)), ObsSegment("m", (2, 4, 4), "index"))


def test_schema_declares_the_keys_and_checks_the_sequence_length():
    config = conv_lstm_config(seq_len=3)  # the toy rollout has 10 steps
    with pytest.raises(ConfigError, match="'policy.a.model.seq_len' \\(3\\) must divide"):
        validate_config(config)
    resolved = validate_config(conv_lstm_config(seq_len=5))
    model = resolved["policy"]["a"]["model"]
    assert model["type"] == "conv_lstm" and model["conv_filters"] == [16, 32]
    assert model["conv_kernel"] == 3 and model["index_embedding_dim"] == 4


def test_a_sequence_resets_its_state_where_an_episode_begins():
    """Hand-made: 4 steps, an episode starts at step 2; the re-run equals a fresh run of
    steps 2-3 from the zero state, and steps 0-1 from the given state."""
    model = small_model()
    obs = random_obs(1, 4)
    start = torch.randn(1, model.state_size)
    resets = torch.tensor([[False, False, True, False]])
    logits, values = model.forward_sequence(obs, start, resets)
    head_logits, _ = model.forward_sequence(obs[:, :2], start, torch.zeros(1, 2, dtype=torch.bool))
    tail_logits, tail_values = model.forward_sequence(
        obs[:, 2:], model.initial_state(1), torch.zeros(1, 2, dtype=torch.bool)
    )
    torch.testing.assert_close(logits[:, :2], head_logits)
    torch.testing.assert_close(logits[:, 2:], tail_logits)
    torch.testing.assert_close(values[:, 2:], tail_values)
    # and the acting states: zeroed for the envs that are done, kept for the others
    policies = {"a": type("P", (), {"model": model, "spec": type("S", (), {"num_agents": 2})})}
    states = RecurrentStates(policies, 3, torch.device("cpu"))
    states["a"].fill_(1.0)
    states.reset_done(torch.tensor([0, 1, 0], dtype=torch.int32))
    assert states["a"][1].abs().sum() == 0 and (states["a"][[0, 2]] == 1).all()


def test_rollout_stores_states_resets_them_on_done_and_the_update_reproduces_them(tmp_path):
    config = conv_lstm_config(seq_len=5)
    config["trainer"]["train_batch_size"] = 8 * 15  # 15-step rollouts over 10-step episodes
    config["trainer"]["num_episodes"] = 24
    trainer = make_trainer(tmp_path, config)
    trainer.rollout.collect(trainer.timer)
    buf, dones = trainer.policies["a"].buffer, trainer.dones
    assert buf.states.shape == (15, 8, 3, 32)
    assert (buf.states[0] == 0).all()  # the first episode starts from zeros
    ended = dones[9].bool()
    assert ended.all()  # 10-step episodes: every env ended at step 9
    assert (buf.states[10] == 0).all() and (buf.states[9].abs().sum(-1) > 0).all()
    # the carried state equals the last stored state moved on by the model (no reset after 14)
    state = trainer.rollout.recurrent["a"]
    with torch.no_grad():
        _, _, expected = trainer.policies["a"].model.step(buf.obs[14], buf.states[14])
    torch.testing.assert_close(state, expected)
    # the update's sequences re-run from their stored states give the acting log-probs
    zeros = torch.zeros_like(buf.rewards)
    fields = sequence_fields(buf, dones, zeros, zeros, 5)
    assert fields["obs"].shape == (3 * 8 * 3, 5, buf.obs.shape[-1])
    assert fields["resets"].sum() == 8 * 3  # step 10 of every env and agent
    with torch.no_grad():
        logits, _ = trainer.policies["a"].model.forward_sequence(
            fields["obs"], fields["states"], fields["resets"]
        )
        log_prob, _ = masked_log_prob_entropy(logits, fields["masks"], fields["actions"])
    torch.testing.assert_close(log_prob, fields["log_probs"], rtol=1e-5, atol=1e-5)
    trainer.graceful_close()


def test_training_improves_respects_masks_and_is_deterministic(tmp_path):
    runs = []
    for name in ("one", "two"):
        trainer = make_trainer(tmp_path / name, conv_lstm_config())
        trainer.train()
        buf = trainer.policies["a"].buffer
        chosen = buf.masks.gather(-1, buf.actions.unsqueeze(-1))
        assert chosen.all()  # every sampled action was allowed
        runs.append(copy.deepcopy(trainer.policies["a"].model.state_dict()))
        trainer.graceful_close()
    assert all(torch.equal(runs[0][k], runs[1][k]) for k in runs[0])
    lines = (tmp_path / "one" / "metrics.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    # random play scores ~0.3 per step; optimal is 1.0 (measured: 0.28 -> 0.94)
    assert rows[-1]["a/reward_per_step"] > 0.8 > rows[0]["a/reward_per_step"] + 0.3
    assert rows[-1]["a/approx_kl"] < 0.5


def test_fully_connected_is_still_the_default():
    resolved = validate_config(toy_run_config())
    model = build_model(resolved["policy"]["a"]["model"], 8, 5)
    assert type(model).__name__ == "FullyConnectedActorCritic"
    assert not getattr(model, "recurrent", False)
    assert flat_layout(8) == (ObsSegment("obs", (8,)),)


def test_a_checkpoint_written_before_the_conv_lstm_keys_still_fits():
    from ai_economist.warp_drive.training.checkpoint_state import config_differences

    new = validate_config(toy_run_config())
    old = copy.deepcopy(new)
    for policy in old["policy"].values():  # a config of the schema before conv_lstm
        policy["model"] = {
            "type": "fully_connected",
            "fc_dims": [32, 32],
            "model_ckpt_filepath": "",
        }
    assert config_differences(old, new) == []
    new["policy"]["a"]["model"]["lstm_size"] = 64
    assert config_differences(old, new) == [
        "'policy.a.model.lstm_size': checkpoint 128, run config 64"
    ]


def test_gradients_flow_back_through_a_sequence_and_stop_at_an_episode_start():
    model = small_model()
    for reset_at, flows in ((None, True), (2, False)):
        obs = random_obs(1, 4).requires_grad_(True)
        resets = torch.zeros(1, 4, dtype=torch.bool)
        if reset_at is not None:
            resets[0, reset_at] = True
        logits, _ = model.forward_sequence(obs, model.initial_state(1), resets)
        logits[0, 3].sum().backward()
        reached = obs.grad[0, 0].abs().sum() > 0  # the last step's loss reaches step 0
        assert bool(reached) == flows
