"""``policy.<tag>.model.initial_logits``: the policy head's initial bias sets the initial
policy for every observation; a wrong length or a non-number is named before any work."""

from __future__ import annotations

import pytest
import torch

from ai_economist.warp_drive.env_protocol import PolicySpec
from ai_economist.warp_drive.training.models import build_policy_model
from ai_economist.warp_drive.training.schema import ConfigError, validate_config
from ai_economist.warp_drive.training.toy_env import toy_run_config

LOGITS = [0.0, 2.0, 0.0, -1.0, -3.0]


def _policy_config(model_type: str, logits: list[float]) -> dict:
    model = {"type": model_type, "fc_dims": [16, 16], "initial_logits": logits}
    if model_type == "conv_lstm":
        model["lstm_size"] = 8
    return {"model": model}


@pytest.mark.parametrize("model_type", ["fully_connected", "conv_lstm"])
def test_the_initial_policy_is_the_softmax_of_the_given_logits(model_type: str) -> None:
    torch.manual_seed(0)
    spec = PolicySpec(num_agents=2, obs_dim=6, num_actions=len(LOGITS))
    model = build_policy_model("p", _policy_config(model_type, LOGITS), spec, torch.device("cpu"))
    obs = torch.randn(32, 6) * 3.0
    logits = model(obs)[0] if model_type == "fully_connected" else model(obs, None)[0]
    probs = torch.softmax(logits.reshape(-1, len(LOGITS)), dim=-1)
    expected = torch.softmax(torch.tensor(LOGITS), dim=-1)
    # the head's weights start at gain 0.01: every observation's policy is within 2% of it
    torch.testing.assert_close(probs, expected.expand_as(probs), atol=0.02, rtol=0.0)
    plain = build_policy_model("p", _policy_config(model_type, []), spec, torch.device("cpu"))
    assert torch.count_nonzero(plain.policy_head.bias) == 0  # the default: zeros


def test_a_wrong_length_names_the_key_and_the_action_count() -> None:
    spec = PolicySpec(num_agents=1, obs_dim=4, num_actions=3)
    with pytest.raises(ConfigError, match=r"policy\.p\.model\.initial_logits has 5 numbers; "
                                          r"policy 'p' has 3 actions"):  # fmt: skip
        build_policy_model("p", _policy_config("fully_connected", LOGITS), spec,
                           torch.device("cpu"))  # fmt: skip


def test_the_schema_takes_numbers_only() -> None:
    config = toy_run_config()
    config["policy"]["p"]["model"] = {**config["policy"]["p"]["model"],
                                      "initial_logits": [0, 1.5, -2]}  # fmt: skip
    resolved = validate_config(config)
    assert resolved["policy"]["p"]["model"]["initial_logits"] == [0.0, 1.5, -2.0]
    assert resolved["policy"]["a"]["model"]["initial_logits"] == []
    config["policy"]["p"]["model"]["initial_logits"] = [0, "high"]
    with pytest.raises(ConfigError, match=r"'policy\.p\.model\.initial_logits' must be a list of "
                                          r"finite numbers"):  # fmt: skip
        validate_config(config)
    config["policy"]["p"]["model"]["initial_logits"] = [0, float("inf")]
    with pytest.raises(ConfigError, match="initial_logits"):
        validate_config(config)
