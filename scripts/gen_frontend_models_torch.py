#!/usr/bin/env python3
"""PyTorch/XLA half of gen_frontend_models.py: one HLO module per case.

Run inside the torch venv that gen_frontend_models.py makes; not on its own
(it needs torch and torch-xla). Two modes:

    python gen_frontend_models_torch.py --list
        prints the cases (name, description, true counts) as JSON
    python gen_frontend_models_torch.py --case NAME --out FILE.hlo
        runs the case on a lazy XLA CPU device and copies the graph XLA
        dumped before its optimizations to FILE.hlo

One process per case: XLA reads XLA_FLAGS (the dump folder) once, when the
PJRT client starts, so each case gets its own process and its own dump.

The true counts of each case are worked out here from the model code (how
many softmaxes the code calls, times layers), never from the HLO.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

# Tiny sizes: small files, fast compiles.
BATCH, SEQ, HIDDEN, HEADS, FFN = 2, 8, 32, 2, 64
ENCODER_LAYERS = 2

CASES = {}


def case(name, description, softmax_fwd, softmax_bwd, log_softmax=0,
         in_loop_body=False, notes="", expect=()):
    def register(fn):
        CASES[name] = dict(fn=fn, description=description,
                           softmax_fwd=softmax_fwd, softmax_bwd=softmax_bwd,
                           log_softmax=log_softmax, in_loop_body=in_loop_body,
                           notes=notes, expect=list(expect))
        return fn
    return register


# ---------------------------------------------------------------- plain ops

def _softmax_case(dtype_name, dim, train):
    """softmax(x, dim) on a rank-3 tensor; train: backward of (y * w).sum()."""
    def run(torch, dev):
        shape = (BATCH, 4, SEQ) if dim == -1 else (BATCH, SEQ, 4)
        x = torch.randn(*shape).to(dev)
        w = torch.randn(*shape).to(dev)
        if train:
            x.requires_grad_()
        xs = x.bfloat16() if dtype_name == "bf16" else x
        if dtype_name == "bf16":
            w = w.bfloat16()
        y = torch.softmax(xs, dim)
        if train:
            (y * w).sum().backward()
            return [y, x.grad]
        return [y]
    return run


def _softmax_notes(dt, train):
    notes = []
    if dt == "bf16":
        notes.append("x is an f32 parameter converted to bf16 in the graph "
                     "(x.bfloat16())" + ("; w is bf16." if train else "."))
    if train:
        notes.append("The gradient is aten::_softmax_backward_data as "
                     "torch-xla lowers it: y * (g - sum(g * y)).")
    if train and dt == "bf16":
        notes.append("The upstream gradient g is computed in f32 (ones * w, "
                     "w upcast) and converted to bf16, and dx is converted "
                     "back to f32 for the f32 leaf x.")
    return " ".join(notes)


for _dt in ("f32", "bf16"):
    for _axis, _dim, _axdesc in (("lastaxis", -1, "the last axis (dim=-1)"),
                                 ("axis1_rank3", 1, "dim=1")):
        for _train in (False, True):
            case(f"torch_softmax_{_axis}_{_dt}_{'train' if _train else 'fwd'}",
                 f"torch.softmax over {_axdesc} of a rank-3 {_dt} tensor"
                 + ("; train step: (softmax(x) * w).sum().backward(), x "
                    "requires grad; outputs y and x.grad"
                    if _train else "; forward only, output y"),
                 1, 1 if _train else 0,
                 notes=_softmax_notes(_dt, _train),
                 )(_softmax_case(_dt, _dim, _train))


@case("torch_log_softmax_f32_train",
      "F.log_softmax(x, -1) on a rank-3 f32 tensor; train step: "
      "(log_softmax(x) * w).sum().backward(); outputs y and x.grad",
      softmax_fwd=0, softmax_bwd=0, log_softmax=1,
      notes="A log_softmax and its gradient (grad - exp(y) * sum(grad)); "
            "no softmax: nothing may be raised.")
def _log_softmax_train(torch, dev):
    import torch.nn.functional as F
    x = torch.randn(BATCH, 4, SEQ).to(dev).requires_grad_()
    w = torch.randn(BATCH, 4, SEQ).to(dev)
    y = F.log_softmax(x, -1)
    (y * w).sum().backward()
    return [y, x.grad]


@case("torch_cross_entropy_f32_train",
      "F.cross_entropy(logits[16, 64], target[16] int64), mean reduction; "
      "train step: loss.backward(); outputs loss and logits.grad",
      softmax_fwd=0, softmax_bwd=0, log_softmax=1,
      notes="cross_entropy = log_softmax + nll_loss; no softmax: nothing may "
            "be raised.")
def _cross_entropy_train(torch, dev):
    import torch.nn.functional as F
    logits = torch.randn(BATCH * SEQ, 64).to(dev).requires_grad_()
    target = torch.randint(0, 64, (BATCH * SEQ,)).to(dev)
    loss = F.cross_entropy(logits, target)
    loss.backward()
    return [loss, logits.grad]


# ---------------------------------------------------------------- modules

SAFE_SOFTMAX_NOTE = (
    "TransformerEncoderLayer calls MultiheadAttention with need_weights=False, "
    "so attention goes through F.scaled_dot_product_attention's math path, "
    "which uses aten::_safe_softmax: softmax(x), then "
    "select(all(x == -inf, dim), 0, softmax) (in the HLO: a compare EQ "
    "against -inf, a pred reduce with an AND computation, and a select "
    "around the divide). Its gradient is _softmax_backward_data of the "
    "select's output. One softmax per layer.")


def _encoder_case(train, bf16):
    def run(torch, dev):
        nn = torch.nn
        layer = nn.TransformerEncoderLayer(
            d_model=HIDDEN, nhead=HEADS, dim_feedforward=FFN, dropout=0.0,
            batch_first=True)
        enc = nn.TransformerEncoder(layer, num_layers=ENCODER_LAYERS,
                                    enable_nested_tensor=False)
        x = torch.randn(BATCH, SEQ, HIDDEN)
        w = torch.randn(BATCH, SEQ, HIDDEN)
        if bf16:
            enc, x, w = enc.bfloat16(), x.bfloat16(), w.bfloat16()
        enc, x, w = enc.to(dev), x.to(dev), w.to(dev)
        if not train:
            enc.eval()
            with torch.no_grad():
                return [enc(x)]
        enc.train()
        y = enc(x)
        (y * w).sum().backward()
        return [y] + [p.grad for p in enc.parameters()]
    return run


for _train in (False, True):
    for _bf16 in (False, True):
        if _bf16 and not _train:
            continue
        _dt = "bf16" if _bf16 else "f32"
        _name = f"torch_transformer_encoder_{_dt}_{'train' if _train else 'fwd'}"
        case(_name,
             f"nn.TransformerEncoder of {ENCODER_LAYERS} x "
             f"nn.TransformerEncoderLayer(d_model={HIDDEN}, nhead={HEADS}, "
             f"dim_feedforward={FFN}, dropout=0.0, batch_first=True), "
             f"{_dt}, input [{BATCH}, {SEQ}, {HIDDEN}]"
             + ("; train step: (y * w).sum().backward(); outputs y and every "
                "parameter's grad" if _train else "; eval(), no_grad, output y")
             + ("; model and input .bfloat16()" if _bf16 else ""),
             ENCODER_LAYERS, ENCODER_LAYERS if _train else 0,
             notes=SAFE_SOFTMAX_NOTE,
             # _safe_softmax's wrapper: x == -inf, all() over the axis
             expect=(r"constant\(-inf\)", r"direction=EQ",
                     r"to_apply=%AllComputation"),
             )(_encoder_case(_train, _bf16))


@case("torch_mha_f32_train",
      f"nn.MultiheadAttention({HIDDEN}, {HEADS}, batch_first=True) alone, "
      f"self-attention on x [{BATCH}, {SEQ}, {HIDDEN}] with the default "
      "need_weights=True; train step: (out * w).sum().backward(); outputs "
      "out, the head-averaged attention weights and every parameter's grad",
      softmax_fwd=1, softmax_bwd=1,
      notes="need_weights=True takes F.multi_head_attention_forward's explicit "
            "path (baddbmm, then plain softmax(dim=-1)), not "
            "scaled_dot_product_attention: a plain softmax, no _safe_softmax "
            "select. The weights are also averaged over heads (a mean of the "
            "softmax output) and returned.")
def _mha_train(torch, dev):
    mha = torch.nn.MultiheadAttention(HIDDEN, HEADS, batch_first=True)
    x = torch.randn(BATCH, SEQ, HIDDEN)
    w = torch.randn(BATCH, SEQ, HIDDEN)
    mha, x, w = mha.to(dev), x.to(dev), w.to(dev)
    out, weights = mha(x, x, x)
    (out * w).sum().backward()
    return [out, weights] + [p.grad for p in mha.parameters()]


# ---------------------------------------------------------------- driver

def list_cases():
    return [dict(name=n, **{k: v for k, v in c.items() if k != "fn"})
            for n, c in CASES.items()]


def run_case(name, out):
    with tempfile.TemporaryDirectory(prefix="hlo-opt-torch-dump-") as dump:
        os.environ["PJRT_DEVICE"] = "CPU"
        os.environ["XLA_FLAGS"] = (f"--xla_dump_to={dump} --xla_dump_hlo_as_text "
                                   "--xla_dump_large_constants")
        import torch
        import torch_xla

        torch.manual_seed(0)
        dev = torch_xla.device()
        results = CASES[name]["fn"](torch, dev)
        torch_xla.sync()
        for r in results:  # every result is materialized by the step above
            r.cpu()
        dumps = sorted(Path(dump).glob("*.before_optimizations.txt"))
        if not dumps:
            sys.exit(f"{name}: XLA dumped no graph")
        # The step's graph (forward + backward) is the largest.
        best = max(dumps, key=lambda p: p.stat().st_size)
        shutil.copyfile(best, out)
        info = dict(graphs=[p.name for p in dumps], picked=best.name,
                    torch=torch.__version__, torch_xla=torch_xla.__version__)
        print(json.dumps(info))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--case")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    if a.list:
        print(json.dumps(list_cases()))
    elif a.case and a.out:
        if a.case not in CASES:
            sys.exit(f"unknown case {a.case}")
        run_case(a.case, a.out)
    else:
        ap.error("--list, or --case NAME --out FILE")


if __name__ == "__main__":
    main()
