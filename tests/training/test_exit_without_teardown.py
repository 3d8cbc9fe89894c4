"""The training command ends without the interpreter's module teardown, keeping what an
ordinary exit keeps: the exit status, atexit handlers, buffered output, other threads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)  # fmt: skip


def test_atexit_handlers_run_and_buffered_output_is_flushed():
    done = _run(
        "import atexit, sys\n"
        "from ai_economist.training.training_script import exit_without_teardown\n"
        "atexit.register(print, 'atexit ran')\n"
        "print('buffered', end=' '); sys.stderr.write('to stderr')\n"
        "exit_without_teardown(3)\n"
    )
    assert done.returncode == 3
    assert done.stdout == "buffered atexit ran\n" and done.stderr == "to stderr"


def test_a_running_non_daemon_thread_is_waited_for():
    done = _run(
        "import threading, time\n"
        "from ai_economist.training.training_script import exit_without_teardown\n"
        "threading.Thread(target=lambda: (time.sleep(0.5), print('thread done'))).start()\n"
        "exit_without_teardown(0)\n"
    )
    assert done.returncode == 0 and done.stdout == "thread done\n"


def test_the_command_keeps_its_exit_status_and_messages(tmp_path):
    command = [sys.executable, "-m", "ai_economist.training.training_script", "--env", "toy",
               "--device", "cpu", f"saving.basedir={tmp_path}", "trainer.num_envs=0"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 2 and "trainer.num_envs" in done.stderr
