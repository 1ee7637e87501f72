#!/usr/bin/env python3
"""`hlo-opt batch` against one command per module, as the whole commands.

    python3 scripts/bench_batch.py [--hlo-opt target/release/hlo-opt] [--modules 200] [--runs 5]

Makes a folder of N small modules (the corpus's `.hlo` modules, repeated
under new names), then times, interleaved over --runs rounds:
  - `hlo-opt batch DIR -o OUT --force` (every module run, all cores),
  - one `hlo-opt MODULE -o OUT/MODULE` process per module, one after
    another (the shell loop users write today);
and the batch's own overhead per module: (batch wall time with -j 1 -
the sum of the modules' own run times in its summary) / N.
Prints medians; docs/performance.md quotes the result with its date.
"""
import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hlo-opt", default=str(REPO / "target" / "release" / "hlo-opt"))
    ap.add_argument("--modules", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    corpus = sorted((REPO / "tests" / "data" / "corpus").glob("*.hlo"))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src = tmp / "in"
        src.mkdir()
        for k in range(a.modules):
            shutil.copy(corpus[k % len(corpus)], src / f"m{k:04d}.hlo")
        files = sorted(src.iterdir())
        batch, loop, overhead = [], [], []
        for _ in range(a.runs):
            out = tmp / "out"
            shutil.rmtree(out, ignore_errors=True)
            t = time.perf_counter()
            subprocess.run([a.hlo_opt, "batch", str(src), "-o", str(out), "--force"],
                           capture_output=True)
            batch.append(time.perf_counter() - t)
            shutil.rmtree(out)
            out.mkdir()
            t = time.perf_counter()
            for f in files:
                subprocess.run([a.hlo_opt, str(f), "-o", str(out / f.name)], capture_output=True)
            loop.append(time.perf_counter() - t)
            shutil.rmtree(out)
            t = time.perf_counter()
            subprocess.run([a.hlo_opt, "batch", str(src), "-o", str(out), "--force", "-j", "1"],
                           capture_output=True)
            wall = time.perf_counter() - t
            rows = json.loads((out / "summary.json").read_text())["modules"]
            work = sum(r["time_ms"] for r in rows) / 1e3
            overhead.append((wall - work) / a.modules)
        b, l, o = statistics.median(batch), statistics.median(loop), statistics.median(overhead)
        print(f"{a.modules} modules (from the {len(corpus)} corpus .hlo modules), median of {a.runs}:")
        print(f"  batch (all cores)        {b:8.3f} s")
        print(f"  one command per module   {l:8.3f} s")
        print(f"  speedup                  {l / b:8.2f}x")
        print(f"  batch overhead (-j 1)    {o * 1e3:8.2f} ms per module")


if __name__ == "__main__":
    main()
