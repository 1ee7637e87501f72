#!/usr/bin/env python3
"""Module shapes at n, 4n and 16n through the whole command: does any grow
faster than itself?

Each shape is a generated HLO text module whose size is linear in n. Each
size runs through the text round trip, text -> proto, proto -> text, the
default pipeline with `--all-computations`, `--check-numerics` and `eval`. The time and peak memory
of each run are compared across the sizes. A shape whose time or memory
grows faster than n^1.7 from 4n to 16n (a quadratic shows 2) is flagged, and the exit status
is 1 then, as it is when a run fails (every module made here is valid).

The shapes are the ones that once grew quadratically (docs/performance.md,
"Fourteenth session"), and a few plain ones to compare them with:

  chain            a chain of n negates (the plain case)
  entry_first      an entry calling n computations defined after it
  branches_after   one conditional naming n branches defined after it
  calls            n calls of n small callees (the call inliner)
  control          one instruction with n control predecessors
  softmaxes        n softmaxes, each of the one before

  python3 scripts/probe_growth.py [--hlo-opt target/release/hlo-opt]
      [--n 4000] [--shapes chain,calls]

It takes two minutes or so at the default n. It is not part of the test
suite; the tests bound the shapes that regressed (tests/reader.rs, the
call inliner's unit test, the `--check-numerics` ones in
tests/reliability.rs).
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def chain(n):
    body = "".join(f"  c{i} = f32[8]{{0}} negate(c{i - 1})\n" for i in range(1, n))
    return (f"HloModule m\n\nENTRY e {{\n  c0 = f32[8]{{0}} parameter(0)\n{body}"
            f"  ROOT r = f32[8]{{0}} negate(c{n - 1})\n}}\n")


def callee(name):
    return (f"{name} {{\n  p.{name} = f32[8]{{0}} parameter(0)\n"
            f"  ROOT n.{name} = f32[8]{{0}} negate(p.{name})\n}}\n\n")


def call_chain(n):
    lines, last = [], "x"
    for i in range(n):
        lines.append(f"  k{i} = f32[8]{{0}} call({last}), to_apply=f{i}\n")
        last = f"k{i}"
    return ("ENTRY e {\n  x = f32[8]{0} parameter(0)\n" + "".join(lines)
            + f"  ROOT r = f32[8]{{0}} negate({last})\n}}\n\n")


def entry_first(n):
    return "HloModule m\n\n" + call_chain(n) + "".join(callee(f"f{i}") for i in range(n))


def calls(n):
    return "HloModule m\n\n" + "".join(callee(f"f{i}") for i in range(n)) + call_chain(n)


def branches_after(n):
    names = ", ".join(f"b{i}" for i in range(n))
    xs = ", ".join(["x"] * n)
    return ("HloModule m\n\nENTRY e {\n  i = s32[] parameter(0)\n  x = f32[8]{0} parameter(1)\n"
            f"  ROOT c = f32[8]{{0}} conditional(i, {xs}), branch_computations={{{names}}}\n}}\n\n"
            + "".join(callee(f"b{i}") for i in range(n)))


def control(n):
    params = "".join(f"  a{i} = f32[] parameter({i})\n" for i in range(n))
    preds = ", ".join(f"a{i}" for i in range(n))
    return (f"HloModule m\n\nENTRY e {{\n{params}"
            f"  ROOT r = f32[] negate(a0), control-predecessors={{{preds}}}\n}}\n")


def softmaxes(n):
    t = ("HloModule m\n\nmax {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT m = f32[] maximum(a, b)\n}\n\nadd {\n  c = f32[] parameter(0)\n"
         "  d = f32[] parameter(1)\n  ROOT s = f32[] add(c, d)\n}\n\n"
         "ENTRY e {\n  x = f32[8,128]{1,0} parameter(0)\n")
    last = "x"
    for i in range(n):
        t += (f"  ninf{i} = f32[] constant(-inf)\n"
              f"  max{i} = f32[8]{{0}} reduce({last}, ninf{i}), dimensions={{1}}, to_apply=max\n"
              f"  maxb{i} = f32[8,128]{{1,0}} broadcast(max{i}), dimensions={{0}}\n"
              f"  sub{i} = f32[8,128]{{1,0}} subtract({last}, maxb{i})\n"
              f"  exp{i} = f32[8,128]{{1,0}} exponential(sub{i})\n"
              f"  zero{i} = f32[] constant(0)\n"
              f"  sum{i} = f32[8]{{0}} reduce(exp{i}, zero{i}), dimensions={{1}}, to_apply=add\n"
              f"  sumb{i} = f32[8,128]{{1,0}} broadcast(sum{i}), dimensions={{0}}\n"
              f"  div{i} = f32[8,128]{{1,0}} divide(exp{i}, sumb{i})\n")
        last = f"div{i}"
    return t + f"  ROOT r = f32[8,128]{{1,0}} negate({last})\n}}\n"


# name -> (module of size n, n relative to --n)
SHAPES = {
    "chain": (chain, 16),
    "entry_first": (entry_first, 4),
    "branches_after": (branches_after, 4),
    "calls": (calls, 4),
    "control": (control, 8),
    "softmaxes": (softmaxes, 1),
}

PATHS = [
    ("round trip", ["--passes", ""], "in.hlo", "out.hlo"),
    ("text -> proto", ["--passes", ""], "in.hlo", "out.pb"),
    ("proto -> text", ["--passes", ""], "out.pb", "back.hlo"),
    ("pipeline", ["--all-computations"], "in.hlo", "pipe.hlo"),
    # The module evaluated before and after the passes, and alone.
    ("check-numerics", ["--check-numerics"], "in.hlo", "checked.hlo"),
    ("eval", ["eval"], "in.hlo", "out.npz"),
]


def run(cmd):
    """Wall clock (s), peak RSS (MB) and exit status of `cmd`. The peak is
    GNU time's: a child's peak counts its parent's memory at the fork, and
    this script holds the module's text."""
    start = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    lines = p.stderr.strip().splitlines()
    if p.returncode != 0:
        print(f"    exit {p.returncode}: {' '.join(lines[:-1])[:200]}", file=sys.stderr)
    return wall, int(lines[-1]) / 1024, p.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hlo-opt", default="target/release/hlo-opt")
    ap.add_argument("--n", type=int, default=3000, help="the base size (each shape scales it)")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    a = ap.parse_args()
    if not Path(a.hlo_opt).exists():
        sys.exit(f"{a.hlo_opt}: no such file (cargo build --release)")
    if not Path("/usr/bin/time").exists():
        sys.exit("/usr/bin/time (GNU time) is needed for the peak memory")
    flagged = []
    print("| shape | path | n | 4n | 16n | exponent 4n->16n (time, memory) |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="probe-growth-") as tmp:
        tmp = Path(tmp)
        for name in a.shapes.split(","):
            make, scale = SHAPES[name]
            results = {}
            for mult in (1, 4, 16):
                (tmp / "in.hlo").write_text(make(a.n * scale * mult))
                for label, args, src, dst in PATHS:
                    out = tmp / dst
                    out.unlink(missing_ok=True)
                    # The faster of two: one run on a shared machine can be
                    # twice as slow.
                    runs = [run([a.hlo_opt, *args, str(tmp / src), "-o", str(out)])
                            for _ in range(2)]
                    results[(label, mult)] = min(runs)
            for label, *_ in PATHS:
                r = [results[(label, m)] for m in (1, 4, 16)]
                (t4, m4, _), (t16, m16, _) = r[1], r[2]
                # Over 4x the size: time and memory as n^e.
                et = math.log(max(t16, 1e-3) / max(t4, 1e-3), 4)
                em = math.log(max(m16, 1) / max(m4, 1), 4)
                cells = " | ".join(f"{t:.2f} s, {m:.0f} MB" + ("" if rc == 0 else f" (exit {rc})")
                                   for t, m, rc in r)
                mark = ""
                # Runs under 0.1 s are mostly start-up and noise.
                if any(rc != 0 for _, _, rc in r):
                    # Every module made here is valid.
                    mark = " **failed**"
                    flagged.append(f"{name} / {label} (failed)")
                elif (et > 1.7 and t16 > 0.2) or (em > 1.7 and m16 > 200):
                    mark = " **faster than linear**"
                    flagged.append(f"{name} / {label}")
                print(f"| {name} | {label} | {cells} | {et:.2f}, {em:.2f}{mark} |", flush=True)
    if flagged:
        print("\nFailed, or grows faster than n^1.7: " + ", ".join(flagged))
        sys.exit(1)
    print("\nEvery shape grows linearly (exponent at most 1.7 from 4n to 16n).")


if __name__ == "__main__":
    main()
