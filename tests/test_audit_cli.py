"""``python -m inplace_recipes audit script.py [args...]``: a script audited unchanged, for people and CI."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from inplace_recipes.auditing._cli import EXIT_FOUND, EXIT_NOT_RUN, EXIT_UNAUDITED

BROKEN = """
    import sys
    import torch

    x = torch.randn(3, 4, requires_grad=True)
    for step in range(int(sys.argv[1])):
        h = torch.sigmoid(x)
        h.mul_(2)
        print("step", step)
        h.sum().backward()
"""

SILENT = """
    import torch

    w = torch.randn(4, requires_grad=True)
    loss = (w * w).sum()  # mul saves w
    w.data.mul_(0.5)
    loss.backward()
    print("done")
"""

CLEAN = """
    import sys
    import torch

    w = torch.randn(4, requires_grad=True)
    h = (w * 2).relu_()
    h.sum().backward()
    print("clean", sys.argv[1:])
    sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
"""


def run(tmp_path: Path, source: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "train.py").write_text(textwrap.dedent(source))
    command = [sys.executable, "-m", "inplace_recipes", "audit", *args]
    return subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, check=False, timeout=120
    )


def test_a_script_that_raises_gets_its_traceback_and_the_report(tmp_path: Path) -> None:
    done = run(tmp_path, BROKEN, "train.py", "3")
    assert done.returncode == 1
    assert done.stdout == "step 0\n"  # the script's own output, unchanged
    assert f'File "{tmp_path / "train.py"}", line 10, in <module>' in done.stderr
    assert "inplace_recipes" not in done.stderr.split("inplace_recipes audit of")[0]
    report = done.stderr.split("inplace_recipes audit of train.py:")[1]
    assert "backward fails  train.py:8" in report
    assert "fix: h = h.mul(2)" in report
    assert "The audited code raised RuntimeError" in report
    assert str(tmp_path) not in report  # paths relative to the working directory


def test_json_is_alone_on_stdout_with_the_documented_fields(tmp_path: Path) -> None:
    done = run(tmp_path, BROKEN, "--json", "train.py", "1")
    data = json.loads(done.stdout)
    (record,) = data["findings"]
    assert record["file"] == "train.py"
    assert record["line"] == 8
    assert record["consequence"] == "backward fails"
    assert record["count"] == 1
    assert data["error"].startswith("RuntimeError: one of the variables needed")
    assert "step 0" in done.stderr


@pytest.mark.parametrize(
    ("fail_on", "code"),
    [(None, 0), ("backward-fails", 0), ("wrong-gradients", EXIT_FOUND), ("any", EXIT_FOUND)],
)
def test_fail_on_gives_its_exit_code_for_its_class(
    tmp_path: Path, fail_on: str | None, code: int
) -> None:
    options = ["--fail-on", fail_on] if fail_on else []
    done = run(tmp_path, SILENT, *options, "train.py")
    assert done.stdout == "done\n"
    assert done.returncode == code, done.stderr
    assert "wrong gradients" in done.stderr
    assert "torch.no_grad()" in done.stderr


def test_a_clean_script_keeps_its_arguments_and_exit_code(tmp_path: Path) -> None:
    done = run(tmp_path, CLEAN, "--fail-on", "any", "train.py", "5", "--flag")
    assert done.stdout == "clean ['5', '--flag']\n"
    assert done.returncode == 5
    assert "1 in-place write is safe" in done.stderr
    assert run(tmp_path, CLEAN, "train.py").returncode == 0


def test_help_names_the_exit_codes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "inplace_recipes", "audit", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--fail-on" in done.stdout
    text = " ".join(done.stdout.split())
    assert f"{EXIT_FOUND} when a write of its class was found" in text
    assert "1 when the script raised, an in-place error too" in text
    assert f"{EXIT_UNAUDITED} when child processes ran unaudited" in text
    assert f"{EXIT_NOT_RUN} when nothing ran" in text


# -- where training really runs (issue 21) ---------------------------------------------------

WORKER = """
    import torch


    def worker(rank):
        torch.manual_seed(rank)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
        loss = model(torch.randn(8, 4)).pow(2).mean()
        for p in model.parameters():
            p.data.clamp_(-0.1, 0.1)  # between the forward and the backward: wrong gradients
        loss.backward()
"""

SPAWN = """
    import torch.multiprocessing as mp
    from worker import worker

    if __name__ == "__main__":
        mp.spawn(worker, nprocs=2)
        print("spawned")
"""

TORCHRUN = """
    import os
    from worker import worker

    worker(int(os.environ["RANK"]))
"""


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


def audit_command(cwd: Path, *args: str, timeout: int = 240) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "inplace_recipes", "audit", *args]
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, check=False, timeout=timeout
    )


def test_spawned_workers_are_audited_and_fail_the_check(tmp_path: Path) -> None:
    write(tmp_path, "worker.py", WORKER)
    write(tmp_path, "train.py", SPAWN)
    done = audit_command(tmp_path, "--fail-on", "wrong-gradients", "train.py")
    assert done.stdout == "spawned\n"
    assert done.returncode == EXIT_FOUND, done.stderr
    assert "wrong gradients  worker.py:10" in done.stderr
    assert "2 child processes were audited" in done.stderr
    assert "ran unaudited" not in done.stderr


def test_torchrun_workers_are_audited_with_dash_m(tmp_path: Path) -> None:
    write(tmp_path, "worker.py", WORKER)
    write(tmp_path, "train.py", TORCHRUN)
    done = audit_command(
        tmp_path,
        "--json",
        "--fail-on",
        "wrong-gradients",
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        "2",
        "train.py",
    )
    data = json.loads(done.stdout)
    assert done.returncode == EXIT_FOUND, done.stderr
    assert data["children"] == {"audited": 2, "unaudited": 0}
    (row,) = [r for r in data["findings"] if r["consequence"] == "wrong gradients"]
    assert (row["file"], row["line"], row["count"]) == ("worker.py", 10, 2)


UNAUDITED = """
    import multiprocessing as mp
    import os
    import subprocess
    import sys


    def leave():
        os._exit(0)  # no audit report can be written


    if __name__ == "__main__":
        subprocess.run([sys.executable, "-c", "print('code on the command line')"], check=True)
        process = mp.get_context("spawn").Process(target=leave)
        process.start()
        process.join()
"""


def test_children_that_ran_unaudited_are_counted_and_fail_every_check(tmp_path: Path) -> None:
    write(tmp_path, "train.py", UNAUDITED)
    assert audit_command(tmp_path, "train.py").returncode == 0
    done = audit_command(tmp_path, "--fail-on", "backward-fails", "train.py")
    assert done.returncode == EXIT_UNAUDITED, done.stderr
    assert "2 child processes ran unaudited" in done.stderr
    assert f"Exit code {EXIT_UNAUDITED}: --fail-on backward-fails cannot pass" in done.stderr


LOOP = """
    import time
    import torch

    x = torch.randn(3, requires_grad=True)
    step = 0
    while True:
        h = torch.sigmoid(x)
        h.mul_(2)
        print("step", step, flush=True)
        step += 1
        time.sleep(0.02)
"""


@pytest.mark.parametrize(("name", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_an_interrupted_run_prints_the_partial_report_without_the_tools_frames(
    tmp_path: Path, name: str, code: int
) -> None:
    import signal

    write(tmp_path, "loop.py", LOOP)
    command = [sys.executable, "-m", "inplace_recipes", "audit", "loop.py"]
    process = subprocess.Popen(
        command,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509 - as in a terminal
    )
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("step 3"):
            break
    process.send_signal(getattr(signal, name))
    _, err = process.communicate(timeout=60)
    assert process.returncode == code, err
    traceback, report = err.split("inplace_recipes audit of loop.py:")
    assert traceback.startswith("Traceback (most recent call last):\n"), err
    assert 'loop.py", line' in traceback
    assert "inplace_recipes" not in traceback
    assert "runpy" not in traceback
    assert "fails if backpropagated  loop.py:9" in report
    assert f"Interrupted by {name}: the report covers what ran before it." in report
    assert f"Exit code {code}: the script was interrupted by {name}." in report


NOISY = """
    import ctypes
    import os
    import subprocess
    import sys
    import torch

    print("print")
    os.write(1, b"os.write\\n")
    os.system("echo os.system")
    subprocess.run(["echo", "subprocess"], check=True)
    ctypes.CDLL(None).printf(b"printf from C\\n")
    x = torch.randn(3, requires_grad=True)
    h = torch.exp(x)
    h.add_(1)
    h.sum().backward()
"""


def test_json_survives_writes_to_file_descriptor_1(tmp_path: Path) -> None:
    write(tmp_path, "train.py", NOISY)
    done = audit_command(tmp_path, "--json", "train.py")
    data = json.loads(done.stdout)  # what `| python -m json.tool` reads
    assert [r["line"] for r in data["findings"]] == [15]
    for text in ("print", "os.write", "os.system", "subprocess", "printf from C"):
        assert text in done.stderr
    piped = subprocess.run(
        f"{sys.executable} -m inplace_recipes audit --json train.py | {sys.executable} -m json.tool",
        shell=True,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=240,
    )
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["exit"]["code"] == 1


def test_json_out_leaves_stdout_to_the_script(tmp_path: Path) -> None:
    write(tmp_path, "train.py", NOISY)
    done = audit_command(tmp_path, "--json-out", "report.json", "train.py")
    assert done.stdout.splitlines()[:4] == ["print", "os.write", "os.system", "subprocess"]
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["findings"][0]["code"] == "h.add_(1)"
    assert "inplace_recipes audit of train.py:" in done.stderr


def test_a_syntax_error_is_said_once_and_nothing_is_reported(tmp_path: Path) -> None:
    write(tmp_path, "broken.py", "import torch\nx = (1,\n")
    done = audit_command(tmp_path, "broken.py")
    assert done.returncode == EXIT_NOT_RUN
    assert done.stderr.count("SyntaxError") == 1, done.stderr
    assert f'File "{tmp_path / "broken.py"}", line 2' in done.stderr
    assert "broken.py did not run; nothing was audited." in done.stderr
    assert "inplace_recipes audit of" not in done.stderr


def test_a_directory_runs_its_main_or_is_named_as_a_directory(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = audit_command(tmp_path, "empty")
    assert done.returncode == EXIT_NOT_RUN
    assert "'empty' is a directory with no __main__.py to run" in done.stderr
    assert "no such script" not in done.stderr
    write(tmp_path, "app/__main__.py", "import torch\nprint('ran', __file__)\n")
    done = audit_command(tmp_path, "app")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"ran {tmp_path / 'app' / '__main__.py'}\n"


PATHS = """
    import os
    import torch

    print(__file__)
    os.chdir(os.path.dirname(os.path.dirname(__file__)))
    print(os.path.exists(__file__))
    x = torch.randn(3, requires_grad=True)
    h = torch.exp(x)
    h.add_(1)
    h.sum().backward()
"""


@pytest.mark.parametrize("how", ["relative", "absolute outside"])
def test_paths_are_relative_to_the_working_directory_else_absolute(
    tmp_path: Path, how: str
) -> None:
    script = write(tmp_path, "project/sub/train.py", PATHS)
    cwd = tmp_path / "project" if how == "relative" else tmp_path / "elsewhere"
    cwd.mkdir(exist_ok=True)
    name = "sub/train.py" if how == "relative" else str(script)
    shown = "sub/train.py" if how == "relative" else str(script)
    done = audit_command(cwd, name)
    assert done.stdout == f"{script}\nTrue\n"  # __file__ is absolute, also after os.chdir
    assert f"backward fails  {shown}:10" in done.stderr, done.stderr
    assert f"used by the backward at {shown}:11" in done.stderr
    data = json.loads(audit_command(cwd, "--json", name).stdout)
    assert data["findings"][0]["file"] == shown


def test_the_scripts_own_exit_code_is_told_apart_from_fail_on(tmp_path: Path) -> None:
    write(tmp_path, "train.py", textwrap.dedent(SILENT) + "\nimport sys\nsys.exit(3)\n")
    done = audit_command(tmp_path, "train.py")
    assert done.returncode == 3
    assert "Exit code 3: the script's own." in done.stderr
    done = audit_command(tmp_path, "--fail-on", "wrong-gradients", "train.py")
    assert done.returncode == EXIT_FOUND
    assert "(the script's own exit code was 3)" in done.stderr
    data = json.loads(audit_command(tmp_path, "--json", "--fail-on", "any", "train.py").stdout)
    assert data["exit"]["code"] == EXIT_FOUND
    assert data["exit"]["script"] == 3


EVALUATION = """
    import sys
    import torch

    w = torch.randn(4, requires_grad=True)
    h = torch.exp(w)  # an evaluation that forgot torch.no_grad()
    h += 1.0
    if sys.argv[1] == "then-train":
        (w * 2).sum().backward()  # an unrelated backward
"""


@pytest.mark.parametrize("then", ["end", "then-train"])
def test_a_write_on_a_graph_no_backward_used_has_one_class(tmp_path: Path, then: str) -> None:
    write(tmp_path, "train.py", EVALUATION)
    for fail_on, code in [("backward-fails", 0), ("wrong-gradients", 0), ("unused-graph", 86)]:
        done = audit_command(tmp_path, "--fail-on", fail_on, "train.py", then)
        assert done.returncode == code, (fail_on, done.stderr)
    assert "fails if backpropagated  train.py:7" in done.stderr
    assert "retain_graph" not in done.stderr
    assert "fails if backward again" not in done.stderr
    assert "run it under torch.no_grad()" in done.stderr


def test_the_backward_is_named_with_its_file(tmp_path: Path) -> None:
    write(
        tmp_path,
        "model.py",
        """
        import torch


        def forward(x):
            h = torch.exp(x)
            h.add_(1)
            return h.sum()
        """,
    )
    write(
        tmp_path,
        "train.py",
        """
        import torch
        from model import forward

        forward(torch.randn(3, requires_grad=True)).backward()
        """,
    )
    done = audit_command(tmp_path, "train.py")
    assert "backward fails  model.py:7" in done.stderr
    assert "used by the backward at train.py:5" in done.stderr
