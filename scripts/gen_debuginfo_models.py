#!/usr/bin/env python3
"""Two frontend train steps with their metadata, for `--emit-graph`'s layers.

The modules of tests/data/frontend/{jax,torch} are written without
metadata (JAX's `as_text(dialect="hlo")` drops it; torch-xla's dump has
none unless asked). These two keep it, made in the venvs of
gen_frontend_models.py (run that first):

    python3 scripts/gen_debuginfo_models.py [jax] [torch]   (default: both)

- jax_flax_bert_train_f32.hlo: the case flax_bert_train_f32 lowered and
  printed with `as_text(dialect="hlo", debug_info=True)`: `op_name` is the
  Flax module path (`jit(f)/jvp(FlaxBertModule)/encoder/layer/0/...`).
- torch_transformer_encoder_f32_train.hlo: the case of that name dumped
  with XLA_HLO_DEBUG=1, run under torch_module_paths.ModulePaths: `op_name`
  the nn.Module path and the aten op
  (`TransformerEncoder/layers.0/self_attn/aten__addmm`, backward
  `backward/TransformerEncoder/...`), `op_type` the aten op (paths cut at
  site-packages and at the repository).
"""
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "data" / "frontend" / "debuginfo"
VENVS = Path.home() / ".cache" / "hlo-opt-frontends"

JAX = """
import sys
sys.path.insert(0, {scripts!r})
import gen_frontend_models_jax as g
import jax
jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/")
fn, args = g.CASES["flax_bert_train_f32"]["fn"]()
fn.__name__ = fn.__qualname__ = "flax_bert_train_f32"
text = jax.jit(fn).lower(*args).as_text(dialect="hlo", debug_info=True)
open({out!r}, "w").write(text)
"""

TORCH = """
import sys
sys.path.insert(0, {scripts!r})
# The package's helper, imported alone: this venv has torch, not hlo_opt.
sys.path.insert(0, {package!r})
import gen_frontend_models_torch as g
from torch_module_paths import ModulePaths
with ModulePaths():
    g.run_case("torch_transformer_encoder_f32_train", {out!r})
"""


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, JAX_PLATFORMS="cpu", HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", PJRT_DEVICE="CPU", PYTHONHASHSEED="0")
    env.pop("XLA_FLAGS", None)
    sides = set(sys.argv[1:]) or {"jax", "torch"}
    if not sides <= {"jax", "torch"}:
        sys.exit(f"usage: {sys.argv[0]} [jax] [torch]")
    if "jax" in sides:
        jax_out = OUT / "jax_flax_bert_train_f32.hlo"
        code = JAX.format(scripts=str(REPO / "scripts"), out=str(jax_out))
        subprocess.run([str(VENVS / "jax" / "bin" / "python"), "-c", code],
                       check=True, env=env)
        print(f"wrote {jax_out}", file=sys.stderr)
    if "torch" in sides:
        write_torch(env)


def write_torch(env):
    torch_out = OUT / "torch_transformer_encoder_f32_train.hlo"
    code = TORCH.format(scripts=str(REPO / "scripts"), package=str(REPO / "python" / "hlo_opt"),
                        out=str(torch_out))
    subprocess.run([str(VENVS / "torch" / "bin" / "python"), "-c", code],
                   check=True, env=dict(env, XLA_HLO_DEBUG="1", XLA_IR_DEBUG="1"))
    # The machine's paths are not the model's: keep what follows site-packages.
    text = re.sub(r'source_file="[^"]*site-packages/', 'source_file="',
                  torch_out.read_text())
    text = text.replace(f'source_file="{REPO}/', 'source_file="')
    torch_out.write_text(text)
    print(f"wrote {torch_out}", file=sys.stderr)


if __name__ == "__main__":
    main()
