"""What a user or an attacker hands the package cannot hurt them: Ctrl-C
stops a long evaluation, the objects copy and pickle, and every error is
an HloOptError (issue 29, items 6 and 7)."""

import copy
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import hlo_opt

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SECURITY = DATA / "security"

CORPUS = sorted(
    p for p in (DATA / "corpus").glob("*.hlo") if not p.name.endswith(".short.hlo")
)


# A child process sends itself SIGINT one second into the call and prints
# how long after the signal KeyboardInterrupt arrived. The child, not
# pytest, takes the signal; its timeout turns "never stops" (about 21 h
# before the fix) into a failure.
INTERRUPTED = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    import hlo_opt
    # A child of a background shell job inherits SIGINT ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    module = hlo_opt.Module.from_text(open(sys.argv[1]).read())
    sent = []
    def interrupt():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)
    threading.Timer(1.0, interrupt).start()
    try:
        {call}
    except KeyboardInterrupt:
        print("KeyboardInterrupt %.3f" % (time.monotonic() - sent[0]))
    else:
        print("finished")
    """
)


def interrupted_after(call: str, module: Path) -> float:
    script = INTERRUPTED.replace("{call}", call)
    r = subprocess.run(
        [sys.executable, "-c", script, str(module)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    word, _, seconds = r.stdout.strip().partition(" ")
    assert word == "KeyboardInterrupt", r.stdout + r.stderr
    return float(seconds)


def test_ctrl_c_stops_evaluate():
    # A while loop of f32[2^20] exponentials, 10^7 iterations.
    late = interrupted_after("hlo_opt.evaluate(module)", SECURITY / "while_heavy.hlo")
    assert late < 1.0


def test_ctrl_c_stops_check_numerics():
    # The same loop beside a Gelu the pipeline rewrites: the check
    # evaluates the whole module after that pass.
    late = interrupted_after(
        "hlo_opt.check_numerics(module)", SECURITY / "check_numerics_heavy.hlo"
    )
    assert late < 1.0


# Evaluates in the parent (its loops start the interpreter's threads), then
# forks, as a `multiprocessing` worker is started, and evaluates in the
# child, which has none of those threads. Prints the child's exit code (or
# kills a child still running after 60 s).
FORK_AFTER_EVALUATE = textwrap.dedent(
    """
    import os
    import signal
    import time
    import hlo_opt

    text = (
        "HloModule m\\n\\nENTRY main {\\n  p = f32[512,512] parameter(0)\\n"
        "  ROOT x = f32[512,512] exponential(p)\\n}\\n"
    )
    module = hlo_opt.Module.from_text(text)
    hlo_opt.evaluate(module)
    pid = os.fork()
    if pid == 0:
        out = hlo_opt.evaluate(module)
        os._exit(0 if out["out0"].shape == (512, 512) else 1)
    for _ in range(600):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            print(os.waitstatus_to_exitcode(status))
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        print("the child was still evaluating after 60 s")
    """
)


def test_evaluate_in_a_child_forked_after_the_parent_evaluated():
    # 512x512 is past the size at which a loop is split over the cores.
    r = subprocess.run(
        [sys.executable, "-c", FORK_AFTER_EVALUATE],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.stdout.strip() == "0", r.stdout + r.stderr


SMALL = "HloModule m\n\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n"


def test_module_copies_are_the_module():
    m = hlo_opt.Module.from_text(SMALL)
    # Immutable, as a str: a copy is the object itself.
    assert copy.copy(m) is m
    assert copy.deepcopy(m) is m
    assert copy.deepcopy([m, m])[0] is m


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_a_pickled_module_prints_back_byte_for_byte(path):
    m = hlo_opt.Module.from_text(path.read_text(), str(path))
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        again = pickle.loads(pickle.dumps(m, protocol=protocol))
        assert isinstance(again, hlo_opt.Module)
        assert again.to_text() == m.to_text()
        assert again.to_proto() == m.to_proto()


@pytest.mark.parametrize(
    "path", sorted((DATA / "corpus").glob("*.pb")), ids=lambda p: p.name
)
def test_a_module_read_from_a_proto_pickles_whole(path):
    # Pickled as its proto: the ids and fields its text lacks are kept.
    m = hlo_opt.Module.from_proto(path.read_bytes())
    again = pickle.loads(pickle.dumps(m))
    assert again.to_text() == m.to_text()
    assert again.to_proto() == m.to_proto()
    # After passes too. (Its text is then what the written .pb reads back
    # as: the proto reader's order of computations, XLA's.)
    out, _ = hlo_opt.run(m, contract_checks=False)
    again = pickle.loads(pickle.dumps(out))
    assert again.to_proto() == out.to_proto()


def fields(obj, names):
    return tuple(getattr(obj, n) for n in names)


def test_reports_and_checks_copy_and_pickle():
    text = (DATA / "corpus" / "softmax_fwd_lastaxis_f32.hlo").read_text()
    module = hlo_opt.Module.from_text(text)
    _, report = hlo_opt.run(module)
    reports = report.passes
    entries = [e for p in reports for e in p.entries]
    assert entries, "the softmax is raised"
    checks = hlo_opt.check_numerics(module)
    outputs = [o for c in checks for o in c.outputs]
    assert outputs
    infos = hlo_opt.list_passes()
    kinds = [
        (reports, ["name", "changed", "time"]),
        (entries, ["kind", "computation", "instruction", "reason", "text"]),
        (checks, ["name", "changed", "how", "unchecked", "table"]),
        (outputs, ["name", "shape", "max_abs", "max_rel", "tolerance", "ok"]),
        (infos, ["name", "summary", "default"]),
    ]
    for objs, names in kinds:
        for o in objs:
            assert copy.copy(o) is o and copy.deepcopy(o) is o
            again = pickle.loads(pickle.dumps(o))
            assert type(again) is type(o)
            assert fields(again, names) == fields(o, names)
            assert str(again) == str(o)
    for p in reports:
        again = pickle.loads(pickle.dumps(p))
        assert [str(e) for e in again.entries] == [str(e) for e in p.entries]
    for c in checks:
        again = pickle.loads(pickle.dumps(c))
        assert [fields(o, ["name", "max_abs", "ok"]) for o in again.outputs] == [
            fields(o, ["name", "max_abs", "ok"]) for o in c.outputs
        ]


def test_a_lone_surrogate_is_a_located_parse_error():
    text = 'HloModule x\nENTRY e {\n ROOT c = f32[] constant(1), metadata={op_name="\ud800"}\n}\n'
    with pytest.raises(hlo_opt.ParseError) as info:
        hlo_opt.Module.from_text(text, file="s.hlo")
    e = info.value
    assert isinstance(e, hlo_opt.HloOptError)
    assert (e.file, e.line, e.column) == ("s.hlo", 3, 49)
    assert e.source_line == ' ROOT c = f32[] constant(1), metadata={op_name="\ufffd"}'
    assert str(e).startswith("s.hlo:3:49: error: U+D800 is a lone surrogate")
    # In a file name, it is shown replaced.
    with pytest.raises(hlo_opt.ParseError) as info:
        hlo_opt.Module.from_text("HloModule", file="\udc80.hlo")
    assert info.value.file == "\ufffd.hlo"


def test_a_verifier_error_carries_its_source_line():
    text = "HloModule m\n\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT x = f32[2] negate(a)\n}\n"
    with pytest.raises(hlo_opt.ParseError) as info:
        hlo_opt.Module.from_text(text, file="inv.hlo")
    e = info.value
    assert (e.file, e.line, e.column) == ("inv.hlo", 5, 8)
    assert e.source_line == "  ROOT x = f32[2] negate(a)"
    # As the command line prints it: the line and a caret under column 8.
    lines = str(e).split("\n")
    assert lines[0].startswith("inv.hlo:5:8: error: invalid module: ")
    assert lines[1:] == ["  ROOT x = f32[2] negate(a)", "       ^"]
