"""The one registry's bad input: a package that fails to import, two packages registering one
name; discovery through the ``ai_economist.environments`` entry points."""

from __future__ import annotations

import importlib
import warnings
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from ai_economist.warp_drive import registry
from ai_economist.warp_drive.errors import UnknownNameError

GOOD = """
from ai_economist.warp_drive.registry import EnvEntry, register_env
register_env("{name}", EnvEntry(lambda c, d, b: "{name}"))
"""


@pytest.fixture
def packages(tmp_path, monkeypatch):
    """``install({entry point: (distribution, module source)})``: a fresh registry whose
    entry points are those modules, written to ``tmp_path``."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def install(spec: dict[str, tuple[str, str]]) -> registry.Registry:
        found = []
        for ep_name, (dist, source) in spec.items():
            module = f"seam_test_{ep_name}"
            (tmp_path / f"{module}.py").write_text(source)
            monkeypatch.delitem(__import__("sys").modules, module, raising=False)
            ep = EntryPoint(ep_name, module, registry.ENTRY_POINT_GROUP)
            found.append((ep, dist))
        monkeypatch.setattr(registry, "entry_points_of", lambda group: found)
        fresh = registry.Registry(group=registry.ENTRY_POINT_GROUP)
        monkeypatch.setattr(registry, "ENVIRONMENTS", fresh)
        return fresh

    return install


def test_entry_points_register_lazily(packages):
    reg = packages({"alpha": ("pkg-alpha", GOOD.format(name="alpha"))})
    assert reg._entries == {}  # nothing imported before the first lookup
    assert reg["alpha"].build(None, None, None) == "alpha"
    assert reg["alpha"].origin == "package 'pkg-alpha' (seam_test_alpha)"


def test_a_package_that_fails_to_import_names_itself_and_the_rest_still_work(packages):
    reg = packages(
        {
            "alpha": ("pkg-alpha", GOOD.format(name="alpha")),
            "broken": ("pkg-broken", "raise RuntimeError('no kernels here')\n"),
        }
    )
    assert reg["alpha"].build(None, None, None) == "alpha"  # no error, no warning
    with pytest.raises(registry.EnvironmentImportError) as err:
        reg["broken"]
    text = str(err.value)
    assert "'pkg-broken'" in text and "RuntimeError: no kernels here" in text
    with pytest.raises(UnknownNameError, match="'alph'.*Did you mean 'alpha'.*pkg-broken"):
        reg["alph"]
    with pytest.warns(registry.EnvironmentImportWarning, match="pkg-broken.*no kernels here"):
        assert list(reg) == ["alpha"]


def test_two_packages_registering_one_name_is_an_error_naming_both(packages):
    reg = packages(
        {
            "a_first": ("pkg-one", GOOD.format(name="shared")),
            "b_second": ("pkg-two", GOOD.format(name="shared")),
        }
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        names = list(reg)
    assert names == ["shared"] and reg["shared"].origin.startswith("package 'pkg-one'")
    (message,) = [str(w.message) for w in caught]
    assert "'shared' is registered twice: by package 'pkg-one'" in message
    assert "and by package 'pkg-two'" in message


def test_the_installed_checkout_declares_its_own_environments():
    """This project's environments come through the same entry points as anyone's."""
    points = {ep.name: ep.module for ep, _ in registry.entry_points_of(registry.ENTRY_POINT_GROUP)}
    if not points:
        pytest.fail("no ai_economist.environments entry points: run `pip install -e .`")
    assert points["toy"] == "ai_economist.warp_drive.training.toy_registration"
    assert {"toy", "ring_chase", "covid_and_economy_environment"} <= set(registry.ENVIRONMENTS)


def test_no_entry_points_at_all_says_to_install_the_package(monkeypatch):
    monkeypatch.setattr(registry, "entry_points_of", lambda group: [])
    reg = registry.Registry(group=registry.ENTRY_POINT_GROUP)
    with pytest.raises(UnknownNameError, match="Known: \\[\\].*install ai-economist"):
        reg["toy"]


def test_the_layers_below_the_edge_take_the_parsed_enum_only():
    from ai_economist.example_envs.ring_chase.env import RingChase
    from ai_economist.warp_drive.backend_names import EnvBackend
    from ai_economist.warp_drive.backends import make_backend

    with pytest.raises(TypeError, match="make_backend takes an EnvBackend, got 'numpy'"):
        make_backend(RingChase(), 2, "numpy")
    assert make_backend(RingChase(), 2, EnvBackend.NUMPY).num_envs == 2


def test_the_old_module_lists_still_answer_with_a_deprecation_warning():
    from ai_economist import example_envs
    from ai_economist.training import environments

    with pytest.warns(DeprecationWarning, match="entry-point group 'ai_economist.environments'"):
        modules = environments.SCENARIO_REGISTRATION_MODULES
    assert "ai_economist.foundation.scenarios.covid19.registration" in modules
    with pytest.warns(DeprecationWarning, match="entry-point group 'ai_economist.environments'"):
        examples = example_envs.REGISTRATION_MODULES
    assert "ai_economist.example_envs.ring_chase.registration" in examples


def test_every_registered_env_ships_its_default_run_config_beside_it():
    from ai_economist.training.config import default_config_path, load_run_config

    for name in sorted(registry.ENVIRONMENTS):
        entry = registry.ENVIRONMENTS[name]
        path = default_config_path(name)
        assert path.parent == entry.config_dir and path.parent.name == "run_configs", name
        # "package 'dist' (module)" from an entry point, "module 'name'" if imported directly
        origin = entry.origin
        module = origin.split("(")[1].rstrip(")") if "(" in origin else origin.split("'")[1]
        here = Path(importlib.import_module(module).__file__).parent
        assert path.parent.parent == here, name  # beside its registration module
        assert load_run_config(path)["name"] == name


def test_the_policy_mapping_is_the_entrys_own_or_the_specs():
    from types import SimpleNamespace

    from ai_economist.warp_drive.env_protocol import PolicySpec

    env = SimpleNamespace(policy_specs={"a": PolicySpec(3, 4, 2), "p": PolicySpec(1, 4, 2)})
    assert registry.default_policy_mapping(env) == {"a": ["0", "1", "2"], "p": ["p"]}
    env.policy_tag_to_agent_id_map = {"runner": ["4", "5"]}
    assert registry.default_policy_mapping(env) == {"runner": ["4", "5"]}
    entry = registry.EnvEntry(lambda c, d, b: None, policy_mapping=lambda e: {"x": ["0"]})
    assert entry.policy_mapping(env) == {"x": ["0"]}
