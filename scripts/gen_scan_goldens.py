#!/usr/bin/env python3
"""Tiny JAX train steps with a softmax inside a lax.scan body, for golden tests.

Same venv and printing conventions as gen_frontend_models_jax.py (the jax
venv that gen_frontend_models.py makes, jax 0.10.2 / jaxlib 0.10.2):
JAX_PLATFORMS=cpu, jax_hlo_source_file_canonicalization_regex ".*/", fixed
shapes, every weight an argument of the jitted function, and each module is
the text of jax.jit(f).lower(*args).as_text(dialect="hlo").

    ~/.cache/hlo-opt-frontends/jax/bin/python scripts/gen_scan_goldens.py \
        --out tests/data/frontend/jax/golden
    ~/.cache/hlo-opt-frontends/jax/bin/python scripts/gen_scan_goldens.py --list

Plain jax.lax.scan (no flax) so the modules stay small: x f32[2, 4, 8], two
scanned layers whose weights are stacked along the scan axis. The true
counts are per while-loop body (one softmax in the forward body, its
gradient in the backward body), worked out from the code, not the HLO.
"""
import argparse
import json
import os
import re
import sys
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

B, T, D = 2, 4, 8   # x is [B, T, D]
LAYERS = 2

CASES = {}


def case(name, description, softmax_fwd, softmax_bwd, in_loop_body=True,
         notes="", expect=()):
    def register(fn):
        CASES[name] = dict(fn=fn, description=description,
                           softmax_fwd=softmax_fwd, softmax_bwd=softmax_bwd,
                           in_loop_body=in_loop_body, notes=notes,
                           expect=list(expect))
        return fn
    return register


def _keys(n):
    import jax
    return jax.random.split(jax.random.PRNGKey(0), n)


def _normal(key, shape, dtype):
    import jax
    import jax.numpy as jnp
    return jax.random.normal(key, shape, jnp.float32).astype(dtype)


# ------------------------------------------------------------------ cases

@case("scan_softmax_attn_f32",
      f"lax.scan over {LAYERS} single-head attention layers on h f32[{B},{T},{D}]: "
      "q = h@wq_l, k = h, v = h@wv_l; a = softmax(q.k^T, -1); h = a@v; "
      "loss = sum(h * target); jax.grad wrt (wq, wv) stacked [L,D,D]",
      1, 1, expect=(r" while\(",),
      notes="k is h itself (no wk) to keep the module small. a@v makes the "
            "backward need the probabilities a (= y) for dv, so the forward "
            "body hands y over besides the softmax's own residuals.")
def _attn():
    import jax
    import jax.numpy as jnp
    ks = _keys(4)
    x = _normal(ks[0], (B, T, D), jnp.float32)
    wq, wv = (_normal(k, (LAYERS, D, D), jnp.float32) * 0.3 for k in ks[1:3])
    tgt = _normal(ks[3], (B, T, D), jnp.float32)

    def f(wq, wv, x, tgt):
        def loss(ws):
            def body(h, w):
                wq_l, wv_l = w
                q, k, v = h @ wq_l, h, h @ wv_l
                a = jax.nn.softmax(jnp.einsum("btd,bsd->bts", q, k), axis=-1)
                return a @ v, None
            h, _ = jax.lax.scan(body, x, ws)
            return (h * tgt).sum()
        return jax.grad(loss)((wq, wv))
    return f, (wq, wv, x, tgt)


def _weighted(dt, exp_reused, train_c=True):
    def build():
        import jax
        import jax.numpy as jnp
        dtype = {"f32": jnp.float32, "bf16": jnp.bfloat16}[dt]
        ks = _keys(3)
        x = _normal(ks[0], (B, T, D), dtype)
        w = (_normal(ks[1], (LAYERS, D, D), jnp.float32) * 0.3).astype(dtype)
        c = _normal(ks[2], (LAYERS, D), dtype)

        def f(w, c, x):
            def loss(params):
                def body(h, wc):
                    w_l, c_l = wc
                    z = h @ w_l
                    if not exp_reused:
                        return jax.nn.softmax(z, axis=-1) * c_l, None
                    e = jnp.exp(z - jax.lax.stop_gradient(z.max(-1, keepdims=True)))
                    s = e.sum(-1, keepdims=True)
                    y = e / s
                    return y * c_l + 0.1 * e, None
                if not train_c:
                    params = (params, c)
                h, _ = jax.lax.scan(body, x, params)
                return h.astype(jnp.float32).sum()
            return jax.value_and_grad(loss)((w, c) if train_c else w)
        return f, (w, c, x)
    return build


for _dt in ("f32", "bf16"):
    case(f"scan_softmax_weighted_{_dt}",
         f"lax.scan over {LAYERS} layers on h {_dt}[{B},{T},{D}]: "
         "h = softmax(h@w_l, -1) * c_l; loss = sum(h); value_and_grad wrt "
         f"(w [L,D,D], c [L,D]), all {_dt}",
         1, 1, expect=(r" while\(",))(_weighted(_dt, False))

case("scan_softmax_fixed_weight_f32",
     f"lax.scan over {LAYERS} layers on h f32[{B},{T},{D}]: "
     "h = softmax(h@w_l, -1) * c_l; loss = sum(h); value_and_grad wrt w only "
     "(c is not trained)",
     1, 1, expect=(r" while\(",),
     notes="With c fixed the backward needs y only for the softmax gradient, "
           "so the forward body hands over exp, the row sum and 1/(s*s) but "
           "not y: a raise must carry y in a residual's place.")(
    _weighted("f32", False, train_c=False))

case("scan_softmax_exp_reused_f32",
     f"lax.scan over {LAYERS} layers on h f32[{B},{T},{D}]: z = h@w_l; "
     "e = exp(z - stop_gradient(max(z))); s = sum(e); y = e/s; h = y*c_l + 0.1*e; "
     "loss = sum(h); value_and_grad wrt (w, c)",
     1, 1, expect=(r" while\(",),
     notes="The softmax is hand-written (with stop_gradient on the max, as "
           "jax.nn.softmax does, so the only difference from "
           "scan_softmax_weighted_f32 is the extra use of e) and its exp has a second consumer "
           "(0.1 * e), so in the forward body the exp is not private to the "
           "softmax and in the backward body de gets a second term: a raise "
           "must refuse (or keep e alive); the counts say what the code "
           "computes, not what may be raised.")(_weighted("f32", True))


@case("scan_softmax_nonloop_call_f32",
      f"no scan: the layer h = softmax(h@w_l, -1) * c_l as a nested jax.jit, "
      f"called {LAYERS} times (unrolled) on h f32[{B},{T},{D}]; loss = sum(h); "
      "value_and_grad wrt (w, c)",
      LAYERS, LAYERS, in_loop_body=False, expect=(r" call\(",),
      notes="Counts are for the whole module (the layers are unrolled): each "
            "forward softmax is in its own `call`ed computation (layer, "
            "layer_0) and each softmax gradient in another (layer_1, "
            "layer_2), the residuals passing through the calls' tuples. "
            "jax.named_call and jax.checkpoint (jax 0.10.2) are inlined and "
            "give no `call`; the nested jax.jit does.")
def _nonloop():
    import jax
    import jax.numpy as jnp
    ks = _keys(3)
    x = _normal(ks[0], (B, T, D), jnp.float32)
    w = _normal(ks[1], (LAYERS, D, D), jnp.float32) * 0.3
    c = _normal(ks[2], (LAYERS, D), jnp.float32)

    @jax.jit
    def layer(h, w_l, c_l):
        return jax.nn.softmax(h @ w_l, axis=-1) * c_l

    def f(w, c, x):
        def loss(params):
            w, c = params
            h = x
            for i in range(LAYERS):
                h = layer(h, w[i], c[i])
            return h.sum()
        return jax.value_and_grad(loss)((w, c))
    return f, (w, c, x)


# ------------------------------------------------------------------ driver

def versions():
    from importlib.metadata import version
    return {p: version(p) for p in ("jax", "jaxlib")}


def generate(out, only):
    import jax
    jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/")
    done = []
    for name, c in CASES.items():
        if only and name not in only:
            continue
        fn, args = c["fn"]()
        fn.__name__ = fn.__qualname__ = name
        text = jax.jit(fn).lower(*args).as_text(dialect="hlo")
        missing = [p for p in c["expect"] if not re.search(p, text)]
        if missing:
            print(f"  {name}: SKIPPED, no {missing} in the HLO", file=sys.stderr)
            continue
        (out / f"{name}.hlo").write_text(text)
        done.append(name)
        print(f"  {name}: {len(text)} bytes", file=sys.stderr)
    print(json.dumps(dict(cases=done, versions=versions())))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--only", nargs="*", default=[])
    a = ap.parse_args()
    if a.list:
        print(json.dumps([dict(name=n, **{k: v for k, v in c.items() if k != "fn"})
                          for n, c in CASES.items()], indent=1))
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
