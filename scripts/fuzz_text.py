#!/usr/bin/env python3
"""Seeded, reproducible mutations of HLO text, through the whole command.

Each mutant of a module under tests/data or examples/ (lines deleted,
copied, swapped or spliced; dimensions, element types, opcodes, operands
and attribute values changed; tuples nested deep; computations made to call
themselves; bytes cut or inserted) runs through the default pipeline and
through text -> proto -> text, and every output is read back. A finding is
an exit status other than 0 or 1, a panic, a timeout, a half-written or
missing output, or an output the tool cannot read back. docs/reliability.md
(run G) has what it found.

Usage (HLO_OPT: the binary, default target/release/hlo-opt; FUZZ_OUT: where
findings and logs go, default target/fuzz-text):
  scripts/fuzz_text.py run   --seed S --time SECONDS [--workers N] [--start I]
  scripts/fuzz_text.py gen   --seed S --index I  > mutant.hlo     (regenerate mutant I)
  scripts/fuzz_text.py check FILE                                (all checks on FILE)

Mutant I of seed S is generated from random.Random(f"{S}:{I}") only, so any
finding can be regenerated exactly with `gen`.
"""
import argparse, hashlib, json, os, random, re, shutil, subprocess, sys, time
from multiprocessing import Pool

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("HLO_OPT", os.path.join(REPO, "target", "release", "hlo-opt"))
ROOT_DIR = os.environ.get("FUZZ_OUT", os.path.join(REPO, "target", "fuzz-text"))
SEED_DIRS = [os.path.join(REPO, "tests", "data"), os.path.join(REPO, "examples")]
TIMEOUT = 20
MAX_SEED_SIZE = 400_000

DTYPES = ["pred", "s2", "s4", "s8", "s16", "s32", "s64", "u2", "u4", "u8", "u16", "u32", "u64",
          "f16", "bf16", "f32", "f64", "c64", "c128", "f8e4m3fn", "f8e5m2", "f8e4m3", "f8e3m4",
          "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e8m0fnu", "f4e2m1fn", "token"]
DT_RE = re.compile(r"\b(" + "|".join(sorted(DTYPES, key=len, reverse=True)) + r")\b")
SHAPE_RE = re.compile(r"\b(" + "|".join(sorted([d for d in DTYPES], key=len, reverse=True)) + r")\[([^\]]*)\]")
ALL_OPCODES = ("abs add add-dependency after-all all-gather all-gather-done all-gather-start all-reduce "
               "all-reduce-done all-reduce-start all-to-all and async-done async-start async-update atan2 "
               "batch-norm-grad batch-norm-inference batch-norm-training bitcast bitcast-convert broadcast call "
               "cbrt ceil cholesky clamp count-leading-zeros collective-broadcast collective-permute "
               "collective-permute-done collective-permute-start compare complex concatenate conditional "
               "constant convert convolution copy copy-done copy-start cosine custom-call divide domain dot "
               "dynamic-reshape dynamic-slice dynamic-update-slice erf exponential exponential-minus-one fft "
               "floor fusion gather get-dimension-size get-tuple-element imag infeed iota is-finite log "
               "log-plus-one logistic map maximum minimum multiply negate not opt-barrier or outfeed pad "
               "parameter partition-id popcnt power ragged-all-to-all ragged-dot real recv recv-done reduce "
               "reduce-precision reduce-scatter reduce-window remainder replica-id reshape reverse rng "
               "rng-bit-generator rng-get-and-update-state round-nearest-afz round-nearest-even rsqrt "
               "scaled-dot scan scatter select select-and-scatter send send-done set-dimension-size shift-left "
               "shift-right-arithmetic shift-right-logical sign sine slice sort sqrt stochastic-convert "
               "subtract tan tanh topk transpose triangular-solve tuple while xor").split()
FAV_OPCODES = ["add", "multiply", "custom-call", "reduce", "while", "call", "conditional", "tuple",
               "get-tuple-element", "broadcast", "reshape", "transpose", "slice", "concatenate", "dot",
               "convolution", "exponential", "divide", "maximum", "compare", "select", "convert",
               "parameter", "constant", "fusion", "iota", "sort", "reduce-window", "scatter", "gather", "pad"]
TARGETS = ["AwsNeuronTransferWithStaticRing", "AwsNeuronGelu", "AwsNeuronGeluBackward", "AwsNeuronSilu",
           "AwsNeuronSoftmax", "AwsNeuronSoftmaxBackward", "AwsNeuronTopK", "QuantizeMX",
           "__op$block_scaled_dot", "TopK", "Sharding", "xla.sdy.FuncResultSharding",
           "AwsNeuronCustomNativeKernel", "AwsNeuronRelu", "AwsNeuronTanh", "foo", ""]
INTERESTING = ["0", "1", "2", "3", "-1", "-2", "7", "64", "1023", "65536", "99999999999",
               "2147483647", "2147483648", "4294967296", "9223372036854775807",
               "9223372036854775808", "18446744073709551616", "-9223372036854775808",
               "1099511627776", "4611686018427387904", "999999999999999999999999"]
FLOATS = ["nan", "-nan", "inf", "-inf", "1e400", "-0", "0x1p-149", "3.4e38", "1e-45", "0.5", "true",
          "false", "1.#INF", "+inf", "nan(0x7f)"]
NAME_RE = re.compile(r"%?([A-Za-z_][\w.\-]*)")
INSTR_RE = re.compile(r"^(\s*)(ROOT\s+)?(%?[\w.\-]+)\s*=\s*(.*?)\s([a-z][a-z0-9\-]*)\(")
COMP_RE = re.compile(r"^\s*(ENTRY\s+)?(%?[\w.\-]+)\s*(\(.*\)\s*->\s*.*)?\{\s*$")


# ---------------------------------------------------------------------------- seeds
def load_seeds():
    files = []
    for d in SEED_DIRS:
        for dp, _, fns in os.walk(d):
            for fn in fns:
                if fn.endswith(".hlo") or fn.endswith(".txt"):
                    p = os.path.join(dp, fn)
                    try:
                        sz = os.path.getsize(p)
                    except OSError:
                        continue
                    if sz > MAX_SEED_SIZE:
                        continue
                    with open(p, "rb") as f:
                        data = f.read()
                    if b"HloModule" not in data and sz > 0:
                        # keep a few non-module files (error-expectation texts) anyway
                        if int(hashlib.md5(p.encode()).hexdigest(), 16) % 8:
                            continue
                    files.append((p, data.decode("utf-8", "replace")))
    files.sort()
    return files


# ---------------------------------------------------------------------------- helpers
def instr_lines(lines):
    out = []
    for i, l in enumerate(lines):
        m = INSTR_RE.match(l)
        if m:
            out.append((i, m))
    return out


def names_in(text):
    ns = set()
    for l in text.splitlines():
        m = INSTR_RE.match(l)
        if m:
            ns.add(m.group(3).lstrip("%"))
    return sorted(ns)


def comp_names(text):
    ns = []
    for l in text.splitlines():
        m = COMP_RE.match(l)
        if m and not l.lstrip().startswith("HloModule"):
            ns.append(m.group(2).lstrip("%"))
    return ns


def operand_span(line, m):
    """Return (start, end) of the operand list text (inside the parens) of an instruction line."""
    start = m.end()
    depth = 1
    i = start
    while i < len(line) and depth:
        c = line[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        i += 1
    return start, i - 1


def split_top(s):
    parts, depth, cur = [], 0, ""
    for c in s:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur)
    return parts


def rand_shape(rng, depth=0):
    r = rng.random()
    if r < 0.15 and depth < 3:
        return "(" + ", ".join(rand_shape(rng, depth + 1) for _ in range(rng.randint(0, 3))) + ")"
    dt = rng.choice(DTYPES)
    dims = [rng.choice(["1", "2", "4", "8", "0", "128", "?", "<=4"]) for _ in range(rng.randint(0, 3))]
    return f"{dt}[{','.join(dims)}]"


# ---------------------------------------------------------------------------- mutators
def m_delete_line(rng, t):
    L = t.splitlines(True)
    if len(L) < 2: return t
    for _ in range(rng.choice([1, 1, 1, 2, 5])):
        if len(L) > 1:
            del L[rng.randrange(len(L))]
    return "".join(L)


def m_dup_line(rng, t):
    L = t.splitlines(True)
    if not L: return t
    i = rng.randrange(len(L)); j = rng.randrange(len(L) + 1)
    L.insert(j, L[i] if L[i].endswith("\n") else L[i] + "\n")
    return "".join(L)


def m_swap_lines(rng, t):
    L = t.splitlines(True)
    if len(L) < 2: return t
    i, j = rng.randrange(len(L)), rng.randrange(len(L))
    L[i], L[j] = L[j], L[i]
    return "".join(L)


def m_shape_dim(rng, t):
    ms = list(SHAPE_RE.finditer(t))
    if not ms: return t
    m = rng.choice(ms)
    dims = [d for d in m.group(2).split(",")] if m.group(2) else []
    op = rng.random()
    newv = rng.choice(INTERESTING + ["?", "<=3", "<=99999999999", "<=-1", "", "x", "1.5", " 2 ", "+3"])
    if dims and op < 0.6:
        dims[rng.randrange(len(dims))] = newv
    elif op < 0.8:
        dims.insert(rng.randint(0, len(dims)), newv)
    elif dims:
        del dims[rng.randrange(len(dims))]
    return t[:m.start()] + f"{m.group(1)}[{','.join(dims)}]" + t[m.end():]


def m_all_shape_dims(rng, t):
    """Change the same dimension value everywhere (keeps the module consistent, stresses passes)."""
    vals = re.findall(r"\[(\d+)[,\]]", t)
    if not vals: return t
    v = rng.choice(vals)
    nv = rng.choice(["0", "1", "3", "99999999999", "2147483648", "65537", "4294967296", "1099511627776"])
    return re.sub(r"(?<=[\[,])" + v + r"(?=[,\]])", nv, t)


def m_dtype(rng, t):
    ms = list(DT_RE.finditer(t))
    if not ms: return t
    m = rng.choice(ms)
    if rng.random() < 0.7:
        new = rng.choice(DTYPES)
    else:
        # replace whole shape with tuple shape
        sm = SHAPE_RE.match(t, m.start())
        if sm:
            tup = "(" + ", ".join([sm.group(0)] * rng.randint(0, 3) + [rand_shape(rng)]) + ")"
            return t[:sm.start()] + tup + t[sm.end():]
        new = rng.choice(DTYPES)
    return t[:m.start()] + new + t[m.end():]


def m_dtype_global(rng, t):
    a, b = rng.choice(DTYPES), rng.choice(DTYPES)
    if rng.random() < 0.5: a = "f32"
    return re.sub(r"\b" + a + r"\[", b + "[", t)


def m_rename_operand(rng, t):
    L = t.splitlines(True)
    ins = instr_lines(L)
    names = names_in(t)
    if not ins or not names: return t
    i, m = rng.choice(ins)
    l = L[i]
    s, e = operand_span(l, m)
    ops = split_top(l[s:e])
    if not ops: return t
    k = rng.randrange(len(ops))
    toks = ops[k].split()
    if not toks: return t
    new = rng.choice(names + [m.group(3).lstrip("%")] + ["nonexistent.1", ""])
    pref = "%" if toks[-1].startswith("%") else ""
    toks[-1] = pref + new
    ops[k] = (" " if k else "") + " ".join(toks)
    L[i] = l[:s] + ",".join(ops) + l[e:]
    return "".join(L)


def m_drop_dup_operand(rng, t):
    L = t.splitlines(True)
    ins = instr_lines(L)
    if not ins: return t
    i, m = rng.choice(ins)
    l = L[i]
    s, e = operand_span(l, m)
    ops = split_top(l[s:e])
    r = rng.random()
    if ops and r < 0.45:
        del ops[rng.randrange(len(ops))]
    elif ops and r < 0.9:
        ops.insert(rng.randint(0, len(ops)), ops[rng.randrange(len(ops))])
    elif ops:
        ops = ops * rng.randint(2, 50)
    ops = [o.strip() for o in ops]
    L[i] = l[:s] + ", ".join(ops) + l[e:]
    return "".join(L)


def m_cut(rng, t):
    b = t.encode("utf-8", "surrogatepass")
    if not b: return t
    k = rng.randrange(len(b))
    return b[:k].decode("utf-8", "replace")


def m_insert_junk(rng, t):
    k = rng.randrange(len(t) + 1)
    junk = rng.choice(["\x00", "\xff", "\u202e", "é", "😀", "\r", "\t", "{", "}", "(", ")", "[", "]", "\"",
                       "\\", "/*", "*/", "//", "%", ",", "=", ":", "ROOT", "ENTRY", "\n", "\u0085", "\u2028",
                       "".join(chr(rng.randrange(32, 0x3000)) for _ in range(rng.randint(1, 8))),
                       "".join(chr(rng.randrange(0, 256)) for _ in range(rng.randint(1, 8)))])
    return t[:k] + junk + t[k:]


def m_root(rng, t):
    L = t.splitlines(True)
    ins = instr_lines(L)
    if not ins: return t
    r = rng.random()
    roots = [i for i, m in ins if m.group(2)]
    if r < 0.35 and roots:
        i = rng.choice(roots)
        L[i] = L[i].replace("ROOT ", "", 1)
    elif r < 0.7:
        i, m = rng.choice(ins)
        if not m.group(2):
            L[i] = L[i][:len(m.group(1))] + "ROOT " + L[i][len(m.group(1)):]
    else:
        # move ROOT from one line to another
        if roots:
            i = rng.choice(roots)
            L[i] = L[i].replace("ROOT ", "", 1)
        j, m = rng.choice(ins)
        if "ROOT " not in L[j]:
            L[j] = L[j][:len(m.group(1))] + "ROOT " + L[j][len(m.group(1)):]
    return "".join(L)


def m_opcode(rng, t):
    L = t.splitlines(True)
    ins = instr_lines(L)
    if not ins: return t
    i, m = rng.choice(ins)
    new = rng.choice(FAV_OPCODES) if rng.random() < 0.7 else rng.choice(ALL_OPCODES)
    L[i] = L[i][:m.start(5)] + new + L[i][m.end(5):]
    return "".join(L)


def m_attr(rng, t):
    comps = comp_names(t) or ["x"]
    names = names_in(t) or ["x"]
    choices = []
    for m in re.finditer(r"\b(dimensions|lhs_contracting_dims|rhs_contracting_dims|lhs_batch_dims|rhs_batch_dims|"
                         r"offset_dims|collapsed_slice_dims|start_index_map|update_window_dims|"
                         r"inserted_window_dims|scatter_dims_to_operand_dims|replica_groups|slice|"
                         r"dynamic_slice_sizes|window|dim_labels|padding|iota_dimension|index|to_apply|"
                         r"body|condition|calls|branch_computations|true_computation|false_computation|"
                         r"custom_call_target|backend_config|direction|type|called_computations|"
                         r"operand_layout_constraints|output_to_operand_aliasing|sharding|feature_group_count|"
                         r"batch_group_count|is_stable|largest|k|exponent_bits|mantissa_bits|"
                         r"stack_frame_id|source_target_pairs|channel_id|api_version|schedule|"
                         r"frontend_attributes|input_output_alias|entry_computation_layout)=", t):
        choices.append(m)
    if not choices: return t
    m = rng.choice(choices)
    key = m.group(1)
    s = m.end()
    # find value extent
    depth = 0; i = s
    inq = False
    while i < len(t):
        c = t[i]
        if inq:
            if c == "\\": i += 2; continue
            if c == '"': inq = False
        elif c == '"': inq = True
        elif c in "{([": depth += 1
        elif c in "})]":
            if depth == 0: break
            depth -= 1
        elif depth == 0 and (c in ", \n"): break
        i += 1
    def intlist():
        n = rng.choice([0, 1, 2, 3, 5])
        return "{" + ",".join(rng.choice(["0", "1", "2", "3", "-1", "99999999999", "5"]) for _ in range(n)) + "}"
    if key in ("to_apply", "body", "condition", "true_computation", "false_computation"):
        v = "%" + rng.choice(comps + ["nope"]) if rng.random() < 0.9 else rng.choice(names)
    elif key in ("calls", "called_computations", "branch_computations"):
        v = "{" + ", ".join("%" + rng.choice(comps) for _ in range(rng.randint(0, 3))) + "}"
    elif key == "custom_call_target":
        v = '"' + rng.choice(TARGETS) + '"'
    elif key == "backend_config":
        v = rng.choice(['"0"', '"1"', '"-1"', '"5"', '"99999999999"', '""', '"{}"', '"{\\"k\\": 3}"',
                        '{}', '"abc"', '"2147483648"', '"1e3"', '"\\x00"', '"{\\"a\\":"'])
    elif key in ("index", "iota_dimension", "feature_group_count", "batch_group_count", "k",
                 "exponent_bits", "mantissa_bits", "stack_frame_id", "channel_id", "api_version"):
        v = rng.choice(INTERESTING)
    elif key == "slice":
        v = "{" + ", ".join("[%s:%s%s]" % (rng.choice(["0", "1", "-1", "5"]), rng.choice(["0", "2", "4", "99999999999"]),
                                          rng.choice(["", ":1", ":0", ":-1", ":3"])) for _ in range(rng.randint(0, 3))) + "}"
    elif key == "direction":
        v = rng.choice(["EQ", "NE", "LT", "GT", "LE", "GE", "XX"])
    elif key == "type":
        v = rng.choice(["FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED", "BAD"])
    elif key == "dim_labels":
        v = rng.choice(["b01f_01io->b01f", "bf_io->bf", "b0f_0io->b0f", "bf_oi->bf", "??", "b01f_01io->b0f"])
    elif key == "window":
        v = "{" + rng.choice(["size=2", "size=1x1", "size=0", "size=2 stride=0", "size=3 pad=-5_-5",
                               "size=99999999999", "size=2x2 stride=1x1 pad=0_0x0_0 lhs_dilate=0x1", ""]) + "}"
    elif key == "padding":
        v = rng.choice(["0_0", "1_1", "-1_-1", "0_0_1", "99999999999_0", "0_0x0_0", "0_0_0x1_1_-1"])
    elif key in ("is_stable", "largest"):
        v = rng.choice(["true", "false", "2"])
    elif key == "replica_groups":
        v = rng.choice(["{}", "{{0,1}}", "{{0},{0}}", "[1,2]<=[2]", "[2,0]<=[0]", "{{-1}}"])
    else:
        v = intlist()
    return t[:s] + v + t[i:]


def m_nest_tuple(rng, t):
    ms = list(SHAPE_RE.finditer(t))
    depth = rng.choice([2, 5, 30, 200, 2000, 20000, 100000])
    if not ms:
        return t
    m = rng.choice(ms)
    return t[:m.start()] + "(" * depth + m.group(0) + ")" * depth + t[m.end():]


def m_deep_nest_other(rng, t):
    depth = rng.choice([50, 1000, 10000, 100000])
    L = t.splitlines(True)
    ins = instr_lines(L)
    r = rng.random()
    if r < 0.3:
        # deep constant literal
        blob = "{" * depth + "1" + "}" * depth
        line = f"  deep.c = f32[] constant({blob})\n"
    elif r < 0.5:
        blob = "{" * depth + "}" * depth
        line = f"  deep.t = f32[] add(a, b), frontend_attributes={blob}\n"
    elif r < 0.7:
        blob = "[" * depth + "]" * depth
        line = f"  deep.s = f32[{blob}] parameter(0)\n"
    else:
        # long chain of tuples of tuples as instructions
        n = rng.choice([10, 60, 300])
        if not ins: return t
        i, m = rng.choice(ins)
        base = m.group(3).lstrip("%")
        shp = m.group(4)
        out = []
        prev, ps = base, shp
        for k in range(n):
            ps = "(" + ps + ")"
            out.append(f"  nest.{k} = {ps} tuple({prev})\n")
            prev = f"nest.{k}"
        L[i + 1:i + 1] = out
        return "".join(L)
    if ins:
        i, _ = rng.choice(ins)
        L.insert(i, line)
    else:
        L.insert(rng.randint(0, len(L)), line)
    return "".join(L)


def m_number(rng, t):
    ms = list(re.finditer(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", t))
    if not ms: return t
    m = rng.choice(ms)
    v = rng.choice(INTERESTING + FLOATS) if rng.random() < 0.85 else str(int(float(m.group(0))) + rng.choice([-1, 1]))
    return t[:m.start()] + v + t[m.end():]


def m_layout(rng, t):
    ms = list(re.finditer(r"\]\{([0-9,]*)(:[^}]*)?\}", t))
    if not ms: return t
    m = rng.choice(ms)
    v = rng.choice(["{0,0}", "{}", "{5,0}", "{1,0:T(8,128)}", "{0,1}", "{-1}", "{0:T(2)}", "{1,0:E(1)}",
                    "{99999999999}", "{0,1,2,3,4,5,6,7}", "{1,0:S(1)}", "{:T(8)}"])
    return t[:m.start()] + "]" + v + t[m.end():]


def m_recursion(rng, t):
    comps = comp_names(t)
    if not comps: return t
    c = rng.choice(comps)
    # make some to_apply/body/calls point at a computation (possibly itself / entry)
    ms = list(re.finditer(r"\b(to_apply|body|condition|calls|true_computation|false_computation)=%?[\w.\-]+", t))
    if not ms: return t
    m = rng.choice(ms)
    return t[:m.start()] + m.group(1) + "=%" + c + t[m.end():]


def m_splice(rng, t, seeds):
    p, other = rng.choice(seeds)
    OL = other.splitlines(True)
    if not OL: return t
    L = t.splitlines(True)
    a = rng.randrange(len(OL)); b = min(len(OL), a + rng.randint(1, 6))
    k = rng.randint(0, len(L))
    L[k:k] = OL[a:b]
    return "".join(L)


def m_param(rng, t):
    ms = list(re.finditer(r"parameter\((\d+)\)", t))
    if not ms: return t
    m = rng.choice(ms)
    return t[:m.start()] + "parameter(%s)" % rng.choice(["0", "1", "2", "-1", "99999999999", "5"]) + t[m.end():]


def m_custom_call(rng, t):
    """Turn an instruction into a Neuron custom call (exercise legalize passes / contract checks)."""
    L = t.splitlines(True)
    ins = instr_lines(L)
    if not ins: return t
    i, m = rng.choice(ins)
    l = L[i]
    s, e = operand_span(l, m)
    tgt = rng.choice(TARGETS[:9])
    rest = l[e + 1:].rstrip("\n")
    rest = re.sub(r",\s*(custom_call_target|backend_config)=(\"[^\"]*\"|\S+)", "", rest)
    bc = rng.choice(["", ', backend_config="0"', ', backend_config="1"', ', backend_config="5"',
                     ', backend_config="-1"', ', backend_config="99999999999"', ', backend_config="{}"'])
    L[i] = l[:m.start(5)] + "custom-call(" + l[s:e] + ")" + f', custom_call_target="{tgt}"' + bc + rest + "\n"
    return "".join(L)


def m_header(rng, t):
    r = rng.random()
    if r < 0.3:
        return re.sub(r"entry_computation_layout=\{[^\n]*?\}(?=[,\n])", "", t, count=1)
    if r < 0.6:
        return t.replace("HloModule", rng.choice(["HloModule", "HloModule  ", "hlomodule", "HloModule\n"]), 1)
    if r < 0.8:
        return t.replace("ENTRY", rng.choice(["", "ENTRY ENTRY", "ENTRY"]), 1)
    return t.replace("is_scheduled=true", "is_scheduled=false", 1) if "is_scheduled" in t else \
        re.sub(r"^(HloModule [^\s,]+)", r"\1, is_scheduled=true", t, count=1)


MUTATORS = [
    (m_delete_line, 6), (m_dup_line, 5), (m_swap_lines, 4), (m_shape_dim, 10), (m_all_shape_dims, 4),
    (m_dtype, 8), (m_dtype_global, 4), (m_rename_operand, 10), (m_drop_dup_operand, 6), (m_cut, 4),
    (m_insert_junk, 4), (m_root, 5), (m_opcode, 10), (m_attr, 12), (m_nest_tuple, 2),
    (m_deep_nest_other, 2), (m_number, 6), (m_layout, 3), (m_recursion, 3), (m_splice, 3),
    (m_param, 3), (m_custom_call, 5), (m_header, 2),
]


def make_mutant(seed, idx, seeds):
    rng = random.Random(f"{seed}:{idx}")
    # bias towards small inputs
    if rng.random() < 0.7:
        small = [s for s in seeds if len(s[1]) < 8000]
        path, text = rng.choice(small)
    else:
        path, text = rng.choice(seeds)
    names = []
    fns = [f for f, _ in MUTATORS]
    ws = [w for _, w in MUTATORS]
    for _ in range(rng.choice([1, 1, 2, 2, 3, 4, 6])):
        f = rng.choices(fns, ws)[0]
        names.append(f.__name__)
        try:
            new = m_splice(rng, text, seeds) if f is m_splice else f(rng, text)
            if len(new) <= 1_000_000:
                text = new
            else:
                names.append("reverted-too-big")
        except Exception as ex:  # mutator bug: keep going
            names.append(f"ERR:{ex}")
    if rng.random() < 0.5:
        text = re.sub(r", entry_computation_layout=\{.*?\}(?=(, [a-z_]+=|\n))", "", text, count=1)
        names.append("strip_ecl")
    return path, names, text


# ---------------------------------------------------------------------------- running
def run(cmd, cwd):
    # never let a stale output from an earlier step look like this step's output
    if "-o" in cmd:
        o = cmd[cmd.index("-o") + 1]
        op = o if os.path.isabs(o) else os.path.join(cwd, o)
        if os.path.exists(op):
            os.remove(op)
    env = dict(os.environ)
    env.pop("RUST_BACKTRACE", None)
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=TIMEOUT, env=env)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"), time.time() - t0
    except subprocess.TimeoutExpired as ex:
        return "timeout", "", (ex.stderr or b"").decode("utf-8", "replace"), time.time() - t0


PANIC_RE = re.compile(r"panicked at ([^\n]*?):(\d+):(\d+):?\n?([^\n]*)")
LOC_RE = re.compile(r":\d+:\d+")


def norm(s):
    s = s.replace(ROOT_DIR + "/", "")
    s = re.sub(r"\d+", "N", s)
    s = re.sub(r'"[^"]*"', '"Q"', s)
    s = re.sub(r"'[^']*'", "'Q'", s)
    s = re.sub(r"%?[A-Za-z_][\w\-]*\.N(\.N)*", "NAME", s)
    return s[:160]


def classify(step, res, outpath, wd, expect_files):
    """Return list of (kind, signature, detail) findings for one command result."""
    rc, out, err, dt = res
    f = []
    if rc == "timeout":
        f.append(("timeout", f"{step}:timeout", f"timeout after {dt:.1f}s"))
        return f
    pm = PANIC_RE.search(err)
    if pm:
        f.append(("panic", f"panic:{pm.group(1)}:{pm.group(2)}:{norm(pm.group(4))}", err[-2000:]))
    elif "panicked" in err or "RUST_BACKTRACE" in err:
        f.append(("panic", f"panic:{norm(err.strip().splitlines()[-1] if err.strip() else '')}", err[-2000:]))
    if rc not in (0, 1, 2):
        lastl = err.strip().splitlines()[-1] if err.strip() else ""
        if not pm:
            f.append(("crash", f"crash:{step}:rc={rc}:{norm(lastl)}", f"rc={rc}\n" + err[-2000:]))
        else:
            f.append(("crash-rc", f"crash-rc:{rc}", f"rc={rc}"))
    if rc != 0 and outpath and os.path.exists(outpath):
        f.append(("half-written", f"{step}:output-left-on-failure", f"rc={rc}, {outpath} exists"))
    if rc == 0 and outpath and not os.path.exists(outpath):
        f.append(("no-output", f"{step}:no-output-on-success", ""))
    if rc == 0 and outpath and os.path.exists(outpath) and os.path.getsize(outpath) == 0:
        f.append(("empty-output", f"{step}:empty-output-on-success", ""))
    extra = set(os.listdir(wd)) - expect_files
    if extra:
        f.append(("temp-left", f"{step}:temp-left", ",".join(sorted(extra))))
        for x in extra:
            try:
                p = os.path.join(wd, x)
                shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
            except OSError:
                pass
    return f


def check_file(mpath, wd):
    """Run all commands on mutant file mpath (inside wd). Return (findings, nruns, info)."""
    findings = []
    nruns = 0
    info = {}
    out_hlo = os.path.join(wd, "OUT.hlo")
    out_pb = os.path.join(wd, "OUT.pb")
    back = os.path.join(wd, "BACK.hlo")
    x = os.path.join(wd, "x.hlo")
    base = {os.path.basename(mpath)}
    for p in (out_hlo, out_pb, back, x):
        if os.path.exists(p): os.remove(p)

    # 1. default pipeline
    r1 = run([BIN, mpath, "-o", out_hlo], wd); nruns += 1
    info["rc1"] = r1[0]
    info["err1"] = last_err(r1[2])[:200] if r1[0] != 0 else ""
    findings += [("cmd1",) + f for f in classify("cmd1", r1, out_hlo, wd, base | {"OUT.hlo"})]
    if r1[0] == 0 and os.path.exists(out_hlo):
        rb = run([BIN, "--passes", "", out_hlo, "-o", x], wd); nruns += 1
        info["rc1b"] = rb[0]
        findings += [("cmd1-readback",) + f for f in classify("cmd1-readback", rb, x, wd, base | {"OUT.hlo", "x.hlo"})]
        if rb[0] in (1, 2):
            findings.append(("cmd1-readback", "readback-text", "readback-text:" + norm(last_err(rb[2])), rb[2][-2000:]))

    # 2. text -> proto -> text
    r2 = run([BIN, "--passes", "", mpath, "-o", out_pb], wd); nruns += 1
    info["rc2"] = r2[0]
    findings += [("cmd2",) + f for f in classify("cmd2", r2, out_pb, wd, base | {"OUT.hlo", "x.hlo", "OUT.pb"})]
    if r2[0] == 0 and os.path.exists(out_pb):
        r3 = run([BIN, "--passes", "", out_pb, "-o", back], wd); nruns += 1
        info["rc3"] = r3[0]
        findings += [("cmd2-readback",) + f for f in classify("cmd2-readback", r3, back, wd,
                                                             base | {"OUT.hlo", "x.hlo", "OUT.pb", "BACK.hlo"})]
        if r3[0] in (1, 2):
            findings.append(("cmd2-readback", "readback-proto", "readback-proto:" + norm(last_err(r3[2])), r3[2][-2000:]))
        elif r3[0] == 0 and os.path.exists(back):
            r4 = run([BIN, "--passes", "", back, "-o", x], wd); nruns += 1
            findings += [("cmd2-readback2",) + f for f in classify("cmd2-readback2", r4, x, wd,
                                                                  base | {"OUT.hlo", "x.hlo", "OUT.pb", "BACK.hlo"})]
            if r4[0] in (1, 2):
                findings.append(("cmd2-readback2", "readback-proto-text",
                                 "readback-proto-text:" + norm(last_err(r4[2])), r4[2][-2000:]))
    # parse errors without any location (round trip failed => parser/checker rejected it)
    if r2[0] in (1, 2):
        msg = r2[2]
        if not LOC_RE.search(msg) and "in computation" not in msg:
            findings.append(("cmd2", "noloc", "noloc:" + norm(last_err(msg)), msg[-1000:]))
    return findings, nruns, info


def last_err(err):
    ls = [l for l in err.strip().splitlines() if "error" in l]
    return ls[0] if ls else (err.strip().splitlines() or [""])[0]


_SEEDS = None


def worker_init():
    global _SEEDS
    _SEEDS = load_seeds()


def job(args):
    seed, idx = args
    path, muts, text = make_mutant(seed, idx, _SEEDS)
    wd = os.path.join(ROOT_DIR, "work", f"w{os.getpid()}")
    os.makedirs(wd, exist_ok=True)
    mpath = os.path.join(wd, "MUTANT.hlo")
    data = text.encode("utf-8", "surrogatepass")
    with open(mpath, "wb") as f:
        f.write(data)
    t0 = time.time()
    findings, nruns, info = check_file(mpath, wd)
    info["dt"] = round(time.time() - t0, 3)
    saved = []
    for (step, kind, sig, detail) in findings:
        h = hashlib.sha1(sig.encode()).hexdigest()[:10]
        d = os.path.join(ROOT_DIR, "findings", f"{kind}-{h}")
        os.makedirs(d, exist_ok=True)
        n = len(os.listdir(d))
        if n < 12:
            with open(os.path.join(d, f"{seed}_{idx}.hlo"), "wb") as f:
                f.write(data)
            with open(os.path.join(d, f"{seed}_{idx}.txt"), "w") as f:
                f.write(f"seed={seed} idx={idx} src={path} muts={muts}\nstep={step}\nsig={sig}\n\n{detail}\n")
        saved.append((step, kind, sig))
    return idx, path, muts, nruns, info, saved, len(data)


def cmd_run(a):
    os.makedirs(os.path.join(ROOT_DIR, "findings"), exist_ok=True)
    logp = os.path.join(ROOT_DIR, f"log_seed{a.seed}.jsonl")
    stats = {"mutants": 0, "runs": 0, "by_kind": {}, "by_sig": {}, "by_mutator": {}, "rc1": {}, "rc2": {}}
    deadline = time.time() + a.time
    t0 = time.time()
    with Pool(a.workers, initializer=worker_init) as pool, open(logp, "a") as log:
        def results():
            i = a.start
            while time.time() < deadline:
                batch = [(a.seed, j) for j in range(i, i + 32)]
                i += 32
                for r in pool.imap_unordered(job, batch, chunksize=2):
                    yield r
            stats["next_index"] = i
        for idx, path, muts, nruns, info, saved, size in results():
            stats["mutants"] += 1
            stats["runs"] += nruns
            stats["rc1"][str(info.get("rc1"))] = stats["rc1"].get(str(info.get("rc1")), 0) + 1
            stats["rc2"][str(info.get("rc2"))] = stats["rc2"].get(str(info.get("rc2")), 0) + 1
            for mname in set(muts):
                stats["by_mutator"][mname] = stats["by_mutator"].get(mname, 0) + 1
            for step, kind, sig in saved:
                stats["by_kind"][kind] = stats["by_kind"].get(kind, 0) + 1
                stats["by_sig"][sig] = stats["by_sig"].get(sig, 0) + 1
            log.write(json.dumps({"idx": idx, "src": path, "muts": muts, "info": info, "size": size,
                                  "findings": saved}) + "\n")
            if stats["mutants"] % 500 == 0:
                print(f"[{time.time()-t0:.0f}s] mutants={stats['mutants']} runs={stats['runs']} "
                      f"kinds={stats['by_kind']}", flush=True)
    stats["elapsed"] = time.time() - t0
    with open(os.path.join(ROOT_DIR, f"stats_seed{a.seed}.json"), "w") as f:
        json.dump(stats, f, indent=1, sort_keys=True)
    print(json.dumps(stats, indent=1, sort_keys=True))


def cmd_gen(a):
    seeds = load_seeds()
    path, muts, text = make_mutant(a.seed, a.index, seeds)
    sys.stderr.write(f"src={path} muts={muts}\n")
    sys.stdout.buffer.write(text.encode("utf-8", "surrogatepass"))


def cmd_check(a):
    wd = os.path.join(ROOT_DIR, "work", "check")
    if os.path.exists(wd): shutil.rmtree(wd)
    os.makedirs(wd)
    mp = os.path.join(wd, "MUTANT.hlo")
    shutil.copy(a.file, mp)
    fs, n, info = check_file(mp, wd)
    print(json.dumps({"info": info, "findings": [(s, k, g) for s, k, g, _ in fs]}, indent=1))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    sp = ap.add_subparsers(dest="cmd", required=True)
    r = sp.add_parser("run"); r.add_argument("--seed", type=int, default=1); r.add_argument("--time", type=float, default=600)
    r.add_argument("--workers", type=int, default=2); r.add_argument("--start", type=int, default=0)
    g = sp.add_parser("gen"); g.add_argument("--seed", type=int, required=True); g.add_argument("--index", type=int, required=True)
    c = sp.add_parser("check"); c.add_argument("file")
    a = ap.parse_args()
    a.workers = max(1, min(2, getattr(a, "workers", 1)))
    {"run": cmd_run, "gen": cmd_gen, "check": cmd_check}[a.cmd](a)
