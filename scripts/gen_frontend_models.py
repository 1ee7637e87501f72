#!/usr/bin/env python3
"""Real HLO modules from PyTorch/XLA and JAX/Flax, with their softmax counts.

Builds tests/data/frontend/{torch,jax}/*.hlo, MANIFEST.json and README.md:
small models (hidden 32, 2 heads, seq 8, batch 2, 1-2 layers, vocab 64)
whose softmax count is known from the model code, lowered by the real
front ends. The two front ends need conflicting pins, so each gets its own
venv (made here, under --venv-dir, outside the repository by default):

    python3 scripts/gen_frontend_models.py                 # everything
    python3 scripts/gen_frontend_models.py --frontend jax  # one side
    python3 scripts/gen_frontend_models.py --only torch_mha_f32_train
    python3 scripts/gen_frontend_models.py --list          # the cases
    python3 scripts/gen_frontend_models.py --check         # run hlo-opt on them

The cases themselves are in gen_frontend_models_torch.py (run in the torch
venv, one process per case) and gen_frontend_models_jax.py (the jax venv).
Nothing is downloaded but the pinned wheels: the models are random-init from
a config, HF_HUB_OFFLINE=1. Only standard-library Python here.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "scripts"
DEFAULT_OUT = REPO / "tests" / "data" / "frontend"
DEFAULT_VENVS = Path.home() / ".cache" / "hlo-opt-frontends"

# torch-xla 2.9.0 is built against torch 2.9.0: the same patch release.
# The PyPI torch wheel is the CUDA build (it pulls nvidia-* wheels); it runs
# on the CPU all the same, and torch-xla brings its own CPU PJRT client.
TORCH_PINS = ["torch==2.9.0", "torch-xla==2.9.0"]
# transformers 4.57 is the last line with the Flax models.
JAX_PINS = ["jax==0.10.2", "jaxlib==0.10.2", "flax==0.12.8",
            "transformers==4.57.6"]
FREEZE_NAMES = {"torch", "torch-xla", "torch_xla", "jax", "jaxlib", "flax",
                "transformers", "numpy", "ml_dtypes", "ml-dtypes"}

SIDES = {
    "torch": dict(pins=TORCH_PINS, helper="gen_frontend_models_torch.py",
                  frontend="pytorch/xla"),
    "jax": dict(pins=JAX_PINS, helper="gen_frontend_models_jax.py",
                frontend="jax"),
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def venv_python(venv_dir, side):
    return venv_dir / side / "bin" / "python"


def ensure_venv(venv_dir, side, install):
    """Make venv_dir/side with the side's pins, unless it already has them."""
    py = venv_python(venv_dir, side)
    stamp = venv_dir / side / "hlo-opt-pins.txt"
    want = "\n".join(SIDES[side]["pins"]) + "\n"
    if py.exists() and stamp.exists() and stamp.read_text() == want:
        return py
    if not install:
        sys.exit(f"{venv_dir / side}: no venv with the pins {SIDES[side]['pins']} "
                 "(run without --no-install)")
    log(f"making venv {venv_dir / side} with {' '.join(SIDES[side]['pins'])}")
    (venv_dir).mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv_dir / side)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--upgrade", "pip"],
                   check=True)
    subprocess.run([str(py), "-m", "pip", "install", *SIDES[side]["pins"]],
                   check=True)
    stamp.write_text(want)
    return py


def freeze(py):
    out = subprocess.run([str(py), "-m", "pip", "freeze"], check=True,
                         capture_output=True, text=True).stdout
    keep = []
    for line in out.splitlines():
        name = re.split(r"[=<> @]", line, maxsplit=1)[0].lower()
        if name in FREEZE_NAMES:
            keep.append(line)
    return keep


def side_env():
    env = dict(os.environ)
    env.update(PJRT_DEVICE="CPU", JAX_PLATFORMS="cpu", HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", PYTHONHASHSEED="0")
    env.pop("XLA_FLAGS", None)  # the torch helper sets its own dump flags
    return env


def list_side(py, side):
    out = subprocess.run([str(py), str(SCRIPTS / SIDES[side]["helper"]), "--list"],
                         check=True, capture_output=True, text=True,
                         env=side_env()).stdout
    return json.loads(out.strip().splitlines()[-1])


def record(side, c, versions, extra=None):
    r = dict(file=f"{side}/{c['name']}.hlo", frontend=SIDES[side]["frontend"],
             versions=versions, description=c["description"],
             softmax_fwd=c["softmax_fwd"], softmax_bwd=c["softmax_bwd"],
             log_softmax=c["log_softmax"], in_loop_body=c["in_loop_body"],
             notes=c["notes"])
    r.update(extra or {})
    return r


def check_expect(path, patterns):
    """The helpers' sanity checks on the form (never the counts)."""
    text = path.read_text()
    return [p for p in patterns if not re.search(p, text)]


def gen_torch(py, out, only, records, dropped):
    (out / "torch").mkdir(parents=True, exist_ok=True)
    for c in list_side(py, "torch"):
        if only and c["name"] not in only:
            continue
        dest = out / "torch" / f"{c['name']}.hlo"
        t = time.time()
        p = subprocess.run([str(py), str(SCRIPTS / SIDES["torch"]["helper"]),
                            "--case", c["name"], "--out", str(dest)],
                           capture_output=True, text=True, env=side_env())
        if p.returncode != 0:
            reason = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
            log(f"  {c['name']}: FAILED: {reason}")
            dropped[c["name"]] = reason
            dest.unlink(missing_ok=True)
            continue
        info = json.loads(p.stdout.strip().splitlines()[-1])
        missing = check_expect(dest, c.get("expect", []))
        if missing:
            reason = f"the HLO lacks the expected form {missing}"
            log(f"  {c['name']}: FAILED: {reason}")
            dropped[c["name"]] = reason
            dest.unlink(missing_ok=True)
            continue
        extra = dict(graphs_dumped=len(info["graphs"]), graph=info["picked"])
        records[c["name"]] = record(
            "torch", c, dict(torch=info["torch"], torch_xla=info["torch_xla"]), extra)
        log(f"  {c['name']}: {dest.stat().st_size} bytes, "
            f"{len(info['graphs'])} graph(s), {time.time() - t:.1f} s")


def gen_jax(py, out, only, records, dropped):
    cases = {c["name"]: c for c in list_side(py, "jax")}
    names = [n for n in cases if not only or n in only]
    if not names:
        return
    (out / "jax").mkdir(parents=True, exist_ok=True)
    p = subprocess.run([str(py), str(SCRIPTS / SIDES["jax"]["helper"]),
                        "--out", str(out / "jax"), "--only", *names],
                       stdout=subprocess.PIPE, text=True, env=side_env())
    if p.returncode != 0:
        sys.exit("the jax helper failed (see above)")
    for d in json.loads(p.stdout.strip().splitlines()[-1]):
        c = cases[d["name"]]
        dest = out / "jax" / f"{c['name']}.hlo"
        missing = check_expect(dest, c.get("expect", []))
        if missing:
            dropped[c["name"]] = f"the HLO lacks the expected form {missing}"
            dest.unlink(missing_ok=True)
            continue
        records[c["name"]] = record("jax", c, d["versions"])
    for n in names:
        if n not in records and n not in dropped:
            dropped[n] = "the jax helper wrote no module"


def yes_no(b):
    return "yes" if b else "no"


def write_readme(out, manifest):
    rows = []
    for r in manifest["cases"]:
        rows.append(f"| `{r['file']}` | {r['softmax_fwd']} | {r['softmax_bwd']} | "
                    f"{r['log_softmax']} | {yes_no(r['in_loop_body'])} | "
                    f"{(out / r['file']).stat().st_size} |")
    dropped = manifest.get("dropped", {})
    drop_text = ("\n".join(f"- `{n}`: {why}" for n, why in sorted(dropped.items()))
                 if dropped else "None: every case built.")
    freeze_text = "\n".join(
        f"# {side} venv\n" + "\n".join(manifest["pip_freeze"][side])
        for side in SIDES if side in manifest["pip_freeze"])
    text = f"""# Front-end HLO modules with known softmax counts

Real HLO modules printed by XLA as PyTorch/XLA and JAX/Flax emit them, from
tiny models written in `scripts/gen_frontend_models_torch.py` and
`scripts/gen_frontend_models_jax.py`, each with the true number of softmaxes
taken from the model code (softmaxes per layer x layers), not from the HLO.
Nobody edited these files by hand.

- `torch/`: PyTorch/XLA lazy tensors on the CPU PJRT device
  (`PJRT_DEVICE=CPU`), forward (+ `.backward()`) then `torch_xla.sync()`;
  the module is the graph XLA dumped before its optimizations
  (`XLA_FLAGS="--xla_dump_to=DIR --xla_dump_hlo_as_text
  --xla_dump_large_constants"`, the `*.before_optimizations.txt` file;
  each case compiles exactly one graph, the whole step).
- `jax/`: `jax.jit(f).lower(*args).as_text(dialect="hlo")` with
  `JAX_PLATFORMS=cpu` and `jax_hlo_source_file_canonicalization_regex`
  set to `.*/`; every weight is an argument, never a constant. The
  Hugging Face models are random-init from a tiny config (nothing is
  downloaded, `HF_HUB_OFFLINE=1`).

`MANIFEST.json` has one record per file: `file`, `frontend`, `versions`,
`description`, the true counts and `notes`.

- `softmax_fwd`: softmax forward computations in the module.
- `softmax_bwd`: softmax gradients (one per softmax in a train step).
- `log_softmax`: log_softmax / cross-entropy occurrences; these are not
  softmaxes and must never be raised.
- `in_loop_body`: the softmaxes sit in while-loop bodies (a scan); the
  counts are then per loop body, not per layer.

## Regenerate

```sh
python3 scripts/gen_frontend_models.py
```

It makes two venvs under `--venv-dir` (default
`~/.cache/hlo-opt-frontends`; about 3 GB for torch, whose PyPI wheel is
the CUDA build, 1 GB for jax), installs the pins in
`scripts/gen_frontend_models.py` (`{' '.join(TORCH_PINS)}`;
`{' '.join(JAX_PINS)}`), and writes this folder: the `.hlo` files,
`MANIFEST.json` and this README. About 3 minutes once the venvs exist (one
process per torch case, about 8 s each). `--frontend torch|jax` or `--only NAME ...`
regenerates part (the manifest keeps the other records); `--list` lists
the cases; `--check [--hlo-opt PATH]` runs hlo-opt on every file (round trip,
default pipeline, `--all-computations`) and prints the raised counts next
to the true ones.

For given pins the files come out the same each run (fixed seeds; the
weights are parameters, so their values are not in the text anyway).

Generated on {manifest['generated']} with Python {manifest['python']}; the
packages that matter, as installed (`pip freeze` of each venv):

```
{freeze_text}
```

## Cases

| file | softmax_fwd | softmax_bwd | log_softmax | in_loop_body | bytes |
|---|---|---|---|---|---|
{chr(10).join(rows)}

Dropped cases: {drop_text}
"""
    (out / "README.md").write_text(text)


def count_raised(text):
    bwd = text.count('custom_call_target="AwsNeuronSoftmaxBackward"')
    fwd = text.count('custom_call_target="AwsNeuronSoftmax"')
    return fwd, bwd


def check(out, hlo_opt):
    manifest = json.loads((out / "MANIFEST.json").read_text())
    print(f"{'file':50} true f/b  default f/b  all-comp f/b  round-trip")
    for r in manifest["cases"]:
        f = out / r["file"]
        rt = subprocess.run([hlo_opt, "--passes", "", str(f)], capture_output=True)
        same = rt.returncode == 0 and rt.stdout == f.read_bytes()
        res = []
        for extra in ([], ["--all-computations"]):
            p = subprocess.run([hlo_opt, *extra, str(f)], capture_output=True, text=True)
            res.append("error" if p.returncode else "%d/%d" % count_raised(p.stdout))
        print(f"{r['file']:50} {r['softmax_fwd']}/{r['softmax_bwd']}{'':5} "
              f"{res[0]:12} {res[1]:13} {'ok' if same else 'DIFFERS'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--venv-dir", type=Path, default=DEFAULT_VENVS,
                    help=f"where the two venvs live (default {DEFAULT_VENVS})")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--frontend", choices=["torch", "jax", "all"], default="all")
    ap.add_argument("--only", nargs="*", default=[], help="case names")
    ap.add_argument("--no-install", action="store_true",
                    help="use the venvs as they are; fail if missing")
    ap.add_argument("--list", action="store_true", help="list the cases")
    ap.add_argument("--check", action="store_true",
                    help="run hlo-opt on the files already generated")
    ap.add_argument("--hlo-opt", default=str(REPO / "target" / "release" / "hlo-opt"))
    a = ap.parse_args()

    if a.check:
        check(a.out, a.hlo_opt)
        return
    sides = ["torch", "jax"] if a.frontend == "all" else [a.frontend]
    pys = {s: ensure_venv(a.venv_dir, s, not a.no_install) for s in sides}
    if a.list:
        for s in sides:
            for c in list_side(pys[s], s):
                print(f"{c['name']:45} fwd {c['softmax_fwd']} bwd {c['softmax_bwd']} "
                      f"log_softmax {c['log_softmax']} loop {yes_no(c['in_loop_body'])}")
        return
    only = set(a.only)
    if only:
        known = {c["name"] for s in sides for c in list_side(pys[s], s)}
        if only - known:
            sys.exit(f"unknown cases: {sorted(only - known)}")

    a.out.mkdir(parents=True, exist_ok=True)
    man_path = a.out / "MANIFEST.json"
    old = json.loads(man_path.read_text()) if man_path.exists() else {}
    records = {Path(r["file"]).stem: r for r in old.get("cases", [])}
    dropped = dict(old.get("dropped", {}))
    freezes = dict(old.get("pip_freeze", {}))
    for s in sides:
        for c in list_side(pys[s], s):
            if not only or c["name"] in only:
                records.pop(c["name"], None)
                dropped.pop(c["name"], None)
    for s in sides:
        log(f"{s}:")
        freezes[s] = freeze(pys[s])
        (gen_torch if s == "torch" else gen_jax)(pys[s], a.out, only, records, dropped)

    # Sides in SIDES order; within a side, the helper's order (a side not
    # run this time keeps the order the old manifest had).
    side_rank = {s: i for i, s in enumerate(SIDES)}
    old_rank = {Path(r["file"]).stem: i for i, r in enumerate(old.get("cases", []))}
    helper_rank = {c["name"]: i for s in sides
                   for i, c in enumerate(list_side(pys[s], s))}
    cases = sorted(records.values(), key=lambda r: (
        side_rank[r["file"].split("/")[0]],
        helper_rank.get(Path(r["file"]).stem, old_rank.get(Path(r["file"]).stem, 0))))
    manifest = dict(
        generated=datetime.date.today().isoformat(),
        python=sys.version.split()[0],
        command="python3 scripts/gen_frontend_models.py",
        pip_freeze=freezes,
        cases=cases,
        dropped=dropped,
    )
    man_path.write_text(json.dumps(manifest, indent=2) + "\n")
    write_readme(a.out, manifest)
    total = sum((a.out / r["file"]).stat().st_size for r in cases)
    log(f"{len(cases)} modules, {total} bytes; {len(dropped)} dropped")


if __name__ == "__main__":
    main()
