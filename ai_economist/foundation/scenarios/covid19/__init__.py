"""COVID-19 and the economy (1.7.1's ``CovidAndEconomySimulation``), in named parts:

* ``covid19_env.py``: the Foundation scenario ``CovidAndEconomyEnvironment`` (1.7.1's path),
  ``configs.py`` its published configurations, ``registration.py`` its training entry;
* ``model/``: the numpy truth: dynamics, parameters, the batched simulator, metrics,
  observations (every backend and kernel mirrors it);
* ``env/``: the Foundation env's parts: argument checks, observation plan, one-pass step,
  evaluation plots;
* ``declaration/``: the GPU state declared once (``gpu_state``), the ``GpuEnvironment``
  (``gpu_env``) and its parity tolerances;
* ``backends/``: ``build_batched_backend`` and the CPU and GPU backends, and the GPU consistency check;
* kernels: ``covid19_build.cu`` and ``covid19_env_step.cu`` here and
  ``foundation/components/covid19_components_step.cu`` (1.7.1's paths), the rest in ``kernels/``;
* ``components/``: the three components; ``training/``: the CPU demo and the fixed-policy
  baselines.

The modules' old flat paths (``covid19.dynamics``, ...) work for one release with a
DeprecationWarning naming the new path.
"""

from ai_economist.moved_modules import redirect as _redirect

_MOVED = {
    "dynamics": "model.dynamics",
    "params": "model.params",
    "simulation": "model.simulation",
    "simulation_components": "model.simulation_components",
    "component_params": "model.component_params",
    "metrics": "model.metrics",
    "observations": "model.observations",
    "policy_response": "model.policy_response",
    "covid19_env_checks": "env.covid19_env_checks",
    "observation_plan": "env.observation_plan",
    "one_env_model": "env.one_env_model",
    "one_env_step": "env.one_env_step",
    "evaluation_plots": "env.evaluation_plots",
    "gpu_state": "declaration.gpu_state",
    "gpu_env": "declaration.gpu_env",
    "cpu_backend": "backends.cpu_backend",
    "gpu_backend": "backends.gpu_backend",
    "gpu_consistency": "backends.gpu_consistency",
}
_redirect(__name__, {old: f"{__name__}.{new}" for old, new in _MOVED.items()})
