#!/usr/bin/env python3
"""Does XLA read the protos hlo-opt writes as it reads its own?

For each HLO text module: XLA parses the text and serializes it to a proto
(its own), hlo-opt writes a proto from the same text (ours); XLA reads both
back and prints them. The two prints must be equal. Needs jaxlib
(`pip install jaxlib`); not part of the test suite.

    python3 scripts/xla_reads_our_protos.py [--hlo-opt PATH] FILE.hlo ...
"""
import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import jaxlib._hlo as xh


def options():
    o = xh.HloPrintOptions()
    o.print_large_constants = True
    return o


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hlo-opt", default="target/release/hlo-opt")
    ap.add_argument("files", nargs="+", type=Path)
    args = ap.parse_args()
    same = differ = skipped = 0
    with tempfile.TemporaryDirectory() as tmp:
        ours_path = Path(tmp) / "ours.pb"
        for f in args.files:
            try:
                theirs = xh.hlo_module_from_text(f.read_text())
            except Exception as e:  # XLA's parser refuses the text
                print(f"skip {f}: XLA does not parse it: {str(e).splitlines()[0]}")
                skipped += 1
                continue
            want = xh.HloModule.from_serialized_hlo_module_proto(
                theirs.as_serialized_hlo_module_proto()
            ).to_string(options())
            subprocess.run(
                [args.hlo_opt, "--passes", "", "--output-format", "proto",
                 "-o", str(ours_path), str(f)],
                check=True,
            )
            got = xh.HloModule.from_serialized_hlo_module_proto(
                ours_path.read_bytes()
            ).to_string(options())
            if got == want:
                same += 1
            else:
                differ += 1
                for i, (a, b) in enumerate(zip(want.splitlines(), got.splitlines())):
                    if a != b:
                        print(f"DIFFER {f} line {i + 1}:\n  xla:  {a[:200]}\n  ours: {b[:200]}")
                        break
                else:
                    print(f"DIFFER {f}: line counts differ")
    print(f"{same} same, {differ} differ, {skipped} skipped")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
