"""One protocol run in its own process: train it, evaluate it, write ``result.json``.

    python -m ai_economist.training.tax_protocol.worker RUN_FOLDER

The folder holds ``run.json`` and ``config.yaml`` (written by the protocol). A phase-2 run
first sets its agents' initial weights to the newest checkpoint of its seed's phase-1 run
(``policy.a.model.model_ckpt_filepath``, recorded with the checkpoint's SHA-256 in
``run.json``). A ``train/`` folder left by an interrupted attempt (SIGTERM / Ctrl-C write a
checkpoint) is resumed from its newest checkpoint; one without a usable checkpoint is moved
aside to ``train.attempt-<k>`` (kept for its log) and the run starts afresh. Exit status: the training
command's (0, 1 diverged, 2 configuration, 74 write error, 130/143 signal), or 3 when the
evaluation failed.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path

from ai_economist.training.config import load_yaml
from ai_economist.training.tax_protocol.manifest import RESULT
from ai_economist.training.tax_protocol.plan import write_json, write_yaml

EXIT_EVALUATION = 3


def set_aside(train_dir: Path) -> None:
    """Move an unfinished ``train/`` aside to the first free ``train.attempt-<k>``."""
    if not train_dir.exists():
        return
    k = 1
    while train_dir.with_name(f"train.attempt-{k}").exists():
        k += 1
    train_dir.rename(train_dir.with_name(f"train.attempt-{k}"))


def start_from_phase1(folder: Path, info: dict) -> None:
    """Point the phase-2 agents' initial weights at the phase-1 run's newest checkpoint."""
    from ai_economist.warp_drive.training.checkpoint import file_sha256, find_checkpoint

    ckpt = find_checkpoint(Path(info["phase1_folder"]) / "train")
    config = load_yaml(folder / "config.yaml")
    config["policy"]["a"]["model"]["model_ckpt_filepath"] = str(ckpt)
    write_yaml(folder / "config.yaml", config)
    info.update(init_checkpoint=str(ckpt), init_checkpoint_sha256=file_sha256(ckpt))
    write_json(folder / "run.json", info)


def resumable(train_dir: Path) -> bool:
    """``train_dir`` holds a checkpoint that verifies (an interrupted attempt)."""
    from ai_economist.warp_drive.training.checkpoint import CheckpointError, find_checkpoint

    try:
        find_checkpoint(train_dir, report=lambda message: print(f"note: {message}"))
    except CheckpointError:
        return False
    return True


def train(folder: Path, info: dict) -> int:
    """Train the run with the training command (resuming an interrupted attempt from its
    newest checkpoint); its exit status."""
    from ai_economist.training import training_script

    train_dir = folder / "train"
    if resumable(train_dir):
        print(f"resuming {train_dir}", flush=True)
        return training_script.main(["--resume", str(train_dir), "--quiet"])
    set_aside(train_dir)
    if info.get("phase1_folder"):
        start_from_phase1(folder, info)
    argv = ["--config", str(folder / "config.yaml"), "--results_dir", str(train_dir), "--quiet"]
    return training_script.main(argv)


def evaluate(folder: Path, info: dict) -> dict:
    """The run's evaluation (:mod:`.gtb_eval` or :mod:`.one_step_eval`), per schedule."""
    import torch

    train_dir = folder / "train"
    ev = info["evaluation"]
    # the evaluation steps dict-API envs on the host: share the cores with the other workers
    torch.set_num_threads(int(ev.get("threads", torch.get_num_threads())))
    if info["scenario"] == "one-step-economy":
        from ai_economist.training.tax_protocol.one_step_eval import evaluate_one_step_run

        return evaluate_one_step_run(train_dir, ev["saez_episodes"], ev["optimum_sweeps"])
    from ai_economist.training.tax_protocol.gtb_eval import evaluate_gtb_run

    return {info["schedule"]: evaluate_gtb_run(train_dir, info["seed"], ev["episodes"],
                                               ev["greedy"], ev["saez_warmup"])}  # fmt: skip


def training_steps(train_dir: Path) -> int:
    """Env-steps the run trained (from its newest checkpoint)."""
    from ai_economist.warp_drive.training.checkpoint import find_checkpoint, load_checkpoint

    return int(load_checkpoint(find_checkpoint(train_dir))["env_steps"])


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m ai_economist.training.tax_protocol.worker RUN_FOLDER",
              file=sys.stderr)  # fmt: skip
        return 2
    folder = Path(args[0])
    info = json.loads((folder / "run.json").read_text())
    start = time.perf_counter()
    code = train(folder, info)
    train_s = time.perf_counter() - start
    if code != 0:
        return code
    if info["phase"] == 1:  # phase 1 is not scored: its agents start phase 2
        schedules: dict = {}
    else:
        try:
            schedules = evaluate(folder, info)
        except Exception:  # noqa: BLE001 (reported, and the run is marked failed)
            traceback.print_exc()
            return EXIT_EVALUATION
    result = {"run": info["name"], "seed": info["seed"], "phase": info["phase"],
              "train_env_steps": training_steps(folder / "train"), "train_s": train_s,
              "eval_s": time.perf_counter() - start - train_s, "schedules": schedules}  # fmt: skip
    write_json(folder / RESULT, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
