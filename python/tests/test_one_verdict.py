"""One verdict (issue 29, item 8): what `run` returns, `run` accepts again.
The module either is refused, or the module `run` made passes a second
`run`, in either scope."""

from pathlib import Path

import pytest

import hlo_opt

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "one_verdict"


@pytest.mark.parametrize("path", sorted(DATA.glob("*.hlo")), ids=lambda p: p.name)
@pytest.mark.parametrize("all_computations", [False, True])
def test_what_run_returns_run_accepts(path, all_computations):
    try:
        module = hlo_opt.Module.from_text(path.read_text(), str(path))
        out, _ = hlo_opt.run(module, all_computations=all_computations)
    except hlo_opt.HloOptError as e:
        # Refused by the first run: the verifier names the op whose
        # dimensions are not its operand's.
        assert isinstance(e, hlo_opt.ParseError), e
        assert e.line is not None, e
        return
    again = hlo_opt.Module.from_text(out.to_text())
    hlo_opt.run(again)
    hlo_opt.run(again, all_computations=True)
