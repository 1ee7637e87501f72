#!/usr/bin/env python3
"""HLO modules and the values XLA:CPU computes for them, for the interpreter.

Writes tests/data/interp_xla/<case>.hlo, <case>.npz (+ <case>.json where a
member is bit-stored) and README.md: small real HLO modules for the ops the
interpreter does not evaluate yet (convolution, select-and-scatter,
reduce-precision, fft, cholesky, triangular-solve, complex arithmetic,
shifts, ragged-dot, the RNG ops, the dynamic-shape ops, copy-start/done,
async wrappers, collective-broadcast, stochastic-convert, a TensorFlow
top-k), with seeded inputs and the outputs XLA:CPU computes.

Pins (the venv that scripts/gen_frontend_models.py makes, and one more for
the TensorFlow case):

    jax venv  ~/.cache/hlo-opt-frontends/jax   jax==0.10.2 jaxlib==0.10.2
              (numpy==2.4.6, ml_dtypes==0.6.0 as pip resolved them)
    tf venv   ~/.cache/hlo-opt-frontends/tf    tensorflow-cpu==2.21.0
              (made here when missing, unless --no-tf)

Run it with the jax venv's Python (any other Python re-executes itself
there):

    ~/.cache/hlo-opt-frontends/jax/bin/python scripts/gen_interp_refs.py
    ... scripts/gen_interp_refs.py --only conv2d_grad_f32 fft_c64
    ... scripts/gen_interp_refs.py --list
    ... scripts/gen_interp_refs.py --no-tf      # skip (and keep) the TF case

Where the outputs come from (the README says it per case):

- `jax`: the module is `jax.jit(f).lower(*args).as_text(dialect="hlo")`
  (JAX_PLATFORMS=cpu, jax_hlo_source_file_canonicalization_regex `.*/`),
  the outputs are `jax.jit(f)(*args)` on the CPU. The stored text is also
  compiled again on XLA:CPU (HLO text -> HloModule -> MLIR -> the CPU
  client's compile_and_load) and run on the same inputs; the README says
  whether that gave the same bits.
- `jax-tpu-lowering`: on the CPU, JAX lowers cholesky and triangular_solve
  to LAPACK custom calls and ragged_dot to a masked dot, so these modules
  are lowered with lowering_platforms=("tpu",), which emits the plain HLO
  ops (`cholesky`, `triangular-solve`, `ragged-dot`); the outputs are that
  text compiled and run on XLA:CPU (its expanders), never a TPU.
- `hlo`: hand-written HLO text, compiled and run on XLA:CPU the same way.
- `numpy`: hand-written HLO that XLA:CPU refuses (the README quotes its
  error); the outputs are numpy from the op's documented semantics.
- `tensorflow`: `tf.function(jit_compile=True)`, the module is
  `experimental_get_compiler_ir(x)(stage="hlo")` (before optimizations),
  the outputs are the TF function's (XLA:CPU inside TF).

Deterministic: every case draws its inputs from numpy.random.default_rng
with a fixed seed (crc32 of the case name); the .npz members get fixed zip
timestamps. Nothing is downloaded but the pinned wheels.
"""
import argparse
import io
import json
import os
import re
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "data" / "interp_xla"
VENVS = Path.home() / ".cache" / "hlo-opt-frontends"
JAX_PY = VENVS / "jax" / "bin" / "python"
TF_VENV = VENVS / "tf"
TF_PINS = ["tensorflow-cpu==2.21.0"]
JAX_PINS = ["jax==0.10.2", "jaxlib==0.10.2"]

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("PYTHONHASHSEED", "0")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- npz files

def bit_stored(a):
    """(array as numpy can store it, sidecar type name or None)."""
    import numpy as np
    name = a.dtype.name
    if name == "bfloat16":
        return a.view(np.uint16), "bf16"
    eight = {"float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2",
             "float8_e8m0fnu": "f8e8m0fnu", "float8_e4m3fnuz": "f8e4m3fnuz",
             "float8_e5m2fnuz": "f8e5m2fnuz", "float8_e4m3b11fnuz": "f8e4m3b11fnuz",
             "float8_e3m4": "f8e3m4", "float8_e4m3": "f8e4m3"}
    if name in eight:
        return a.view(np.uint8), eight[name]
    return a, None


def write_npz(path, members):
    """members: [(name, array)] in order. Deflated, fixed timestamps, numpy
    .npy format 1.0; writes or removes the sidecar <path>.json."""
    import numpy as np
    side = {}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, a in members:
            a = np.asarray(a)
            if not a.flags.c_contiguous:
                a = a.copy(order="C")  # (np.ascontiguousarray would make 0-d 1-d)
            a, ty = bit_stored(a)
            if ty:
                side[name] = ty
            buf = io.BytesIO()
            np.lib.format.write_array(buf, a, version=(1, 0), allow_pickle=False)
            zi = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = 0o644 << 16
            z.writestr(zi, buf.getvalue())
    sp = path.with_suffix(".json")
    if side:
        keys = sorted(side)
        text = "{\n" + "".join(f'"{k}": "{side[k]}"{"," if i + 1 < len(keys) else ""}\n'
                               for i, k in enumerate(keys)) + "}\n"
        sp.write_text(text)
    elif sp.exists():
        sp.unlink()
    return side


HLO_TYPE = {"bool": "pred", "int8": "s8", "int16": "s16", "int32": "s32",
            "int64": "s64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
            "uint64": "u64", "float16": "f16", "bfloat16": "bf16",
            "float32": "f32", "float64": "f64", "complex64": "c64",
            "complex128": "c128"}


def hlo_type(a):
    return HLO_TYPE[a.dtype.name]


def layout_types(text):
    """[(type, dims)] of the entry parameters and of the outputs, from the
    entry_computation_layout in the module header."""
    head = text.split("\n", 1)[0]
    m = re.search(r"entry_computation_layout=\{\((.*)\)->(.*)\}", head)
    if not m:
        raise ValueError("no entry_computation_layout")
    shp = re.compile(r"([a-z][a-z0-9]*)\[([0-9,]*)\]")

    def parse(s):
        s = re.sub(r"/\*.*?\*/", "", s)
        return [(t, tuple(int(d) for d in dims.split(",") if d))
                for t, dims in shp.findall(s)]
    return parse(m.group(1)), parse(m.group(2))


def check_against_layout(name, text, ins, outs):
    pin, pout = layout_types(text)
    got_in = [(hlo_type(a), tuple(a.shape)) for a in ins]
    got_out = [(hlo_type(a), tuple(a.shape)) for a in outs]
    if got_in != pin or got_out != pout:
        raise SystemExit(f"{name}: arrays do not match the entry layout:\n"
                         f"  layout in  {pin}\n  arrays in  {got_in}\n"
                         f"  layout out {pout}\n  arrays out {got_out}")


# ---------------------------------------------------------------- XLA:CPU

def run_hlo_text(text, args):
    """Compiles HLO text on the XLA:CPU client of jaxlib and runs it: the
    text is parsed into an HloModule, converted to MLIR (StableHLO plus mhlo
    for what StableHLO lacks) and compiled by the CPU client."""
    import jax
    import numpy as np
    from jax._src.lib import _jax
    import jaxlib._hlo as hlo
    m = hlo.hlo_module_from_text(text)
    comp = hlo.XlaComputation(m.as_serialized_hlo_module_proto())
    mlir = _jax.mlir.xla_computation_to_mlir_module(comp)
    dev = jax.devices("cpu")[:1]
    ex = dev[0].client.compile_and_load(mlir, dev, _jax.CompileOptions())
    with jax.enable_x64(True):  # else device_put narrows 64-bit arrays
        res = ex.execute([jax.device_put(np.asarray(a), dev[0]) for a in args])
    return [np.asarray(r) for r in res]


def same_bits(a, b):
    import numpy as np
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def max_diff(a, b):
    import numpy as np
    if a.dtype.kind in "fc" or a.dtype.name == "bfloat16":
        a64 = np.asarray(a, np.complex128 if a.dtype.kind == "c" else np.float64)
        b64 = np.asarray(b, a64.dtype)
        fin = np.isfinite(a64) & np.isfinite(b64)
        return float(np.max(np.abs(a64[fin] - b64[fin]), initial=0.0))
    return float(np.max(np.abs(a.astype(np.int64) - b.astype(np.int64)), initial=0))


# ---------------------------------------------------------------- cases

CASES = {}


def case(name, group, description, notes=""):
    def register(fn):
        CASES[name] = dict(name=name, group=group, description=description,
                           notes=notes, build=fn)
        return fn
    return register


class Jax:
    """A function lowered by JAX. platform None: the CPU lowering, outputs
    from jax.jit on the CPU. platform "tpu": the TPU lowering (plain HLO
    ops), outputs from that text on XLA:CPU (or, with expect_from_cpu_jit,
    from jax.jit on the CPU, when XLA:CPU cannot run the op itself)."""

    def __init__(self, f, args, platform=None, x64=False, expect_from_cpu_jit=False):
        self.f, self.args, self.platform, self.x64 = f, args, platform, x64
        self.expect_from_cpu_jit = expect_from_cpu_jit


class Hlo:
    """Hand-written HLO text. numpy_fn, when given, is the fallback for an
    op XLA:CPU refuses (the refusal is recorded)."""

    def __init__(self, text, args, numpy_fn=None, comparable=True):
        self.text, self.args, self.numpy_fn, self.comparable = text, args, numpy_fn, comparable


def rng_for(name):
    import numpy as np
    return np.random.default_rng(zlib.crc32(name.encode()))


def normal(rng, shape, dtype="float32", scale=1.0):
    import numpy as np
    import ml_dtypes
    x = (rng.standard_normal(shape) * scale).astype(np.float32)
    if dtype == "bfloat16":
        return x.astype(ml_dtypes.bfloat16)
    return x.astype(dtype)


def cnormal(rng, shape, dtype="complex64"):
    import numpy as np
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


# -- 1. convolution

def _conv(**kw):
    from jax import lax

    def f(x, w):
        return lax.conv_general_dilated(x, w, **kw)
    return f


def _conv_case(name, desc, xshape, wshape, dtype="float32", **kw):
    @case(name, "convolution", desc)
    def build():
        rng = rng_for(name)
        return Jax(_conv(**kw), [normal(rng, xshape, dtype), normal(rng, wshape, dtype)])


_conv_case("conv1d_nwc_wio_stride2_valid_f32",
           "1-D, NWC/WIO->NWC, stride 2, VALID padding", (2, 9, 3), (3, 3, 4),
           window_strides=(2,), padding="VALID", dimension_numbers=("NWC", "WIO", "NWC"))
_conv_case("conv1d_ncw_pad_stride2_lhs_rhs_dilation_f32",
           "1-D, NCW/OIW, stride 2, explicit padding (2,1), lhs_dilation 2 and "
           "rhs_dilation 2 together", (2, 3, 7), (4, 3, 3),
           window_strides=(2,), padding=((2, 1),), lhs_dilation=(2,), rhs_dilation=(2,),
           dimension_numbers=("NCW", "OIW", "NCW"))
_conv_case("conv2d_nchw_oihw_same_f32",
           "2-D, NCHW/OIHW->NCHW, stride 1, SAME padding", (2, 3, 6, 5), (4, 3, 3, 3),
           window_strides=(1, 1), padding="SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))
_conv_case("conv2d_nhwc_hwio_stride_valid_f32",
           "2-D, NHWC/HWIO->NHWC, strides 2x3, VALID", (2, 7, 8, 3), (3, 2, 3, 5),
           window_strides=(2, 3), padding="VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
_conv_case("conv2d_odd_dimension_numbers_f32",
           "2-D with permuted dimension numbers lhs HCNW, rhs WIOH, out WNCH "
           "(JAX prints dim_labels=1fb0_0io1->0bf1: spatial dims numbered in the order of "
           "the rhs spec), stride 1x2, SAME", (5, 2, 3, 6), (3, 2, 4, 3),
           window_strides=(1, 2), padding="SAME", dimension_numbers=("HCNW", "WIOH", "WNCH"))
_conv_case("conv2d_asym_pad_stride_rhs_dilation_f32",
           "2-D NCHW, explicit asymmetric padding ((1,2),(0,3)), stride 2x1, rhs_dilation "
           "2x1 (atrous, padding with dilation)", (2, 3, 7, 6), (4, 3, 3, 2),
           window_strides=(2, 1), padding=((1, 2), (0, 3)), rhs_dilation=(2, 1),
           dimension_numbers=("NCHW", "OIHW", "NCHW"))
_conv_case("conv2d_lhs_dilation_transposed_f32",
           "2-D NHWC, lhs_dilation 2x2 (transposed convolution), padding ((2,2),(1,2))",
           (1, 4, 3, 2), (3, 3, 2, 3),
           window_strides=(1, 1), padding=((2, 2), (1, 2)), lhs_dilation=(2, 2),
           dimension_numbers=("NHWC", "HWIO", "NHWC"))
_conv_case("conv2d_negative_padding_f32",
           "2-D NCHW, negative (cropping) explicit padding ((-1,1),(2,-2))", (1, 2, 6, 6),
           (3, 2, 2, 2), window_strides=(1, 1), padding=((-1, 1), (2, -2)),
           dimension_numbers=("NCHW", "OIHW", "NCHW"))
_conv_case("conv2d_depthwise_f32",
           "2-D NHWC depthwise: feature_group_count 3 = input features, 2 outputs per "
           "group, SAME", (2, 5, 5, 3), (3, 3, 1, 6),
           window_strides=(1, 1), padding="SAME", feature_group_count=3,
           dimension_numbers=("NHWC", "HWIO", "NHWC"))
_conv_case("conv2d_grouped_f32",
           "2-D NCHW grouped: feature_group_count 2, 4 in / 6 out features, stride 2, "
           "padding ((1,0),(0,1))", (2, 4, 6, 6), (6, 2, 3, 3),
           window_strides=(2, 2), padding=((1, 0), (0, 1)), feature_group_count=2,
           dimension_numbers=("NCHW", "OIHW", "NCHW"))
_conv_case("conv2d_batch_group_f32",
           "2-D NCHW, batch_group_count 2 (batch 4 -> 2, 4 out features), VALID",
           (4, 2, 5, 5), (4, 2, 3, 3),
           window_strides=(1, 1), padding="VALID", batch_group_count=2,
           dimension_numbers=("NCHW", "OIHW", "NCHW"))
_conv_case("conv3d_ndhwc_f32",
           "3-D NDHWC/DHWIO, strides 1x2x1, padding ((1,1),(0,1),(1,0)), rhs_dilation 1x1x2",
           (1, 4, 5, 6, 2), (2, 3, 2, 2, 3),
           window_strides=(1, 2, 1), padding=((1, 1), (0, 1), (1, 0)),
           rhs_dilation=(1, 1, 2), dimension_numbers=("NDHWC", "DHWIO", "NDHWC"))
_conv_case("conv2d_nchw_bf16",
           "2-D NCHW/OIHW in bf16 (bf16 result), stride 2, SAME (asymmetric here: pad=0_1)", (2, 3, 6, 6), (4, 3, 3, 3),
           dtype="bfloat16", window_strides=(2, 2), padding="SAME",
           dimension_numbers=("NCHW", "OIHW", "NCHW"))
_conv_case("conv2d_nhwc_f16",
           "2-D NHWC/HWIO in f16, rhs_dilation 2x2, VALID", (2, 7, 7, 2), (2, 2, 2, 3),
           dtype="float16", window_strides=(1, 1), padding="VALID", rhs_dilation=(2, 2),
           dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _conv_grad_case(name, desc, xshape, wshape, **kw):
    @case(name, "convolution", desc,
          notes="jax.grad of sum(conv(x, w) * g) w.r.t. x and w: the input gradient "
                "is a convolution of g with the reversed kernel (lhs_dilate = the "
                "forward stride, dim_labels swap i/o), the kernel gradient a "
                "convolution of x with g (rhs_dilate = the forward stride).")
    def build():
        import jax
        import jax.numpy as jnp
        rng = rng_for(name)
        conv = _conv(**kw)
        x, w = normal(rng, xshape), normal(rng, wshape)
        g = normal(rng, jax.eval_shape(conv, x, w).shape)

        def f(x, w, g):
            return jax.grad(lambda x, w: jnp.sum(conv(x, w) * g), argnums=(0, 1))(x, w)
        return Jax(f, [x, w, g])


_conv_grad_case("conv2d_grad_f32",
                "gradients of a 2-D NCHW conv (stride 2x1, padding ((1,2),(0,1)), "
                "rhs_dilation 2x1) w.r.t. input and kernel; outputs dx, dw",
                (2, 3, 7, 6), (4, 3, 3, 3), window_strides=(2, 1),
                padding=((1, 2), (0, 1)), rhs_dilation=(2, 1),
                dimension_numbers=("NCHW", "OIHW", "NCHW"))
_conv_grad_case("conv2d_grouped_grad_f32",
                "gradients of a grouped 2-D NHWC conv (feature_group_count 2, stride 2, "
                "SAME) w.r.t. input and kernel: the kernel gradient is a convolution "
                "with batch_group_count 2; outputs dx, dw",
                (2, 6, 6, 4), (3, 3, 2, 6), window_strides=(2, 2), padding="SAME",
                feature_group_count=2, dimension_numbers=("NHWC", "HWIO", "NHWC"))
_conv_grad_case("conv2d_depthwise_grad_f32",
                "gradients of a depthwise 2-D NCHW conv (feature_group_count 3, VALID) "
                "w.r.t. input and kernel; outputs dx, dw",
                (2, 3, 5, 5), (3, 1, 2, 2), window_strides=(1, 1), padding="VALID",
                feature_group_count=3, dimension_numbers=("NCHW", "OIHW", "NCHW"))


# -- 2. select-and-scatter

def _pool(window, strides, padding):
    import jax.numpy as jnp
    from jax import lax

    def pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, window, strides, padding)
    return pool


def _pool_grad_case(name, desc, shape, window, strides, padding, special=None):
    @case(name, "select-and-scatter", desc,
          notes="jax.vjp of lax.reduce_window(max); outputs the pooled forward value "
                "and dx. The gradient is a pad with -inf, select-and-scatter "
                "(select = compare GE, scatter = add, init 0) and a slice.")
    def build():
        import jax
        import numpy as np
        rng = rng_for(name)
        pool = _pool(window, strides, padding)
        # Few distinct values: many ties within a window.
        x = rng.integers(0, 3, shape).astype(np.float32)
        if special:
            special(x)
        g = normal(rng, jax.eval_shape(pool, x).shape)

        def f(x, g):
            y, vjp = jax.vjp(pool, x)
            return y, vjp(g)[0]
        return Jax(f, [x, g])


def _some_neg_inf(x):
    x.reshape(-1)[[0, 5, 17]] = -float("inf")


def _nan_and_inf(x):
    flat = x.reshape(-1)
    flat[[2, 9]] = float("nan")
    flat[[4, 11]] = float("inf")
    flat[[6]] = -float("inf")


_pool_grad_case("maxpool2d_grad_overlap_pad_f32",
                "max pool NHWC [2,6,6,3], window 3x3, stride 2x2, padding 1 each side "
                "(overlapping windows), inputs in {0,1,2} (ties) and some -inf",
                (2, 6, 6, 3), (1, 3, 3, 1), (1, 2, 2, 1),
                ((0, 0), (1, 1), (1, 1), (0, 0)), _some_neg_inf)
_pool_grad_case("maxpool2d_grad_ties_asym_pad_f32",
                "max pool NCHW [1,2,5,5], window 2x2, stride 1 (overlapping), asymmetric "
                "padding ((0,1),(1,0)), inputs in {0,1,2} (ties)",
                (1, 2, 5, 5), (1, 1, 2, 2), (1, 1, 1, 1),
                ((0, 0), (0, 0), (0, 1), (1, 0)))
_pool_grad_case("maxpool1d_grad_gaps_nan_f32",
                "max pool 1-D [2,11], window 2, stride 3 (gaps between windows), VALID; "
                "inputs with ties, NaN, +inf and -inf",
                (2, 11), (1, 2), (1, 3), ((0, 0), (0, 0)), _nan_and_inf)


@case("select_and_scatter_window_pad_hlo", "select-and-scatter",
      "hand-written HLO (JAX never puts padding in the select-and-scatter window: it pads "
      "with -inf first and slices after): select-and-scatter on f32 [2,5,5] with window "
      "size=1x3x3 stride=1x2x2 pad=0_0x1_1x1_1, select GE (max) / LE (min), scatter add, "
      "init 0 and 1.5; one with window size=1x2x2 stride 1 (overlapping) and select GT "
      "(the last of tied maxima wins instead of the first); inputs in {0,1,2} (ties), "
      "negative values so that the padding would win if it were selectable")
def _sas_hlo():
    import numpy as np
    rng = rng_for("select_and_scatter_window_pad_hlo")
    x = rng.integers(0, 3, (2, 5, 5)).astype(np.float32)
    x[1] -= 3.0  # all negative: padded positions must never be selected
    g = normal(rng, (2, 3, 3))
    g2 = normal(rng, (2, 4, 4))
    text = """HloModule select_and_scatter_window_pad_hlo, entry_computation_layout={(f32[2,5,5]{2,1,0}, f32[2,3,3]{2,1,0}, f32[2,4,4]{2,1,0})->(f32[2,5,5]{2,1,0}, f32[2,5,5]{2,1,0}, f32[2,5,5]{2,1,0}, f32[2,5,5]{2,1,0})}

ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GE
}

le {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LE
}

gt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GT
}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}

ENTRY main {
  x = f32[2,5,5]{2,1,0} parameter(0)
  g = f32[2,3,3]{2,1,0} parameter(1)
  g2 = f32[2,4,4]{2,1,0} parameter(2)
  zero = f32[] constant(0)
  init = f32[] constant(1.5)
  max = f32[2,5,5]{2,1,0} select-and-scatter(x, g, zero), window={size=1x3x3 stride=1x2x2 pad=0_0x1_1x1_1}, select=ge, scatter=add
  min = f32[2,5,5]{2,1,0} select-and-scatter(x, g, zero), window={size=1x3x3 stride=1x2x2 pad=0_0x1_1x1_1}, select=le, scatter=add
  maxi = f32[2,5,5]{2,1,0} select-and-scatter(x, g, init), window={size=1x3x3 stride=1x2x2 pad=0_0x1_1x1_1}, select=ge, scatter=add
  last = f32[2,5,5]{2,1,0} select-and-scatter(x, g2, zero), window={size=1x2x2}, select=gt, scatter=add
  ROOT t = (f32[2,5,5]{2,1,0}, f32[2,5,5]{2,1,0}, f32[2,5,5]{2,1,0}, f32[2,5,5]{2,1,0}) tuple(max, min, maxi, last)
}
"""
    return Hlo(text, [x, g, g2])


# -- 3. reduce-precision

def _rp_special_f32():
    import numpy as np
    bits = np.array([
        0x00000000, 0x80000000, 0x3F800000, 0xBF800000,   # 0, -0, 1, -1
        0x3F808000, 0x3F818000, 0x3F80FFFF, 0x3F807FFF,   # bf16 ties / near ties
        0x3F801000, 0x3F803000, 0x3F802000, 0x3F806000,   # f16 / e4m3 ties
        0x7F7FFFFF, 0xFF7FFFFF, 0x477FE000, 0x477FF000,   # f32 max, f16 max, f16 max + half ulp
        0x47800000, 0x00800000, 0x00000001, 0x00400000,   # 65536, min normal, min denormal, denormal
        0x807FFFFF, 0x387FC000, 0x38800000, 0x33800000,   # -max denormal, f16 denormals, 2^-24
        0x33000000, 0x337FFFFF, 0x7F800000, 0xFF800000,   # 2^-25 (f16 denormal tie), inf, -inf
        0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FA00000,   # qNaN, -qNaN, sNaN payload 1, payload high
        0x7F000000, 0x43700000, 0x43780000, 0x3E000000,   # 2^127, 240, 248, 0.125
    ], dtype=np.uint32)
    return bits.view(np.float32)


@case("reduce_precision_f32", "reduce-precision",
      "jax.lax.reduce_precision of f32 with (exponent, mantissa) bits (8,7) bf16-like, "
      "(5,10) f16-like, (4,3), (5,2), (3,0), (2,1), (1,0), (8,0), (8,23) (identity), "
      "(11,52) (wider than f32); inputs: rounding ties, NaN payloads, +-inf, denormals, "
      "overflow/underflow of the narrow formats, plus random values")
def _rp_f32():
    import numpy as np
    from jax import lax
    rng = rng_for("reduce_precision_f32")
    x = np.concatenate([_rp_special_f32(),
                        normal(rng, (28,)) * np.float32(10.0) ** rng.integers(-8, 8, 28).astype(np.float32)])
    settings = [(8, 7), (5, 10), (4, 3), (5, 2), (3, 0), (2, 1), (1, 0), (8, 0), (8, 23), (11, 52)]

    def f(x):
        return tuple(lax.reduce_precision(x, e, m) for e, m in settings)
    return Jax(f, [x.astype(np.float32)])


@case("reduce_precision_f16_bf16", "reduce-precision",
      "reduce_precision of f16 with (4,3), (5,2), (3,7) and of bf16 with (5,2), (8,3), "
      "(5,7); inputs with NaN, +-inf, denormals, ties")
def _rp_half():
    import numpy as np
    import ml_dtypes
    from jax import lax
    rng = rng_for("reduce_precision_f16_bf16")
    h = np.concatenate([np.array([0, -0.0, 1, -1, 1 + 2**-4, 1 + 3 * 2**-4, 65504, -65504,
                                  6.1e-5, 6e-8, 3e-8, 1e-6, np.inf, -np.inf, np.nan, 240, 248,
                                  0.1, 1000, 1e4], np.float32),
                        normal(rng, (12,)) * 10]).astype(np.float16)
    b = np.concatenate([np.array([0, -0.0, 1, -1, 1 + 2**-3, 1 + 3 * 2**-3, 3e38, -3e38,
                                  1e-38, 1e-40, 6.1e-5, 1e-7, np.inf, -np.inf, np.nan, 57344,
                                  61440, 65520, 1e5, 0.3], np.float32),
                        normal(rng, (12,)) * 10]).astype(ml_dtypes.bfloat16)

    def f(h, b):
        return (lax.reduce_precision(h, 4, 3), lax.reduce_precision(h, 5, 2),
                lax.reduce_precision(h, 3, 7), lax.reduce_precision(b, 5, 2),
                lax.reduce_precision(b, 8, 3), lax.reduce_precision(b, 5, 7))
    return Jax(f, [h, b])


@case("reduce_precision_f64", "reduce-precision",
      "reduce_precision of f64 with (8,23) f32-like, (5,10), (11,7) and (11,52) "
      "(identity); inputs with NaN, +-inf, f64 denormals, f32 overflow", )
def _rp_f64():
    import numpy as np
    from jax import lax
    rng = rng_for("reduce_precision_f64")
    x = np.concatenate([np.array([0, -0.0, 1, -1, 1 + 2**-24, 1 + 3 * 2**-24, 3.5e38, 3.4028235e38,
                                  1e-40, 1e-46, 5e-324, 1e-310, 1.7e308, -1.7e308, np.inf, -np.inf,
                                  np.nan, 65520, 1 + 2**-11, 1 + 2**-8], np.float64),
                        rng.standard_normal(12) * 10.0 ** rng.integers(-30, 30, 12)])

    def f(x):
        return (lax.reduce_precision(x, 8, 23), lax.reduce_precision(x, 5, 10),
                lax.reduce_precision(x, 11, 7), lax.reduce_precision(x, 11, 52))
    return Jax(f, [x], x64=True)


# -- 4. fft

@case("fft_ifft_c64", "fft",
      "jnp.fft.fft and ifft of c64 [3,8] over the last axis, fft with n=6 (truncation) "
      "and n=10 (zero padding), and fft over axis 0 (transposes around the fft)")
def _fft_c64():
    import jax.numpy as jnp
    x = cnormal(rng_for("fft_ifft_c64"), (3, 8))

    def f(x):
        return (jnp.fft.fft(x), jnp.fft.ifft(x), jnp.fft.fft(x, n=6), jnp.fft.fft(x, n=10),
                jnp.fft.fft(x, axis=0))
    return Jax(f, [x])


@case("rfft_irfft_f32", "fft",
      "jnp.fft.rfft of f32 [3,8] and [3,7] (odd length), irfft of a c64 [3,5] with the "
      "default n=8 and with n=7 (odd) and n=12 (zero padded); the irfft inputs are "
      "random, not Hermitian (the imaginary parts of the DC / Nyquist bins are not zero)")
def _rfft_f32():
    import jax.numpy as jnp
    rng = rng_for("rfft_irfft_f32")
    a, b, c = normal(rng, (3, 8)), normal(rng, (3, 7)), cnormal(rng, (3, 5))

    def f(a, b, c):
        return (jnp.fft.rfft(a), jnp.fft.rfft(b), jnp.fft.irfft(c), jnp.fft.irfft(c, n=7),
                jnp.fft.irfft(c, n=12))
    return Jax(f, [a, b, c])


@case("fftn_c64", "fft",
      "jnp.fft.fft2 / ifft2 over the last two axes and fftn / ifftn over all three axes "
      "of c64 [2,4,6] (fft_length of 2 and 3 dimensions)")
def _fftn_c64():
    import jax.numpy as jnp
    x = cnormal(rng_for("fftn_c64"), (2, 4, 6))

    def f(x):
        return jnp.fft.fft2(x), jnp.fft.ifft2(x), jnp.fft.fftn(x), jnp.fft.ifftn(x)
    return Jax(f, [x])


@case("rfftn_irfftn_f32", "fft",
      "jnp.fft.rfft2 and rfftn (3 axes) of f32 [2,4,6], irfft2 of c64 [2,4,4] (n 6) and "
      "irfftn (3 axes) of c64 [2,4,4] with s=(2,4,7) (odd last length)")
def _rfftn_f32():
    import jax.numpy as jnp
    rng = rng_for("rfftn_irfftn_f32")
    a, c = normal(rng, (2, 4, 6)), cnormal(rng, (2, 4, 4))

    def f(a, c):
        return (jnp.fft.rfft2(a), jnp.fft.rfftn(a), jnp.fft.irfft2(c, s=(4, 6)),
                jnp.fft.irfftn(c, s=(2, 4, 7)))
    return Jax(f, [a, c])


@case("fft_c128", "fft",
      "c128 (x64): fft and ifft of [3,8], fftn and ifftn over 3 axes of [2,4,6]")
def _fft_c128():
    import jax.numpy as jnp
    rng = rng_for("fft_c128")
    a, b = cnormal(rng, (3, 8), "complex128"), cnormal(rng, (2, 4, 6), "complex128")

    def f(a, b):
        return jnp.fft.fft(a), jnp.fft.ifft(a), jnp.fft.fftn(b), jnp.fft.ifftn(b)
    return Jax(f, [a, b], x64=True)


@case("rfft_irfft_f64", "fft",
      "f64 / c128 (x64): rfft of [3,8], irfft of c128 [3,5] (n 8), rfftn over 3 axes of "
      "[2,4,6], irfftn over 3 axes of c128 [2,4,4] with s=(2,4,6)")
def _rfft_f64():
    import numpy as np
    import jax.numpy as jnp
    rng = rng_for("rfft_irfft_f64")
    a, c = rng.standard_normal((3, 8)), cnormal(rng, (3, 5), "complex128")
    d, e = rng.standard_normal((2, 4, 6)), cnormal(rng, (2, 4, 4), "complex128")

    def f(a, c, d, e):
        return (jnp.fft.rfft(a), jnp.fft.irfft(c), jnp.fft.rfftn(d),
                jnp.fft.irfftn(e, s=(2, 4, 6)))
    return Jax(f, [a, c, d.astype(np.float64), e], x64=True)


# -- 5. cholesky, triangular-solve

def _spd(rng, n, batch, dtype):
    import numpy as np
    if dtype.startswith("complex"):
        m = cnormal(rng, (batch, n, n), dtype)
    else:
        m = normal(rng, (batch, n, n), dtype)
    a = m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n, dtype=dtype)
    return a.astype(dtype)


@case("cholesky_f32", "linalg",
      "jax.lax.linalg.cholesky of a batch of 3 SPD f32 [4,4] (symmetrize_input=True: "
      "(a + a^T) / 2 first), lower; JAX masks the upper triangle to 0 with a select")
def _chol_f32():
    return Jax(lambda a: __import__("jax").lax.linalg.cholesky(a),
               [_spd(rng_for("cholesky_f32"), 4, 3, "float32")], platform="tpu")


@case("cholesky_c64", "linalg",
      "jax.lax.linalg.cholesky of a batch of 2 Hermitian positive definite c64 [3,3] "
      "(symmetrize_input: (a + conj(a^T)) / 2), lower")
def _chol_c64():
    return Jax(lambda a: __import__("jax").lax.linalg.cholesky(a),
               [_spd(rng_for("cholesky_c64"), 3, 2, "complex64")], platform="tpu")


@case("cholesky_lower_upper_hlo", "linalg",
      "hand-written HLO: cholesky(a), lower=true and lower=false on batched f32 [2,4,4] "
      "and c64 [3,3]; each input's unread triangle is garbage (99 / 99+99i), which the op "
      "must ignore. The other triangle of the result is implementation-defined in XLA's "
      "spec; XLA:CPU writes zeros there",
      notes="XLA:CPU (its CholeskyExpander) gives NaN everywhere for a matrix that is not "
            "positive definite; no input here is.")
def _chol_hlo():
    import numpy as np
    rng = rng_for("cholesky_lower_upper_hlo")
    a = _spd(rng, 4, 2, "float32")
    al, au = a.copy(), a.copy()
    iu, il = np.triu_indices(4, 1), np.tril_indices(4, -1)
    al[:, iu[0], iu[1]] = 99.0
    au[:, il[0], il[1]] = 99.0
    c = _spd(rng, 3, 1, "complex64")[0]
    cl, cu = c.copy(), c.copy()
    cl[np.triu_indices(3, 1)] = 99 + 99j
    cu[np.tril_indices(3, -1)] = 99 + 99j
    text = """HloModule cholesky_lower_upper_hlo, entry_computation_layout={(f32[2,4,4]{2,1,0}, f32[2,4,4]{2,1,0}, c64[3,3]{1,0}, c64[3,3]{1,0})->(f32[2,4,4]{2,1,0}, f32[2,4,4]{2,1,0}, c64[3,3]{1,0}, c64[3,3]{1,0})}

ENTRY main {
  al = f32[2,4,4]{2,1,0} parameter(0)
  au = f32[2,4,4]{2,1,0} parameter(1)
  cl = c64[3,3]{1,0} parameter(2)
  cu = c64[3,3]{1,0} parameter(3)
  l = f32[2,4,4]{2,1,0} cholesky(al), lower=true
  u = f32[2,4,4]{2,1,0} cholesky(au), lower=false
  lc = c64[3,3]{1,0} cholesky(cl), lower=true
  uc = c64[3,3]{1,0} cholesky(cu), lower=false
  ROOT t = (f32[2,4,4]{2,1,0}, f32[2,4,4]{2,1,0}, c64[3,3]{1,0}, c64[3,3]{1,0}) tuple(l, u, lc, uc)
}
"""
    return Hlo(text, [al, au, cl, cu])


def _tri(rng, n, batch, dtype):
    """A well-conditioned matrix: a triangle with |diagonal| >= 2 and random
    other entries in the other triangle too (the solve must ignore them)."""
    import numpy as np
    if dtype.startswith("complex"):
        a = cnormal(rng, (batch, n, n), dtype)
    else:
        a = normal(rng, (batch, n, n), dtype)
    d = np.arange(n)
    a[:, d, d] = (2 + np.abs(a[:, d, d])) * np.sign(a[:, d, d].real + 0.5)
    return a.astype(dtype)


@case("triangular_solve_f32", "linalg",
      "jax.lax.linalg.triangular_solve, f32, a [2,4,4] (both triangles filled: only one is "
      "read), all 8 combinations of left_side / lower / transpose_a, unit_diagonal on every "
      "other one; b [2,4,3] (left) or [2,3,4] (right); 8 outputs")
def _trsm_f32():
    from jax import lax
    rng = rng_for("triangular_solve_f32")
    a = _tri(rng, 4, 2, "float32")
    bl, br = normal(rng, (2, 4, 3)), normal(rng, (2, 3, 4))
    combos = [(ls, lo, tr) for ls in (True, False) for lo in (True, False) for tr in (False, True)]

    def f(a, bl, br):
        return tuple(lax.linalg.triangular_solve(a, bl if ls else br, left_side=ls, lower=lo,
                                                 transpose_a=tr, unit_diagonal=(i % 2 == 1))
                     for i, (ls, lo, tr) in enumerate(combos))
    return Jax(f, [a, bl, br], platform="tpu")


@case("triangular_solve_c64", "linalg",
      "jax.lax.linalg.triangular_solve, c64, a [2,3,3]: transpose_a + conjugate_a "
      "(transpose_a=ADJOINT), transpose_a alone (TRANSPOSE), conjugate_a alone (JAX "
      "conjugates a explicitly, then NO_TRANSPOSE), on left and right sides, one unit_diagonal")
def _trsm_c64():
    from jax import lax
    rng = rng_for("triangular_solve_c64")
    a = _tri(rng, 3, 2, "complex64")
    bl, br = cnormal(rng, (2, 3, 2)), cnormal(rng, (2, 2, 3))

    def f(a, bl, br):
        ts = lax.linalg.triangular_solve
        return (ts(a, bl, left_side=True, lower=True, transpose_a=True, conjugate_a=True),
                ts(a, br, left_side=False, lower=False, transpose_a=True, conjugate_a=True),
                ts(a, bl, left_side=True, lower=False, transpose_a=True),
                ts(a, br, left_side=False, lower=True, conjugate_a=True),
                ts(a, bl, left_side=True, lower=True, unit_diagonal=True, transpose_a=True,
                   conjugate_a=True))
    return Jax(f, [a, bl, br], platform="tpu")


# -- 6. complex

def _complex_specials(dtype):
    import numpy as np
    inf, nan = np.inf, np.nan
    v = [0, complex(-0.0, 0.0), complex(0.0, -0.0), 1, -1, 1j, -1j, complex(-1, 0.0), complex(-1, -0.0),
         3 + 4j, -2.5 + 0.5j, 1e-3 - 2e-3j, 1e30 + 1e30j, 1e-30 - 1e-30j, 1e-40 + 1e-40j,
         complex(inf, 0), complex(-inf, 0), complex(0, inf), complex(inf, inf), complex(nan, 0),
         complex(0, nan), complex(1, nan), 50 + 50j, -50 - 0.5j, 0.5 + 700j]
    return np.array(v, dtype=dtype)


def _complex_case(name, dtype, x64):
    @case(name, "complex",
          f"{'c128 (x64)' if x64 else 'c64'} parameters and outputs: lax.complex, jnp.real, "
          "jnp.imag and elementwise add, subtract, multiply, divide, negate, abs, exp, log, "
          "sqrt, rsqrt, sin, cos, tanh, pow, sign, conj, expm1, compare EQ / NE, select; "
          "inputs with 0, -0, +-inf, NaN components, the branch cut (-1 +- 0i), huge and "
          "denormal magnitudes",
          notes="JAX expands complex exp, log, sqrt, sin, cos (and log1p) into real-valued "
                "ops (real, imag, atan2, log-plus-one, select, complex) itself; abs, rsqrt, "
                "tanh, power, sign and exponential-minus-one stay single HLO ops on complex "
                "operands. conj lowers to complex(real(x), negate(imag(x))). See "
                "complex_direct_ops_* for the single-op forms.")
    def build():
        import numpy as np
        import jax.numpy as jnp
        from jax import lax
        rng = rng_for(name)
        a = np.concatenate([_complex_specials(dtype), cnormal(rng, (7,), dtype)])
        b = np.concatenate([cnormal(rng, (25,), dtype), _complex_specials(dtype)[:7]])
        b[3] = a[3]  # equal elements for EQ / NE
        b[10] = 0
        fdt = "float64" if x64 else "float32"
        re_, im_ = normal(rng, (32,), fdt), normal(rng, (32,), fdt)
        re_[:4] = [0, -0.0, np.inf, np.nan]
        im_[:4] = [-0.0, np.nan, 1, -np.inf]

        def f(a, b, re_, im_):
            return (lax.complex(re_, im_), jnp.real(a), jnp.imag(a), a + b, a - b, a * b,
                    a / b, -a, lax.abs(a), lax.exp(a), lax.log(a), lax.sqrt(a), lax.rsqrt(a),
                    lax.sin(a), lax.cos(a), lax.tanh(a), lax.pow(a, b), lax.sign(a),
                    lax.conj(a), lax.expm1(a), a == b, a != b,
                    lax.select(jnp.real(a) > jnp.real(b), a, b))
        return Jax(f, [a, b, re_, im_], x64=x64)


_complex_case("complex_ops_c64", "complex64", False)
_complex_case("complex_ops_c128", "complex128", True)

DIRECT_UNARY = [("exponential", "exp"), ("log", "log"), ("sqrt", "sqrt"), ("rsqrt", "rsqrt"),
                ("sine", "sin"), ("cosine", "cos"), ("tanh", "tanh"), ("sign", "sign"),
                ("exponential-minus-one", "expm1"), ("log-plus-one", "log1p"),
                ("negate", "neg")]


def _direct_complex_case(name, ct, ft, dtype):
    @case(name, "complex",
          f"hand-written HLO with single {ct} ops: "
          + ", ".join(op for op, _ in DIRECT_UNARY) + ", abs (to " + ft + "), power, "
          "divide, multiply, real, imag, complex; same awkward inputs as complex_ops_*")
    def build():
        import numpy as np
        rng = rng_for(name)
        a = np.concatenate([_complex_specials(dtype), cnormal(rng, (7,), dtype)])
        b = np.concatenate([cnormal(rng, (25,), dtype), _complex_specials(dtype)[:7]])
        n = a.shape[0]
        s = f"{ct}[{n}]{{0}}"
        r = f"{ft}[{n}]{{0}}"
        lines = [f"  a = {s} parameter(0)", f"  b = {s} parameter(1)"]
        outs = []
        for op, short in DIRECT_UNARY:
            lines.append(f"  {short} = {s} {op}(a)")
            outs.append((short, s))
        lines += [f"  abs = {r} abs(a)", f"  pow = {s} power(a, b)", f"  div = {s} divide(a, b)",
                  f"  mul = {s} multiply(a, b)", f"  re = {r} real(a)", f"  im = {r} imag(b)",
                  f"  cx = {s} complex(re, im)"]
        outs += [("abs", r), ("pow", s), ("div", s), ("mul", s), ("cx", s)]
        tup = "(" + ", ".join(t for _, t in outs) + ")"
        lines.append(f"  ROOT t = {tup} tuple({', '.join(o for o, _ in outs)})")
        text = (f"HloModule {name}, entry_computation_layout={{({s}, {s})->{tup}}}\n\n"
                "ENTRY main {\n" + "\n".join(lines) + "\n}\n")
        return Hlo(text, [a, b])


_direct_complex_case("complex_direct_ops_c64", "c64", "f32", "complex64")
_direct_complex_case("complex_direct_ops_c128", "c128", "f64", "complex128")


# -- 7. shifts

def _shift_case(name, dtype, bits, signed):
    @case(name, "shift",
          f"shift-right-arithmetic, shift-right-logical, shift-left on {dtype}: every value "
          f"(0, 1, -1 / max, min, 0xDE.., random) against every shift amount 0..{bits + 1}"
          + (" and negative amounts (-1, min: huge as unsigned)" if signed else ""),
          notes="XLA shifts by amounts >= the bit width give 0 (logical, left) or the sign "
                "fill (arithmetic); unsigned values shift arithmetically on their sign bit "
                "(u8 0xDE >>a 2 = 0xF7).")
    def build():
        import numpy as np
        rng = rng_for(name)
        info = np.iinfo(dtype)
        de = int("DE" * (bits // 8), 16)
        vals = [0, 1, info.max, info.min, 2, 3, 0x5A5A5A5A5A5A5A5A & ((1 << bits) - 1), 7]
        vals.append(de - (1 << bits) if signed else de)
        vals.append(-1 if signed else info.max - 1)
        vals += list(rng.integers(info.min, info.max, 4, endpoint=True))
        x = np.array([v if signed or v >= 0 else v & ((1 << bits) - 1) for v in vals], dtype)
        amounts = list(range(bits + 2)) + ([-1, int(info.min), bits * 4] if signed else [bits * 4, info.max])
        s = np.array(amounts, dtype)
        xx, ss = np.meshgrid(x, s, indexing="ij")

        def f(x, s):
            from jax import lax
            return (lax.shift_right_arithmetic(x, s), lax.shift_right_logical(x, s),
                    lax.shift_left(x, s))
        return Jax(f, [xx.reshape(-1).copy(), ss.reshape(-1).copy()])


_shift_case("shifts_u8", "uint8", 8, False)
_shift_case("shifts_u16", "uint16", 16, False)
_shift_case("shifts_u32", "uint32", 32, False)
_shift_case("shifts_s8", "int8", 8, True)
_shift_case("shifts_s32", "int32", 32, True)


# -- 8. ragged dot, random, dynamic shapes, copies, async, collectives

def _ragged_inputs(name):
    import numpy as np
    rng = rng_for(name)
    lhs, rhs = normal(rng, (8, 4)), normal(rng, (3, 4, 5))
    # An empty group, and sizes summing to 7 < 8: row 7 belongs to no group.
    return lhs, rhs, np.array([3, 0, 4], np.int32)


@case("ragged_dot_cpu_lowering_f32", "ragged-dot",
      "jax.lax.ragged_dot(lhs [8,4], rhs [3,4,5], group_sizes [3,0,4]) as JAX lowers it on "
      "the CPU: a cumsum (reduce-window), masks (iota, compare, select) and one dot; an "
      "empty group and a row in no group (output row 7 is 0)")
def _ragged_cpu():
    from jax import lax
    return Jax(lambda l, r, g: lax.ragged_dot(l, r, g), list(_ragged_inputs("ragged_dot_f32")))


@case("ragged_dot_f32", "ragged-dot",
      "the same ragged_dot lowered for TPU: one `ragged-dot` op (lhs_contracting_dims={1}, "
      "rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}); same inputs as "
      "ragged_dot_cpu_lowering_f32",
      notes="XLA:CPU cannot run ragged-dot (UNIMPLEMENTED in its ThunkEmitter); the outputs "
            "are XLA:CPU's for JAX's CPU decomposition of the same call (the "
            "ragged_dot_cpu_lowering_f32 module), on the same inputs.")
def _ragged_tpu():
    from jax import lax
    return Jax(lambda l, r, g: lax.ragged_dot(l, r, g), list(_ragged_inputs("ragged_dot_f32")),
               platform="tpu", expect_from_cpu_jit=True)


@case("ragged_dot_contracting_f32", "ragged-dot",
      "jax.lax.ragged_dot_general with the ragged dimension contracting: lhs [3,8], rhs "
      "[8,5], group_sizes [3,0,4] over k -> out [3 groups,3,5] (lhs_ragged_dims={1}, no "
      "rhs_group_dims), lowered for TPU (one ragged-dot)",
      notes="Outputs from XLA:CPU running JAX's CPU decomposition of the same call (masks + "
            "a batched dot), as XLA:CPU cannot run ragged-dot.")
def _ragged_contract():
    import numpy as np
    from jax import lax
    rng = rng_for("ragged_dot_contracting_f32")
    dn = lax.RaggedDotDimensionNumbers(dot_dimension_numbers=(([1], [0]), ([], [])),
                                       lhs_ragged_dimensions=[1], rhs_group_dimensions=[])
    return Jax(lambda l, r, g: lax.ragged_dot_general(l, r, g, dn),
               [normal(rng, (3, 8)), normal(rng, (8, 5)), np.array([3, 0, 4], np.int32)],
               platform="tpu", expect_from_cpu_jit=True)


@case("rng_bit_generator_lax", "random",
      "jax.lax.rng_bit_generator with algorithm DEFAULT, THREE_FRY and PHILOX; u32 key [4] "
      "(bitcast to the u64[2] state), u32 [2,3], u64 [5] and u8 [7] outputs; outputs are "
      "(new state, bits) per call",
      notes="THREE_FRY and PHILOX are fully specified; rng_default is the backend's choice "
            "(XLA:CPU's here).")
def _rbg_lax():
    import numpy as np
    import jax.numpy as jnp
    from jax import lax
    key = np.array([0x12345678, 0x9ABCDEF0, 0, 0xFFFFFFFF], np.uint32)
    A = lax.RandomAlgorithm

    def f(k):
        out = []
        for alg in (A.RNG_DEFAULT, A.RNG_THREE_FRY, A.RNG_PHILOX):
            out += list(lax.rng_bit_generator(k, (2, 3), dtype=jnp.uint32, algorithm=alg))
        out += list(lax.rng_bit_generator(k, (5,), dtype=jnp.uint64, algorithm=A.RNG_PHILOX))
        out += list(lax.rng_bit_generator(k, (7,), dtype=jnp.uint8, algorithm=A.RNG_THREE_FRY))
        return tuple(out)
    return Jax(f, [key], x64=True)


RANDOM_NOTE = ("The typed key parameter arrives as its key data and passes through a "
               "`custom-call(k), custom_call_target=\"Sharding\", sharding={replicated}` "
               "(an identity) first.")


def _random_case(name, impl, desc, notes=""):
    @case(name, "random", desc, notes=(notes + " " + RANDOM_NOTE).strip())
    def build():
        import jax
        import jax.numpy as jnp
        key = jax.random.key(42, impl=impl)

        def f(k):
            k1, k2, k3 = jax.random.split(k, 3)
            return (jax.random.uniform(k1, (2, 4)), jax.random.normal(k2, (6,)),
                    jax.random.bits(k3, (5,), jnp.uint32),
                    jax.random.randint(k1, (4,), -5, 5, jnp.int32))
        return Jax(f, [key])


_random_case("jax_random_threefry", "threefry2x32",
             "jax.random with the default key impl (threefry2x32, key data u32[2]): split, "
             "uniform f32, normal f32, bits u32, randint s32; threefry is plain u32 "
             "arithmetic and shifts, in while loops (rounds of the hash)")
_random_case("jax_random_rbg", "rbg",
             "jax.random with impl='rbg' (key data u32[4]): split, uniform, normal, bits, "
             "randint, via rng-bit-generator algorithm=rng_default",
             notes="rng_default is XLA:CPU's choice of algorithm.")
_random_case("jax_random_unsafe_rbg", "unsafe_rbg",
             "jax.random with impl='unsafe_rbg' (key data u32[4]): split, uniform, normal, "
             "bits, randint, via rng-bit-generator algorithm=rng_default",
             notes="rng_default is XLA:CPU's choice of algorithm.")


@case("rng_uniform_normal_hlo", "random",
      "hand-written HLO: XLA's old rng op, rng(0, 1) distribution=rng_uniform f32 [64], "
      "rng(-3, 4) rng_uniform s32 [64], rng(0, 1) distribution=rng_normal f32 [64]",
      notes="The values are XLA:CPU's but are NOT comparable (the rng op is seeded by the "
            "backend); compare only shapes, types and ranges: uniform f32 in [0, 1), s32 "
            "in [-3, 4), normal finite.")
def _rng_hlo():
    text = """HloModule rng_uniform_normal_hlo, entry_computation_layout={(f32[])->(f32[64]{0}, s32[64]{0}, f32[64]{0})}

ENTRY main {
  one = f32[] parameter(0)
  zero = f32[] constant(0)
  u = f32[64]{0} rng(zero, one), distribution=rng_uniform
  lo = s32[] constant(-3)
  hi = s32[] constant(4)
  i = s32[64]{0} rng(lo, hi), distribution=rng_uniform
  n = f32[64]{0} rng(zero, one), distribution=rng_normal
  ROOT t = (f32[64]{0}, s32[64]{0}, f32[64]{0}) tuple(u, i, n)
}
"""
    import numpy as np
    return Hlo(text, [np.array(1.0, np.float32)], comparable=False)


@case("dynamic_shape_ops_static_f32", "dynamic-shape",
      "hand-written HLO on static shapes: get-dimension-size of both dims of f32 [3,4] "
      "(3, 4), set-dimension-size to the full size (identity), dynamic-reshape to [4,3] "
      "and [2,6] with sizes from constants and from get-dimension-size")
def _dyn():
    text = """HloModule dynamic_shape_ops_static_f32, entry_computation_layout={(f32[3,4]{1,0})->(s32[], s32[], f32[3,4]{1,0}, f32[4,3]{1,0}, f32[2,6]{1,0})}

ENTRY main {
  a = f32[3,4]{1,0} parameter(0)
  d0 = s32[] get-dimension-size(a), dimensions={0}
  d1 = s32[] get-dimension-size(a), dimensions={1}
  four = s32[] constant(4)
  s = f32[3,4]{1,0} set-dimension-size(a, four), dimensions={1}
  r = f32[4,3]{1,0} dynamic-reshape(s, d1, d0)
  two = s32[] constant(2)
  six = s32[] constant(6)
  r2 = f32[2,6]{1,0} dynamic-reshape(a, two, six)
  ROOT t = (s32[], s32[], f32[3,4]{1,0}, f32[4,3]{1,0}, f32[2,6]{1,0}) tuple(d0, d1, s, r, r2)
}
"""
    return Hlo(text, [normal(rng_for("dynamic_shape_ops_static_f32"), (3, 4))])


@case("copy_start_done_f32", "async",
      "hand-written HLO: copy-start / copy-done (shape (dest, src, u32[] context)) of f32 "
      "[2,3] and of bf16 [4], plus a plain copy",
      notes="numpy: XLA:CPU refuses copy-start (this module fails XLA's verifier after "
            "jaxlib's HLO -> MLIR -> HLO round trip; a module with a single copy-start / "
            "copy-done pair gets through and is refused with 'HLO opcode `copy-start` is not "
            "supported by XLA:CPU ThunkEmitter'). Semantics: copy-done returns a copy of the "
            "copy-start operand.")
def _copy():
    import numpy as np
    rng = rng_for("copy_start_done_f32")
    text = """HloModule copy_start_done_f32, entry_computation_layout={(f32[2,3]{1,0}, bf16[4]{0})->(f32[2,3]{1,0}, bf16[4]{0}, f32[2,3]{1,0})}

ENTRY main {
  a = f32[2,3]{1,0} parameter(0)
  b = bf16[4]{0} parameter(1)
  cs = (f32[2,3]{1,0}, f32[2,3]{1,0}, u32[]) copy-start(a)
  cd = f32[2,3]{1,0} copy-done(cs)
  bs = (bf16[4]{0}, bf16[4]{0}, u32[]) copy-start(b)
  bd = bf16[4]{0} copy-done(bs)
  c = f32[2,3]{1,0} copy(a)
  ROOT t = (f32[2,3]{1,0}, bf16[4]{0}, f32[2,3]{1,0}) tuple(cd, bd, c)
}
"""
    return Hlo(text, [normal(rng, (2, 3)), normal(rng, (4,), "bfloat16")],
               numpy_fn=lambda a, b: [a.copy(), b.copy(), a.copy()])


@case("async_start_done_f32", "async",
      "hand-written HLO: async-start / async-update / async-done wrapping an add (calls= a "
      "computation whose root is the add), and the same with the short form "
      "multiply-start / multiply-done that XLA's printer uses",
      notes="numpy: XLA:CPU cannot run it through jaxlib: jaxlib compiles only MLIR, and "
            "its HLO -> MLIR (mhlo.async_start / async_done) -> HLO round trip rebuilds the "
            "async computation with a tuple root, which XLA rejects (a layout error here; "
            "'async-done expects the shape of output to match the async shape' for a lone "
            "add-start / add-done; an async computation with more than its root and "
            "parameters is refused outright). Semantics: async-done returns the wrapped op's "
            "result: a + b and a * b. The parser prints async-start(..., calls=%c) wrapping "
            "a single add as add-start(...) / add-done(...), without the computation.")
def _async():
    rng = rng_for("async_start_done_f32")
    text = """HloModule async_start_done_f32, entry_computation_layout={(f32[4]{0}, f32[4]{0})->(f32[4]{0}, f32[4]{0})}

%add_wrapped (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  ROOT %add = f32[4]{0} add(f32[4]{0} %x, f32[4]{0} %y)
}

ENTRY %main (a: f32[4], b: f32[4]) -> (f32[4], f32[4]) {
  %a = f32[4]{0} parameter(0)
  %b = f32[4]{0} parameter(1)
  %start = ((f32[4]{0}, f32[4]{0}), f32[4]{0}, u32[]) async-start(f32[4]{0} %a, f32[4]{0} %b), calls=%add_wrapped
  %update = ((f32[4]{0}, f32[4]{0}), f32[4]{0}, u32[]) async-update(((f32[4]{0}, f32[4]{0}), f32[4]{0}, u32[]) %start)
  %done = f32[4]{0} async-done(((f32[4]{0}, f32[4]{0}), f32[4]{0}, u32[]) %update)
  %mstart = ((f32[4]{0}, f32[4]{0}), f32[4]{0}, u32[]) multiply-start(f32[4]{0} %a, f32[4]{0} %b)
  %mdone = f32[4]{0} multiply-done(((f32[4]{0}, f32[4]{0}), f32[4]{0}, u32[]) %mstart)
  ROOT %t = (f32[4]{0}, f32[4]{0}) tuple(f32[4]{0} %done, f32[4]{0} %mdone)
}
"""
    return Hlo(text, [normal(rng, (4,)), normal(rng, (4,))],
               numpy_fn=lambda a, b: [a + b, a * b])


@case("collective_broadcast_f32", "collective",
      "hand-written HLO: collective-broadcast of f32 [2,3] and s32 [4] with "
      "replica_groups={{0}} (one group of the one device): the identity",
      notes="numpy: XLA:CPU refuses collective-broadcast (UNIMPLEMENTED in its "
            "ThunkEmitter). Semantics: each device of a group receives the first device's "
            "operand; with one device that is the operand itself.")
def _cbcast():
    import numpy as np
    rng = rng_for("collective_broadcast_f32")
    text = """HloModule collective_broadcast_f32, entry_computation_layout={(f32[2,3]{1,0}, s32[4]{0})->(f32[2,3]{1,0}, s32[4]{0})}

ENTRY main {
  a = f32[2,3]{1,0} parameter(0)
  b = s32[4]{0} parameter(1)
  ca = f32[2,3]{1,0} collective-broadcast(a), replica_groups={{0}}
  cb = s32[4]{0} collective-broadcast(b), replica_groups={{0}}, channel_id=1
  ROOT t = (f32[2,3]{1,0}, s32[4]{0}) tuple(ca, cb)
}
"""
    return Hlo(text, [normal(rng, (2, 3)), rng.integers(-100, 100, 4).astype(np.int32)],
               numpy_fn=lambda a, b: [a.copy(), b.copy()])


@case("stochastic_convert_hlo", "stochastic-convert",
      "hand-written HLO (jax.lax exposes no stochastic rounding): stochastic-convert "
      "f32 -> s32 and f32 -> s8 with u32 random bits, f16 -> s16 with u16 random bits; "
      "halves, quarters, negatives, NaN, +-inf and out-of-range values against random bits "
      "0, 2^31, 2^32-1 and random",
      notes="XLA:CPU supports float -> integer only (f32 -> bf16 is 'Unsupported "
            "stochastic convert'); the random operand must have the operand's bit width. "
            "Rounding is on the magnitude: up when random < fraction * 2^bits; NaN -> 0; "
            "out of range saturates.")
def _sconv():
    import numpy as np
    rng = rng_for("stochastic_convert_hlo")
    x = np.array([1.25, -1.25, 2.5, -2.5, 0.75, -0.75, 3.0, -0.0, 1e10, -1e10, np.inf, -np.inf,
                  np.nan, 127.5, -128.5, 200.0], np.float32)
    x = np.concatenate([x, normal(rng, (16,)) * 50])
    u = np.concatenate([np.array([0, 0x40000000, 0x80000000, 0x80000000, 0xBFFFFFFF, 0xC0000000,
                                  7, 0xFFFFFFFF, 0, 0, 1, 1, 5, 0xFFFFFFFF, 0, 0x7FFFFFFF],
                                 np.uint32),
                        rng.integers(0, 2**32, 16, dtype=np.uint64).astype(np.uint32)])
    h = np.concatenate([np.array([1.25, -1.25, 2.5, -2.5, 0.75, 6e4, -6e4, np.inf, np.nan,
                                  32767.0, 1e-3, -0.5], np.float16),
                        (normal(rng, (20,)) * 100).astype(np.float16)])
    v = np.concatenate([np.array([0, 0x4000, 0x8000, 0x8000, 0xBFFF, 0, 1, 0, 0, 0xFFFF, 0xFFFF,
                                  0x8000], np.uint16),
                        rng.integers(0, 2**16, 20).astype(np.uint16)])
    text = """HloModule stochastic_convert_hlo, entry_computation_layout={(f32[32]{0}, u32[32]{0}, f16[32]{0}, u16[32]{0})->(s32[32]{0}, s8[32]{0}, s16[32]{0})}

ENTRY main {
  x = f32[32]{0} parameter(0)
  u = u32[32]{0} parameter(1)
  h = f16[32]{0} parameter(2)
  v = u16[32]{0} parameter(3)
  r32 = s32[32]{0} stochastic-convert(x, u)
  r8 = s8[32]{0} stochastic-convert(x, u)
  r16 = s16[32]{0} stochastic-convert(h, v)
  ROOT t = (s32[32]{0}, s8[32]{0}, s16[32]{0}) tuple(r32, r8, r16)
}
"""
    return Hlo(text, [x, u, h, v])


# ---------------------------------------------------------------- TensorFlow

TF_CASE = "tf_topk_f32"
TF_DESC = ("TensorFlow tf.math.top_k(x, k=4) of f32 [3,12] through tf.function("
           "jit_compile=True), the HLO before optimizations "
           "(experimental_get_compiler_ir(x)(stage='hlo')): iota + a stable two-operand "
           "sort with a TOTALORDER GT comparator, slices and set-dimension-size to k; "
           "inputs with ties, +-0, +-inf and NaN")
TF_NOTES = ("Outputs are TensorFlow's (its XLA:CPU JIT). The text is TF's as printed, with "
            "operand shapes inline (old printer style), parameter_replication and "
            "op_type/op_name/source_file metadata; the source_file paths were cut to their "
            "base names (the one edit).")


def tf_worker(out):
    """Runs in the TensorFlow venv: writes <out>/tf_topk_f32.hlo and a
    temporary npz with the input and TF's outputs."""
    import numpy as np
    import tensorflow as tf
    rng = rng_for(TF_CASE)
    x = rng.integers(-3, 4, (3, 12)).astype(np.float32)  # ties
    x[0, :6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 3.0]
    x[1] = rng.standard_normal(12).astype(np.float32)
    x[1, [2, 7]] = [-0.0, 0.0]
    x[2, [0, 5, 9]] = [np.nan, -np.nan, np.inf]

    @tf.function(jit_compile=True)
    def f(x):
        v, i = tf.math.top_k(x, k=4)
        return v, i
    xt = tf.constant(x)
    text = f.experimental_get_compiler_ir(xt)(stage="hlo")
    text = re.sub(r'source_file="[^"]*/([^"/]*)"', r'source_file="\1"', text)
    v, i = f(xt)
    Path(out, TF_CASE + ".hlo").write_text(text)
    write_npz(Path(out, TF_CASE + ".tf.npz"),
              [("in0", x), ("out0", v.numpy()), ("out1", i.numpy())])
    print(json.dumps(dict(tensorflow=tf.__version__, numpy=np.__version__)))


def ensure_tf_venv(make):
    py = TF_VENV / "bin" / "python"
    stamp = TF_VENV / "hlo-opt-pins.txt"
    want = "\n".join(TF_PINS) + "\n"
    if py.exists() and stamp.exists() and stamp.read_text() == want:
        return py
    if py.exists() and not stamp.exists():
        # Made by hand with the pins: check, then stamp.
        p = subprocess.run([str(py), "-m", "pip", "freeze"], capture_output=True, text=True)
        have = p.stdout.lower().replace("_", "-")
        if all(pin.lower() in have for pin in TF_PINS):
            stamp.write_text(want)
            return py
    if not make:
        return None
    log(f"making {TF_VENV} with {' '.join(TF_PINS)}")
    base = getattr(sys, "_base_executable", None) or "python3"
    subprocess.run([base, "-m", "venv", str(TF_VENV)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", *TF_PINS], check=True)
    stamp.write_text(want)
    return py


# ---------------------------------------------------------------- driver

def versions():
    from importlib.metadata import version
    return {p: version(p) for p in ("jax", "jaxlib", "numpy", "ml_dtypes")}


def lower_text(spec):
    import jax
    traced = jax.jit(spec.f).trace(*spec.args)
    if spec.platform:
        low = traced.lower(lowering_platforms=(spec.platform,))
    else:
        low = traced.lower()
    return low.as_text(dialect="hlo")


def host(args):
    """Key arrays as their key data; everything else as numpy."""
    import jax
    import numpy as np
    out = []
    for a in args:
        if hasattr(a, "dtype") and jax.dtypes.issubdtype(a.dtype, jax.dtypes.prng_key):
            out.append(np.asarray(jax.random.key_data(a)))
        else:
            out.append(np.asarray(a))
    return out


def leaves(x):
    import jax
    import numpy as np
    return [np.asarray(v) for v in jax.tree.leaves(x)]


def gen_one(c, out):
    import contextlib
    import jax
    spec = c["build"]()
    info = dict(name=c["name"], group=c["group"], description=c["description"],
                notes=c["notes"])
    if isinstance(spec, Jax):
        ctx = jax.enable_x64(True) if spec.x64 else contextlib.nullcontext()
        with ctx:
            spec.f.__name__ = spec.f.__qualname__ = c["name"]
            text = lower_text(spec)
            ins = host(spec.args)
            if spec.platform and not spec.expect_from_cpu_jit:
                outs = run_hlo_text(text, ins)
                info["source"] = "XLA:CPU, the stored text (JAX lowered it for TPU)"
                info["check"] = "-"
            else:
                outs = leaves(jax.jit(spec.f)(*spec.args))
                if spec.platform:
                    info["source"] = ("XLA:CPU, jax.jit on the CPU of the same call (JAX's "
                                      "CPU decomposition; XLA:CPU cannot run the op)")
                    try:
                        run_hlo_text(text, ins)
                        info["check"] = "the stored text ran on XLA:CPU?!"
                    except Exception as e:  # noqa: BLE001
                        info["check"] = "text refused: " + first_line(e)
                else:
                    info["source"] = "XLA:CPU, jax.jit on the CPU"
                    again = run_hlo_text(text, ins)
                    info["check"] = compare(outs, again)
    else:
        text, ins = spec.text, [a for a in spec.args]
        try:
            outs = run_hlo_text(text, ins)
            info["source"] = "XLA:CPU, the stored hand-written text"
            info["check"] = "-" if spec.comparable else "values not comparable (rng)"
            if spec.numpy_fn:
                info["check"] = compare(outs, spec.numpy_fn(*ins)) + " vs numpy"
        except Exception as e:  # noqa: BLE001
            if not spec.numpy_fn:
                raise
            outs = spec.numpy_fn(*ins)
            info["source"] = "numpy (documented semantics)"
            info["check"] = "XLA:CPU refused: " + first_line(e)
    write_case(c["name"], text, ins, outs, out, info)
    return info


def first_line(e):
    s = str(e).strip().splitlines()[0]
    return s[:160]


def compare(a, b):
    if len(a) != len(b):
        return f"DIFFERS: {len(a)} vs {len(b)} outputs"
    bad = [i for i, (x, y) in enumerate(zip(a, b)) if not same_bits(x, y)]
    if not bad:
        return "text rerun: same bits"
    return "text rerun: differs in " + ", ".join(
        f"out{i} (max abs diff {max_diff(a[i], b[i]):.3g})" for i in bad)


def write_case(name, text, ins, outs, out, info):
    import numpy as np
    check_against_layout(name, text, ins, outs)
    (out / f"{name}.hlo").write_text(text)
    members = [(f"in{i}", a) for i, a in enumerate(ins)] + \
              [(f"out{i}", np.asarray(a)) for i, a in enumerate(outs)]
    side = write_npz(out / f"{name}.npz", members)
    info["inputs"] = [f"{hlo_type(a)}[{','.join(map(str, a.shape))}]" for a in ins]
    info["outputs"] = [f"{hlo_type(np.asarray(a))}[{','.join(map(str, np.shape(a)))}]"
                       for a in outs]
    info["complex"] = any(np.asarray(a).dtype.kind == "c" for a in list(ins) + list(outs))
    info["sidecar"] = bool(side)
    info["bytes"] = sum((out / f"{name}{ext}").stat().st_size
                        for ext in (".hlo", ".npz", ".json") if (out / f"{name}{ext}").exists())
    log(f"  {name}: {info['bytes']} bytes; {info['source']}; {info['check']}")


def gen_tf(out, make_venv):
    py = ensure_tf_venv(make_venv)
    if py is None:
        return None, None, "no TensorFlow venv (run without --no-tf-install)"
    p = subprocess.run([str(py), str(Path(__file__).resolve()), "--tf-worker", str(out)],
                       capture_output=True, text=True, env=dict(os.environ))
    if p.returncode != 0:
        return None, None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    vers = json.loads(p.stdout.strip().splitlines()[-1])
    import numpy as np
    tmp = out / f"{TF_CASE}.tf.npz"
    with np.load(tmp) as z:
        ins, outs = [z["in0"]], [z["out0"], z["out1"]]
    tmp.unlink()
    text = (out / f"{TF_CASE}.hlo").read_text()
    info = dict(name=TF_CASE, group="tensorflow", description=TF_DESC, notes=TF_NOTES,
                source="TensorFlow's XLA:CPU JIT (tf.function(jit_compile=True))")
    try:
        info["check"] = compare(outs, run_hlo_text(text, ins)).replace(
            "text rerun", "text rerun on jaxlib's XLA:CPU")
    except Exception as e:  # noqa: BLE001
        info["check"] = "jaxlib's XLA:CPU refused the text: " + first_line(e)
    write_case(TF_CASE, text, ins, outs, out, info)
    return vers, info, None


def write_readme(out, infos, vers, tf_vers, tf_skip):
    rows = []
    for i in infos:
        rows.append(f"| `{i['name']}` | {i['group']} | {i['description']} | {i['source']} | "
                    f"{i['check']} | {i['bytes']} |")
    by_note = {}
    for i in infos:
        if i.get("notes"):
            by_note.setdefault(i["notes"], []).append(f"`{i['name']}`")
    notes = "\n".join(f"- {', '.join(names)}: {n}" for n, names in by_note.items())
    cplx = ", ".join(f"`{i['name']}`" for i in infos if i.get("complex"))
    side = ", ".join(f"`{i['name']}`" for i in infos if i.get("sidecar"))
    total = sum(i["bytes"] for i in infos)
    tf_line = (f"tensorflow-cpu {tf_vers['tensorflow']} (numpy {tf_vers['numpy']}) in "
               "`~/.cache/hlo-opt-frontends/tf`" if tf_vers else f"TensorFlow case not regenerated: {tf_skip}")
    text = f"""# XLA:CPU references for the interpreter (`interp_xla/`)

Small real HLO modules for the ops `hlo-opt eval` does not evaluate yet, each
with seeded inputs and the outputs XLA:CPU computes for them. Nobody edited
these files by hand (except the hand-written HLO cases, whose text is in the
generator).

## Regenerate

```sh
~/.cache/hlo-opt-frontends/jax/bin/python scripts/gen_interp_refs.py
```

The jax venv is the one `scripts/gen_frontend_models.py` makes
(`{' '.join(JAX_PINS)}`); the TensorFlow case runs in a second venv,
`~/.cache/hlo-opt-frontends/tf` with `{' '.join(TF_PINS)}`, which the script makes when it is
missing (`--no-tf` skips the TF case and keeps its files). `--only NAME ...`
regenerates some cases, `--list` lists them. About a minute. For given pins
the files come out the same each run: fixed seeds (numpy `default_rng`,
seeded with the crc32 of the case name) and fixed zip timestamps.

Generated with jax {vers['jax']}, jaxlib {vers['jaxlib']}, numpy {vers['numpy']},
ml_dtypes {vers['ml_dtypes']}; {tf_line}. Python {sys.version.split()[0]}.

## Files

Per case: `<case>.hlo`, `<case>.npz` and, where a member is bf16, the
sidecar `<case>.json` (`{{"in1": "bf16"}}`: the member holds the raw bits
as `uint16`), the layout `src/interp/npy.rs` reads (`read_inputs`,
`read_outputs`, `read_sidecar`): `in0..inN` are the entry parameters in
parameter order, `out0..outM` the leaves of the entry root (a flat tuple, or
the one array), C order, shapes and types as in the module's
`entry_computation_layout` (the generator checks that). Scalars are 0-d.

Complex arrays are stored as numpy `complex64` / `complex128` (`<c8` /
`<c16`, real and imaginary parts interleaved), which `npy.rs` does not read
yet: {cplx}.

Bit-stored members (sidecar): {side or 'none'}.

`index.json` repeats the table below as data (per case: source, check,
input and output types, bytes). The hand-written modules are as written, not
in XLA's printer order: `hlo-opt --passes ''` reprints them with the
parameters moved, so they are no byte round trip; every JAX- and TF-printed
module is.

## Where the outputs come from

- **XLA:CPU, jax.jit on the CPU**: the module is
  `jax.jit(f).lower(*args).as_text(dialect="hlo")` (JAX_PLATFORMS=cpu,
  `jax_hlo_source_file_canonicalization_regex` = `.*/`); the outputs are
  `jax.jit(f)(*args)`. The stored text was also compiled again on XLA:CPU and
  run on the same inputs (the *check* column).
- **XLA:CPU, the stored text (JAX lowered it for TPU)**: on the CPU, JAX
  lowers `cholesky` and `triangular_solve` to LAPACK custom calls
  (`lapack_spotrf_ffi`, `lapack_strsm_ffi`); lowered with
  `lowering_platforms=("tpu",)` it emits the plain `cholesky` /
  `triangular-solve` ops. The outputs are that text run on XLA:CPU (its
  expanders), never a TPU.
- **XLA:CPU, the stored hand-written text**: HLO written in the generator,
  run on XLA:CPU.
- How text is run on XLA:CPU: jaxlib 0.10.2 compiles only MLIR, so the text
  goes `jaxlib._hlo.hlo_module_from_text` -> `XlaComputation(proto)` ->
  `_jax.mlir.xla_computation_to_mlir_module` (StableHLO, plus mhlo for the
  ops StableHLO lacks) -> the CPU client's `compile_and_load`.
- **numpy (documented semantics)**: XLA:CPU refuses the module (the check
  column quotes it): copy-start/done, async wrappers, collective-broadcast.
  Each is an identity or the wrapped op, so numpy is exact.
- **ragged-dot**: XLA:CPU cannot run `ragged-dot`; the expected values are
  XLA:CPU's for JAX's CPU decomposition of the same call on the same inputs.
- **TensorFlow**: the outputs of the `tf.function(jit_compile=True)`.

## Comparing

XLA:CPU uses its own polynomial exp/log/sin/tanh, its own dot/conv/FFT
algorithms and summation orders: compare floats with a tolerance (a few ulps
of the largest magnitude for f32; about 1 ulp for bf16 / f16). Shifts,
reduce-precision, stochastic-convert, integer outputs, select-and-scatter
placement (not its sums), get-dimension-size, copies, top-k and the
threefry / philox bits are exact. `rng_uniform_normal_hlo` values are not
comparable at all (only shapes, types and ranges).

## Cases

*check*: for `jax.jit` cases, whether the stored text compiled again on
XLA:CPU gave the same bits as the jitted function; `-` where the outputs
are the stored text's own run; for numpy cases, XLA:CPU's refusal.

| case | group | what it covers | outputs from | check | bytes |
|---|---|---|---|---|---|
{chr(10).join(rows)}

Total: {total} bytes.

## Notes

{notes}
"""
    (out / "README.md").write_text(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--no-tf", action="store_true", help="skip the TensorFlow case")
    ap.add_argument("--no-tf-install", action="store_true",
                    help="do not make the TensorFlow venv when it is missing")
    ap.add_argument("--tf-worker", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.tf_worker:
        tf_worker(a.tf_worker)
        return
    names = list(CASES) + [TF_CASE]
    if a.list:
        for n in names:
            print(n)
        return
    try:
        import jax  # noqa: F401
    except ImportError:
        if JAX_PY.exists() and Path(sys.prefix).resolve() != JAX_PY.parent.parent.resolve():
            os.execv(str(JAX_PY), [str(JAX_PY), str(Path(__file__).resolve()), *sys.argv[1:]])
        sys.exit(f"needs the jax venv {JAX_PY.parent.parent} "
                 "(python3 scripts/gen_frontend_models.py --frontend jax makes it)")
    import jax
    jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/")
    unknown = set(a.only) - set(names)
    if unknown:
        sys.exit(f"unknown cases: {sorted(unknown)}")
    a.out.mkdir(parents=True, exist_ok=True)
    index_path = a.out / "index.json"
    old = json.loads(index_path.read_text()) if index_path.exists() else {}
    infos = dict(old.get("cases", {}))
    vers = versions()
    for n, c in CASES.items():
        if a.only and n not in a.only:
            continue
        infos[n] = gen_one(c, a.out)
    tf_vers, tf_skip = old.get("tf_versions"), None
    if (not a.only or TF_CASE in a.only) and not a.no_tf:
        v, info, tf_skip = gen_tf(a.out, not a.no_tf_install)
        if v:
            tf_vers = v
            infos[TF_CASE] = info
        else:
            log(f"  {TF_CASE}: skipped: {tf_skip}")
    ordered = [infos[n] for n in names if n in infos]
    index_path.write_text(json.dumps(dict(cases={i["name"]: i for i in ordered},
                                          tf_versions=tf_vers), indent=1) + "\n")
    write_readme(a.out, ordered, vers, tf_vers, tf_skip)
    total = sum(i["bytes"] for i in ordered)
    log(f"{len(ordered)} cases, {total} bytes")


if __name__ == "__main__":
    main()
