//! Aliasing: an instruction's `output_to_operand_aliasing`, the header's
//! `input_output_alias` and `buffer_donor`: read and printed.

use super::{ints, join, push_int, Cursor, PResult};
use crate::ir::attrs::*;
use crate::ir::SharedStr;

/// `{{0}: (1, {}), {1}: (0, {0})}`
pub(super) fn aliasing(c: &mut Cursor<'_>) -> PResult<Vec<OutputAlias>> {
    c.list("{", "}", |c| {
        let output_index = c.ints()?;
        c.expect(":")?;
        c.expect("(")?;
        let operand = c.int()?;
        c.expect(",")?;
        let operand_index = c.ints()?;
        c.expect(")")?;
        Ok(OutputAlias {
            output_index,
            operand,
            operand_index,
        })
    })
}

/// The header's `input_output_alias={ {0}: (0, {}, may-alias), ... }`.
pub fn input_output_alias(text: &SharedStr) -> PResult<Vec<InputOutputAlias>> {
    let mut c = Cursor::new(text);
    c.list("{", "}", |c| {
        let output_index = c.ints()?;
        c.expect(":")?;
        c.expect("(")?;
        let parameter = c.int()?;
        c.expect(",")?;
        let parameter_index = c.ints()?;
        let must_alias = if c.eat(",") {
            c.word() == "must-alias"
        } else {
            false
        };
        c.expect(")")?;
        Ok(InputOutputAlias {
            output_index,
            parameter,
            parameter_index,
            must_alias,
        })
    })
}

/// The header's `buffer_donor={ (0, {1}), ... }`.
pub fn buffer_donor(text: &SharedStr) -> PResult<Vec<BufferDonor>> {
    let mut c = Cursor::new(text);
    c.list("{", "}", |c| {
        c.expect("(")?;
        let parameter = c.int()?;
        c.expect(",")?;
        let parameter_index = c.ints()?;
        c.expect(")")?;
        Ok(BufferDonor {
            parameter,
            parameter_index,
        })
    })
}

pub(super) fn aliasing_text(list: &[OutputAlias], t: &mut String) {
    t.push('{');
    join(t, list, ", ", |t, x| {
        ints(t, &x.output_index);
        t.push_str(": (");
        push_int(t, x.operand);
        t.push_str(", ");
        ints(t, &x.operand_index);
        t.push(')');
    });
    t.push('}');
}

pub(super) fn alias_text(list: &[InputOutputAlias], t: &mut String) {
    t.push_str("{ ");
    join(t, list, ", ", |t, a| {
        ints(t, &a.output_index);
        t.push_str(": (");
        push_int(t, a.parameter);
        t.push_str(", ");
        ints(t, &a.parameter_index);
        t.push_str(if a.must_alias {
            ", must-alias)"
        } else {
            ", may-alias)"
        });
    });
    t.push_str(" }");
}

pub(super) fn donor_text(list: &[BufferDonor], t: &mut String) {
    t.push_str("{ ");
    join(t, list, ", ", |t, d| {
        t.push('(');
        push_int(t, d.parameter);
        t.push_str(", ");
        ints(t, &d.parameter_index);
        t.push(')');
    });
    t.push_str(" }");
}
