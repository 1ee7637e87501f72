"""The `hlo-opt` console script the package installs: the same command as
the Rust binary, run in process, with the same outputs byte for byte."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "softmax_vjp_f32.hlo"
BINARY = ROOT / "target" / "release" / "hlo-opt"


def console_script():
    # Installed beside the interpreter that runs the tests.
    script = Path(sys.executable).parent / "hlo-opt"
    assert script.exists(), f"pip install ./python installs {script}"
    return str(script)


def test_the_package_installs_the_command(tmp_path):
    out = subprocess.run(
        [console_script(), "--report-html", "r.html", str(EXAMPLE), "-o", "out.hlo"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert 'custom_call_target="AwsNeuronSoftmax"' in (tmp_path / "out.hlo").read_text()


def test_its_errors_and_usage_are_the_commands(tmp_path):
    out = subprocess.run([console_script(), "no-such.hlo"], capture_output=True, text=True)
    assert out.returncode == 1
    assert "no-such.hlo" in out.stderr
    out = subprocess.run([console_script(), "--no-such-flag"], capture_output=True, text=True)
    assert out.returncode == 2
    assert "--no-such-flag" in out.stderr
    out = subprocess.run([console_script(), "--version"], capture_output=True, text=True)
    assert out.returncode == 0
    assert out.stdout.startswith("hlo-opt ")


@pytest.mark.skipif(not BINARY.exists(), reason="the Rust binary is built by cargo test --release")
def test_the_same_bytes_as_the_binary(tmp_path):
    args = ["--report", "--emit-graph", "g.json", str(EXAMPLE), "-o"]
    for name, command in [("script", console_script()), ("binary", str(BINARY))]:
        d = tmp_path / name
        d.mkdir()
        out = subprocess.run([command, *args, "out.hlo"], cwd=d, capture_output=True)
        assert out.returncode == 0, out.stderr
        (d / "stderr").write_bytes(out.stderr)
    for f in ["out.hlo", "g.json", "g.overlay.json"]:
        assert (tmp_path / "script" / f).read_bytes() == (tmp_path / "binary" / f).read_bytes(), f
    # The report's timings differ; its lines' passes and verdicts do not.
    strip = lambda p: [l.split()[:2] for l in p.read_text().splitlines()]
    assert strip(tmp_path / "script" / "stderr") == strip(tmp_path / "binary" / "stderr")
