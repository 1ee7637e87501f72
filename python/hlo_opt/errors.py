"""The exceptions hlo_opt raises: each carries what the command line prints
(its ``str``) and the fields a program needs."""

from typing import List, Optional


class HloOptError(Exception):
    """Any error of hlo_opt."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ParseError(HloOptError):
    """The text or proto does not parse, or the module it holds is invalid.
    ``line`` and ``column`` are 1-based; ``None`` where nothing points."""

    def __init__(
        self,
        message: str,
        file: str = "<string>",
        line: Optional[int] = None,
        column: Optional[int] = None,
        source_line: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.file = file
        self.line = line
        self.column = column
        self.source_line = source_line


class ContractViolation(HloOptError):
    """The module breaks a rule of Neuron's contract (``id`` is its HOC
    code); ``violations`` lists every one found, as the command prints them."""

    def __init__(
        self,
        message: str,
        id: str = "",
        cause: str = "",
        resolution: str = "",
        computation: str = "",
        instruction: str = "",
        violations: Optional[List[str]] = None,
    ) -> None:
        super().__init__(message)
        self.id = id
        self.cause = cause
        self.resolution = resolution
        self.computation = computation
        self.instruction = instruction
        self.violations = violations or []


class PassError(HloOptError):
    """A pass refused its input, or an unknown pass was named."""

    def __init__(
        self,
        message: str,
        pass_name: Optional[str] = None,
        instruction: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.pass_name = pass_name
        self.instruction = instruction


class NumericsError(HloOptError):
    """check_numerics: a pass moved an output beyond its tolerance, or the
    module could not be evaluated (``pass_name`` says after which pass)."""

    def __init__(self, message: str, pass_name: Optional[str] = None) -> None:
        super().__init__(message)
        self.pass_name = pass_name


class EvalError(HloOptError):
    """evaluate: bad inputs, or what the interpreter cannot evaluate."""
