"""Every shell command and Python snippet of README.md runs as written (issue 25).

The fenced ```bash and ```python blocks are taken from the README.  Python snippets run one by
one, each in a fresh interpreter, from an empty folder.  Shell commands run in order, each in a
fresh ``bash`` from one folder that looks like a fresh checkout after ``make demo`` (links to
the package, the benchmarks, the Makefile and ``.venv``), with this test's virtual environment
*not* on ``PATH``: the commands after the README's activation line run after it, as in a new
shell.  Long commands run at a small size through the substitutions of :data:`COMMANDS` (each
one commented); a GPU command is checked with ``--dry_run``; a command or snippet missing from
the tables fails :func:`test_every_block_is_covered`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from covid19_sources import write_packaged_source, write_sources
from first_hour import REPO_ROOT, pyproject

README = (REPO_ROOT / "README.md").read_text()
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
ACTIVATE = ". .venv/bin/activate"
VENV = Path(sys.prefix)
TINY_COVID = (
    "trainer.num_envs=1 trainer.train_batch_size=10 trainer.num_episodes=2 "
    "env.episode_length=10 policy.a.num_mini_batches=1 policy.p.num_mini_batches=1"
)


def blocks(lang: str) -> list[str]:
    """The bodies of the README's fenced blocks of ``lang``."""
    return [body for kind, body in FENCE.findall(README) if kind == lang]


def shell_commands(body: str) -> list[str]:
    """One command per entry: continuation lines joined, comments and blank lines dropped."""
    joined = re.sub(r"\\\n\s*", " ", body)
    commands = [re.sub(r"\s+#.*$", "", line).strip() for line in joined.splitlines()]
    return [" ".join(c.split()) for c in commands if c and not c.startswith("#")]


@dataclass(frozen=True)
class Run:
    """How the test runs one README command: ``replace`` (old, new) pairs applied to it in
    order (each must match), then ``append``ed arguments; ``expect`` in its output; ``code``
    its exit status.  ``check`` instead names a Python check run in place of the command."""

    why: str = ""
    replace: tuple[tuple[str, str], ...] = ()
    append: str = ""
    expect: str = ""
    code: int = 0
    check: str = ""


# Every README shell command (as :func:`shell_commands` writes it) -> how it is run here.
COMMANDS: dict[str, Run] = {
    "make demo": Run(
        "the demo at a tiny size, through its documented DEMO_ARGS; -o: never reinstall .venv",
        replace=(("make demo", "make -o .venv/.installed demo"),),
        append=f"DEMO_ARGS='--quiet {TINY_COVID} saving.tensorboard=false'",
        expect="== demo summary ==",
    ),
    "make test": Run(
        "this suite itself: -n prints the recipe instead of running the suite inside itself",
        replace=(("make test", "make -n -o .venv/.installed test"),),
        expect="-m pytest -q",
    ),
    ACTIVATE: Run("as written: the commands below run after it"),
    "python -m ai_economist.training.training_script --env covid_and_economy_environment "
    "--device cuda": Run(
        "GPU only: the whole config checked, nothing trained",
        append="--dry_run",
        expect="dry run: the run config of covid_and_economy_environment is valid",
    ),
    "python -m ai_economist.training.training_script --device cuda --config "
    "covid_and_economy_gpu_learning": Run(
        "GPU only: the whole config checked, nothing trained",
        append="--dry_run",
        expect="is valid (216000 episodes, 1200 envs",
    ),
    "python benchmarks/learning_vs_fixed_policies.py --device cpu --minutes 25 --config "
    "covid_and_economy_cpu_learning": Run(
        "25 minutes -> two iterations of 10 env-steps on 10-day episodes, no extra evaluations",
        replace=(("--minutes 25", "--minutes 0.01"),),
        append=f"{TINY_COVID} --sampled_episodes 0 --no_real_world --eval_every_minutes 0",
        expect="subsidy level 20: planner reward sum",
    ),
    "ai-economist-simulate --policy open closed closed-180-then-open --sweep "
    "infection_intercept=0.5:1.5:11 --sweep unemployment=0.8,1.0,1.2 --workers 2 --out "
    "runs/sweep": Run("as written (99 runs)", expect="99 runs of 540 days"),
    "ai-economist-simulate --scenario tutorial --policy real-world schedule:my_schedule.csv": Run(
        "as written, with my_schedule.csv (405 days) written by the test first",
        expect="2 runs of 405 days",
    ),
    "ai-economist-simulate --policy checkpoint:runs/<run_dir> --sweep seed=0:9:10": Run(
        "<run_dir>: the run folder `make demo` wrote above; 20-day episodes",
        replace=(("runs/<run_dir>", "{demo_run}"),),
        append="--days 20 --no_plots",
        expect="10 runs of 20 days",
    ),
    "ai-economist-simulate --scenario one-step-economy --policy free-market us-federal saez "
    "fixed:0.1 --sweep isoelastic_eta=0.1:0.5:5 --sweep seed=0:4:5 --out runs/taxes": Run(
        "as written (100 runs)", expect="100 runs in"
    ),
    "ai-economist-simulate --scenario gather-trade-build --policy free-market us-federal "
    "--sweep energy_cost=0.1,0.21,0.4 --sweep episode_length=200 --out runs/gtb": Run(
        "as written (6 runs of 200 steps)", expect="6 runs in"
    ),
    "ai-economist-simulate --policy open closed --ray_address HEAD_IP:6379": Run(
        "needs a Ray cluster: the address is checked (a closed local port: exit 2, named)",
        replace=(("HEAD_IP:6379", "127.0.0.1:9"),),
        expect="cannot reach the Ray cluster at --ray_address '127.0.0.1:9'",
        code=2,
    ),
    "torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-id covid1 "
    "--rdzv-endpoint HOST0:29500 -m ai_economist.training.training_script "
    "--env covid_and_economy_environment --device cuda": Run(
        "two hosts with GPUs -> the same torchrun launch on this host: two gloo processes on "
        "the CPU, tiny episodes (tests/training/test_torchrun.py checks the weights)",
        replace=(
            (
                "--nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-id covid1 "
                "--rdzv-endpoint HOST0:29500",
                "--standalone --nproc-per-node 2",
            ),
            ("--device cuda", "--device cpu"),
        ),  # fmt: skip
        append=f"--quiet {TINY_COVID} saving.tensorboard=false",
    ),
    "python -m ai_economist.datasets.covid19.gather_build --oxcgrt OxCGRT_US_latest.csv --jhu "
    "time_series_covid19_deaths_US.csv --owid us_state_vaccinations.csv --bls "
    "la.data.3.AllStatesS --out my_data": Run(
        "as written, on three states' small files in the four layouts, written by the test first",
        expect="my_data",
    ),
    "python -m ai_economist.datasets.covid19.fit --source my_data --last_train_date 2020-11-30 "
    "--last_val_date 2020-12-31 --out my_fit.json": Run(
        "the three-state files above are too short for a fit: the packaged calibration's data "
        "(51 states, written by the test as packaged_data/), as written otherwise",
        replace=(("--source my_data", "--source packaged_data"),),
        expect="BETA_DELAY",
    ),
    "python -m ai_economist.datasets.covid19.build --source my_data --fitted_params my_fit.json "
    "--output my_calibration.npz": Run(
        "the data fitted above",
        replace=(("--source my_data", "--source packaged_data"),),
        expect="my_calibration.npz",
    ),
    **{
        f'pip install -e "{spec}"' if spec != "." else "pip install -e .": Run(
            "no network, and the venv must not change: the extras named exist in pyproject.toml",
            check=spec,
        )
        for spec in (".", ".[plot]", ".[train]", ".[gpu]", ".[dev]")
    },
}

# Every README Python snippet, by a line it holds -> (old, new) replacements that make it small.
SNIPPETS: dict[str, tuple[tuple[str, str], ...]] = {
    'print(env.previous_episode_metrics["usa/deaths (thousands)"])': (),
    "wrapper = FoundationEnvWrapper(env, num_envs=1000": (),
    # a 20-day episode instead of 540 (52 agents sample actions every day)
    "# PettingZoo:": (
        (
            "env_config(TRAINING_ENV_CONFIG))",
            "env_config(TRAINING_ENV_CONFIG, episode_length=20))",
        ),
    ),
    "# Gymnasium:": (),
    "# RLlib:": (),  # already one small iteration, as the README shows it
    "table = run_sweep(": (),
    # 40 toy episodes instead of 400
    "import lightning.pytorch as pl": (("num_episodes=400", "num_episodes=40"),),
}


def snippet_key(code: str) -> str | None:
    """The one :data:`SNIPPETS` key whose line ``code`` holds (None: none or several)."""
    keys = [key for key in SNIPPETS if key in code]
    return keys[0] if len(keys) == 1 else None


def test_every_block_is_covered():
    commands = [c for body in blocks("bash") for c in shell_commands(body)]
    assert [c for c in commands if c not in COMMANDS] == [], "add them to COMMANDS"
    assert [c for c in COMMANDS if c not in commands] == [], "stale COMMANDS entries"
    keys = [snippet_key(code) for code in blocks("python")]
    assert None not in keys, "a README Python snippet without a SNIPPETS entry"
    assert sorted(keys) == sorted(SNIPPETS), "every SNIPPETS key matches one snippet"
    assert {kind for kind, _ in FENCE.findall(README)} <= {"bash", "python", "toml", ""}
    assert ACTIVATE in commands, "the README shows how to activate .venv in a new shell"


def clean_env() -> dict[str, str]:
    """This environment without the test's venv: a new shell, as a user opens one."""
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH",
           "PYTHONHOME", "NUMBA_ENABLE_CUDASIM", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"}}  # fmt: skip
    venv_bin = (VENV / "bin").resolve()
    paths = env.get("PATH", "/usr/bin:/bin").split(os.pathsep)
    env["PATH"] = os.pathsep.join(p for p in paths if Path(p).resolve() != venv_bin)
    env["MPLBACKEND"] = "Agg"
    return env


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A folder that looks like the checkout after ``make demo``, without its outputs."""
    if not (VENV / "bin" / "activate").is_file():
        pytest.skip("the README test runs from a virtual environment (make test)")
    for name in ("ai_economist", "benchmarks", "tutorials", "Makefile", "pyproject.toml",
                 "setup.py", "README.md"):  # fmt: skip
        (tmp_path / name).symlink_to(REPO_ROOT / name)
    (tmp_path / ".venv").symlink_to(VENV)
    return tmp_path


def write_schedule(path: Path, days: int) -> None:
    rows = "".join(f"{day},{5 if day <= 90 else 0},{8 if day <= 120 else 2}\n"
                   for day in range(1, days + 1))  # fmt: skip
    path.write_text("day,subsidy_level,stringency_level\n" + rows)


def check_install(spec: str) -> None:
    extras = re.fullmatch(r"\.(?:\[([\w,]+)\])?", spec)
    assert extras, spec
    optional = pyproject()["project"]["optional-dependencies"]
    for extra in filter(None, (extras.group(1) or "").split(",")):
        assert extra in optional, f"pip install -e {spec!r}: no extra {extra!r}"


def command_line(text: str, run: Run, cwd: Path) -> str:
    for old, new in run.replace:
        assert old in text, f"stale substitution {old!r} for {text!r}"
        text = text.replace(old, new)
    if "{demo_run}" in text:
        runs = sorted((cwd / "runs").glob("*/*/*/checkpoints"), key=lambda p: p.stat().st_mtime)
        checkpoint = runs[0]  # `make demo`'s, the first command's (the torchrun run comes later)
        text = text.replace("{demo_run}", str(checkpoint.parent.relative_to(cwd)))
    return f"{text} {run.append}".strip()


def test_readme_shell_commands_run_in_a_new_shell(checkout):
    write_schedule(checkout / "my_schedule.csv", 405)
    write_sources(checkout, "OxCGRT_US_latest.csv", "time_series_covid19_deaths_US.csv",
                  "us_state_vaccinations.csv", "la.data.3.AllStatesS")  # fmt: skip
    write_packaged_source(checkout / "packaged_data")
    prefix = "set -eo pipefail"
    for body in blocks("bash"):
        for text in shell_commands(body):
            run = COMMANDS[text]
            if run.check:
                check_install(run.check)
                continue
            line = command_line(text, run, checkout)
            result = subprocess.run(
                ["bash", "--noprofile", "--norc", "-c", f"{prefix}\n{line}"],
                cwd=checkout, env=clean_env(), capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            output = result.stdout + result.stderr
            assert result.returncode == run.code, f"{line}\n{output[-4000:]}"
            assert run.expect in output, f"{line}: no {run.expect!r} in\n{output[-4000:]}"
            if text == ACTIVATE:
                prefix += f"\n{ACTIVATE}"


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_readme_python_snippet_runs(index, tmp_path):
    code = blocks("python")[index]
    for old, new in SNIPPETS[snippet_key(code)]:
        assert old in code, f"stale substitution {old!r}"
        code = code.replace(old, new)
    env = dict(clean_env(), PYTHONPATH=str(REPO_ROOT))
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, f"{code}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"


def test_readme_toml_blocks_declare_the_entry_point_group():
    """A ```toml block is a pyproject.toml excerpt: it parses, and its entry points are those
    of the registry's group, in the form the test package of tests/fixtures uses."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli", reason="reading TOML needs Python >= 3.11")
    from ai_economist.warp_drive.registry import ENTRY_POINT_GROUP

    bodies = blocks("toml")
    assert bodies, "the README shows how a package declares its entry point"
    fixture = REPO_ROOT / "tests" / "fixtures" / "my_env_package" / "pyproject.toml"
    declared = tomllib.loads(fixture.read_text())["project"]["entry-points"]
    for body in bodies:
        groups = tomllib.loads(body)["project"]["entry-points"]
        assert list(groups) == [ENTRY_POINT_GROUP]
        assert groups[ENTRY_POINT_GROUP] == declared[ENTRY_POINT_GROUP]
