//! Matchers for native softmax graphs, shared by `native-to-custom-softmax`,
//! `native-to-custom-softmax-dx` and `add-logit-output`.
//!
//! The seed's `getNoComputeOpChain` sees through layout-only ops to the
//! first op that computes. Here [`layout_chain`] does the same and also
//! tracks, for every dimension of the value, which dimension of the
//! source it reads (or none: the value is constant along it). That is what
//! lets the matchers check, rather than assume, that a broadcast puts a
//! per-row sum back along the softmax axis.
//!
//! Every matcher says why it did not match ([`Mismatch`]): either the
//! graph is not the pattern at all (logged at debug level only, as the
//! seed's "does not match" lines), or it is and a check refused it (the
//! seed's own log line where it has one, reported as a skipped candidate).

use crate::ir::{Computation, InstrId, Instruction, Module, Opcode};

/// Why a matcher did not match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// Not the pattern: nothing to report.
    NotCandidate(&'static str),
    /// The pattern, but a check failed: reported as a skipped candidate.
    Refused(String),
}

impl Mismatch {
    pub fn reason(&self) -> &str {
        match self {
            Mismatch::NotCandidate(r) => r,
            Mismatch::Refused(r) => r,
        }
    }

    /// Of two mismatches, the one that says more (a refusal over "not a
    /// candidate").
    pub fn or_better(self, other: Mismatch) -> Mismatch {
        match (&self, &other) {
            (Mismatch::NotCandidate(_), Mismatch::Refused(_)) => other,
            _ => self,
        }
    }
}

pub type Match<T> = Result<T, Mismatch>;

pub fn refused<T>(reason: impl Into<String>) -> Match<T> {
    Err(Mismatch::Refused(reason.into()))
}

pub fn not_candidate<T>(reason: &'static str) -> Match<T> {
    Err(Mismatch::NotCandidate(reason))
}

/// The seed's line for a divide that is not a softmax.
pub const NOT_DIV_EXP_REDUCE: &str = "div<-exp does not match div<-reduce<-exp ";

/// A value reached from `source` through layout-only ops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    /// The first computing op (or parameter/constant) under the chain.
    pub source: InstrId,
    /// The ops walked through, from the value down (not `source`).
    pub nodes: Vec<InstrId>,
    /// For each dimension of the value, the dimension of `source` it reads;
    /// `None` where the value is constant along it (a broadcast dimension).
    pub dims: Vec<Option<usize>>,
}

impl Chain {
    /// The value is `source` with its dimensions in the same order (only
    /// converts, copies and size-1 reshapes in between).
    pub fn is_identity(&self, source_rank: usize) -> bool {
        self.dims.len() == source_rank && self.dims.iter().enumerate().all(|(i, d)| *d == Some(i))
    }

    /// This chain continued below its source by `inner`, a chain from a
    /// value with the source's dimensions (the source is an elementwise op,
    /// such as a negate or a reciprocal, walked through).
    pub fn then(&self, inner: &Chain) -> Chain {
        let mut nodes = self.nodes.clone();
        nodes.push(self.source);
        nodes.extend(&inner.nodes);
        Chain {
            source: inner.source,
            nodes,
            dims: self
                .dims
                .iter()
                .map(|d| d.and_then(|d| inner.dims.get(d).copied().flatten()))
                .collect(),
        }
    }

    /// Whether two chains read their sources the same way at every
    /// position of a value with dimensions `sizes` (size-1 dimensions
    /// read only one element either way).
    pub fn same_reads(&self, other: &Chain, sizes: &[i64]) -> bool {
        self.dims.len() == sizes.len()
            && other.dims.len() == sizes.len()
            && sizes
                .iter()
                .zip(self.dims.iter().zip(&other.dims))
                .all(|(&size, (a, b))| size == 1 || a == b)
    }
}

/// Follows `value` through reshape (of size-1 dims only), broadcast,
/// convert, transpose, bitcast, copy and size-1 add-reduces to the first
/// op that computes something.
pub fn layout_chain(module: &Module, c: &Computation, value: InstrId) -> Chain {
    let rank = c.instr(value).shape.rank();
    let mut dims: Vec<Option<usize>> = (0..rank).map(Some).collect();
    let mut nodes = Vec::new();
    let mut current = value;
    loop {
        let instr = c.instr(current);
        let Some(&operand) = instr.operands().first() else {
            break;
        };
        let op_dims = c.instr(operand).shape.dims();
        let out_dims = instr.shape.dims();
        // For each dimension of `instr`, the operand dimension it reads.
        let step: Option<Vec<Option<usize>>> = match instr.opcode {
            Opcode::Convert | Opcode::Copy if instr.operands().len() == 1 => {
                Some((0..out_dims.len()).map(Some).collect())
            }
            Opcode::Broadcast => instr.dimensions().map(|bd| {
                (0..out_dims.len())
                    .map(|j| bd.iter().position(|&d| d == j as i64))
                    .collect()
            }),
            Opcode::Transpose => instr
                .dimensions()
                .map(|perm| perm.iter().map(|&p| usize::try_from(p).ok()).collect()),
            Opcode::Reshape | Opcode::Bitcast
                if instr.shape.element_type() == c.instr(operand).shape.element_type() =>
            {
                squeeze_map(out_dims, op_dims)
            }
            Opcode::Reduce if is_size_one_add_reduce(module, c, current) => {
                let reduced = instr.dimensions().unwrap_or(&[]);
                let kept: Vec<usize> = (0..op_dims.len())
                    .filter(|d| !reduced.contains(&(*d as i64)))
                    .collect();
                Some(kept.into_iter().map(Some).collect())
            }
            _ => None,
        };
        let Some(step) = step else { break };
        // Every read must name a dimension the operand has.
        if step.len() != out_dims.len() || step.iter().flatten().any(|&d| d >= op_dims.len()) {
            break;
        }
        dims = dims
            .iter()
            .map(|d| d.and_then(|d| step.get(d).copied().flatten()))
            .collect();
        nodes.push(current);
        current = operand;
    }
    Chain {
        source: current,
        nodes,
        dims,
    }
}

/// A reshape that only inserts or removes size-1 dimensions: maps each
/// non-1 output dimension to the matching operand dimension.
fn squeeze_map(out_dims: &[i64], op_dims: &[i64]) -> Option<Vec<Option<usize>>> {
    let out_big: Vec<usize> = (0..out_dims.len()).filter(|&i| out_dims[i] != 1).collect();
    let op_big: Vec<usize> = (0..op_dims.len()).filter(|&i| op_dims[i] != 1).collect();
    if out_big.len() != op_big.len()
        || out_big
            .iter()
            .zip(&op_big)
            .any(|(&a, &b)| out_dims[a] != op_dims[b])
    {
        return None;
    }
    let mut map = vec![None; out_dims.len()];
    for (&a, &b) in out_big.iter().zip(&op_big) {
        map[a] = Some(b);
    }
    Some(map)
}

/// `value` through layout ops and negates: the chain to the first op that
/// is neither, and whether an odd number of negates was walked through.
pub fn signed_chain(module: &Module, c: &Computation, value: InstrId) -> (Chain, bool) {
    let mut chain = layout_chain(module, c, value);
    let mut negated = false;
    while c.instr(chain.source).opcode == Opcode::Negate {
        let inner = layout_chain(module, c, c.instr(chain.source).operand(0));
        chain = chain.then(&inner);
        negated = !negated;
    }
    (chain, negated)
}

/// An add-reduce: `reduce(input, 0), to_apply=(a, b) -> add(a, b)`.
#[derive(Clone, Debug)]
pub struct AddReduce {
    pub input: InstrId,
    /// The reduced dimensions, each a dimension of `input`.
    pub dims: Vec<usize>,
}

pub fn add_reduce(module: &Module, c: &Computation, id: InstrId) -> Option<AddReduce> {
    let instr = c.instr(id);
    if instr.opcode != Opcode::Reduce || instr.operands().len() != 2 {
        return None;
    }
    let reducer = module.get_comp(instr.to_apply()?)?;
    let root = reducer.instr(reducer.root_opt()?);
    let params = reducer.parameters();
    let [p0, p1] = params[..] else {
        return None;
    };
    if root.opcode != Opcode::Add || !(root.operands() == [p0, p1] || root.operands() == [p1, p0]) {
        return None;
    }
    if !is_scalar_constant(module, c, instr.operand(1), 0.0) {
        return None;
    }
    let input = instr.operand(0);
    let rank = c.instr(input).shape.rank();
    let dims = instr
        .dimensions()?
        .iter()
        .map(|&d| usize::try_from(d).ok().filter(|&d| d < rank))
        .collect::<Option<Vec<_>>>()?;
    Some(AddReduce { input, dims })
}

fn is_size_one_add_reduce(module: &Module, c: &Computation, id: InstrId) -> bool {
    add_reduce(module, c, id).is_some_and(|r| {
        let in_dims = c.instr(r.input).shape.dims();
        r.dims.iter().all(|&d| in_dims.get(d) == Some(&1))
    })
}

/// A scalar constant `value`, possibly behind layout ops.
pub fn is_scalar_constant(module: &Module, c: &Computation, id: InstrId, value: f64) -> bool {
    let src = c.instr(layout_chain(module, c, id).source);
    src.opcode == Opcode::Constant
        && src.shape.rank() == 0
        && src.literal().and_then(|l| l.get_f64(0)) == Some(value)
}

/// Whether a chain reads every non-trivial dimension of its source once:
/// the value is the source with its dimensions permuted, up to size-1
/// dimensions.
fn covers(chain: &Chain, value_dims: &[i64], source_dims: &[i64]) -> bool {
    let mut seen = vec![false; source_dims.len()];
    for (d, read) in chain.dims.iter().enumerate() {
        match read {
            Some(s) if seen.get(*s) == Some(&false) => seen[*s] = true,
            None if value_dims.get(d) == Some(&1) => {}
            _ => return false,
        }
    }
    seen.iter()
        .zip(source_dims)
        .all(|(&s, &size)| s || size == 1)
}

/// Whether a value of `sizes` that reads a per-row value through `chain`
/// is that value broadcast back along `axis`: constant along the axis, and
/// each other dimension reading the row value's matching dimension
/// (`row_dims[k]`: which dimension of the value the row value's dimension
/// k stands for; size-1 dimensions are trivially fine).
pub fn is_axis_broadcast(
    chain: &Chain,
    sizes: &[i64],
    axis: usize,
    row_dims: &[Option<usize>],
) -> bool {
    chain.dims.len() == sizes.len()
        && chain.dims.iter().enumerate().all(|(d, read)| {
            sizes[d] == 1
                || match read {
                    None => d == axis,
                    Some(s) => d != axis && row_dims.get(*s).copied().flatten() == Some(d),
                }
        })
}

/// `bcast(sum(summand, axis))`: at every position, the sum along `axis` of
/// `summand`'s row through that position (or its negation).
#[derive(Clone, Debug)]
pub struct RowSum {
    /// The add-reduce over the axis.
    pub reduce: InstrId,
    /// What is summed: it has the broadcast value's dimensions, in order.
    pub summand: InstrId,
    /// In the broadcast value's (and the summand's) dimension numbering.
    pub axis: usize,
    pub negated: bool,
    /// Every op between the value and the summand, the reduce included.
    pub nodes: Vec<InstrId>,
}

/// `value` as a [`RowSum`].
pub fn row_sum(module: &Module, c: &Computation, value: InstrId) -> Match<RowSum> {
    let (outer, negated) = signed_chain(module, c, value);
    row_sum_below(module, c, c.instr(value).shape.dims(), outer, negated)
}

/// A [`RowSum`] whose broadcast side is `outer` (from a value of `sizes`
/// down to the reduce).
fn row_sum_below(
    module: &Module,
    c: &Computation,
    sizes: &[i64],
    outer: Chain,
    negated: bool,
) -> Match<RowSum> {
    let reduce = outer.source;
    let Some(r) = add_reduce(module, c, reduce) else {
        return not_candidate("reduce5 not found");
    };
    let [reduced] = r.dims[..] else {
        return refused("reduce has more than one reduction");
    };
    let (inner, inner_negated) = signed_chain(module, c, r.input);
    let summand = inner.source;
    let input_dims = c.instr(r.input).shape.dims();
    let summand_dims = c.instr(summand).shape.dims();
    if summand_dims.len() != sizes.len() || !covers(&inner, input_dims, summand_dims) {
        return refused("reduce5 found, but what it sums is not a whole tensor");
    }
    let Some(axis) = inner.dims.get(reduced).copied().flatten() else {
        return refused("reduce5 dim size is not 1");
    };
    // The reduce's result dimensions, in the summand's numbering.
    let row_dims: Vec<Option<usize>> = (0..inner.dims.len())
        .filter(|&d| d != reduced)
        .map(|d| inner.dims[d])
        .collect();
    if !is_axis_broadcast(&outer, sizes, axis, &row_dims) {
        return refused("the sum is not broadcast back along the axis it reduces");
    }
    let mut nodes = outer.nodes;
    nodes.push(reduce);
    nodes.extend(&inner.nodes);
    Ok(RowSum {
        reduce,
        summand,
        axis,
        negated: negated != inner_negated,
        nodes,
    })
}

/// What a forward softmax divides by: the divisor of a divide, or the
/// reciprocal of `1 / d` in a multiply.
struct Division {
    numerator: InstrId,
    /// From the divisor value (at the divide's dimensions) down to what
    /// it divides by.
    divisor: Chain,
}

/// `e / d`, or `e * r` (either order) with `r` a layout chain over `1 / d`.
fn division(module: &Module, c: &Computation, anchor: InstrId) -> Option<Division> {
    let a = c.instr(anchor);
    let [p, q] = a.operands()[..] else {
        return None;
    };
    match a.opcode {
        Opcode::Divide => Some(Division {
            numerator: p,
            divisor: layout_chain(module, c, q),
        }),
        Opcode::Multiply => [(p, q), (q, p)].into_iter().find_map(|(num, other)| {
            if c.instr(layout_chain(module, c, num).source).opcode != Opcode::Exp {
                return None;
            }
            let outer = layout_chain(module, c, other);
            let recip = c.instr(outer.source);
            if recip.opcode != Opcode::Divide
                || !is_scalar_constant(module, c, recip.operand(0), 1.0)
            {
                return None;
            }
            let inner = layout_chain(module, c, recip.operand(1));
            Some(Division {
                numerator: num,
                divisor: outer.then(&inner),
            })
        }),
        _ => None,
    }
}

/// A forward softmax `exp(x [- c]) / sum(exp(x [- c]), axis)`.
#[derive(Clone, Debug)]
pub struct ForwardSoftmax {
    pub divide: InstrId,
    pub exp: InstrId,
    pub sum: InstrId,
    pub logits: InstrId,
    /// In the logits' (and the divide's) dimension numbering.
    pub axis: usize,
    /// The divisor's chain, from the divide's divisor down to the sum.
    pub divisor: Chain,
    /// Every instruction of the softmax but constants and parameters, the
    /// divide included, sorted.
    pub region: Vec<InstrId>,
}

/// Matches the forward softmax anchored on `divide` (a divide, or a
/// multiply by the reciprocal of the sum).
///
/// The masked form `jax.nn.softmax(x, where=m)` matches too: the sum adds
/// `select(m, exp, 0)` and the exp reads `select(m, x, -inf)` with the same
/// mask, so the masked-out exps are 0 (NaN in a row masked out whole, where
/// the divide is NaN either way) and the divide is the softmax of
/// `select(m, x, -inf)`: that select is the logits.
pub fn match_forward(module: &Module, c: &Computation, divide: InstrId) -> Match<ForwardSoftmax> {
    let Some(d) = division(module, c, divide) else {
        return not_candidate(NOT_DIV_EXP_REDUCE);
    };
    let num = layout_chain(module, c, d.numerator);
    let exp = num.source;
    if c.instr(d.divisor.source).opcode != Opcode::Reduce {
        return not_candidate(NOT_DIV_EXP_REDUCE);
    }
    let sizes = c.instr(divide).shape.dims();
    let sum = || {
        row_sum_below(module, c, sizes, d.divisor.clone(), false).map_err(|m| match m {
            Mismatch::NotCandidate(_) => Mismatch::NotCandidate(NOT_DIV_EXP_REDUCE),
            refusal => refusal,
        })
    };
    if c.instr(exp).opcode != Opcode::Exp {
        // A divide by a row sum whose numerator a call hides.
        if let (Some(what), Ok(_)) = (opaque(module, c, exp), sum()) {
            return refused(format!(
                "{}: the numerator is {what}, which hides what it computes",
                NOT_DIV_EXP_REDUCE.trim_end()
            ));
        }
        return not_candidate(NOT_DIV_EXP_REDUCE);
    }
    log::debug!("exp and reduce found");
    if !num.is_identity(c.instr(exp).shape.rank()) {
        return not_candidate(NOT_DIV_EXP_REDUCE);
    }
    let sum = sum()?;
    if sum.negated {
        return not_candidate(NOT_DIV_EXP_REDUCE);
    }
    let rank = c.instr(exp).shape.rank();
    // A masked sum: its mask, and the exp it masks.
    let mut sum_mask = None;
    if sum.summand != exp {
        let masked_exp = masked(module, c, sum.summand, 0.0).filter(|&(_, v)| {
            let v = layout_chain(module, c, v);
            v.source == exp && v.is_identity(rank)
        });
        match masked_exp {
            Some(found) => sum_mask = Some(found),
            None => {
                let hidden = masked(module, c, sum.summand, 0.0)
                    .and_then(|(_, v)| opaque(module, c, layout_chain(module, c, v).source))
                    .or_else(|| opaque(module, c, sum.summand));
                if let Some(what) = hidden {
                    return refused(format!(
                        "{}: the sum adds {what}, which hides what it computes",
                        NOT_DIV_EXP_REDUCE.trim_end()
                    ));
                }
                return not_candidate(NOT_DIV_EXP_REDUCE);
            }
        }
    }
    let axis = sum.axis;
    log::debug!("div<-exp matches div<-reduce<-exp ");
    log::debug!("reduce dim: {axis}");

    let mut region = vec![divide, exp];
    region.extend(&num.nodes);
    region.extend(&d.divisor.nodes);
    region.extend(&sum.nodes);
    if let Some((_, v)) = sum_mask {
        region.push(sum.summand);
        region.extend(&layout_chain(module, c, v).nodes);
    }

    let exp_arg = c.instr(exp).operand(0);
    let logits = if c.instr(exp_arg).opcode == Opcode::Subtract {
        log::debug!("sub found");
        let sub = c.instr(exp_arg);
        let shift = layout_chain(module, c, sub.operand(1));
        let constant_along_axis = shift.dims.len() == rank && shift.dims[axis].is_none();
        if !constant_along_axis {
            return refused("sub found, but what it subtracts varies along the softmax axis");
        }
        let Some(max_nodes) = row_max_of(module, c, &shift, sub.operand(0), axis) else {
            return refused(
                "sub found, but what it subtracts is not the row max of what it is subtracted from",
            );
        };
        region.push(exp_arg);
        region.extend(max_nodes);
        sub.operand(0)
    } else {
        log::debug!("sub not found");
        exp_arg
    };
    if let Some((mask, _)) = sum_mask {
        let same = logits_mask(module, c, logits).is_some_and(|m| same_mask(module, c, m, mask));
        if !same {
            return refused(
                "the sum adds select(mask, exp, 0), but the exp does not read \
                 select(mask, x, -inf) with the same mask",
            );
        }
    }
    // Constants, parameters and broadcasts of constants may be shared freely.
    region.retain(|&id| {
        !matches!(c.instr(id).opcode, Opcode::Constant | Opcode::Parameter)
            && c.instr(layout_chain(module, c, id).source).opcode != Opcode::Constant
    });
    region.sort();
    region.dedup();
    log::debug!("Number of Ops in Softmax block: {}", region.len());
    Ok(ForwardSoftmax {
        divide,
        exp,
        sum: sum.reduce,
        logits,
        axis,
        divisor: d.divisor,
        region,
    })
}

/// An instruction whose computation the matchers cannot see into: a call
/// (`call-inliner` inlines only small pure ones) or a custom call. How the
/// report names it.
pub fn opaque(module: &Module, c: &Computation, id: InstrId) -> Option<String> {
    let i = c.instr(id);
    match i.opcode {
        Opcode::Call => {
            let callee = i
                .to_apply()
                .and_then(|t| module.get_comp(t))
                .map_or("?", |t| &t.name);
            Some(format!("call {} (to_apply={callee})", i.name))
        }
        Opcode::CustomCall => Some(format!(
            "custom-call {} ({})",
            i.name,
            i.custom_call_target().unwrap_or("?")
        )),
        _ => None,
    }
}

/// `select(mask, value, fill)` with `fill` the scalar constant `fill_value`
/// (broadcast, converted): the mask and the value.
pub fn masked(
    module: &Module,
    c: &Computation,
    id: InstrId,
    fill_value: f64,
) -> Option<(InstrId, InstrId)> {
    let s = c.instr(id);
    match s.operands()[..] {
        [mask, value, fill]
            if s.opcode == Opcode::Select && is_scalar_constant(module, c, fill, fill_value) =>
        {
            Some((mask, value))
        }
        _ => None,
    }
}

/// The mask of logits written `select(mask, x, -inf)` (up to converts).
pub fn logits_mask(module: &Module, c: &Computation, logits: InstrId) -> Option<InstrId> {
    masked(module, c, value_of(c, logits), f64::NEG_INFINITY).map(|(mask, _)| mask)
}

/// Whether two masks of one shape hold the same values: one `pred` source
/// read the same way at every position (JAX broadcasts the mask anew in
/// each `_where`).
pub fn same_mask(module: &Module, c: &Computation, a: InstrId, b: InstrId) -> bool {
    if a == b {
        return true;
    }
    let sizes = c.instr(a).shape.dims();
    if sizes != c.instr(b).shape.dims() {
        return false;
    }
    let (ca, cb) = (layout_chain(module, c, a), layout_chain(module, c, b));
    ca.source == cb.source && ca.same_reads(&cb, sizes)
}

/// Whether `a` and `b` hold the same values for a row max: the same value
/// up to converts (a max commutes with a convert, which is monotone), or
/// both `select(mask, v, -inf)` of the same mask and value.
fn same_values(module: &Module, c: &Computation, a: InstrId, b: InstrId) -> bool {
    let (a, b) = (value_of(c, a), value_of(c, b));
    if a == b {
        return true;
    }
    let ninf = f64::NEG_INFINITY;
    match (masked(module, c, a, ninf), masked(module, c, b, ninf)) {
        (Some((ma, va)), Some((mb, vb))) => {
            same_mask(module, c, ma, mb) && value_of(c, va) == value_of(c, vb)
        }
        _ => false,
    }
}

/// The nodes of the row max that `shift` (the chain of the subtracted
/// value, constant along `axis`) reads, when it is the row max over `axis`
/// of `of`, what it is subtracted from: `reduce-max(of, -inf)` broadcast
/// back along the axis, possibly as JAX's `maximum(reduce_max, -inf)`.
/// Another shift may overflow the exp where the row max would not.
pub fn row_max_of(
    module: &Module,
    c: &Computation,
    shift: &Chain,
    of: InstrId,
    axis: usize,
) -> Option<Vec<InstrId>> {
    let sizes = c.instr(of).shape.dims();
    let mut nodes = shift.nodes.clone();
    let mut outer = shift.clone();
    let top = c.instr(outer.source);
    if top.opcode == Opcode::Maximum {
        let [p, q] = top.operands()[..] else {
            return None;
        };
        let r = [(p, q), (q, p)]
            .into_iter()
            .find_map(|(r, k)| is_scalar_constant(module, c, k, f64::NEG_INFINITY).then_some(r))?;
        nodes.push(outer.source);
        let inner = layout_chain(module, c, r);
        nodes.extend(&inner.nodes);
        outer = outer.then(&inner);
    }
    let reduce = outer.source;
    let ri = c.instr(reduce);
    let [input, init] = ri.operands()[..] else {
        return None;
    };
    if ri.opcode != Opcode::Reduce
        || !is_max_reducer(module, ri)
        || !is_scalar_constant(module, c, init, f64::NEG_INFINITY)
    {
        return None;
    }
    let [reduced] = ri.dimensions()? else {
        return None;
    };
    let reduced = usize::try_from(*reduced).ok()?;
    // The max reads the values the logits read (each a layout view of one
    // source), and reduces the source dimension the softmax axis reads.
    let (lc, ic) = (layout_chain(module, c, of), layout_chain(module, c, input));
    let input_dims = c.instr(input).shape.dims();
    if !same_values(module, c, lc.source, ic.source)
        || !covers(&ic, input_dims, c.instr(ic.source).shape.dims())
        || lc.dims.get(axis).copied().flatten().is_none()
        || ic.dims.get(reduced).copied().flatten() != lc.dims[axis]
    {
        return None;
    }
    // The row max's dimensions, in the logits' numbering.
    let row_dims: Vec<Option<usize>> = (0..input_dims.len())
        .filter(|&d| d != reduced)
        .map(|d| ic.dims[d].and_then(|s| lc.dims.iter().position(|&l| l == Some(s))))
        .collect();
    if !is_axis_broadcast(&outer, sizes, axis, &row_dims) {
        return None;
    }
    nodes.push(reduce);
    Some(nodes)
}

/// A reducer `(a, b) -> maximum(a, b)`.
fn is_max_reducer(module: &Module, reduce: &Instruction) -> bool {
    let Some(reducer) = reduce.to_apply().and_then(|r| module.get_comp(r)) else {
        return false;
    };
    let Some(root) = reducer.root_opt().map(|r| reducer.instr(r)) else {
        return false;
    };
    let params = reducer.parameters();
    let [p0, p1] = params[..] else {
        return false;
    };
    root.opcode == Opcode::Maximum && (root.operands() == [p0, p1] || root.operands() == [p1, p0])
}

/// Whether `e` is `exp(select(mask, x, -inf) [- row max])` with `mask` the
/// same mask: then `e` is 0 wherever the mask is false, but in a row the
/// mask clears whole, where it is NaN.
pub fn exp_masked_by(
    module: &Module,
    c: &Computation,
    e: InstrId,
    mask: InstrId,
    axis: usize,
) -> bool {
    let exp = c.instr(value_of(c, e));
    if exp.opcode != Opcode::Exp {
        return false;
    }
    let arg = exp.operand(0);
    let a = c.instr(arg);
    let logits = if a.opcode == Opcode::Subtract {
        let shift = layout_chain(module, c, a.operand(1));
        if row_max_of(module, c, &shift, a.operand(0), axis).is_none() {
            return false;
        }
        a.operand(0)
    } else {
        arg
    };
    logits_mask(module, c, logits).is_some_and(|m| same_mask(module, c, m, mask))
}

/// Whether any instruction of `region` but `root` is used outside it (the
/// seed's escape check).
pub fn escapes(c: &Computation, region: &[InstrId], root: InstrId) -> Option<InstrId> {
    region.iter().copied().filter(|&id| id != root).find(|&id| {
        c.instr(id)
            .users()
            .iter()
            .any(|u| region.binary_search(u).is_err())
            || c.root_opt() == Some(id)
    })
}

/// The two operands of a commutative binary op, in both orders.
pub fn either_order(c: &Computation, id: InstrId, op: Opcode) -> Vec<(InstrId, InstrId)> {
    let instr = c.instr(id);
    match instr.operands()[..] {
        [a, b] if instr.opcode == op => vec![(a, b), (b, a)],
        _ => Vec::new(),
    }
}

/// The tensor `id` is, up to converts and copies: how the forms tell that
/// two operands are the same value (the seed sees through converts).
pub fn value_of(c: &Computation, mut id: InstrId) -> InstrId {
    while matches!(c.instr(id).opcode, Opcode::Convert | Opcode::Copy)
        && c.instr(id).operands().len() == 1
    {
        id = c.instr(id).operand(0);
    }
    id
}

/// `id` through copies and converts that keep the element type: the
/// operand a formula uses, at the formula's own type (a convert that
/// changes the type is where the formula's operand starts).
pub fn at_own_type(c: &Computation, mut id: InstrId) -> InstrId {
    loop {
        let i = c.instr(id);
        match i.operands()[..] {
            [op] if matches!(i.opcode, Opcode::Convert | Opcode::Copy)
                && c.instr(op).shape.element_type() == i.shape.element_type() =>
            {
                id = op
            }
            _ => return id,
        }
    }
}

/// Whether `id` is `a * b` in either order, up to converts.
pub fn is_product_of(c: &Computation, id: InstrId, a: InstrId, b: InstrId) -> bool {
    let (a, b) = (value_of(c, a), value_of(c, b));
    either_order(c, value_of(c, id), Opcode::Multiply)
        .into_iter()
        .any(|(p, q)| value_of(c, p) == a && value_of(c, q) == b)
}

/// `1 / (s * s)` as a chain: the reciprocal reads (through layout ops)
/// a square `a * a` whose factor reads `s_source`; the chain from the
/// value down to `s_source`, when both factors read it the same way.
pub fn inverse_square(module: &Module, c: &Computation, value: InstrId) -> Option<Chain> {
    let k = layout_chain(module, c, value);
    let div = c.instr(k.source);
    if div.opcode != Opcode::Divide || !is_scalar_constant(module, c, div.operand(0), 1.0) {
        return None;
    }
    let sq = value_of(c, div.operand(1));
    let [a, b] = c.instr(sq).operands()[..] else {
        return None;
    };
    if c.instr(sq).opcode != Opcode::Multiply {
        return None;
    }
    let square = k.then(&Chain {
        source: sq,
        nodes: Vec::new(),
        dims: (0..c.instr(sq).shape.rank()).map(Some).collect(),
    });
    let ca = square.then(&layout_chain(module, c, a));
    let cb = square.then(&layout_chain(module, c, b));
    let sizes = c.instr(value).shape.dims();
    (ca.source == cb.source && ca.same_reads(&cb, sizes)).then_some(ca)
}
