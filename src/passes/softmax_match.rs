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
//! Every matcher returns `Err(reason)` with the seed's own log line (or
//! ours, where the seed has none) so a refusal can say why.

use crate::ir::{Computation, InstrId, Module, Opcode};

/// A value reached from `source` through layout-only ops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    /// The first computing op (or parameter/constant) under the chain.
    pub source: InstrId,
    /// The layout ops walked through, from the value down.
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
        let op_dims = c.instr(operand).shape.dims().to_vec();
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
                squeeze_map(out_dims, &op_dims)
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
        if step.len() != out_dims.len() {
            break;
        }
        dims = dims.iter().map(|d| d.and_then(|d| step[d])).collect();
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

/// `reduce(x, init), to_apply=(a, b) -> add(a, b)` with a zero init: the
/// reduced dimensions, and the input.
pub fn add_reduce(module: &Module, c: &Computation, id: InstrId) -> Option<(InstrId, Vec<usize>)> {
    let instr = c.instr(id);
    if instr.opcode != Opcode::Reduce || instr.operands().len() != 2 {
        return None;
    }
    let reducer = module.get_comp(instr.to_apply()?)?;
    let root = reducer.instr(reducer.root_opt()?);
    let params = reducer.parameters();
    if root.opcode != Opcode::Add
        || params.len() != 2
        || !(root.operands() == [params[0], params[1]] || root.operands() == [params[1], params[0]])
    {
        return None;
    }
    if !is_zero(module, c, instr.operand(1)) {
        return None;
    }
    let dims = instr
        .dimensions()?
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect::<Option<Vec<_>>>()?;
    Some((instr.operand(0), dims))
}

fn is_size_one_add_reduce(module: &Module, c: &Computation, id: InstrId) -> bool {
    let Some((input, dims)) = add_reduce(module, c, id) else {
        return false;
    };
    let in_dims = c.instr(input).shape.dims();
    dims.iter().all(|&d| in_dims.get(d) == Some(&1))
}

/// A constant zero, possibly behind layout ops.
fn is_zero(module: &Module, c: &Computation, id: InstrId) -> bool {
    let chain = layout_chain(module, c, id);
    let src = c.instr(chain.source);
    src.opcode == Opcode::Constant
        && src.shape.rank() == 0
        && src.literal().and_then(|l| l.get_f64(0)) == Some(0.0)
}

/// A constant one, possibly behind layout ops.
fn is_one(module: &Module, c: &Computation, id: InstrId) -> bool {
    let chain = layout_chain(module, c, id);
    let src = c.instr(chain.source);
    src.opcode == Opcode::Constant
        && src.shape.rank() == 0
        && src.literal().and_then(|l| l.get_f64(0)) == Some(1.0)
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
    /// Every instruction of the softmax but constants and parameters, the
    /// divide included.
    pub region: Vec<InstrId>,
}

/// The exp, the add-reduce of it over one axis, and that axis: `sum` must
/// reduce (through converts and the like) the very `exp`.
fn sum_of_exp(
    module: &Module,
    c: &Computation,
    sum: InstrId,
    exp: InstrId,
) -> Result<(usize, Vec<InstrId>), &'static str> {
    let Some((input, dims)) = add_reduce(module, c, sum) else {
        return Err("div<-exp does not match div<-reduce<-exp ");
    };
    if dims.len() != 1 {
        return Err("reduce has more than one reduction");
    }
    let in_chain = layout_chain(module, c, input);
    if in_chain.source != exp
        || !covers(
            &in_chain,
            c.instr(input).shape.dims(),
            c.instr(exp).shape.dims(),
        )
    {
        return Err("div<-exp does not match div<-reduce<-exp ");
    }
    let axis = in_chain.dims[dims[0]].ok_or("reduce dim size is not 1")?;
    Ok((axis, in_chain.nodes))
}

/// Whether a chain reads every non-trivial dimension of its source once:
/// the value is the source with its dimensions permuted, up to size-1
/// dimensions.
fn covers(chain: &Chain, value_dims: &[i64], source_dims: &[i64]) -> bool {
    let mut seen = vec![false; source_dims.len()];
    for (d, read) in chain.dims.iter().enumerate() {
        match read {
            Some(s) if !seen[*s] => seen[*s] = true,
            None if value_dims[d] == 1 => {}
            _ => return false,
        }
    }
    seen.iter()
        .zip(source_dims)
        .all(|(&s, &size)| s || size == 1)
}

/// The dimensions of an add-reduce's result in `exp`'s numbering (`None`
/// for a size-1 dimension that maps nowhere).
fn sum_dims_in_exp(module: &Module, c: &Computation, sum: InstrId) -> Option<Vec<Option<usize>>> {
    let (input, dims) = add_reduce(module, c, sum)?;
    let in_chain = layout_chain(module, c, input);
    Some(
        (0..in_chain.dims.len())
            .filter(|d| !dims.contains(d))
            .map(|d| in_chain.dims[d])
            .collect(),
    )
}

/// Whether a value of `sizes` that reads the per-row sum through `chain`
/// is that sum broadcast back along `axis`: constant along the axis, and
/// each other dimension reading the sum's matching dimension (size-1
/// dimensions are trivially fine).
pub fn is_axis_broadcast(
    chain: &Chain,
    sizes: &[i64],
    axis: usize,
    sum_dims: &[Option<usize>],
) -> bool {
    chain.dims.len() == sizes.len()
        && chain.dims.iter().enumerate().all(|(d, read)| {
            sizes[d] == 1
                || match read {
                    None => d == axis,
                    Some(s) => d != axis && sum_dims.get(*s).copied().flatten() == Some(d),
                }
        })
}

/// Whether `chain` (from the divisor down to `sum`) puts the per-row sum
/// (over `axis` of a value with `exp`'s dimensions) back along `axis`.
fn is_row_broadcast(
    module: &Module,
    c: &Computation,
    chain: &Chain,
    sum: InstrId,
    exp: InstrId,
    axis: usize,
) -> bool {
    chain.source == sum
        && sum_dims_in_exp(module, c, sum).is_some_and(|sum_dims| {
            is_axis_broadcast(chain, c.instr(exp).shape.dims(), axis, &sum_dims)
        })
}

/// The divisor of a softmax anchored on `anchor`: the numerator operand and
/// the chain from the divisor down to what it divides by. A divide
/// `e / bcast(s)`, or a multiply `e * bcast(1 / s)` (either order).
fn numerator_and_divisor(
    module: &Module,
    c: &Computation,
    anchor: InstrId,
) -> Option<(InstrId, Chain)> {
    let a = c.instr(anchor);
    if a.operands().len() != 2 {
        return None;
    }
    match a.opcode {
        Opcode::Divide => Some((a.operand(0), layout_chain(module, c, a.operand(1)))),
        Opcode::Multiply => either_order(c, anchor, Opcode::Multiply)
            .into_iter()
            .find_map(|(num, other)| {
                if c.instr(layout_chain(module, c, num).source).opcode != Opcode::Exp {
                    return None;
                }
                let outer = layout_chain(module, c, other);
                let recip = c.instr(outer.source);
                if recip.opcode != Opcode::Divide || !is_one(module, c, recip.operand(0)) {
                    return None;
                }
                let inner = layout_chain(module, c, recip.operand(1));
                let mut nodes = outer.nodes.clone();
                nodes.push(outer.source);
                nodes.extend(&inner.nodes);
                let dims = outer
                    .dims
                    .iter()
                    .map(|r| r.and_then(|x| inner.dims.get(x).copied().flatten()))
                    .collect();
                Some((
                    num,
                    Chain {
                        source: inner.source,
                        nodes,
                        dims,
                    },
                ))
            }),
        _ => None,
    }
}

/// Matches the forward softmax anchored on `divide` (a divide, or a
/// multiply by the reciprocal of the sum).
pub fn match_forward(
    module: &Module,
    c: &Computation,
    divide: InstrId,
) -> Result<ForwardSoftmax, &'static str> {
    let Some((numerator, den)) = numerator_and_divisor(module, c, divide) else {
        return Err("div<-exp does not match div<-reduce<-exp ");
    };
    let num = layout_chain(module, c, numerator);
    let exp = num.source;
    let sum = den.source;
    if c.instr(exp).opcode != Opcode::Exp || c.instr(sum).opcode != Opcode::Reduce {
        return Err("div<-exp does not match div<-reduce<-exp ");
    }
    log::debug!("exp and reduce found");
    if !num.is_identity(c.instr(exp).shape.rank()) {
        return Err("div<-exp does not match div<-reduce<-exp ");
    }
    let (axis, sum_input_chain) = sum_of_exp(module, c, sum, exp)?;
    if !is_row_broadcast(module, c, &den, sum, exp, axis) {
        return Err("the divisor is not the sum broadcast along the reduced axis");
    }
    let den_nodes = den.nodes;
    log::debug!("div<-exp matches div<-reduce<-exp ");
    log::debug!("reduce dim: {axis}");

    let mut region = vec![divide, exp, sum];
    region.extend(&num.nodes);
    region.extend(&den_nodes);
    region.extend(&sum_input_chain);

    let exp_arg = c.instr(exp).operand(0);
    let logits = if c.instr(exp_arg).opcode == Opcode::Subtract {
        log::debug!("sub found");
        let sub = c.instr(exp_arg);
        let shift = layout_chain(module, c, sub.operand(1));
        let constant_along_axis =
            shift.dims.len() == c.instr(exp).shape.rank() && shift.dims[axis].is_none();
        if !constant_along_axis {
            return Err("sub found, but what it subtracts varies along the softmax axis");
        }
        region.push(exp_arg);
        region.extend(&shift.nodes);
        // The row max, possibly as JAX's maximum(reduce_max, -inf).
        let mut stack = vec![shift.source];
        while let Some(s) = stack.pop() {
            let si = c.instr(s);
            match si.opcode {
                Opcode::Maximum => {
                    region.push(s);
                    for &o in si.operands() {
                        let ch = layout_chain(module, c, o);
                        region.extend(&ch.nodes);
                        stack.push(ch.source);
                    }
                }
                Opcode::Reduce => region.push(s),
                _ => {}
            }
        }
        sub.operand(0)
    } else {
        log::debug!("sub not found");
        exp_arg
    };
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
        sum,
        logits,
        axis,
        region,
    })
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

/// `y` as the backward raise needs it: a forward softmax value.
#[derive(Clone, Debug)]
pub enum SoftmaxValue {
    /// A native forward softmax divide (any escape status).
    Divide(ForwardSoftmax),
    /// `custom-call(x), custom_call_target="AwsNeuronSoftmax"`.
    Call { id: InstrId, axis: usize },
}

impl SoftmaxValue {
    pub fn id(&self) -> InstrId {
        match self {
            SoftmaxValue::Divide(f) => f.divide,
            SoftmaxValue::Call { id, .. } => *id,
        }
    }

    pub fn axis(&self) -> usize {
        match self {
            SoftmaxValue::Divide(f) => f.axis,
            SoftmaxValue::Call { axis, .. } => *axis,
        }
    }
}

/// `id` (through converts) as a forward softmax value.
pub fn softmax_value(module: &Module, c: &Computation, id: InstrId) -> Option<SoftmaxValue> {
    let instr = c.instr(id);
    match instr.opcode {
        Opcode::Divide | Opcode::Multiply => {
            match_forward(module, c, id).ok().map(SoftmaxValue::Divide)
        }
        Opcode::CustomCall if instr.custom_call_target() == Some("AwsNeuronSoftmax") => {
            let axis = super::build::decimal_config(instr.backend_config())?;
            let axis = usize::try_from(axis)
                .ok()
                .filter(|&a| a < instr.shape.rank())?;
            Some(SoftmaxValue::Call { id, axis })
        }
        _ => None,
    }
}

/// The two operands of a commutative binary op, in both orders.
pub fn either_order(c: &Computation, id: InstrId, op: Opcode) -> Vec<(InstrId, InstrId)> {
    let instr = c.instr(id);
    if instr.opcode != op || instr.operands().len() != 2 {
        return Vec::new();
    }
    let (a, b) = (instr.operand(0), instr.operand(1));
    vec![(a, b), (b, a)]
}

/// `sum(value, axis)` broadcast back along the axis, as a value of rank
/// `rank`: the reduce and the nodes in between.
pub fn row_sum_broadcast(
    module: &Module,
    c: &Computation,
    bcast: InstrId,
    axis: usize,
    rank: usize,
) -> Option<(InstrId, InstrId, Vec<InstrId>)> {
    let chain = layout_chain(module, c, bcast);
    let (input, dims) = add_reduce(module, c, chain.source)?;
    if dims.len() != 1 || chain.dims.len() != rank {
        return None;
    }
    let in_rank = c.instr(input).shape.rank();
    if in_rank != rank || dims[0] != axis {
        return None;
    }
    // Dimensions of the sum: the input's but the axis, in order.
    let sum_dims: Vec<Option<usize>> = (0..rank).filter(|&d| d != axis).map(Some).collect();
    if !is_axis_broadcast(&chain, c.instr(bcast).shape.dims(), axis, &sum_dims) {
        return None;
    }
    let mut nodes = chain.nodes;
    nodes.push(chain.source);
    Some((chain.source, input, nodes))
}

/// Whether `id` is `1 / (s * s)` for the row sum `s` (JAX's autodiff of
/// `e / s`), through layout ops.
pub fn is_inverse_square_of(
    module: &Module,
    c: &Computation,
    id: InstrId,
    sum: InstrId,
) -> Option<Vec<InstrId>> {
    let chain = layout_chain(module, c, id);
    let div = c.instr(chain.source);
    if div.opcode != Opcode::Divide || !is_one(module, c, div.operand(0)) {
        return None;
    }
    let sq = c.instr(div.operand(1));
    if sq.opcode != Opcode::Multiply {
        return None;
    }
    let a = layout_chain(module, c, sq.operand(0));
    let b = layout_chain(module, c, sq.operand(1));
    if a.source != sum || b.source != sum {
        return None;
    }
    let mut nodes = chain.nodes;
    nodes.extend([chain.source, div.operand(1)]);
    nodes.extend(a.nodes);
    nodes.extend(b.nodes);
    Some(nodes)
}
