"""Type stubs of the native module (see hlo_opt/__init__.py for the API)."""

import os
from typing import Dict, List, Optional, Sequence, Tuple, Union

class Module:
    """An HLO module, immutable: passes give a new one. Copies are the
    module itself; pickle keeps its text, which prints back byte for byte
    (a module read from a proto: the proto)."""

    @staticmethod
    def from_text(text: str, file: str = "<string>") -> "Module":
        """Parses and verifies HLO text; raises ParseError (file, line, column)."""
    @staticmethod
    def from_proto(data: bytes) -> "Module":
        """Reads and verifies a binary HloModuleProto; raises ParseError."""
    def to_text(self, short: bool = False) -> str:
        """HLO text, as it was written or (short) in XLA's short form."""
    def to_proto(self) -> bytes:
        """The module as an encoded HloModuleProto."""
    @property
    def name(self) -> str: ...
    @property
    def parameters(self) -> List[Tuple[str, str, str]]:
        """The entry's parameters: (name, shape text, element type)."""
    @property
    def instruction_count(self) -> int: ...
    @property
    def opcode_counts(self) -> Dict[str, int]: ...
    @property
    def custom_call_targets(self) -> Dict[str, int]: ...
    @property
    def _signature(self) -> Optional[object]:
        """How a frontend's arguments map to the parameters (from_jax)."""
    @staticmethod
    def _from_proto_with_signature(data: bytes, signature: object, parameter_count: int) -> "Module": ...

class PassInfo:
    name: str
    summary: str
    default: bool
    """Whether the default pipeline runs it."""

class ReportEntryInfo:
    kind: str
    """'rewrote' or 'skipped'."""
    computation: str
    instruction: str
    reason: str
    """What changed (rewrote), or why the candidate was left (skipped)."""
    text: str

class PassReport:
    name: str
    changed: bool
    time: float
    """Seconds."""
    entries: List[ReportEntryInfo]

class OutputCheck:
    name: str
    shape: str
    max_abs: float
    max_rel: float
    tolerance: float
    ok: bool
    bound: Optional[str]
    noise_floor: float

class PassCheckInfo:
    name: str
    changed: bool
    how: str
    outputs: List[OutputCheck]
    unchecked: List[str]
    table: str

def list_passes() -> List[PassInfo]: ...
class RunDrawings:
    def html(self) -> str: ...
    def notebook(self, shown: int, id_prefix: str) -> str: ...
    def graph(self) -> str: ...
    def overlay(self) -> str: ...

def run(
    module: Module,
    passes: Union[None, str, Sequence[str]] = None,
    all_computations: bool = False,
    contract_checks: bool = True,
    check_numerics: bool = False,
    dump_dir: Optional[str] = None,
    check_seed: int = 0,
    accept_unchecked: bool = False,
    memory_limit: Union[None, int, str] = None,
    check_mode: Optional[str] = None,
) -> Tuple[Module, List[PassReport], List[PassCheckInfo], RunDrawings]: ...
def write_text(path: Union[str, "os.PathLike[str]"], text: str, what: str) -> None: ...
def evaluate_raw(
    module: Module,
    inputs: Optional[List[Tuple[str, List[int], bytes]]] = None,
    seed: int = 0,
    memory_limit: Union[None, int, str] = None,
) -> List[Tuple[str, Tuple[str, List[int], bytes]]]: ...
def cli_main(argv: List[str]) -> int: ...
