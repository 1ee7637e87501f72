#!/usr/bin/env python3
"""JAX / Flax half of gen_frontend_models.py: one HLO module per case.

Run inside the jax venv that gen_frontend_models.py makes; not on its own
(it needs jax, flax and transformers). Two modes:

    python gen_frontend_models_jax.py --list
        prints the cases (name, description, true counts) as JSON
    python gen_frontend_models_jax.py --out DIR [--only NAME ...]
        writes DIR/NAME.hlo for each case: the text of
        jax.jit(f).lower(*args).as_text(dialect="hlo")

Hugging Face models are built from a tiny config with random weights
(FlaxBertModel(BertConfig(...))); nothing is downloaded (HF_HUB_OFFLINE=1).
Every weight is an argument of the jitted function, never a constant.

The true counts of each case are worked out here from the model code (how
many softmaxes the code calls, times layers), never from the HLO.
"""
import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

# Tiny sizes: small files, fast lowering.
BATCH, SEQ, HIDDEN, HEADS, FFN, VOCAB = 2, 8, 32, 2, 64, 64
HF_LAYERS = 2
SCAN_LAYERS = 2

CASES = {}


def case(name, description, softmax_fwd, softmax_bwd, log_softmax=0,
         in_loop_body=False, notes="", expect=(), uses=("jax", "jaxlib")):
    def register(fn):
        CASES[name] = dict(fn=fn, description=description,
                           softmax_fwd=softmax_fwd, softmax_bwd=softmax_bwd,
                           log_softmax=log_softmax, in_loop_body=in_loop_body,
                           notes=notes, uses=list(uses),
                           expect=list(expect))
        return fn
    return register


def _keys(n):
    import jax
    return jax.random.split(jax.random.PRNGKey(0), n)


def _dtype(name):
    import jax.numpy as jnp
    return {"f32": jnp.float32, "bf16": jnp.bfloat16}[name]


# ---------------------------------------------------------------- jax.nn

SOFTMAX_NOTE = (
    "jax.nn.softmax as jax 0.10.2 ships it: the jax_softmax_custom_jvp flag "
    "is off by default, so the gradient is plain autodiff of "
    "exp(x - stop_gradient(max)) / sum (not the custom-JVP form).")


def _softmax_case(dt, axis, train):
    def build():
        import jax
        import jax.numpy as jnp
        shape = (BATCH, 4, SEQ) if axis == -1 else (BATCH, SEQ, 4)
        k1, k2 = _keys(2)
        x = jax.random.normal(k1, shape, jnp.float32).astype(_dtype(dt))
        w = jax.random.normal(k2, shape, jnp.float32).astype(_dtype(dt))
        if not train:
            def f(x):
                return jax.nn.softmax(x, axis)
            return f, (x,)

        def f(x, w):
            def loss(x):
                y = jax.nn.softmax(x, axis)
                return (y * w).sum(), y
            (_, y), g = jax.value_and_grad(loss, has_aux=True)(x)
            return y, g
        return f, (x, w)
    return build


for _dt in ("f32", "bf16"):
    for _axname, _axis, _axdesc in (("lastaxis", -1, "the last axis"),
                                    ("axis1_rank3", 1, "axis=1")):
        for _train in (False, True):
            case(f"jax_softmax_{_axname}_{_dt}_{'train' if _train else 'fwd'}",
                 f"jax.nn.softmax over {_axdesc} of a rank-3 {_dt} array"
                 + ("; train: jax.value_and_grad of (softmax(x) * w).sum() wrt "
                    "x; outputs y and dx" if _train else "; output y"),
                 1, 1 if _train else 0,
                 notes=SOFTMAX_NOTE + (" In bf16: max, exp and divide in bf16; "
                                       "jnp.sum accumulates the bf16 exp in f32 "
                                       "(convert, f32 reduce, convert back)."
                                       if _dt == "bf16" else ""),
                 )(_softmax_case(_dt, _axis, _train))


def _dpa_case(dt, train):
    def build():
        import jax
        import jax.numpy as jnp
        shape = (BATCH, SEQ, HEADS, HIDDEN // HEADS)  # B T N H
        ks = _keys(4)
        q, k, v, w = (jax.random.normal(kk, shape, jnp.float32).astype(_dtype(dt))
                      for kk in ks)
        if not train:
            def f(q, k, v):
                return jax.nn.dot_product_attention(q, k, v, implementation=None)
            return f, (q, k, v)

        def f(q, k, v, w):
            def loss(q, k, v):
                o = jax.nn.dot_product_attention(q, k, v, implementation=None)
                return (o * w).sum(), o
            (_, o), g = jax.value_and_grad(loss, argnums=(0, 1, 2),
                                           has_aux=True)(q, k, v)
            return (o,) + g
        return f, (q, k, v, w)
    return build


for _dt in ("f32", "bf16"):
    for _train in (False, True):
        case(f"jax_dot_product_attention_{_dt}_{'train' if _train else 'fwd'}",
             f"jax.nn.dot_product_attention(q, k, v), implementation=None (the "
             f"XLA path on CPU), {_dt} q/k/v [{BATCH}, {SEQ}, {HEADS}, "
             f"{HIDDEN // HEADS}], no mask, no bias"
             + ("; train: grad of (out * w).sum() wrt q, k, v; outputs out, dq, "
                "dk, dv" if _train else "; output out"),
             1, 1 if _train else 0,
             notes=("One softmax over the key axis of the logits (jax's "
                    "grouped-query code gives them a size-1 group axis: in the "
                    "HLO the softmax is over the last axis of a rank-5 "
                    "[1, B, N, T, S] array). "
                    + ("The XLA path always does the softmax in f32: the bf16 "
                       "logits are converted to f32 before it and the "
                       "probabilities back to bf16 after"
                       + ("; the gradient wrt the probabilities arrives in bf16 "
                          "and is converted to f32 for the softmax gradient"
                          if _train else "") + ". " if _dt == "bf16"
                       else "") + SOFTMAX_NOTE),
             )(_dpa_case(_dt, _train))


SOFTMAX_WHERE_NOTE = (
    "jax.nn.softmax(x, where=mask): the max and the sum over the masked "
    "values only, the output masked to 0. jax lowers each jnp.where in it "
    "as an HLO call of a small private computation (_where, _where_0, ...; "
    "one callee may serve several calls), so the softmax is split by calls "
    "until call-inliner inlines them. The mask is [B, 1, S, S], broadcast "
    "over the heads inside the _where bodies. " + SOFTMAX_NOTE)


def _softmax_where_case(dt, train):
    def build():
        import jax
        import jax.numpy as jnp
        shape = (BATCH, HEADS, SEQ, SEQ)
        k1, k2, k3 = _keys(3)
        x = jax.random.normal(k1, shape, jnp.float32).astype(_dtype(dt))
        w = jax.random.normal(k2, shape, jnp.float32).astype(_dtype(dt))
        mask = jax.random.bernoulli(k3, 0.7, (BATCH, 1, SEQ, SEQ))
        if not train:
            def f(x, mask):
                return jax.nn.softmax(x, -1, where=mask)
            return f, (x, mask)

        def f(x, mask, w):
            def loss(x):
                y = jax.nn.softmax(x, -1, where=mask)
                return (y * w).sum(), y
            (_, y), g = jax.value_and_grad(loss, has_aux=True)(x)
            return y, g
        return f, (x, mask, w)
    return build


for _dt in ("f32", "bf16"):
    for _train in (False, True):
        case(f"jax_softmax_where_{_dt}_{'train' if _train else 'fwd'}",
             f"jax.nn.softmax(x, -1, where=mask) of a {_dt} [{BATCH}, {HEADS}, "
             f"{SEQ}, {SEQ}] array, mask pred [{BATCH}, 1, {SEQ}, {SEQ}]"
             + ("; train: jax.value_and_grad of (softmax(x, where=mask) * "
                "w).sum() wrt x; outputs y and dx" if _train else "; output y"),
             1, 1 if _train else 0,
             notes=SOFTMAX_WHERE_NOTE,
             expect=[r"to_apply=_where"],
             )(_softmax_where_case(_dt, _train))


@case("jax_log_softmax_f32_train",
      "jax.nn.log_softmax over the last axis of a rank-3 f32 array; train: "
      "value_and_grad of (log_softmax(x) * w).sum() wrt x; outputs y and dx",
      softmax_fwd=0, softmax_bwd=0, log_softmax=1,
      notes="A log_softmax and its gradient; no softmax: nothing may be raised.")
def _log_softmax_train():
    import jax
    import jax.numpy as jnp
    k1, k2 = _keys(2)
    x = jax.random.normal(k1, (BATCH, 4, SEQ), jnp.float32)
    w = jax.random.normal(k2, (BATCH, 4, SEQ), jnp.float32)

    def f(x, w):
        def loss(x):
            y = jax.nn.log_softmax(x, -1)
            return (y * w).sum(), y
        (_, y), g = jax.value_and_grad(loss, has_aux=True)(x)
        return y, g
    return f, (x, w)


@case("jax_cross_entropy_f32_train",
      f"cross-entropy without optax: -(jax.nn.log_softmax(logits) * "
      f"one_hot(labels)).sum() / n, logits [{BATCH * SEQ}, {VOCAB}] f32, labels "
      f"int32; train: value_and_grad wrt logits; outputs loss and dlogits",
      softmax_fwd=0, softmax_bwd=0, log_softmax=1,
      notes="A log_softmax and its gradient; no softmax: nothing may be raised.")
def _cross_entropy_train():
    import jax
    import jax.numpy as jnp
    k1, k2 = _keys(2)
    logits = jax.random.normal(k1, (BATCH * SEQ, VOCAB), jnp.float32)
    labels = jax.random.randint(k2, (BATCH * SEQ,), 0, VOCAB, jnp.int32)

    def f(logits, labels):
        def loss(logits):
            onehot = jax.nn.one_hot(labels, VOCAB, dtype=logits.dtype)
            return -(jax.nn.log_softmax(logits) * onehot).sum() / labels.shape[0]
        return jax.value_and_grad(loss)(logits)
    return f, (logits, labels)


# ---------------------------------------------------------------- Hugging Face

HF_USES = ("jax", "jaxlib", "flax", "transformers")
HF_NOTE = (
    "Hugging Face Flax attention: flax.linen.dot_product_attention_weights, "
    "i.e. jax.nn.softmax of (q.k / sqrt(d) + bias), where bias is 0 or "
    "finfo.min from lax.select on the attention mask (a runtime argument "
    "here); one softmax per layer. No dropout (deterministic).")


def _bert_config():
    from transformers import BertConfig
    return BertConfig(vocab_size=VOCAB, hidden_size=HIDDEN,
                      num_hidden_layers=HF_LAYERS, num_attention_heads=HEADS,
                      intermediate_size=FFN, max_position_embeddings=16,
                      hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def _ids():
    import jax
    import jax.numpy as jnp
    ids = jax.random.randint(_keys(1)[0], (BATCH, SEQ), 0, VOCAB, jnp.int32)
    return ids, jnp.ones((BATCH, SEQ), jnp.int32)


@case("flax_bert_fwd_f32",
      f"transformers FlaxBertModel, random init from BertConfig(vocab "
      f"{VOCAB}, hidden {HIDDEN}, {HF_LAYERS} layers, {HEADS} heads, ffn {FFN}), "
      f"input_ids and attention_mask [{BATCH}, {SEQ}]; outputs last_hidden_state "
      "and pooler_output; params are arguments",
      softmax_fwd=HF_LAYERS, softmax_bwd=0, notes=HF_NOTE, uses=HF_USES)
def _bert_fwd():
    from transformers import FlaxBertModel
    model = FlaxBertModel(_bert_config(), seed=0)
    ids, mask = _ids()

    def f(params, ids, mask):
        out = model(ids, attention_mask=mask, params=params)
        return out.last_hidden_state, out.pooler_output
    return f, (model.params, ids, mask)


@case("flax_bert_train_f32",
      "the flax_bert_fwd_f32 model; train: value_and_grad wrt params of "
      "mean(last_hidden_state ** 2); outputs loss and the params' grads",
      softmax_fwd=HF_LAYERS, softmax_bwd=HF_LAYERS,
      notes=HF_NOTE + " The pooler is unused by the loss (its grads are zeros).",
      uses=HF_USES)
def _bert_train():
    import jax
    from transformers import FlaxBertModel
    model = FlaxBertModel(_bert_config(), seed=0)
    ids, mask = _ids()

    def f(params, ids, mask):
        def loss(params):
            h = model(ids, attention_mask=mask, params=params).last_hidden_state
            return (h ** 2).mean()
        return jax.value_and_grad(loss)(params)
    return f, (model.params, ids, mask)


@case("flax_gpt2_train_f32",
      f"transformers FlaxGPT2LMHeadModel, random init from GPT2Config(vocab "
      f"{VOCAB}, n_embd {HIDDEN}, {HF_LAYERS} layers, {HEADS} heads, n_inner {FFN}, "
      f"n_positions 16); train: value_and_grad wrt params of the next-token "
      f"cross-entropy -(log_softmax(logits[:, :-1]) * one_hot(ids[:, 1:])).mean "
      "over tokens; outputs loss and the params' grads",
      softmax_fwd=HF_LAYERS, softmax_bwd=HF_LAYERS, log_softmax=1,
      notes=HF_NOTE + " GPT-2's bias also folds in the causal mask. The LM "
                      "loss adds one log_softmax (and its gradient), which "
                      "must not be raised.",
      uses=HF_USES)
def _gpt2_train():
    import jax
    import jax.numpy as jnp
    from transformers import FlaxGPT2LMHeadModel, GPT2Config
    cfg = GPT2Config(vocab_size=VOCAB, n_positions=16, n_embd=HIDDEN,
                     n_layer=HF_LAYERS, n_head=HEADS, n_inner=FFN,
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    model = FlaxGPT2LMHeadModel(cfg, seed=0)
    ids, mask = _ids()

    def f(params, ids, mask):
        def loss(params):
            logits = model(ids, attention_mask=mask, params=params).logits
            onehot = jax.nn.one_hot(ids[:, 1:], VOCAB, dtype=logits.dtype)
            nll = -(jax.nn.log_softmax(logits[:, :-1]) * onehot).sum(-1)
            return nll.mean()
        return jax.value_and_grad(loss)(params)
    return f, (model.params, ids, mask)


@case("flax_vit_fwd_f32",
      f"transformers FlaxViTModel, random init from ViTConfig(image 16x16, "
      f"patch 8, 3 channels, hidden {HIDDEN}, {HF_LAYERS} layers, {HEADS} "
      f"heads, ffn {FFN}); pixel_values [{BATCH}, 3, 16, 16]; outputs "
      "last_hidden_state and pooler_output",
      softmax_fwd=HF_LAYERS, softmax_bwd=0,
      notes="The patch embedding is a convolution (8x8 kernel, stride 8). "
            "Attention as in the other Hugging Face Flax models, with no mask "
            "(bias None): jax.nn.softmax of q.k / sqrt(d), one per layer.",
      uses=HF_USES, expect=(r" convolution\(",))
def _vit_fwd():
    import jax
    import jax.numpy as jnp
    from transformers import FlaxViTModel, ViTConfig
    cfg = ViTConfig(image_size=16, patch_size=8, num_channels=3,
                    hidden_size=HIDDEN, num_hidden_layers=HF_LAYERS,
                    num_attention_heads=HEADS, intermediate_size=FFN,
                    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = FlaxViTModel(cfg, seed=0)
    px = jax.random.normal(_keys(1)[0], (BATCH, 3, 16, 16), jnp.float32)

    def f(params, px):
        out = model(px, params=params)
        return out.last_hidden_state, out.pooler_output
    return f, (model.params, px)


# ---------------------------------------------------------------- flax scan

def _scan_case(dt):
    def build():
        import jax
        import jax.numpy as jnp
        import flax.linen as nn

        dtype = _dtype(dt)
        dh = HIDDEN // HEADS

        class Block(nn.Module):
            @nn.compact
            def __call__(self, x, _):
                b, s, d = x.shape
                h = nn.LayerNorm(dtype=dtype)(x)
                qkv = nn.Dense(3 * d, dtype=dtype)(h).reshape(b, s, 3, HEADS, dh)
                q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
                logits = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(dh).astype(dtype)
                p = jax.nn.softmax(logits, axis=-1)
                o = jnp.einsum("bhqk,bkhd->bqhd", p, v).reshape(b, s, d)
                x = x + nn.Dense(d, dtype=dtype)(o)
                h = nn.LayerNorm(dtype=dtype)(x)
                x = x + nn.Dense(d, dtype=dtype)(nn.gelu(nn.Dense(FFN, dtype=dtype)(h)))
                return x, None

        class Model(nn.Module):
            @nn.compact
            def __call__(self, ids):
                x = nn.Embed(VOCAB, HIDDEN, dtype=dtype)(ids)
                Stack = nn.scan(Block, variable_axes={"params": 0},
                                split_rngs={"params": True}, length=SCAN_LAYERS)
                x, _ = Stack()(x, None)
                return nn.Dense(VOCAB, dtype=dtype)(nn.LayerNorm(dtype=dtype)(x))

        ids, _ = _ids()
        model = Model()
        params = model.init(_keys(1)[0], ids)["params"]
        w = jax.random.normal(_keys(2)[1], (BATCH, SEQ, VOCAB), jnp.float32).astype(dtype)

        def f(params, ids, w):
            def loss(params):
                out = model.apply({"params": params}, ids)
                return (out * w).astype(jnp.float32).mean()
            return jax.value_and_grad(loss)(params)
        return f, (params, ids, w)
    return build


for _dt in ("f32", "bf16"):
    case(f"flax_scan_transformer_train_{_dt}",
         f"flax.linen.scan over {SCAN_LAYERS} pre-LN transformer blocks "
         f"(self-attention with an explicit jax.nn.softmax, {HEADS} heads, + "
         f"GELU MLP {FFN}), hidden {HIDDEN}, embed + final Dense to {VOCAB}, "
         f"{_dt} compute (params f32); train: value_and_grad wrt params of "
         "mean(out * w); outputs loss and the params' grads",
         1, 1, in_loop_body=True,
         notes=(f"Counts are per while-loop body, not per layer: the "
                f"{SCAN_LAYERS} layers are one scan, so the softmax is once in "
                "the forward while-body and its gradient once in the backward "
                "while-body. In the HLO each while body calls the block as a "
                "`call` (closed_call), so the softmax sits in the computation "
                "the forward body calls; the forward saves exp, the row sum and "
                "1/(sum*sum) per iteration (stacked with dynamic-update-slice) "
                "and the backward body reads them back as its call's "
                "parameters. " + SOFTMAX_NOTE),
         uses=("jax", "jaxlib", "flax"), expect=(r" while\(",))(_scan_case(_dt))


# ---------------------------------------------------------------- flax CNN / ViT

IMG, IMG_C, CLASSES, LR = 8, 3, 10, 0.1


def _images_labels():
    import jax
    import jax.numpy as jnp
    k1, k2 = _keys(2)
    x = jax.random.normal(k1, (BATCH, IMG, IMG, IMG_C), jnp.float32)
    y = jax.random.randint(k2, (BATCH,), 0, CLASSES, jnp.int32)
    return x, y


def _train_step(model, x, y):
    """loss = softmax cross-entropy (log_softmax + one_hot, no optax);
    one SGD step; outputs the loss and the updated params."""
    import jax

    def step(params, x, y):
        def loss(params):
            logits = model.apply({"params": params}, x)
            onehot = jax.nn.one_hot(y, CLASSES, dtype=logits.dtype)
            return -(jax.nn.log_softmax(logits) * onehot).sum(-1).mean()
        l, g = jax.value_and_grad(loss)(params)
        return l, jax.tree.map(lambda p, d: p - LR * d, params, g)
    params = model.init(_keys(3)[2], x)["params"]
    return step, (params, x, y)


CE_NOTE = ("The loss is one log_softmax (cross-entropy with one_hot labels), "
           "which must not be raised, and its gradient.")


@case("flax_cnn_train_f32",
      f"flax.linen CNN: Conv(8, 3x3, SAME) + relu, Conv(16, 3x3, stride 2) + relu, "
      f"flatten, Dense({CLASSES}); images [{BATCH}, {IMG}, {IMG}, {IMG_C}] NHWC f32, "
      "int32 labels; train step: value_and_grad wrt params of the softmax "
      f"cross-entropy, one SGD step (lr {LR}); outputs loss and the updated params",
      softmax_fwd=0, softmax_bwd=0, log_softmax=1,
      notes="No softmax. " + CE_NOTE + " The forward has two convolutions; the "
            "backward adds three (both kernel gradients and the second layer's input "
            "gradient; the images get none).",
      uses=("jax", "jaxlib", "flax"), expect=(r" convolution\(",))
def _cnn_train():
    import flax.linen as nn

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.relu(nn.Conv(8, (3, 3))(x))
            x = nn.relu(nn.Conv(16, (3, 3), strides=(2, 2))(x))
            x = x.reshape(x.shape[0], -1)
            return nn.Dense(CLASSES)(x)
    x, y = _images_labels()
    return _train_step(CNN(), x, y)


VIT_PATCH = 4


@case("flax_vit_train_f32",
      f"small flax.linen ViT: {VIT_PATCH}x{VIT_PATCH} patch embedding (a "
      f"stride-{VIT_PATCH} Conv to hidden {HIDDEN}), a class token, learned position "
      f"embeddings, {HF_LAYERS} pre-LN blocks of nn.MultiHeadDotProductAttention "
      f"({HEADS} heads) + GELU MLP {FFN}, LayerNorm and Dense({CLASSES}) on the class "
      f"token; images [{BATCH}, {IMG}, {IMG}, {IMG_C}] f32; train step: softmax "
      f"cross-entropy, value_and_grad wrt params, one SGD step (lr {LR}); outputs "
      "loss and the updated params",
      softmax_fwd=HF_LAYERS, softmax_bwd=HF_LAYERS, log_softmax=1,
      notes="One softmax per layer: flax.linen.dot_product_attention_weights, "
            "jax.nn.softmax of q.k / sqrt(d) over the key axis (no mask), in f32; "
            "its gradient once per layer. " + CE_NOTE + " " + SOFTMAX_NOTE,
      uses=("jax", "jaxlib", "flax"), expect=(r" convolution\(",))
def _vit_train():
    import jax.numpy as jnp
    import flax.linen as nn

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            h = nn.LayerNorm()(x)
            x = x + nn.MultiHeadDotProductAttention(num_heads=HEADS)(h, h)
            h = nn.LayerNorm()(x)
            return x + nn.Dense(HIDDEN)(nn.gelu(nn.Dense(FFN)(h)))

    class ViT(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.Conv(HIDDEN, (VIT_PATCH, VIT_PATCH), strides=(VIT_PATCH, VIT_PATCH),
                        padding="VALID")(x)
            b = x.shape[0]
            x = x.reshape(b, -1, HIDDEN)
            cls = self.param("cls", nn.initializers.zeros, (1, 1, HIDDEN))
            x = jnp.concatenate([jnp.broadcast_to(cls, (b, 1, HIDDEN)), x], axis=1)
            pos = self.param("pos", nn.initializers.normal(0.02), (1, x.shape[1], HIDDEN))
            x = x + pos
            for _ in range(HF_LAYERS):
                x = Block()(x)
            return nn.Dense(CLASSES)(nn.LayerNorm()(x[:, 0]))
    x, y = _images_labels()
    return _train_step(ViT(), x, y)


# ---------------------------------------------------------------- driver

def list_cases():
    return [dict(name=n, **{k: v for k, v in c.items() if k != "fn"})
            for n, c in CASES.items()]


def versions():
    from importlib.metadata import version
    return {p: version(p) for p in ("jax", "jaxlib", "flax", "transformers")}


def generate(out, only):
    import jax
    jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/")
    vers = versions()
    done = []
    for name, c in CASES.items():
        if only and name not in only:
            continue
        fn, args = c["fn"]()
        fn.__name__ = fn.__qualname__ = name
        text = jax.jit(fn).lower(*args).as_text(dialect="hlo")
        (out / f"{name}.hlo").write_text(text)
        done.append(dict(name=name, versions={p: vers[p] for p in c["uses"]}))
        print(f"  {name}: {len(text)} bytes", file=sys.stderr)
    print(json.dumps(done))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--only", nargs="*", default=[])
    a = ap.parse_args()
    if a.list:
        print(json.dumps(list_cases()))
    elif a.out:
        a.out.mkdir(parents=True, exist_ok=True)
        unknown = set(a.only) - set(CASES)
        if unknown:
            sys.exit(f"unknown cases: {sorted(unknown)}")
        generate(a.out, set(a.only))
    else:
        ap.error("--list, or --out DIR")


if __name__ == "__main__":
    main()
