"""Where the wall time of a whole training process goes: the published command, start to exit.

    python benchmarks/startup_profile.py --device cuda [--cold] [--repeats 3]
    python benchmarks/startup_profile.py --device cpu -- trainer.num_episodes=20

Each repeat runs ``python -m ai_economist.training.training_script --env
covid_and_economy_environment --device DEVICE [overrides]`` twice as a fresh process: once as it
is (the headline wall time), once under light hooks that split the same run into phases, each
second counted once (an import inside the env build counts as an import):

* interpreter start: from the spawn to the first line of the child (Python, site-packages);
* imports: every import of a module not loaded yet (torch, numba, triton, ours);
* checks: argument parsing, the run config, the checks before any work (one env on the CPU);
* env build: ``build_trainer`` building the batched env (backend set-up, device arrays);
* trainer set-up: ``Trainer.__init__`` (models, optimizers, buffers, the first reset);
* kernel builds: nvcc (``cuda_compile.compile_cuda_source``) and Numba compilations;
* Triton compile: Triton kernels compiled (from source, or loaded from Triton's cache);
* graph capture: inside ``torch.cuda.graph(...)`` (the rollout and iteration graphs);
* training: ``Trainer.train`` minus the phases above;
* teardown: from ``Trainer.train`` returning to the process's exit.

``--cold`` points every cache (``AI_ECONOMIST_CACHE_DIR`` for cubins, ``TRITON_CACHE_DIR``,
``TORCHINDUCTOR_CACHE_DIR``, ``NUMBA_CACHE_DIR``, ``CUDA_CACHE_PATH``) at an empty temporary
folder for every process; without it the caches are the user's, primed by one unreported run.
Python's own bytecode caches stay warm in both (``pip install`` writes them). The hooked runs
count the modules Python compiled from source (no valid ``__pycache__`` entry): warm runs should
compile none; where they do (``PYTHONDONTWRITEBYTECODE`` set, a read-only or ``--no-compile``
install), the import time includes compiling them every time, and the summary says so.
"""

from __future__ import annotations

import builtins
import json
import os
import sys
import time

PHASES = ("interpreter start", "imports", "checks", "env build", "trainer set-up",
          "kernel builds", "Triton compile", "graph capture", "training", "teardown")  # fmt: skip
CACHE_VARIABLES = ("AI_ECONOMIST_CACHE_DIR", "TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR",
                   "NUMBA_CACHE_DIR", "CUDA_CACHE_PATH")  # fmt: skip
PUBLISHED = [
    "-m",
    "ai_economist.training.training_script",
    "--env",
    "covid_and_economy_environment",
]


# ------------------------------------------------------------------- the child's hooks --
class Timeline:
    """Self time per phase, wall clock and CPU time: the innermost open phase is charged
    (``checks`` outside any)."""

    def __init__(self) -> None:
        self.stack = ["checks"]
        self.mark = (time.monotonic(), time.process_time())
        self.totals: dict[str, list[float]] = {}
        self.finished_at: tuple[float, float] | None = None  # when Trainer.train returned

    def _charge(self) -> None:
        now = (time.monotonic(), time.process_time())
        total = self.totals.setdefault(self.stack[-1], [0.0, 0.0])
        total[0] += now[0] - self.mark[0]
        total[1] += now[1] - self.mark[1]
        self.mark = now

    def enter(self, phase: str) -> None:
        self._charge()
        self.stack.append(phase)

    def leave(self) -> None:
        self._charge()
        if len(self.stack) > 1:
            self.stack.pop()

    def wrap(self, fn, phase: str, finishes: bool = False):
        """``fn`` with its time charged to ``phase`` (``finishes``: its return ends the run)."""
        timeline = self

        def wrapped(*args, **kwargs):
            if timeline.finished_at is not None:
                return fn(*args, **kwargs)
            timeline.enter(phase)
            try:
                return fn(*args, **kwargs)
            finally:
                timeline.leave()
                if finishes and timeline.finished_at is None and len(timeline.stack) == 1:
                    timeline.finished_at = timeline.mark

        wrapped.__wrapped__ = fn
        return wrapped


def _patch_attr(owner, name: str, timeline: Timeline, phase: str, finishes: bool = False) -> None:
    fn = getattr(owner, name, None)
    if fn is not None and not hasattr(fn, "__wrapped__"):
        setattr(owner, name, timeline.wrap(fn, phase, finishes))


def _patch_triton(jit, timeline: Timeline) -> None:
    """Triton's compilation: ``JITFunction._do_compile`` where it exists, else its
    ``compile`` (a module global of ``triton.runtime.jit`` bound by each kernel)."""
    cls = getattr(jit, "JITFunction", None)
    if cls is not None and hasattr(cls, "_do_compile"):
        _patch_attr(cls, "_do_compile", timeline, "Triton compile")
    else:
        _patch_attr(jit, "compile", timeline, "Triton compile")
        if cls is not None:
            init = cls.__init__

            def __init__(self, *args, **kwargs):
                init(self, *args, **kwargs)
                if "compile" in vars(self):
                    _patch_attr(self, "compile", timeline, "Triton compile")

            cls.__init__ = __init__


# module -> patch(module, timeline), applied once the module is imported
PATCHES = {
    "ai_economist.training.training_script": lambda m, t: _patch_attr(m, "build_trainer", t, "env build"),
    "ai_economist.warp_drive.training.trainer": lambda m, t: (
        _patch_attr(m.Trainer, "__init__", t, "trainer set-up"),
        _patch_attr(m.Trainer, "train", t, "training", finishes=True),
    ),
    "ai_economist.warp_drive.cuda_compile": lambda m, t: _patch_attr(m, "compile_cuda_source", t, "kernel builds"),
    "numba.core.dispatcher": lambda m, t: _patch_attr(m.Dispatcher, "compile", t, "kernel builds"),
    "numba.cuda.dispatcher": lambda m, t: _patch_attr(m.CUDADispatcher, "compile", t, "kernel builds"),
    "triton.runtime.jit": _patch_triton,
    "torch.cuda.graphs": lambda m, t: (
        setattr(m.graph, "__enter__", _entering(m.graph.__enter__, t)),
        setattr(m.graph, "__exit__", _leaving(m.graph.__exit__, t)),
    ),
}  # fmt: skip


def _entering(fn, timeline: Timeline):
    def __enter__(self):
        timeline.enter("graph capture")
        return fn(self)

    return __enter__


def _leaving(fn, timeline: Timeline):
    def __exit__(self, *exc):
        try:
            return fn(self, *exc)
        finally:
            timeline.leave()

    return __exit__


def install(timeline: Timeline) -> None:
    """Charge imports of new modules to ``imports`` and patch the modules of ``PATCHES`` as
    they arrive (``builtins.__import__`` and ``importlib.import_module`` wrapped)."""
    import importlib

    pending = dict(PATCHES)
    original_import, original_import_module = builtins.__import__, importlib.import_module

    def apply_patches() -> None:
        for name in [n for n in pending if n in sys.modules]:
            try:
                pending.pop(name)(sys.modules[name], timeline)
            except AttributeError:  # another version of that library: that phase stays 0
                pass

    def loaded(name: str, fromlist) -> bool:
        if name not in sys.modules:
            return False
        module = sys.modules[name]  # ``from package import submodule`` may load one
        return not fromlist or all(hasattr(module, item) for item in fromlist if item != "*")

    def timed(load, name, *args, fromlist=(), **kwargs):
        if timeline.stack[-1] == "imports" or timeline.finished_at or loaded(name, fromlist):
            return load(name, *args, **kwargs)
        timeline.enter("imports")
        try:
            return load(name, *args, **kwargs)
        finally:
            timeline.leave()
            apply_patches()

    def __import__(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
        if level:
            return original_import(name, globals, locals, fromlist, level)
        return timed(original_import, name, globals, locals, fromlist, level, fromlist=fromlist)

    builtins.__import__ = __import__
    importlib.import_module = lambda name, package=None: (
        timed(original_import_module, name, package) if not name.startswith(".") else
        original_import_module(name, package)
    )  # fmt: skip
    apply_patches()


def count_source_compiles() -> list[str]:
    """The names of the modules Python compiles from source from now on (their bytecode
    cache was missing or stale), filled as they are imported."""
    from importlib import _bootstrap_external as external

    compiled: list[str] = []
    original = external.SourceLoader.source_to_code

    def source_to_code(self, data, path, *args, **kwargs):
        compiled.append(str(path))
        return original(self, data, path, *args, **kwargs)

    external.SourceLoader.source_to_code = source_to_code
    return compiled


def run_child(out_file: str, argv: list[str]) -> None:
    """Run the training script's ``main`` (``argv``: ``-m module args...``) under the hooks,
    write the phases to ``out_file`` and exit as its ``__main__`` block does."""
    started = (time.monotonic(), time.process_time())
    timeline = Timeline()
    compiled = count_source_compiles()
    install(timeline)
    module, args = argv[1], argv[2:]
    sys.argv = [module, *args]
    import importlib

    script = importlib.import_module(module)
    code = script.main(args)
    timeline._charge()
    with open(out_file, "w") as f:
        json.dump({"started": started, "totals": timeline.totals, "ended": timeline.mark,
                   "finished_at": timeline.finished_at, "compiled": compiled}, f)  # fmt: skip
    getattr(script, "exit_without_teardown", sys.exit)(code)


# ------------------------------------------------------------------------ the parent --
def _environment(cold_root: str | None) -> dict[str, str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if cold_root is not None:
        for name in CACHE_VARIABLES:
            path = os.path.join(cold_root, name.lower())
            os.makedirs(path, exist_ok=True)
            env[name] = path
    return env


def one_process(command: list[str], cold: bool, hooked: bool, workdir: str) -> dict[str, list]:
    """``{phase: [wall s, CPU s]}`` of one process (``"total"``; with ``hooked``, the phases)."""
    import resource
    import subprocess
    import tempfile

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory(dir=workdir) as scratch:
        env = _environment(os.path.join(scratch, "caches") if cold else None)
        out_file = os.path.join(scratch, "phases.json")
        argv = [sys.executable]
        if hooked:
            argv += [os.path.abspath(__file__), "--child", out_file, "--"]
        argv += [*command, f"saving.basedir={scratch}/runs"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        spawned = time.monotonic()
        done = subprocess.run(argv, env=env, cwd=root, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)  # fmt: skip
        ended = time.monotonic()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise SystemExit(f"exit {done.returncode}: {' '.join(argv)}\n{done.stderr[-3000:]}")
        cpu = sum(getattr(after, f) - getattr(before, f) for f in ("ru_utime", "ru_stime"))
        result = {"total": [ended - spawned, cpu]}
        if hooked:
            with open(out_file) as f:
                child = json.load(f)
            result.update(child["totals"])
            result["compiled"] = child.get("compiled", [])
            started, finished = child["started"], child["finished_at"] or child["ended"]
            result["interpreter start"] = [started[0] - spawned, started[1]]
            result["teardown"] = [ended - finished[0], cpu - finished[1]]
        return result


def profile(command: list[str], cold: bool, repeats: int, workdir: str) -> list[tuple[dict, dict]]:
    """``repeats`` pairs of (plain run, hooked run); one unreported warm-up run without
    ``cold`` (the user's caches primed)."""
    if not cold:
        one_process(command, cold=False, hooked=False, workdir=workdir)
    return [
        (one_process(command, cold, False, workdir), one_process(command, cold, True, workdir))
        for _ in range(repeats)
    ]


def _machine(device: str) -> str:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from cpu_machine import cpu_name

    text = f"CPU: {cpu_name()} ({os.cpu_count()} cores visible)"
    if device == "cuda":
        import torch

        text += f"; GPU: {torch.cuda.get_device_name(0)}, torch {torch.__version__}"
    return text


def main(argv: list[str] | None = None) -> None:
    import argparse
    import statistics
    import tempfile

    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        run_child(argv[1], argv[3:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cuda")
    parser.add_argument("--cold", action="store_true", help="every cache in an empty folder")
    parser.add_argument("--repeats", type=int, default=3, help="processes of each kind (medians)")
    parser.add_argument("--env", default="covid_and_economy_environment")
    parser.add_argument("overrides", nargs="*", help="key.path=value overrides of the run config")
    args = parser.parse_args(argv)
    command = [*PUBLISHED[:3], args.env, "--device", args.device, *args.overrides]
    print(_machine(args.device))
    print(f"command: python {' '.join(command)}  ({'cold' if args.cold else 'warm'} caches, "
          f"{args.repeats} repeats, medians)", flush=True)  # fmt: skip
    with tempfile.TemporaryDirectory() as workdir:
        runs = profile(command, args.cold, args.repeats, workdir)

    def median(values: list[float]) -> float:
        return statistics.median(values) if values else 0.0

    plain = [p["total"] for p, _ in runs]
    hooked = [h for _, h in runs]
    each = ", ".join(f"{w:.2f}" for w, _ in plain)
    print(f"as published: {median([w for w, _ in plain]):.2f} s wall, "
          f"{median([c for _, c in plain]):.2f} s CPU (each, wall: {each})")  # fmt: skip
    print(f"with the phase hooks: {median([h['total'][0] for h in hooked]):.2f} s wall, "
          f"{median([h['total'][1] for h in hooked]):.2f} s CPU; phases (medians):")  # fmt: skip
    print(f"  {'phase':<18} {'wall s':>7} {'CPU s':>7}")
    for phase in PHASES:
        wall = median([h.get(phase, [0.0, 0.0])[0] for h in hooked])
        cpu = median([h.get(phase, [0.0, 0.0])[1] for h in hooked])
        print(f"  {phase:<18} {wall:7.2f} {cpu:7.2f}")
    print(bytecode_note([h.get("compiled", []) for h in hooked]))
    if hasattr(os, "getloadavg"):
        print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}")


def bytecode_note(compiled_per_run: list[list[str]]) -> str:
    """One line: how many modules each hooked run compiled from source, and where."""
    counts = [len(c) for c in compiled_per_run]
    if not any(counts):
        return "bytecode caches: every module loaded from its cache (none compiled from source)"
    folders: dict[str, int] = {}
    for path in max(compiled_per_run, key=len):
        head, sep, rest = path.partition(os.sep + "site-packages" + os.sep)
        top = f"{head}{sep}{rest.split(os.sep)[0]}" if sep else os.path.dirname(path)
        folders[top] = folders.get(top, 0) + 1
    where = ", ".join(f"{n} under {f}" for f, n in sorted(folders.items(), key=lambda x: -x[1])[:3])
    flag = " (PYTHONDONTWRITEBYTECODE is set)" if os.environ.get("PYTHONDONTWRITEBYTECODE") else ""
    return (
        f"bytecode caches: the hooked runs compiled {counts} modules from source{flag} ({where}); "
        "their import time includes that compilation every run: for warm figures, prime a "
        "cache (one run with PYTHONPYCACHEPREFIX=DIR and bytecode writing on), then profile "
        "with the same PYTHONPYCACHEPREFIX"
    )


if __name__ == "__main__":
    main()
