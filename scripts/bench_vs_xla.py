#!/usr/bin/env python3
"""hlo-opt as a whole command against XLA's own C++ parser and printer.

Measures, interleaved, on the 48-layer GPT train step
(tests/data/large/gpt48_train_f32.opt.hlo.gz, 73 MB of text, 528k
instructions):

  work                 XLA (jaxlib, in-process)           hlo-opt (whole process)
  text round trip      hlo_module_from_text + to_string   --passes '' big.hlo -o out.hlo
  proto -> text        from_serialized_hlo_module_proto   --passes '' big.pb  -o out.hlo
                       + to_string
  text -> proto        hlo_module_from_text               --passes '' big.hlo -o out.pb
                       + as_serialized_hlo_module_proto
  default pipeline     -                                  --all-computations big.hlo -o out.hlo

What is timed, on each side:
  * XLA: only the jaxlib calls, inside a fresh Python process per
    measurement (so no memory or caches carry over from one to the next).
    Python start-up, `import jaxlib`, reading the file and freeing the
    module are NOT charged to XLA; its output is kept in memory, not
    written. The wall clock of that whole Python process is recorded too
    (column "XLA process"), for information only.
  * hlo-opt: the wall clock of the whole command (fork + exec, start-up,
    reading the input, the work, writing the output, exit), plus its
    peak RSS (wait4's ru_maxrss), which is checked against 2x the larger
    of the input and output files.
  Both sides read their input from the page cache (one untimed warm-up
  run of each comes first, and hlo-opt's input is read again, untimed,
  right before each of its runs: on this machine kind the kernel gives
  up cached pages of a file left alone for a few seconds, and XLA's
  worker reads its input before its clock starts). The goal's ratio is XLA's minimum over
  hlo-opt's median (goal >= 20x): the ratio must hold when XLA runs at
  its fastest, and XLA's time moves with the load far more than ours.
  XLA's median over hlo-opt's median is given too. hlo-opt's kernel time
  (sys, from wait4) is given for each path: page faults, reads and
  writes. The pipeline has no XLA counterpart: its row gives its median
  over the text round trip's median (goal <= 1.1x). Fewer than 5 runs
  give no verdict (the pass columns say so).

`--threads 1,2` also runs every hlo-opt work with its CPU affinity cut to
the first 1 (resp. 2) CPUs and checks that the outputs are byte-identical
whatever the count. hlo-opt reads no thread-count variable: it splits work
with std::thread::available_parallelism(), which on Linux follows the
process's affinity mask (sched_getaffinity) and cgroup quota, so the
affinity is what sets its thread count.

The XLA side runs in a venv with jaxlib==0.10.2 (made on first use with
this Python's `venv` and `pip`, reused afterwards; jax itself is only
installed if jaxlib._hlo cannot be imported without it).

`--floor` also builds and runs scripts/text_floor's two programs, each
interleaved with its path: text_floor beside the round trip, the least
work any text round trip does (names, shapes, operands and attribute
texts read into records, printed back, a minimal check), and
proto_floor beside proto -> text, the least any proto reader does
(names, opcodes, shapes, metadata and operand ids walked into records,
printed back). One thread each, no checks of XLA's, no typed values.
Half a floor's CPU time is the best a 2-core command doing that work
could do; XLA's minimum over that is the highest ratio such a command
could show on this machine.

    python3 scripts/bench_vs_xla.py                     # build, 5 runs
    python3 scripts/bench_vs_xla.py --runs 2 --threads 1,2 --json bench.json
    python3 scripts/bench_vs_xla.py --hlo-opt target/release/hlo-opt --venv /tmp/v

Prints a Markdown table (date, machine, load averages, times, ratios,
goals, peak RSS) on standard output; progress goes to standard error.
"""
import argparse
import datetime
import gc
import gzip
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

JAXLIB_VERSION = "0.10.2"
REPO = Path(__file__).resolve().parent.parent
DEFAULT_MODULE = REPO / "tests/data/large/gpt48_train_f32.opt.hlo.gz"
DEFAULT_VENV = Path.home() / ".cache/hlo-opt-bench/venv"

# XLA worker ops: (first call, second call), both timed.
XLA_OPS = {
    "rt": ("hlo_module_from_text", "to_string"),
    "pb2txt": ("from_serialized_hlo_module_proto", "to_string"),
    "txt2pb": ("hlo_module_from_text", "as_serialized_hlo_module_proto"),
}


# --------------------------------------------------------------------------
# The XLA worker: runs in the jaxlib venv, one process per measurement.
# Standard library and jaxlib only.

def xla_worker(op, path):
    import jaxlib
    import jaxlib._hlo as xh

    if op == "warmup":
        m = xh.hlo_module_from_text(
            "HloModule w\n\nENTRY %e (a: f32[2]) -> f32[2] {\n"
            "  ROOT %a = f32[2]{0} parameter(0)\n}\n")
        m.to_string()
        m.as_serialized_hlo_module_proto()
        print(json.dumps({"jaxlib": jaxlib.__version__}))
        return
    if op == "pb2txt":
        data = Path(path).read_bytes()
    else:
        data = Path(path).read_text(encoding="utf-8")
    gc.collect()
    gc.disable()
    c0 = time.process_time()
    t0 = time.perf_counter()
    if op == "pb2txt":
        mod = xh.HloModule.from_serialized_hlo_module_proto(data)
    else:
        mod = xh.hlo_module_from_text(data)
    t1 = time.perf_counter()
    if op == "txt2pb":
        out = mod.as_serialized_hlo_module_proto()
    else:
        out = mod.to_string()  # HloModule::ToString(), default HloPrintOptions
    t2 = time.perf_counter()
    c2 = time.process_time()
    gc.enable()
    print(json.dumps({"op": op, "first_s": t1 - t0, "second_s": t2 - t1,
                      "total_s": t2 - t0, "cpu_s": c2 - c0, "out_len": len(out),
                      "jaxlib": jaxlib.__version__}))


# --------------------------------------------------------------------------
# Helpers shared with bench_growth.py.

def log(*a):
    print(*a, file=sys.stderr, flush=True)


def run_measured(argv, cpus=None, stdout_path=None, env=None):
    """Runs argv to completion (no shell) and returns its wall clock, CPU
    times and peak RSS (from wait4). cpus: a set of CPU ids for the child's
    affinity mask, or None to inherit."""
    errf = tempfile.TemporaryFile()
    out_fd = os.open(stdout_path or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    env = dict(os.environ if env is None else env)
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # child: nothing but set-up and exec
        try:
            if cpus is not None:
                os.sched_setaffinity(0, cpus)
            os.dup2(out_fd, 1)
            os.dup2(errf.fileno(), 2)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    os.close(out_fd)
    errf.seek(0)
    err = errf.read().decode(errors="replace")
    errf.close()
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        raise RuntimeError(f"{' '.join(map(str, argv))} exited {rc}:\n{err[-4000:]}")
    return {"wall_s": wall, "user_s": ru.ru_utime, "sys_s": ru.ru_stime,
            "maxrss_bytes": ru.ru_maxrss * 1024, "stderr": err}


def into_page_cache(path):
    """Reads a file through, so that a run after it reads from the page
    cache (untimed)."""
    with open(path, "rb", buffering=0) as f:
        while f.read(1 << 22):
            pass


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 22)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


def count_instructions(path):
    """Instruction lines of an HLO text module (as XLA prints them: two
    spaces, optional ROOT, then the %name)."""
    n = 0
    pat = re.compile(rb"^  (?:ROOT )?%")
    with open(path, "rb") as f:
        for line in f:
            if pat.match(line):
                n += 1
    return n


def machine_info():
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
                break
    except OSError:
        pass
    return {"nproc": len(os.sched_getaffinity(0)), "cpu_count": os.cpu_count(),
            "model": model, "memory": mem, "kernel": platform.release()}


def load():
    return os.getloadavg()


def git_info():
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + (" (uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "?"


def build_or_find(hlo_opt):
    if hlo_opt:
        p = Path(hlo_opt).resolve()
        if not p.exists():
            sys.exit(f"--hlo-opt {hlo_opt}: no such file")
        return p
    log("building: cargo build --release")
    subprocess.run(["cargo", "build", "--release"], cwd=REPO, check=True,
                   stdout=sys.stderr)
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    if not target.is_absolute():
        target = REPO / target
    return (target / "release" / "hlo-opt").resolve()


def build_floor():
    """The folder of the floor programs, built."""
    log("building scripts/text_floor")
    manifest = REPO / "scripts" / "text_floor" / "Cargo.toml"
    subprocess.run(["cargo", "build", "--release", "--manifest-path", str(manifest)],
                   check=True, stdout=sys.stderr)
    return (REPO / "scripts" / "text_floor" / "target" / "release").resolve()


def unpack(module, work):
    """The module as a plain text file in work (unpacked if .gz)."""
    module = Path(module)
    if module.name.endswith(".gz"):
        dst = work / "big.hlo"
        log(f"unpacking {module} -> {dst}")
        with gzip.open(module, "rb") as src, open(dst, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 22)
        return dst
    return module.resolve()


def fmt_t(t):
    return f"{t:.2f} s" if t >= 1 else f"{t * 1e3:.0f} ms"


def fmt_s(xs):
    return f"{fmt_t(statistics.median(xs))} (min {fmt_t(min(xs))})"


def fmt_mb(b):
    return f"{b / 1e6:.0f} MB"


# --------------------------------------------------------------------------
# The venv.

def venv_python(venv):
    return venv / "bin" / "python"


def jaxlib_ok(py):
    r = subprocess.run([str(py), "-c", "import jaxlib, jaxlib._hlo; print(jaxlib.__version__)"],
                       capture_output=True, text=True)
    return r.returncode == 0 and r.stdout.strip() == JAXLIB_VERSION


def ensure_venv(venv):
    py = venv_python(venv)
    if py.exists() and jaxlib_ok(py):
        return py
    if not py.exists():
        log(f"making venv {venv}")
        venv.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    log(f"pip install jaxlib=={JAXLIB_VERSION} into {venv}")
    subprocess.run([str(py), "-m", "pip", "install", "--quiet",
                    f"jaxlib=={JAXLIB_VERSION}"], check=True, stdout=sys.stderr)
    if not jaxlib_ok(py):
        log(f"jaxlib._hlo does not import alone; pip install jax=={JAXLIB_VERSION}")
        subprocess.run([str(py), "-m", "pip", "install", "--quiet",
                        f"jax=={JAXLIB_VERSION}", f"jaxlib=={JAXLIB_VERSION}"],
                       check=True, stdout=sys.stderr)
    if not jaxlib_ok(py):
        sys.exit(f"{py}: cannot import jaxlib._hlo {JAXLIB_VERSION}")
    return py


# --------------------------------------------------------------------------
# The bench.

WORKS = [
    # key, label, input, output, hlo-opt args, xla op
    ("rt", "text round trip `--passes '' big.hlo -o out.hlo`", "hlo", "hlo", ["--passes", ""], "rt"),
    ("pb2txt", "proto -> text `--passes '' big.pb -o out.hlo`", "pb", "hlo", ["--passes", ""], "pb2txt"),
    ("txt2pb", "text -> proto `--passes '' big.hlo -o out.pb`", "hlo", "pb", ["--passes", ""], "txt2pb"),
    ("pipeline", "default pipeline `--all-computations big.hlo -o out.hlo`", "hlo", "hlo",
     ["--all-computations"], None),
]
# The floor program beside a work, and its input (see --floor).
FLOORS = {"rt": ("text_floor", "hlo"), "pb2txt": ("proto_floor", "pb")}
SPEED_GOAL = 20.0
PIPELINE_GOAL = 1.1
MIN_RUNS_FOR_VERDICT = 5
RSS_GOAL = 2.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="measurements of each work on each side")
    ap.add_argument("--venv", type=Path, default=DEFAULT_VENV,
                    help=f"venv with jaxlib=={JAXLIB_VERSION} (made if missing)")
    ap.add_argument("--hlo-opt", help="use this binary instead of `cargo build --release`")
    ap.add_argument("--module", type=Path, default=DEFAULT_MODULE, help="HLO text (.hlo or .hlo.gz)")
    ap.add_argument("--threads", help="also run hlo-opt on this many CPUs each, e.g. 1,2, "
                                      "and check the outputs are byte-identical")
    ap.add_argument("--floor", action="store_true",
                    help="also run scripts/text_floor beside the round trip (see above)")
    ap.add_argument("--json", type=Path, help="write the raw numbers here")
    ap.add_argument("--work-dir", type=Path, help="keep the files here (default: a temp dir, removed)")
    ap.add_argument("--xla-worker", nargs=2, metavar=("OP", "FILE"), help=argparse.SUPPRESS)
    a = ap.parse_args()

    if a.xla_worker:
        return xla_worker(*a.xla_worker)

    threads = [int(t) for t in a.threads.split(",")] if a.threads else []
    allowed = sorted(os.sched_getaffinity(0))
    for t in threads:
        if t < 1 or t > len(allowed):
            sys.exit(f"--threads {t}: this process may use {len(allowed)} CPUs")

    py = ensure_venv(a.venv.expanduser())
    hlo_opt = build_or_find(a.hlo_opt)
    version = subprocess.run([str(hlo_opt), "--version"], capture_output=True,
                             text=True).stdout.strip()

    own_dir = a.work_dir is None
    work = Path(tempfile.mkdtemp(prefix="hlo-opt-bench-")) if own_dir else a.work_dir
    work.mkdir(parents=True, exist_ok=True)
    try:
        report = bench(a, py, hlo_opt, version, work, threads, allowed)
    finally:
        if own_dir:
            shutil.rmtree(work, ignore_errors=True)
    print(report["markdown"])
    if a.json:
        a.json.write_text(json.dumps({k: v for k, v in report.items() if k != "markdown"},
                                     indent=1) + "\n")
        log(f"wrote {a.json}")


def bench(a, py, hlo_opt, version, work, threads, allowed):
    started = datetime.datetime.now().astimezone()
    load_before = load()
    loads = [load_before[0]]
    big_hlo = unpack(a.module, work)
    big_pb = work / "big.pb"
    log("making big.pb with hlo-opt (also the warm-up)")
    run_measured([str(hlo_opt), "--passes", "", str(big_hlo), "-o", str(big_pb)])
    inputs = {"hlo": big_hlo, "pb": big_pb}
    n_instr = count_instructions(big_hlo)
    log("warming up jaxlib")
    warm = run_measured([str(py), __file__, "--xla-worker", "warmup", "-"],
                        stdout_path=str(work / "xla.json"))
    jaxlib_version = json.loads((work / "xla.json").read_text())["jaxlib"]

    samples = []   # every measurement
    hashes = {}    # (work, threads) -> set of sha256 of the outputs
    floor = build_floor() if a.floor else None

    def floor_run(key, run):
        program, src = FLOORS[key]
        out = work / f"out-floor-{key}.hlo"
        if out.exists():
            out.unlink()
        into_page_cache(inputs[src])
        r = run_measured([str(floor / program), str(inputs[src]), str(out)])
        r.update(side="floor", work=key, run=run, phases=r.pop("stderr").strip(),
                 load1=load()[0])
        samples.append(r)
        loads.append(r["load1"])
        log(f"  run {run} floor   {key:8s} {r['wall_s']:.2f} s (cpu {r['user_s'] + r['sys_s']:.2f} s)")

    def hlo_opt_run(key, run, cpus_n):
        _, _, src, dst, args, _ = next(w for w in WORKS if w[0] == key)
        out = work / f"out-{key}-{cpus_n or 'all'}.{dst}"
        if out.exists():
            out.unlink()
        cpus = set(allowed[:cpus_n]) if cpus_n else None
        into_page_cache(inputs[src])
        r = run_measured([str(hlo_opt), *args, str(inputs[src]), "-o", str(out)], cpus=cpus)
        r.pop("stderr")
        r.update(side="hlo-opt", work=key, run=run, threads=cpus_n or len(allowed),
                 affinity_cut=bool(cpus_n), in_bytes=inputs[src].stat().st_size,
                 out_bytes=out.stat().st_size, sha256=sha256(out),
                 load1=load()[0])
        hashes.setdefault((key, cpus_n or 0), set()).add(r["sha256"])
        samples.append(r)
        loads.append(r["load1"])
        log(f"  run {run} hlo-opt {key:8s} cpus={cpus_n or 'all'} {r['wall_s']:.2f} s "
            f"rss {fmt_mb(r['maxrss_bytes'])} load {r['load1']:.2f}")

    def xla_run(key, run):
        op = next(w for w in WORKS if w[0] == key)[5]
        src = inputs["pb" if op == "pb2txt" else "hlo"]
        res = work / "xla.json"
        r = run_measured([str(py), __file__, "--xla-worker", op, str(src)],
                         stdout_path=str(res))
        r.pop("stderr")
        inner = json.loads(res.read_text())
        r = {"side": "xla", "work": key, "run": run, "process_wall_s": r["wall_s"],
             "process_maxrss_bytes": r["maxrss_bytes"], **inner, "load1": load()[0]}
        samples.append(r)
        loads.append(r["load1"])
        log(f"  run {run} XLA     {key:8s} {r['total_s']:.2f} s in-process "
            f"({r['first_s']:.2f} + {r['second_s']:.2f}), process {r['process_wall_s']:.2f} s "
            f"load {r['load1']:.2f}")

    log("warm-up run of every hlo-opt work")
    for w in WORKS:
        hlo_opt_run(w[0], -1, None)
    samples.clear()

    for run in range(a.runs):
        for key, _, _, _, _, op in WORKS:
            sides = ["xla", "hlo-opt"] if op else ["hlo-opt"]
            if run % 2:
                sides.reverse()  # alternate who goes first
            if floor and key in FLOORS:
                sides.append("floor")
            for side in sides:
                if side == "floor":
                    floor_run(key, run)
                elif side == "xla":
                    xla_run(key, run)
                else:
                    hlo_opt_run(key, run, None)
                    for t in threads:
                        hlo_opt_run(key, run, t)
    load_after = load()
    finished = datetime.datetime.now().astimezone()

    def pick(side, key, field, affinity_cut=False, threads_n=None):
        return [s[field] for s in samples if s["side"] == side and s["work"] == key
                and (side == "xla" or s["affinity_cut"] == affinity_cut)
                and (threads_n is None or s["threads"] == threads_n)]

    rows = []
    rt_med = statistics.median(pick("hlo-opt", "rt", "wall_s"))
    for key, label, src, dst, _, op in WORKS:
        ours = pick("hlo-opt", key, "wall_s")
        rss = max(pick("hlo-opt", key, "maxrss_bytes"))
        io = max(pick("hlo-opt", key, "in_bytes")[0], pick("hlo-opt", key, "out_bytes")[0])
        row = {"work": key, "label": label, "hlo_opt_wall_s": ours,
               "hlo_opt_cpu_s": [u + s for u, s in zip(pick("hlo-opt", key, "user_s"),
                                                      pick("hlo-opt", key, "sys_s"))],
               "hlo_opt_sys_s": pick("hlo-opt", key, "sys_s"),
               "peak_rss_bytes": rss, "rss_limit_bytes": RSS_GOAL * io,
               "rss_ok": rss <= RSS_GOAL * io,
               "deterministic": len(hashes[(key, 0)]) == 1}
        if op:
            xla = pick("xla", key, "total_s")
            row.update(xla_s=xla, xla_process_s=pick("xla", key, "process_wall_s"),
                       xla_cpu_s=pick("xla", key, "cpu_s"),
                       xla_first_s=pick("xla", key, "first_s"),
                       xla_second_s=pick("xla", key, "second_s"),
                       ratio_median=statistics.median(xla) / statistics.median(ours),
                       ratio=min(xla) / statistics.median(ours),
                       goal=f">= {SPEED_GOAL:g}x")
            row["ok"] = row["ratio"] >= SPEED_GOAL
        else:
            row.update(ratio=statistics.median(ours) / rt_med,
                       goal=f"<= {PIPELINE_GOAL:g}x the round trip")
            row["ok"] = row["ratio"] <= PIPELINE_GOAL
        rows.append(row)

    thread_rows = []
    for key, label, *_ in WORKS:
        if not threads:
            break
        ref = hashes[(key, 0)]
        all_h = set(ref)
        per = {}
        for t in threads:
            all_h |= hashes[(key, t)]
            per[t] = {"wall_s": pick("hlo-opt", key, "wall_s", True, t),
                      "cpu_s": [u + s for u, s in zip(pick("hlo-opt", key, "user_s", True, t),
                                                     pick("hlo-opt", key, "sys_s", True, t))]}
        thread_rows.append({"work": key, "label": label, "per_threads": per,
                            "identical": len(all_h) == 1})

    m = machine_info()
    lines = []
    L = lines.append
    L(f"## hlo-opt (whole process) vs XLA (jaxlib {jaxlib_version}, in-process)")
    L("")
    L(f"- date: {started:%Y-%m-%d %H:%M %Z} (took {(finished - started).total_seconds() / 60:.1f} min)")
    L(f"- machine: {m['nproc']} CPUs ({m['model']}), {m['memory']}, Linux {m['kernel']}")
    L(f"- hlo-opt: {version}, commit {git_info()}")
    L(f"- module: {a.module.name} ({big_hlo.stat().st_size / 1e6:.1f} MB text, "
      f"{big_pb.stat().st_size / 1e6:.1f} MB proto, {n_instr:,} instructions)")
    L(f"- load average (1/5/15 min) before: {load_before[0]:.2f} / {load_before[1]:.2f} / "
      f"{load_before[2]:.2f}, after: {load_after[0]:.2f} / {load_after[1]:.2f} / "
      f"{load_after[2]:.2f}; 1-min load during the run {min(loads):.2f}-{max(loads):.2f} "
      "(the bench itself adds about 1)")
    L(f"- {a.runs} run{'s' if a.runs != 1 else ''} each, interleaved; median (min). XLA: the jaxlib calls only, timed "
      "inside a fresh Python process each (no start-up, import, file reading or writing); "
      "XLA process: that whole Python process. hlo-opt: wall clock of the whole command; "
      "hlo-opt CPU: its user + sys time (median), for reading a loaded machine; sys: its "
      "kernel time (median). Ratio: XLA's minimum over hlo-opt's median (the goal's); "
      "in brackets XLA's median over hlo-opt's median.")
    verdict = a.runs >= MIN_RUNS_FOR_VERDICT

    def passed(ok):
        if not verdict:
            return f"({'yes' if ok else 'no'}: < {MIN_RUNS_FOR_VERDICT} runs)"
        return "yes" if ok else "**no**"

    L("")
    L("| work | XLA (in-process) | XLA process | hlo-opt (whole process) | hlo-opt CPU | hlo-opt sys "
      "| ratio | goal | pass | hlo-opt peak RSS | 2x max(in, out) | RSS pass |")
    L("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "xla_s" in r:
            xla, proc = fmt_s(r["xla_s"]), fmt_s(r["xla_process_s"])
            ratio = f"{r['ratio']:.1f}x ({r['ratio_median']:.1f}x)"
        else:
            xla, proc, ratio = "-", "-", f"{r['ratio']:.2f}x the round trip"
        L(f"| {r['label']} | {xla} | {proc} | {fmt_s(r['hlo_opt_wall_s'])} "
          f"| {fmt_t(statistics.median(r['hlo_opt_cpu_s']))} "
          f"| {fmt_t(statistics.median(r['hlo_opt_sys_s']))} | {ratio} | {r['goal']} "
          f"| {passed(r['ok'])} | {fmt_mb(r['peak_rss_bytes'])} "
          f"| {fmt_mb(r['rss_limit_bytes'])} | {passed(r['rss_ok'])} |")
    pipe = next(r for r in rows if r["work"] == "pipeline")
    share = 1 - rt_med / statistics.median(pipe["hlo_opt_wall_s"])
    L("")
    L(f"The pipeline's share of the pipeline command (beyond the round trip): {share:.0%}. "
      f"Outputs the same on every run: {'yes' if all(r['deterministic'] for r in rows) else '**no**'}.")
    floor_rows = []
    for key in FLOORS if floor else []:
        mine = [s for s in samples if s["side"] == "floor" and s["work"] == key]
        cpu = [s["user_s"] + s["sys_s"] for s in mine]
        best = statistics.median(cpu) / 2
        xla_min = min(pick("xla", key, "total_s"))
        row = next(r for r in rows if r["work"] == key)
        floor_rows.append({"work": key, "program": FLOORS[key][0], "cpu_s": cpu,
                           "wall_s": [s["wall_s"] for s in mine],
                           "sys_s": [s["sys_s"] for s in mine],
                           "best_two_cores_s": best, "ratio_at_best": xla_min / best})
        L("")
        L(f"The floor of {row['label'].split(' `')[0]} (scripts/text_floor's {FLOORS[key][0]}, "
          f"one thread): wall {fmt_s(floor_rows[-1]['wall_s'])}, CPU "
          f"{fmt_t(statistics.median(cpu))} (sys {fmt_t(statistics.median(floor_rows[-1]['sys_s']))}), "
          f"against hlo-opt's {fmt_t(statistics.median(row['hlo_opt_cpu_s']))} "
          f"({statistics.median(row['hlo_opt_cpu_s']) / statistics.median(cpu):.1f}x). Split "
          f"perfectly over 2 cores it would take {fmt_t(best)}: XLA's minimum over that is "
          f"{xla_min / best:.1f}x, the most a command doing at least that work could show here.")
    if thread_rows:
        L("")
        L("hlo-opt with its CPU affinity cut to N CPUs (it sizes its thread pool from "
          "available_parallelism): wall (CPU), median")
        L("")
        L("| work | " + " | ".join(f"{t} CPU{'s' if t > 1 else ''}" for t in threads)
          + " | outputs byte-identical |")
        L("|---|" + "---|" * len(threads) + "---|")
        for tr in thread_rows:
            cells = [f"{fmt_t(statistics.median(tr['per_threads'][t]['wall_s']))} "
                     f"({fmt_t(statistics.median(tr['per_threads'][t]['cpu_s']))})" for t in threads]
            L(f"| {tr['label']} | " + " | ".join(cells)
              + f" | {'yes' if tr['identical'] else '**no**'} |")
    return {"date": started.isoformat(), "finished": finished.isoformat(), "machine": m,
            "hlo_opt": {"path": str(hlo_opt), "version": version, "commit": git_info()},
            "jaxlib": jaxlib_version, "python_venv": str(py),
            "module": {"file": str(a.module), "text_bytes": big_hlo.stat().st_size,
                       "proto_bytes": big_pb.stat().st_size, "instructions": n_instr},
            "runs": a.runs, "threads": threads,
            "load": {"before": load_before, "after": load_after, "samples_1min": loads},
            "xla_warmup_process_s": warm["wall_s"],
            "rows": rows, "thread_rows": thread_rows, "floors": floor_rows, "samples": samples,
            "markdown": "\n".join(lines)}


if __name__ == "__main__":
    main()
