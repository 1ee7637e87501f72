#!/usr/bin/env python3
"""Real folders for `hlo-opt batch`'s tests: tests/data/batch/.

    python3 scripts/gen_batch_folders.py            # both folders
    python3 scripts/gen_batch_folders.py --only jax # one

- `xla_dump/`: what `XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text
  --xla_dump_hlo_as_proto` writes for a small JAX training program (an
  init, a train step, an eval step, and what JAX jits eagerly between
  them), every stage and file XLA writes, as it wrote them.
- `neuron_cache/`: the Neuron compile cache's layout,
  `neuronxcc-<version>/MODULE_<hash>+<hash>/model.hlo_module.pb` with
  `compile_flags.json` (one of them gzipped, as `model.hlo_module.pb.gz`),
  holding the HLO protos torch-xla hands the compiler for three small
  models (`torch_xla._XLAC._get_xla_tensors_hlo_proto`). The Neuron
  compiler cannot be installed here, so the layout is built by this
  script; the modules are torch-xla's own. One more MODULE folder holds a
  truncated proto: the broken module among good ones.
- `MANIFEST.json`: the true softmax counts of each module, from the model
  code (how many softmaxes each function calls, and whether it is
  differentiated), with the versions used.

Runs each half in the frontend venvs of scripts/gen_frontend_models.py
(same pins: jax 0.10.2, torch 2.9.0 / torch-xla 2.9.0), made there if
missing. Not run by CI; its output is committed.
"""
import argparse
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "data" / "batch"
NEURON_VERSION = "2.21.33363.0+82129205"
COMPILE_FLAGS = ["--target=trn1", "--model-type=transformer", "--enable-fast-loading-neuron-binaries"]


def jax_side(out: Path) -> dict:
    dump = out / "xla_dump"
    shutil.rmtree(dump, ignore_errors=True)
    os.environ["XLA_FLAGS"] = f"--xla_dump_to={dump} --xla_dump_hlo_as_text --xla_dump_hlo_as_proto"
    os.environ["JAX_PLATFORMS"] = "cpu"
    import jax
    import jax.numpy as jnp

    dim, seq = 16, 8

    def init(key):
        k1, k2, k3 = jax.random.split(key, 3)
        scale = dim ** -0.5
        return {"wq": jax.random.normal(k1, (dim, dim)) * scale,
                "wk": jax.random.normal(k2, (dim, dim)) * scale,
                "wv": jax.random.normal(k3, (dim, dim)) * scale}

    def forward(params, x):
        q, k, v = (x @ params[w] for w in ("wq", "wk", "wv"))
        weights = jax.nn.softmax(q @ k.T / jnp.sqrt(dim), axis=-1)  # one softmax
        return weights @ v

    def loss(params, x):
        return jnp.mean(forward(params, x) ** 2)

    @jax.jit
    def train_step(params, x):
        # The softmax forward, and its gradient.
        value, grads = jax.value_and_grad(loss)(params, x)
        return value, jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)

    @jax.jit
    def eval_step(params, x):
        return loss(params, x)  # the softmax forward only

    params = jax.jit(init)(jax.random.PRNGKey(0))
    x = jnp.ones((seq, dim))
    for _ in range(2):
        _, params = train_step(params, x)
    eval_step(params, x).block_until_ready()
    truth = {"jit_train_step": [1, 1], "jit_eval_step": [1, 0], "jit_init": [0, 0]}
    modules = {}
    for f in sorted(dump.glob("module_*.before_optimizations.txt")):
        module_id = f.name[: -len(".before_optimizations.txt")]
        name = module_id.split(".", 1)[1]
        fwd, bwd = truth.get(name, [0, 0])
        modules[module_id] = {"softmax_forward": fwd, "softmax_backward": bwd}
    return {"jax": jax.__version__, "modules": modules}


def torch_side(out: Path) -> dict:
    os.environ["PJRT_DEVICE"] = "CPU"
    import torch
    import torch_xla

    cache = out / "neuron_cache"
    shutil.rmtree(cache, ignore_errors=True)
    root = cache / f"neuronxcc-{NEURON_VERSION}"
    dev = torch_xla.device()
    torch.manual_seed(0)
    flags = json.dumps(COMPILE_FLAGS).encode()

    def mha_forward():  # one softmax in MultiheadAttention
        mha = torch.nn.MultiheadAttention(16, 2, batch_first=True).to(dev)
        x = torch.randn(2, 8, 16).to(dev)
        out, _ = mha(x, x, x, need_weights=False)
        return [out], (1, 0)

    def mha_train():  # the softmax forward and its gradient
        mha = torch.nn.MultiheadAttention(16, 2, batch_first=True).to(dev)
        x = torch.randn(2, 8, 16).to(dev)
        out, _ = mha(x, x, x, need_weights=False)
        out.sum().backward()
        return [out] + [p.grad for p in mha.parameters()], (1, 1)

    def mlp():  # no softmax
        net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 16)).to(dev)
        return [net(torch.randn(4, 16).to(dev))], (0, 0)

    modules = {}
    for k, make in enumerate((mha_forward, mha_train, mlp)):
        tensors, (fwd, bwd) = make()
        proto = bytes(torch_xla._XLAC._get_xla_tensors_hlo_proto(tensors))
        torch_xla.sync()
        module_id = "MODULE_{}+{}".format(
            int(hashlib.sha256(proto).hexdigest()[:16], 16) % 10**19,
            hashlib.sha256(flags).hexdigest()[:8],
        )
        folder = root / module_id
        folder.mkdir(parents=True)
        (folder / "compile_flags.json").write_bytes(flags)
        if k == 1:
            (folder / "model.hlo_module.pb.gz").write_bytes(gzip.compress(proto, mtime=0))
        else:
            (folder / "model.hlo_module.pb").write_bytes(proto)
        modules[module_id] = {"softmax_forward": fwd, "softmax_backward": bwd, "model": make.__name__}
        if k == 0:
            broken = root / "MODULE_1000000000000000000+00000000"
            broken.mkdir()
            (broken / "compile_flags.json").write_bytes(flags)
            (broken / "model.hlo_module.pb").write_bytes(proto[: len(proto) // 2])
            modules[broken.name] = {"broken": True}
    return {"torch": torch.__version__, "torch_xla": torch_xla.__version__,
            "neuronxcc_layout": NEURON_VERSION, "modules": modules}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=["jax", "torch"])
    ap.add_argument("--side", choices=["jax", "torch"], help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args()
    if a.side:  # inside the frontend's venv
        info = jax_side(a.out) if a.side == "jax" else torch_side(a.out)
        print(json.dumps(info))
        return
    sys.path.insert(0, str(REPO / "scripts"))
    from gen_frontend_models import DEFAULT_VENVS, ensure_venv

    a.out.mkdir(parents=True, exist_ok=True)
    manifest_path = a.out / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    for side in ["jax", "torch"] if a.only is None else [a.only]:
        py = ensure_venv(DEFAULT_VENVS, side, install=True)
        result = subprocess.run([str(py), __file__, "--side", side, "--out", str(a.out)],
                                check=True, capture_output=True, text=True)
        manifest[side] = json.loads(result.stdout.strip().splitlines()[-1])
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
