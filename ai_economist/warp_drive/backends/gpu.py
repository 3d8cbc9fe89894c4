"""The kernel backends: CUDA C (``pycuda``: loaded by pycuda, launched through the CUDA
driver on torch's stream, see ``function_manager``), or Numba ``@cuda.jit`` kernels.

Before anything is allocated the kernels are checked against the declaration (names exist,
parameters are the ``kernel_arg`` fields in declaration order, or one pointer to the
``KernelSpec.state_struct``). Each step launches ``KernelSpec.step_kernels`` in order with
grid ``num_envs`` and block ``threads_per_env``; every kernel's launch is bound once (device
pointers or the pointer table for pycuda, Numba device arrays or, under
``NUMBA_ENABLE_CUDASIM=1``, numpy views of CPU tensors), so a step is one driver call per
kernel: no allocation, no host synchronisation.
"""

from __future__ import annotations

import hashlib
import sys
import types
from pathlib import Path
from typing import Any

from ai_economist.warp_drive import codegen
from ai_economist.warp_drive.backend_names import GPU_BACKENDS, EnvBackend, require
from ai_economist.warp_drive.backends.base import BatchedBackend
from ai_economist.warp_drive.checks.declaration import (
    EnvironmentDeclarationError,
    check_cuda_kernels,
    check_numba_kernels,
)
from ai_economist.warp_drive.errors import cudasim_enabled
from ai_economist.warp_drive.scenario import GpuEnvironment


def kernel_constants(env: GpuEnvironment) -> dict[str, int | float]:
    """The kernels' compile-time constants: dimensions (upper case) and ``KernelSpec.defines``."""
    return {**codegen.dim_defines(env.dims()), **dict(env.kernels().defines)}


def header_for(env: GpuEnvironment, spec) -> str:
    """The generated ``<env name>_state.h`` text: constants (and the state struct)."""
    ks = env.kernels()
    constants = {**kernel_constants(env), "ENVS_PER_BLOCK": ks.envs_per_block}
    return codegen.generate_header(env.name, spec, constants, ks.state_struct)


def envs_per_block(env: GpuEnvironment, num_envs: int, threads_per_env: int) -> int:
    """``KernelSpec.envs_per_block`` for ``num_envs``: its largest divisor ``k`` not above
    the declared most (every block then holds ``k`` whole envs); an error naming the env if
    a block of ``threads_per_env x`` the most exceeds 1,024 threads."""
    most = int(env.kernels().envs_per_block)
    if most < 1 or threads_per_env * most > 1024:
        raise EnvironmentDeclarationError(
            f"environment {env.name!r}: envs_per_block={most} with {threads_per_env} threads "
            "per env: needs 1 <= envs_per_block and threads_per_env x envs_per_block <= 1024"
        )
    return max(k for k in range(1, most + 1) if num_envs % k == 0)


def factory_module(env: GpuEnvironment, module: Any) -> Any:
    """``module`` itself, or with ``KernelSpec.numba_factory`` a module holding the kernels
    the factory builds for ``kernel_constants(env)`` (registered in ``sys.modules`` under a
    name derived from the constants, so the function manager loads it as any module)."""
    factory = env.kernels().numba_factory
    if factory is None:
        return module
    make = getattr(module, factory, None)
    if not callable(make):
        raise EnvironmentDeclarationError(
            f"environment {env.name!r}: numba_factory {factory!r} is not a function of "
            f"{module.__name__}"
        )
    constants = kernel_constants(env)
    kernels = dict(make(constants))
    check_numba_kernels(env, env.state_spec(), kernels)
    digest = hashlib.sha256(repr(sorted(constants.items())).encode()).hexdigest()[:12]
    name = f"_ai_economist_numba_{module.__name__.replace('.', '_')}_{digest}"
    built = sys.modules.get(name)
    if built is None:
        built = types.ModuleType(name, f"kernels of {module.__name__}.{factory}")
        vars(built).update(kernels)
        sys.modules[name] = built
    return built


class KernelBackend(BatchedBackend):
    """``num_envs`` environments stepped by the environment's CUDA C or Numba kernels.

    Args:
        env: the environment.
        num_envs: environments (one block each).
        backend: ``EnvBackend.PYCUDA`` or ``EnvBackend.NUMBA``.
        seed: passed to ``env.initial_state``.
        device: torch device; ``"cuda"`` by default, ``"cpu"`` under ``NUMBA_ENABLE_CUDASIM=1``.
        source: replaces the ``.cu`` file (pycuda) or the Numba module of ``env.kernels()``.
    """

    def __init__(
        self,
        env: GpuEnvironment,
        num_envs: int,
        backend: EnvBackend,
        seed: int | None = 0,
        device: Any = None,
        source: str | None = None,
    ) -> None:
        self.backend = require(backend, GPU_BACKENDS, "KernelBackend")
        self._source_override = source
        if device is None:
            simulated = self.backend is EnvBackend.NUMBA and cudasim_enabled()
            device = "cpu" if simulated else "cuda"
        super().__init__(env, num_envs, seed, device)
        if self.backend is EnvBackend.PYCUDA:
            self._setup_pycuda()
        else:
            self._setup_numba()
        self._bound = self._bind_kernels()
        self._launches = tuple(self._bound[name] for name in env.kernels().step_kernels)
        self._reset_launches = tuple(self._bound[n] for n in env.kernels().reset_kernels)
        self._fused_reset = self._make_fused_reset()

    # ------------------------------------------------------------ checks and setup
    def _source(self) -> Any:
        ks = self.env.kernels()
        if self._source_override is not None:
            return self._source_override
        source = ks.cuda_source if self.backend is EnvBackend.PYCUDA else ks.numba_module
        if source is None:
            raise EnvironmentDeclarationError(
                f"environment {self.env.name!r}: kernels() gives no "
                f"{'cuda_source' if self.backend is EnvBackend.PYCUDA else 'numba_module'} for "
                f"env_backend {self.backend.value!r}; use another backend or add the kernels"
            )
        return source

    @property
    def source(self) -> Any:
        """The kernel source in use: the registered override, else ``env.kernels()``'s."""
        return self._source()

    def _check_kernels(self) -> None:
        if not self.env.kernels().step_kernels:
            raise EnvironmentDeclarationError(
                f"environment {self.env.name!r}: kernels().step_kernels is empty"
            )
        source = self._source()
        if self.backend is EnvBackend.PYCUDA:
            self._check_state_struct()
            self.header_dir = codegen.write_header(self.env.name, header_for(self.env, self.spec))
            check_cuda_kernels(self.env, self.spec, Path(source), self.header_dir)
        else:
            from ai_economist.warp_drive.errors import require_numba_cuda
            from ai_economist.warp_drive.function_manager import _import_module

            require_numba_cuda()
            self._numba_module = _import_module(source)
            if self.env.kernels().numba_factory is None:
                check_numba_kernels(self.env, self.spec, self._numba_module)
            else:  # builds (and checks) the kernels for this environment's constants
                self._numba_module = factory_module(self.env, self._numba_module)

    def _check_state_struct(self) -> None:
        """With ``KernelSpec.state_struct`` every kernel argument must be an array (a struct
        member is a device pointer)."""
        struct = self.env.kernels().state_struct
        scalars = [f.name for f in self.spec.kernel_fields() if f.is_scalar_constant]
        if struct is not None and scalars:
            raise EnvironmentDeclarationError(
                f"environment {self.env.name!r}: scalar constant {scalars[0]!r} cannot be a "
                f"member of state_struct {struct!r} (members are device pointers); give it as "
                "a KernelSpec.defines constant, or declare it with kernel_arg=False"
            )

    def _setup_pycuda(self) -> None:
        from ai_economist.warp_drive.function_manager import CUDAFunctionManager

        fm = CUDAFunctionManager(num_agents=self.threads_per_env, num_envs=self.num_envs)
        fm.compile_and_load_cuda(self._source(), include_dirs=[self.header_dir])
        fm.initialize_functions(self.env.kernels().all_kernels)
        self.function_manager = fm

    def _setup_numba(self) -> None:
        from ai_economist.warp_drive.function_manager import NumbaFunctionManager

        fm = NumbaFunctionManager(num_agents=self.threads_per_env, num_envs=self.num_envs)
        fm.load_module(self._numba_module.__name__)
        fm.initialize_functions(self.env.kernels().all_kernels)
        self.function_manager = fm

    def _bind_kernels(self) -> dict:
        """``{kernel name: zero-argument launcher}`` for every kernel of ``KernelSpec``."""
        ks, fm, dm = self.env.kernels(), self.function_manager, self.data_manager
        if self.backend is EnvBackend.PYCUDA and ks.state_struct is not None:
            self._pointer_table = codegen.pointer_table(dm, self.spec)
            return {
                name: fm.bind(name, self._pointer_table, **self._geometry(name))
                for name in ks.all_kernels
            }
        args = self.spec.kernel_args(dm, backend="torch")
        flat = [a.reshape(-1) if hasattr(a, "data_ptr") else a for a in args]
        return {
            name: fm.bind(
                name, *(flat if name in ks.flat_kernels else args), **self._geometry(name)
            )
            for name in ks.all_kernels
        }

    def _geometry(self, name: str) -> dict[str, tuple[int, int, int]]:
        """The launch shape of kernel ``name``: the function manager's (one env per block),
        or for CUDA C step kernels ``KernelSpec.envs_per_block`` envs per block."""
        if self.backend is not EnvBackend.PYCUDA or name not in self.env.kernels().step_kernels:
            return {}
        k = envs_per_block(self.env, self.num_envs, self.threads_per_env)
        return {"grid": (self.num_envs // k, 1, 1), "block": (self.threads_per_env, k, 1)}

    def _make_fused_reset(self):
        """The one-launch reset of done environments (``None``: reset with torch ops)."""
        from ai_economist.warp_drive.fused_reset import fused_reset

        return fused_reset(self.data_manager, self.backend)

    # ------------------------------------------------------------ stepping
    def step(self) -> None:
        """Launch the step kernels in order (asynchronous on a GPU)."""
        for launch in self._launches:
            launch()

    def launch(self, name: str) -> None:
        """Launch one kernel of ``KernelSpec`` (step or other kernels) by name."""
        from ai_economist.warp_drive.data_manager import lookup

        lookup(self._bound, name, "kernel")()

    def reset_done(self) -> None:
        """Reset the done environments in one kernel launch (``fused_reset``), or with
        ``CUDAEnvironmentReset`` where the arrays do not fit the fused kernel."""
        if self._fused_reset is None or not self._fused_reset():
            super().reset_done()
        else:
            self._after_reset()

    def _after_reset(self) -> None:
        """Launch ``KernelSpec.reset_kernels`` in order (asynchronous on a GPU)."""
        for launch in self._reset_launches:
            launch()
