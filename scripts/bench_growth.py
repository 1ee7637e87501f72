#!/usr/bin/env python3
"""Does hlo-opt's time grow linearly with the module? The text round trip
and the default pipeline on 1x, 4x and 16x the 48-layer GPT train step.

An Nx module is made from the base module's text: every computation is
copied N times, each copy's names (computations and instructions, every
`%name`, and the parameter names in the signatures) given a suffix `__gI`, each copy's old entry turned into an
ordinary computation, and a new entry added that takes the base entry's
parameters, `call`s each copy's old entry with them and returns the tuple
of the N results. The 1x module is made the same way (one copy plus the
wrapper), so every size has the same shape. The module-level tables
(FileNames ... StackFrames) are kept once; the header keeps the name and
is_scheduled and drops entry_computation_layout, input_output_alias and
buffer_donor (they describe the old entry).

XLA's parser (jaxlib 0.10.2) reads such a module too, with the expected
instruction count (checked by hand on a 3x module). Each size is first
checked: hlo-opt must parse it, and its `--passes ''`
output is compared with the input. Then, interleaved over the sizes,
`--runs` times each (median): `--passes '' grown.hlo -o out.hlo` and
`--all-computations grown.hlo -o out.hlo`, wall clock of the whole
command and peak RSS, and the time per instruction. The growth exponent
is the slope of log(time) against log(instructions) between the smallest
and the largest size: 1.0 is linear.

    python3 scripts/bench_growth.py                       # build, 1,4,16, 3 runs
    python3 scripts/bench_growth.py --hlo-opt target/release/hlo-opt --runs 2 --json g.json
    python3 scripts/bench_growth.py --factors 1,2,4 --module tests/data/large/gpt48_train_f32.hlo

The 16x module is 1.2 GB of text (8.4M instructions); its files are
written to a temp dir (or --work-dir) and removed at the end.
"""
import argparse
import datetime
import json
import math
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_vs_xla import (DEFAULT_MODULE, build_or_find, count_instructions,  # noqa: E402
                          fmt_mb, fmt_t, git_info, load, log, machine_info,
                          run_measured, sha256, unpack)

NAME = re.compile(rb"%([A-Za-z0-9_.\-]+)")
COMPUTATION = re.compile(rb"^(?:ENTRY )?%", re.M)
HEADER_NAME = re.compile(rb"^HloModule ([^ ,]+)")
SIGNATURE_LINE = re.compile(rb"^(?:ENTRY )?%[^\n]*", re.M)
SIGNATURE_PARAM = re.compile(rb"(?<=[( ])([A-Za-z0-9_.\-]+)(?=: )")


def take_shape(line, pos):
    """The shape text that starts at line[pos]: a tuple up to its matching
    parenthesis, or an array shape (with its layout) up to the next space."""
    if line[pos:pos + 1] == b"(":
        depth = 0
        for i in range(pos, len(line)):
            c = line[i:i + 1]
            if c == b"(":
                depth += 1
            elif c == b")":
                depth -= 1
                if depth == 0:
                    return line[pos:i + 1]
        raise ValueError("unbalanced tuple shape")
    end = line.index(b" ", pos)
    return line[pos:end]


def xla_list(items):
    """items joined as XLA prints operand and tuple lists: ", " between,
    "/*index=N*/" before every fifth."""
    return b", ".join((b"/*index=%d*/" % i if i and i % 5 == 0 else b"") + x
                      for i, x in enumerate(items))


def split_module(data):
    """(header line, tables text, computations text, entry info)."""
    nl = data.index(b"\n")
    header = data[:nl]
    m = COMPUTATION.search(data, nl)
    if not m:
        raise ValueError("no computation found")
    tables, body = data[nl:m.start()], data[m.start():]
    em = re.search(rb"^ENTRY (%[A-Za-z0-9_.\-]+) \(", body, re.M)
    if not em:
        raise ValueError("no ENTRY computation")
    sig_end = body.index(b"\n", em.start())
    sig = body[em.start():sig_end]
    close = body.find(b"\n}", sig_end)
    entry_lines = body[sig_end + 1:close].split(b"\n")
    params, root_shape = [], None
    pm = re.compile(rb"^  %(\S+) = .*? parameter\((\d+)\)")
    for line in entry_lines:
        p = pm.match(line)
        if p:
            params.append((int(p.group(2)), p.group(1), line))
        elif line.startswith(b"  ROOT %"):
            eq = line.index(b" = ") + 3
            root_shape = take_shape(line, eq)
    params.sort()
    if [i for i, _, _ in params] != list(range(len(params))):
        raise ValueError("entry parameters are not numbered 0..n-1")
    # signature: "ENTRY %name (PARAMS) -> RESULT {"
    head, result = sig[len(b"ENTRY ") + len(em.group(1)) + 2:].rsplit(b") -> ", 1)
    if not result.endswith(b" {"):
        raise ValueError("unexpected ENTRY signature")
    return header, tables, body, {"name": em.group(1), "params_sig": head,
                                  "result_sig": result[:-2], "params": params,
                                  "root_shape": root_shape}


def grow(src, dst, k):
    """Writes the k-copy module of src to dst; returns its instruction count."""
    data = src.read_bytes()
    header, tables, body, e = split_module(data)
    name = HEADER_NAME.match(header).group(1)
    new_header = b"HloModule " + name + b"_x%d" % k
    if b"is_scheduled=true" in header:
        new_header += b", is_scheduled=true"
    base_instr = len(re.findall(rb"^  (?:ROOT )?%", body, re.M))
    with open(dst, "wb") as out:
        out.write(new_header + tables)
        for i in range(k):
            suffix = b"__g%d" % i
            copy = NAME.sub(rb"%\g<1>" + suffix, body)
            # the parameter names in the computations' signatures too
            copy = SIGNATURE_LINE.sub(
                lambda m: SIGNATURE_PARAM.sub(rb"\g<1>" + suffix, m.group(0)), copy)
            copy = re.sub(rb"^ENTRY %", b"%", copy, count=1, flags=re.M)
            out.write(copy.rstrip(b"\n") + b"\n\n")
        # the new entry: the old entry's parameters (old names, now free),
        # one call of each copy's old entry, the tuple of the results
        args = xla_list([b"%" + n for _, n, _ in e["params"]])
        out.write(b"ENTRY %grown.entry (" + e["params_sig"] + b") -> ("
                  + xla_list([e["result_sig"]] * k) + b") {\n")
        for _, _, line in e["params"]:
            out.write(line + b"\n")
        for i in range(k):
            out.write(b"  %%grown.call.%d = " % i + e["root_shape"] + b" call(" + args
                      + b"), to_apply=" + e["name"] + b"__g%d\n" % i)
        out.write(b"  ROOT %grown.tuple = (" + xla_list([e["root_shape"]] * k)
                  + b") tuple(" + xla_list([b"%%grown.call.%d" % i for i in range(k)])
                  + b")\n}\n\n")
    return base_instr * k + len(e["params"]) + k + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--factors", default="1,4,16")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--hlo-opt", help="use this binary instead of `cargo build --release`")
    ap.add_argument("--module", type=Path, default=DEFAULT_MODULE, help="HLO text (.hlo or .hlo.gz)")
    ap.add_argument("--json", type=Path, help="write the raw numbers here")
    ap.add_argument("--work-dir", type=Path, help="keep the files here (default: a temp dir, removed)")
    a = ap.parse_args()
    factors = [int(f) for f in a.factors.split(",")]

    hlo_opt = build_or_find(a.hlo_opt)
    version = subprocess.run([str(hlo_opt), "--version"], capture_output=True,
                             text=True).stdout.strip()
    own_dir = a.work_dir is None
    work = Path(tempfile.mkdtemp(prefix="hlo-opt-growth-")) if own_dir else a.work_dir
    work.mkdir(parents=True, exist_ok=True)
    try:
        report = bench(a, factors, hlo_opt, version, work)
    finally:
        if own_dir:
            shutil.rmtree(work, ignore_errors=True)
    print(report.pop("markdown"))
    if a.json:
        a.json.write_text(json.dumps(report, indent=1) + "\n")
        log(f"wrote {a.json}")


def bench(a, factors, hlo_opt, version, work):
    started = datetime.datetime.now().astimezone()
    load_before = load()
    loads = [load_before[0]]
    base = unpack(a.module, work)
    sizes = {}
    for k in factors:
        dst = work / f"grown_x{k}.hlo"
        log(f"making {dst.name}")
        n = grow(base, dst, k)
        counted = count_instructions(dst)
        if counted != n:
            raise RuntimeError(f"{dst}: {counted} instruction lines, expected {n}")
        out = work / "check.hlo"
        r = run_measured([str(hlo_opt), "--passes", "", str(dst), "-o", str(out)])
        same = sha256(out) == sha256(dst)
        out.unlink()
        log(f"  {n:,} instructions, {dst.stat().st_size / 1e6:.0f} MB; hlo-opt parses it "
            f"({r['wall_s']:.2f} s), round trip {'identical' if same else 'differs'}")
        sizes[k] = {"file": dst, "instructions": n, "bytes": dst.stat().st_size,
                    "roundtrip_identical": same}

    works = [("rt", ["--passes", ""]), ("pipeline", ["--all-computations"])]
    samples = []
    for run in range(a.runs):
        order = factors if run % 2 == 0 else list(reversed(factors))
        for k in order:
            for key, args in works:
                out = work / f"out-{key}.hlo"
                if out.exists():
                    out.unlink()
                r = run_measured([str(hlo_opt), *args, str(sizes[k]["file"]), "-o", str(out)])
                r.pop("stderr")
                r.update(factor=k, work=key, run=run, load1=load()[0])
                loads.append(r["load1"])
                samples.append(r)
                log(f"  run {run} x{k:<3d} {key:8s} {r['wall_s']:.2f} s "
                    f"rss {fmt_mb(r['maxrss_bytes'])} load {r['load1']:.2f}")
                out.unlink()
    load_after = load()
    finished = datetime.datetime.now().astimezone()

    def med(k, key, field="wall_s"):
        return statistics.median(s[field] for s in samples if s["factor"] == k and s["work"] == key)

    def peak(k, key):
        return max(s["maxrss_bytes"] for s in samples if s["factor"] == k and s["work"] == key)

    rows = []
    for k in factors:
        n = sizes[k]["instructions"]
        row = {"factor": k, "instructions": n, "bytes": sizes[k]["bytes"],
               "roundtrip_identical": sizes[k]["roundtrip_identical"]}
        for key, _ in works:
            t = med(k, key)
            row[key] = {"wall_s": t, "us_per_instr": t / n * 1e6, "peak_rss_bytes": peak(k, key),
                        "rss_bytes_per_instr": peak(k, key) / n,
                        "cpu_s": med(k, key, "user_s") + med(k, key, "sys_s")}
        rows.append(row)
    lo, hi = rows[0], rows[-1]
    slope = {}
    for key, _ in works:
        for what in ("wall_s", "cpu_s"):
            if hi["instructions"] > lo["instructions"]:
                slope[f"{key}_{what}"] = (math.log(hi[key][what] / lo[key][what])
                                          / math.log(hi["instructions"] / lo["instructions"]))

    m = machine_info()
    lines = []
    L = lines.append
    L("## hlo-opt growth: the same module " + ", ".join(f"{k}x" for k in factors)
      + " (whole process)")
    L("")
    L(f"- date: {started:%Y-%m-%d %H:%M %Z} (took {(finished - started).total_seconds() / 60:.1f} min)")
    L(f"- machine: {m['nproc']} CPUs ({m['model']}), {m['memory']}")
    L(f"- hlo-opt: {version}, commit {git_info()}")
    L(f"- base module: {a.module.name}, copied N times under a new entry that calls each copy")
    L(f"- load average (1/5/15 min) before: {load_before[0]:.2f} / {load_before[1]:.2f} / "
      f"{load_before[2]:.2f}, after: {load_after[0]:.2f} / {load_after[1]:.2f} / "
      f"{load_after[2]:.2f}; 1-min load during the run {min(loads):.2f}-{max(loads):.2f} "
      "(the bench itself adds about 1)")
    L(f"- {a.runs} run{'s' if a.runs != 1 else ''} each, interleaved over the sizes; median")
    L("")
    L("Wall clock of the whole command, and in brackets its CPU time (user + sys), which a "
      "loaded machine disturbs less; per instruction: the same over the instruction count.")
    L("")
    L("| size | instructions | text | round trip `--passes ''` | per instruction | peak RSS "
      "| pipeline `--all-computations` | per instruction | peak RSS | pipeline / round trip "
      "| round trip identical |")
    L("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        rt, pl = r["rt"], r["pipeline"]
        n = r["instructions"]
        L(f"| {r['factor']}x | {n:,} | {fmt_mb(r['bytes'])} "
          f"| {fmt_t(rt['wall_s'])} ({fmt_t(rt['cpu_s'])}) "
          f"| {rt['us_per_instr']:.2f} µs ({rt['cpu_s'] / n * 1e6:.2f} µs) "
          f"| {fmt_mb(rt['peak_rss_bytes'])} "
          f"| {fmt_t(pl['wall_s'])} ({fmt_t(pl['cpu_s'])}) "
          f"| {pl['us_per_instr']:.2f} µs ({pl['cpu_s'] / n * 1e6:.2f} µs) "
          f"| {fmt_mb(pl['peak_rss_bytes'])} "
          f"| {pl['wall_s'] / rt['wall_s']:.2f}x | {'yes' if r['roundtrip_identical'] else 'no'} |")
    if slope:
        L("")
        def per(key, what):
            return (hi[key][what] / hi["instructions"]) / (lo[key][what] / lo["instructions"])
        L(f"Growth exponent, {lo['factor']}x to {hi['factor']}x (1.00 is linear), wall (CPU): "
          f"round trip {slope['rt_wall_s']:.2f} ({slope['rt_cpu_s']:.2f}), pipeline "
          f"{slope['pipeline_wall_s']:.2f} ({slope['pipeline_cpu_s']:.2f}); time per instruction "
          f"at {hi['factor']}x over {lo['factor']}x: round trip {per('rt', 'wall_s'):.2f} "
          f"({per('rt', 'cpu_s'):.2f}), pipeline {per('pipeline', 'wall_s'):.2f} "
          f"({per('pipeline', 'cpu_s'):.2f}).")
    return {"date": started.isoformat(), "finished": finished.isoformat(), "machine": m,
            "hlo_opt": {"path": str(hlo_opt), "version": version, "commit": git_info()},
            "module": str(a.module), "factors": factors, "runs": a.runs,
            "load": {"before": load_before, "after": load_after, "samples_1min": loads},
            "rows": rows, "growth_exponent": slope, "samples": samples,
            "markdown": "\n".join(lines)}


if __name__ == "__main__":
    main()
