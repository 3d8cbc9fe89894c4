"""The COVID-19 GPU declaration: the device state (``gpu_state``), the ``GpuEnvironment`` (``gpu_env``) and the parity tolerances of its kernels (``tolerances``)."""
