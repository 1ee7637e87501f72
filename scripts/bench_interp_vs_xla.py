#!/usr/bin/env python3
"""`hlo-opt eval` (the reference interpreter) against XLA:CPU executing the
same module on the same inputs.

For each module:
  * the inputs: drawn once with numpy (seed 0; floats N(0,1), integers in
    [0, 8), pred a fair coin, as `hlo-opt eval`'s seeded inputs), written
    as a stored (uncompressed) .npz the way numpy.savez writes it (bf16 and
    the 8-bit floats bit-stored with the sidecar .json `hlo-opt` reads);
  * XLA: a worker process (jaxlib) compiles the HLO text once on the CPU
    client (text -> HloModule -> MLIR -> compile_and_load, as
    scripts/gen_interp_refs.py does), puts the inputs on the device, and
    then times `execute` + waiting for the results, one run per request;
  * hlo-opt: `hlo-opt eval --time --inputs in.npz MODULE`, whose "evaluated
    in" line is the evaluation alone (no parsing, input reading or output
    writing; those are in the whole-process wall clock, reported too).
The runs alternate (XLA, hlo-opt, XLA, ...) after one untimed warm-up of
each, so a change in the machine's load hits both sides. The ratio is
hlo-opt's median evaluation over XLA's median execution. A module XLA:CPU
cannot compile or run (Neuron custom calls, CUDA-only calls, several
devices) or the interpreter refuses is listed as skipped with the reason.
The outputs are also compared (largest absolute difference), as a check
that both ran the same computation.

Needs a Python with jax/jaxlib 0.10.2 for the worker (--xla-python; default
target/py-venv/bin/python of this checkout or of /work/main).

    python3 scripts/bench_interp_vs_xla.py                     # the default set
    python3 scripts/bench_interp_vs_xla.py --runs 5 tests/data/large/gpt48_fwd_f32.hlo
    python3 scripts/bench_interp_vs_xla.py --json out.json --goal-large 2 --goal 4

Prints a Markdown table (date, machine, load averages, medians, ratios) on
standard output; progress goes to standard error.
"""
import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LARGE = REPO / "tests/data/large/gpt48_fwd_f32.hlo"


def default_modules():
    mods = [LARGE]
    for frontend in ("jax", "torch", "debuginfo"):
        mods += sorted((REPO / "tests/data/frontend" / frontend).glob("*.hlo"))
    mods += sorted(p for p in (REPO / "tests/data/corpus").glob("*.hlo")
                   if ".opt." not in p.name and not p.name.endswith(".short.hlo"))
    return mods


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- worker
# Runs in the jax Python: reads one JSON request per line, answers one line.

WORKER = r'''
import json, sys, time, os
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import numpy as np
import jax
from jax._src.lib import _jax
import jaxlib._hlo as hlo
jax.config.update("jax_enable_x64", True)  # else device_put narrows 64-bit inputs
import ml_dtypes

BITS = {"bf16": ml_dtypes.bfloat16, "f8e4m3fn": ml_dtypes.float8_e4m3fn,
        "f8e5m2": ml_dtypes.float8_e5m2, "f8e8m0fnu": ml_dtypes.float8_e8m0fnu,
        "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
        "f8e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz, "f8e3m4": ml_dtypes.float8_e3m4,
        "f8e4m3": ml_dtypes.float8_e4m3}

def out(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()

ex = None; args = None; dev = None
for line in sys.stdin:
    req = json.loads(line)
    try:
        if req["op"] == "load":
            text = open(req["module"]).read()
            m = hlo.hlo_module_from_text(text)
            comp = hlo.XlaComputation(m.as_serialized_hlo_module_proto())
            shapes = comp.program_shape().parameter_shapes()
            rng = np.random.default_rng(0)
            ins, side = [], {}
            for i, s in enumerate(shapes):
                if s.is_tuple():
                    raise ValueError(f"parameter {i} is a tuple")
                dt = np.dtype(s.numpy_dtype()); dims = tuple(s.dimensions())
                if dt == np.bool_:
                    a = rng.integers(0, 2, dims).astype(np.bool_)
                elif dt.kind in "iu":
                    a = rng.integers(0, 8, dims).astype(dt)
                elif dt.kind == "c":
                    a = (rng.standard_normal(dims) + 1j * rng.standard_normal(dims)).astype(dt)
                else:
                    a = rng.standard_normal(dims).astype(np.float64).astype(dt)
                ins.append(np.asarray(a))
            stored = {}
            for i, a in enumerate(ins):
                ty = None
                for k, v in BITS.items():
                    if np.dtype(v) == a.dtype:
                        ty = k
                if ty:
                    side[f"in{i}"] = ty
                    a = a.view(np.uint8 if a.dtype.itemsize == 1 else np.uint16)
                stored[f"in{i}"] = a
            np.savez(req["npz"], **stored)  # stored, not compressed
            sp = req["npz"][:-4] + ".json"
            if side:
                json.dump(side, open(sp, "w"))
            elif os.path.exists(sp):
                os.unlink(sp)
            mlir = _jax.mlir.xla_computation_to_mlir_module(comp)
            dev = jax.devices("cpu")[:1]
            t0 = time.perf_counter()
            ex = dev[0].client.compile_and_load(mlir, dev, _jax.CompileOptions())
            compile_s = time.perf_counter() - t0
            out({"ok": True, "compile_s": compile_s})
        elif req["op"] == "run":
            # Fresh device buffers each run (untimed): a module may donate
            # its inputs, which the run then deletes.
            args = [jax.device_put(a, dev[0]) for a in ins]
            for a in args:
                a.block_until_ready()
            t0 = time.perf_counter()
            res = ex.execute(args)
            for r in res:
                r.block_until_ready()
            dt = time.perf_counter() - t0
            if req.get("save"):
                outs = [np.asarray(r) for r in res]
                np.savez(req["save"], **{f"out{i}": (o.view(np.uint16) if o.dtype == ml_dtypes.bfloat16 else o) for i, o in enumerate(outs)})
            out({"ok": True, "s": dt})
    except Exception as e:
        out({"ok": False, "error": f"{type(e).__name__}: {e}"[:300]})
'''


class Worker:
    def __init__(self, python):
        self.p = subprocess.Popen([python, "-c", WORKER], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True,
                                  env=dict(os.environ, JAX_PLATFORMS="cpu",
                                           TF_CPP_MIN_LOG_LEVEL="3"))

    def ask(self, **req):
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            return {"ok": False, "error": "the XLA worker died"}
        return json.loads(line)

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def run_hlo_opt(hlo_opt, module, npz, out):
    t0 = time.perf_counter()
    r = subprocess.run([hlo_opt, "eval", "--time", "--inputs", str(npz), "-o", str(out),
                        str(module)], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        return None, wall, (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
    m = re.search(r"evaluated in ([0-9.]+) s", r.stderr)
    return float(m.group(1)), wall, None


def max_diff(python, a, b):
    code = ("import numpy as np, sys\n"
            "a=np.load(sys.argv[1]); b=np.load(sys.argv[2]); d=0.0\n"
            "for k in b.files:\n"
            "  x=a[k]; y=b[k]\n"
            "  if x.dtype==np.uint16 or y.dtype==np.uint16:\n"
            "    import ml_dtypes; x=x.view(ml_dtypes.bfloat16) if x.dtype==np.uint16 else x; "
            "y=y.view(ml_dtypes.bfloat16) if y.dtype==np.uint16 else y\n"
            "  x=x.astype(np.float64) if x.dtype.kind!='c' else x; y=y.astype(np.float64) if y.dtype.kind!='c' else y\n"
            "  f=np.isfinite(x)&np.isfinite(y)\n"
            "  d=max(d, float(np.max(np.abs(x[f]-y[f]), initial=0.0)))\n"
            "print(d)\n")
    r = subprocess.run([python, "-c", code, str(a), str(b)], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else "?"


def fmt_s(s):
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("modules", nargs="*", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--hlo-opt", default=str(REPO / "target/release/hlo-opt"))
    ap.add_argument("--xla-python", default=None)
    ap.add_argument("--goal-large", type=float, default=2.0,
                    help="largest ratio allowed on gpt48_fwd_f32.hlo")
    ap.add_argument("--goal", type=float, default=4.0,
                    help="largest ratio allowed on every other module")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    py = a.xla_python
    if py is None:
        for c in (REPO / "target/py-venv/bin/python", Path("/work/main/target/py-venv/bin/python")):
            if c.exists():
                py = str(c)
                break
    if py is None:
        sys.exit("no Python with jax 0.10.2: pass --xla-python")
    mods = a.modules or default_modules()
    rows, results = [], []
    worker = Worker(py)
    tmp = Path(tempfile.mkdtemp(prefix="bench-interp-"))
    for mod in mods:
        name = mod.name
        npz = tmp / "in.npz"
        log(f"{name}: compiling on XLA:CPU")
        r = worker.ask(op="load", module=str(mod.resolve()), npz=str(npz))
        if not r["ok"]:
            results.append({"module": name, "skipped": "XLA: " + r["error"]})
            if "worker died" in r["error"]:
                worker = Worker(py)
            continue
        # warm-up, and the outputs for the check
        w = worker.ask(op="run", save=str(tmp / "xla.npz"))
        ev, wall, e = run_hlo_opt(a.hlo_opt, mod, npz, tmp / "ours.npz")
        if not w["ok"] or e:
            results.append({"module": name,
                            "skipped": ("XLA: " + w["error"]) if not w["ok"] else "hlo-opt: " + e})
            continue
        diff = max_diff(py, tmp / "ours.npz", tmp / "xla.npz")
        xs, es, ws = [], [], []
        for _ in range(a.runs):
            w = worker.ask(op="run")
            ev, wall, e = run_hlo_opt(a.hlo_opt, mod, npz, tmp / "ours.npz")
            if not w["ok"] or e:
                break
            xs.append(w["s"])
            es.append(ev)
            ws.append(wall)
        if len(xs) < a.runs:
            results.append({"module": name, "skipped": "a timed run failed: " +
                            (w.get("error") or e or "?")})
            continue
        x, ev, wall = statistics.median(xs), statistics.median(es), statistics.median(ws)
        goal = a.goal_large if mod.name == LARGE.name else a.goal
        ratio = ev / x
        res = {"module": name, "xla_s": x, "eval_s": ev, "process_s": wall, "ratio": ratio,
               "goal": goal, "pass": ratio <= goal, "max_abs_diff": diff,
               "xla_runs": xs, "eval_runs": es}
        results.append(res)
        log(f"  XLA {fmt_s(x)}  eval {fmt_s(ev)}  ratio {ratio:.2f}x (goal {goal}x)  diff {diff}")
    worker.close()

    now = datetime.datetime.now(datetime.timezone.utc)
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    print(f"## Interpreter against XLA:CPU, {now:%Y-%m-%d %H:%M} UTC ({commit})\n")
    print(f"`python3 scripts/bench_interp_vs_xla.py --runs {a.runs}`; {platform.machine()}, "
          f"{os.cpu_count()} CPUs, load averages {' '.join(f'{v:.2f}' for v in os.getloadavg())} "
          "at the end (the machine is shared).\n")
    print("| module | XLA execute | hlo-opt eval | ratio | goal | pass | hlo-opt process | max abs diff |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        if "skipped" in r:
            continue
        print(f"| {r['module']} | {fmt_s(r['xla_s'])} | {fmt_s(r['eval_s'])} | {r['ratio']:.2f}x "
              f"| {r['goal']:g}x | {'yes' if r['pass'] else 'NO'} | {fmt_s(r['process_s'])} "
              f"| {r['max_abs_diff']} |")
    skipped = [r for r in results if "skipped" in r]
    if skipped:
        print("\nSkipped:\n")
        for r in skipped:
            print(f"- {r['module']}: {r['skipped']}")
    ran = [r for r in results if "ratio" in r]
    if ran:
        print(f"\nMedian ratio {statistics.median(r['ratio'] for r in ran):.2f}x over {len(ran)} "
              f"modules; {sum(not r['pass'] for r in ran)} beyond their goal.")
    if a.json:
        a.json.write_text(json.dumps({"date": now.isoformat(), "commit": commit,
                                      "results": results}, indent=1))


if __name__ == "__main__":
    main()
