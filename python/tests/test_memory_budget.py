"""The memory budget of evaluate and check_numerics (issue 29, item 4): a
module past it raises before it runs, under ``ulimit -v`` too."""

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import hlo_opt

SECURITY = Path(__file__).resolve().parents[2] / "tests" / "data" / "security"

SMALL = """HloModule small

ENTRY e {
  p = f32[1024] parameter(0)
  g = f32[1024] custom-call(p), custom_call_target="AwsNeuronGelu"
  ROOT n = f32[1024] negate(g)
}
"""

# Run in a child whose address space is limited: a refusal exits 3 with
# the message; an abort would be a signal.
CHILD = """
import sys, hlo_opt
m = hlo_opt.Module.from_text(open(sys.argv[1]).read(), sys.argv[1])
try:
    hlo_opt.evaluate(m)
except hlo_opt.EvalError as e:
    print(e)
    sys.exit(3)
"""


def test_evaluate_of_a_module_needing_24_gib_fails_under_ulimit_within_5_s():
    path = SECURITY / "eval_total_memory_unbounded.hlo"
    start = time.monotonic()
    child = subprocess.run(
        ["sh", "-c", 'ulimit -v 4000000; exec "$0" "$@"', sys.executable, "-c", CHILD, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    took = time.monotonic() - start
    assert child.returncode == 3, (child.returncode, child.stderr)
    assert took < 5, took
    out = child.stdout
    assert "needs about" in out and "more than the budget of" in out, out
    assert "address space ulimit -v leaves; memory_limit= sets another" in out, out
    assert "the largest instructions: b0 f64[134217728] (1.0 GiB, in e)" in out, out


def test_a_memory_limit_big_enough_runs_a_small_module():
    m = hlo_opt.Module.from_text(SMALL)
    x = np.arange(1024, dtype=np.float32)
    for limit in [64 << 20, "64M", "1GiB"]:
        out = hlo_opt.evaluate(m, {"p": x}, memory_limit=limit)
        assert out["out0"].shape == (1024,)
        checks = hlo_opt.check_numerics(m, memory_limit=limit)
        assert any(c.changed for c in checks)


def test_a_memory_limit_too_small_is_refused_naming_budget_need_and_largest():
    m = hlo_opt.Module.from_text(SMALL)
    with pytest.raises(hlo_opt.EvalError) as e:
        hlo_opt.evaluate(m, memory_limit="8K")
    message = str(e.value)
    assert "needs about" in message, message
    assert "more than the budget of 8.0 KiB (set by memory_limit=)" in message, message
    assert "the largest instructions: p f32[1024] (4.0 KiB, in e), g f32[1024]" in message
    with pytest.raises(hlo_opt.NumericsError, match="more than the budget of 8.0 KiB"):
        hlo_opt.check_numerics(m, memory_limit=8192)
    with pytest.raises(hlo_opt.HloOptError, match="memory_limit: bad size"):
        hlo_opt.evaluate(m, memory_limit="lots")
