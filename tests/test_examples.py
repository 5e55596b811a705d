"""The examples run: the flagship (examples/train_digits.py) shortened, its
command line, and its checkpoint reloaded from the file alone."""

import importlib.util
import pathlib
import subprocess
import sys

import pytest
from harness import compiler_off

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_train_digits_short_run(tmp_path, capsys):
    digits = load("train_digits")
    # Three epochs reach about 95% held-out accuracy; MLX's compiler off (the
    # numbers are the same, without a g++ run per fused kernel).
    with compiler_off():
        status = digits.main(["--epochs", "3", "--quiet", "--out-dir", str(tmp_path),
                              "--min-accuracy", "0.85"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert (tmp_path / "digits.safetensors").exists()
    reloaded = float(out.split("reloaded checkpoint: test accuracy ")[1].split()[0])
    before = float(out.split("test accuracy ")[1].split()[0])
    assert reloaded == before >= 0.85


def test_train_digits_exit_status_and_help(tmp_path):
    digits = load("train_digits")
    with compiler_off():
        # An accuracy target no model reaches after one epoch: exit status 1.
        assert digits.main(["--epochs", "1", "--quiet", "--out-dir", str(tmp_path),
                            "--min-accuracy", "1.01"]) == 1
    help_text = subprocess.run([sys.executable, str(EXAMPLES / "train_digits.py"), "--help"],
                               capture_output=True, text=True, check=True).stdout
    for option in ("--epochs", "--batch-size", "--seed", "--lr", "--out-dir"):
        assert option in help_text


@pytest.mark.parametrize("name", ["regression"])
def test_other_examples(name):
    subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py")], check=True,
                   capture_output=True, timeout=300)
