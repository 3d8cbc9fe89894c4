"""EnvironmentRegistrar: kernel sources per backend, dual-mode classes, defaults."""

from pathlib import Path

import pytest

from ai_economist.warp_drive import env_registrar as env_reg_mod
from ai_economist.warp_drive import registrar as reg_mod
from ai_economist.warp_drive import registry
from ai_economist.warp_drive.registrar import EnvironmentRegistrar, default_registrar

CU = Path(__file__).parent / "data" / "tiny_kernel.cu"


class TinyEnv:
    name = "TinyEnv"


class OtherEnv:
    pass


@pytest.fixture
def clean_defaults(monkeypatch):
    fresh = EnvironmentRegistrar(use_defaults=False)
    monkeypatch.setattr(reg_mod, "default_registrar", fresh)
    monkeypatch.setattr(env_reg_mod, "default_registrar", fresh)  # where registrars look it up
    monkeypatch.setattr(registry, "ENVIRONMENTS", registry.Registry())  # no registered envs
    return fresh


def test_cuda_src_paths(clean_defaults):
    r = EnvironmentRegistrar()
    r.add_cuda_env_src_path("TinyEnv", CU)
    r.add_cuda_env_src_path("TinyEnv", "tests.tiny_numba", env_backend="numba")
    assert r.get_cuda_env_src_path("TinyEnv") == str(CU.resolve())
    assert r.get_cuda_env_src_path("tinyenv", env_backend="numba") == "tests.tiny_numba"
    assert r.has_env("TinyEnv", "pycuda") and r.has_env("TinyEnv", "numba")
    assert not r.has_env("TinyEnv", "cpu")
    with pytest.raises(KeyError, match="TinyEnvv.*'TinyEnv'"):
        r.get_cuda_env_src_path("TinyEnvv")
    with pytest.raises(ValueError, match="'pycuda', 'numba'"):
        r.add_cuda_env_src_path("TinyEnv", CU, env_backend="opencl")
    with pytest.raises(ValueError, match="'pycuda', 'numba'"):
        r.get_cuda_env_src_path("TinyEnv", env_backend="cpu")
    with pytest.raises(ValueError, match=".cu build file"):
        r.add_cuda_env_src_path("TinyEnv", "kernels.py")
    with pytest.raises(FileNotFoundError):
        r.add_cuda_env_src_path("TinyEnv", "does/not/exist.cu")
    with pytest.raises(ValueError, match="dotted Python module"):
        r.add_cuda_env_src_path("TinyEnv", "a/b.py", env_backend="numba")


def test_classes_and_decorator(clean_defaults):
    r = EnvironmentRegistrar()

    @r.add(env_backend=("cpu", "pycuda"), cuda_env_src_path={"pycuda": CU})
    class Dual:
        name = "Dual"

    r.add_env(OtherEnv, env_backend="numba", cuda_env_src_path="pkg.mod")
    assert r.get("Dual") is Dual and r.get("dual", use_cuda=True) is Dual
    assert r.get("OtherEnv", use_cuda=True) is OtherEnv
    assert r.get("OtherEnv", env_backend="numba") is OtherEnv
    assert r.get_cuda_env_src_path("OtherEnv", "numba") == "pkg.mod"
    assert r.env_names("pycuda") == ["Dual"]
    with pytest.raises(KeyError, match="Known: \\[Dual\\]"):
        r.get("OtherEnv")
    with pytest.raises(ValueError, match="'cpu', 'numpy', 'pycuda', 'numba'"):
        r.get("Dual", env_backend="metal")
    with pytest.raises(ValueError, match="exactly one GPU backend"):
        r.add_env(TinyEnv, env_backend=("pycuda", "numba"), cuda_env_src_path=CU)
    with pytest.raises(TypeError):
        r.add_env(TinyEnv())


def test_custom_registrations_take_priority_over_defaults(clean_defaults):
    clean_defaults.add_env(TinyEnv, env_backend="cpu")
    clean_defaults.add_cuda_env_src_path("TinyEnv", "default.module", "numba")
    custom = EnvironmentRegistrar()
    assert custom.get("TinyEnv") is TinyEnv  # falls back to the defaults
    assert custom.get_cuda_env_src_path("TinyEnv", "numba") == "default.module"

    class CustomTiny:
        name = "TinyEnv"

    custom.add_env(CustomTiny)
    custom.add_cuda_env_src_path("TinyEnv", "custom.module", "numba")
    assert custom.get("TinyEnv") is CustomTiny
    assert custom.get_cuda_env_src_path("TinyEnv", "numba") == "custom.module"
    assert clean_defaults.get("TinyEnv") is TinyEnv
    isolated = EnvironmentRegistrar(use_defaults=False)
    assert not isolated.has_env("TinyEnv")


def test_providers_are_imported_lazily(clean_defaults, tmp_path, monkeypatch):
    (tmp_path / "wd_tiny_provider_mod.py").write_text(
        "from ai_economist.warp_drive import registrar\n"
        "registrar.default_registrar.add_cuda_env_src_path('Lazy', 'lazy.kernels', 'numba')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.warns(DeprecationWarning, match="entry-point group 'ai_economist.environments'"):
        clean_defaults.add_provider("wd_tiny_provider_mod")
    assert EnvironmentRegistrar().get_cuda_env_src_path("Lazy", "numba") == "lazy.kernels"


def test_module_default_exists():
    assert isinstance(default_registrar, EnvironmentRegistrar)


def test_the_registrars_fall_back_to_the_one_registry(clean_defaults):
    """A GpuEnvironment registered once (in the registry) is found by every registrar that
    uses the defaults, with the kernel sources of its kernels()."""
    from ai_economist.example_envs.ring_chase.env import RingChase

    reg_mod.register_gpu_training_env(RingChase)
    for registrar in (clean_defaults, EnvironmentRegistrar()):
        assert registrar.get("Ring_Chase", env_backend="numba") is RingChase
        assert registrar.get_cuda_env_src_path("ring_chase", "pycuda").endswith(".cu")
        assert registrar.env_names("numpy") == ["ring_chase"]
    assert not EnvironmentRegistrar(use_defaults=False).has_env("ring_chase", "numpy")
