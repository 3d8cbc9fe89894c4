"""policy_response: traces of fixed schedules and of hand-made models, the constancy and
response measures, the monthly table and the plot (CPU)."""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.foundation.scenarios.covid19.configs import TRAINING_ENV_CONFIG, env_config
from ai_economist.foundation.scenarios.covid19.model import policy_response as pr
from ai_economist.foundation.scenarios.covid19.training.fixed_policies import schedule_returns


@pytest.fixture(scope="module")
def env():
    return foundation.make_env_instance("CovidAndEconomySimulation", **env_config())


def schedule(env, close: int, days: int, open_: int, subsidy: int):
    day = np.arange(1, env.episode_length + 1)
    level = np.where(day <= days, close, open_)
    return (
        np.repeat(level[:, None], env.params.num_agents, axis=1),
        np.full(env.episode_length, subsidy),
    )


def test_two_phase_schedule_is_not_a_constant(env):
    trace = pr.trace_from_schedule(env, *schedule(env, 8, 210, 4, 0))
    expected, _ = schedule_returns(env, np.array([[8, 210, 4, 0]]))
    assert trace.planner_reward.sum() == pytest.approx(expected[0], rel=1e-12)
    c = pr.constancy(trace)
    assert c["distinct_levels"] == [2] * 51 and c["changes"] == [1] * 51
    assert c["levels_used"] == [4, 8] and c["constant_states"] == 0
    assert (c["subsidy_distinct_levels"], c["subsidy_changes"]) == (1, 0)
    assert not c["is_constant"]
    rows = pr.monthly_table(trace)
    assert len(rows) == 18 and rows[0]["day"] == 1 and rows[-1]["day"] == 511
    assert [r["stringency_mean"] for r in rows[:7]] == [8.0] * 7  # days 1-210
    assert [r["stringency_mean"] for r in rows[7:]] == [4.0] * 11
    assert sum(r["planner_reward"] for r in rows) == pytest.approx(expected[0], rel=1e-12)
    assert rows[0]["vaccinated_pct"] == 0.0 and rows[-1]["vaccinated_pct"] > 50  # day 296 on
    # opening after the vaccines: the stringency falls as vaccinations rise
    assert pr.response(trace)["corr_vaccinated_states"] < -0.5


def test_constant_schedule_and_its_measures(env):
    trace = pr.trace_from_schedule(env, *schedule(env, 6, 540, 6, 0))
    c = pr.constancy(trace)
    assert c["is_constant"] and c["constant_states"] == 51 and c["mean_changes"] == 0
    assert pr.response(trace)["corr_infected_states"] is None  # no state moved
    text = pr.format_report(trace)
    assert "constant? YES: 51 of 51 states hold one level" in text
    assert "infections n/a per state, n/a US mean" in text


def test_distinct_and_changes_count_returns_to_a_level():
    levels = np.array([[1, 5], [2, 5], [1, 5], [1, 6]])
    assert pr._distinct(levels).tolist() == [2, 2]
    assert pr._changes(levels).tolist() == [2, 1]


def test_recorded_greedy_trace_of_hand_made_models_matches_the_schedule(env):
    torch = pytest.importorskip("torch")
    from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
    from ai_economist.warp_drive.training.models import build_model

    config = env_config(TRAINING_ENV_CONFIG, episode_length=60)
    wrapper = FoundationEnvWrapper(
        foundation.make_env_instance("CovidAndEconomySimulation", **config), 1, "numpy"
    )
    wrapper.reset_all_envs()
    models = {}
    for tag, action in (("a", 7), ("p", 3)):
        model = build_model(
            {"type": "fully_connected", "fc_dims": [8]},
            wrapper.observations(tag).shape[-1],
            wrapper.action_masks(tag).shape[-1],
        )
        with torch.no_grad():
            for param in model.parameters():
                param.zero_()
            model.policy_head.bias[action] = 1.0
        models[tag] = model.eval()
    trace = pr.record_trace(models, config)
    short = foundation.make_env_instance("CovidAndEconomySimulation", **config)
    expected = pr.trace_from_schedule(short, *schedule(short, 7, 60, 7, 3))
    np.testing.assert_array_equal(trace.stringency, expected.stringency)
    np.testing.assert_array_equal(trace.subsidy, expected.subsidy)
    np.testing.assert_allclose(trace.planner_reward, expected.planner_reward, rtol=1e-5)
    np.testing.assert_allclose(trace.infected, expected.infected, rtol=1e-9)


def test_plot_is_written(env, tmp_path):
    pytest.importorskip("matplotlib")
    trace = pr.trace_from_schedule(env, *schedule(env, 8, 210, 4, 5))
    paths = pr.write_response_plots(trace, tmp_path, "two phases")
    assert [p.name for p in paths] == ["policy_response.png"] and paths[0].stat().st_size > 1000


def test_schedule_shape_is_checked(env):
    with pytest.raises(ValueError, match=r"expected \(540, 51\) and \(540,\)"):
        pr.trace_from_schedule(env, np.ones((10, 51)), np.zeros(10))
