//! The text and proto fronts accept and refuse the same modules: each of
//! issue 11's reproducers (`tests/data/reliability/`) that one front reads
//! into the IR is carried to the other front's form without the verifier,
//! read back there, and both readings meet the one verifier with the same
//! verdict and the same message.

use hlo_opt::ir::verify::verify;
use hlo_opt::ir::{Module, PrintOptions};
use std::path::Path;

fn read_text(text: &str, name: &str) -> Result<Module, String> {
    hlo_opt::text::parse_module(text, name).map_err(|e| e.to_string())
}

fn read_proto(bytes: &[u8]) -> Result<Module, String> {
    hlo_opt::proto::read_module(bytes).map_err(|e| e.to_string())
}

/// What the two fronts made of one reproducer.
#[derive(Debug)]
struct Outcome {
    file: String,
    /// The front's own reading, then the verifier.
    own: Result<String, String>,
    /// The same module through the other front (its form written without
    /// the verifier), when the own front made one: printed, or refused.
    other: Option<Result<String, String>>,
}

/// A reading met by the verifier: the module printed, or the refusal.
fn judged(module: Result<Module, String>) -> Result<String, String> {
    let module = module?;
    verify(&module).map_err(|e| e.to_string())?;
    Ok(hlo_opt::text::print_module_with(
        &module,
        &PrintOptions::default_form(),
    ))
}

fn outcome(path: &Path) -> Outcome {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).unwrap();
    let is_proto = path.extension().is_some_and(|e| e == "pb");
    let module = if is_proto {
        read_proto(&bytes)
    } else {
        read_text(std::str::from_utf8(&bytes).unwrap(), &file)
    };
    let module = match module {
        Ok(m) => m,
        Err(e) => {
            return Outcome {
                file,
                own: Err(e),
                other: None,
            }
        }
    };
    let other = if is_proto {
        read_text(&hlo_opt::text::print_module(&module), &file)
    } else {
        hlo_opt::proto::module_to_proto_bytes(&module)
            .map_err(|e| e.to_string())
            .and_then(|bytes| read_proto(&bytes))
    };
    Outcome {
        file,
        own: judged(Ok(module)),
        other: Some(judged(other)),
    }
}

fn reproducers() -> Vec<Outcome> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/reliability");
    let mut outcomes = Vec::new();
    for case in std::fs::read_dir(&root).unwrap() {
        for f in std::fs::read_dir(case.unwrap().path()).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "hlo" || e == "pb") {
                outcomes.push(outcome(&p));
            }
        }
    }
    outcomes.sort_by(|a, b| a.file.cmp(&b.file));
    outcomes
}

#[test]
fn both_fronts_give_every_reproducer_the_same_verdict() {
    let outcomes = reproducers();
    assert!(outcomes.len() >= 30, "{} reproducers", outcomes.len());
    let (mut refused, mut accepted) = (0, 0);
    for o in &outcomes {
        let Some(other) = &o.other else {
            // Only what the other form cannot spell stops at the front:
            // a proto literal holds no `-inf` for an unsigned integer.
            assert!(o.file.ends_with("int_neg_inf.hlo"), "{o:?}");
            assert!(
                o.own.as_ref().unwrap_err().contains(":4:26: error"),
                "{o:?}"
            );
            continue;
        };
        match (&o.own, other) {
            (Ok(own), Ok(other)) => {
                accepted += 1;
                assert_eq!(own, other, "{}: the two readings differ", o.file);
            }
            (Err(own), Err(other)) => {
                refused += 1;
                // Each refusal says where: the text front by line and
                // column, the verifier by computation and instruction (or
                // the header entry).
                for e in [own, other] {
                    let located = e.contains(": error: ")
                        || e.contains("computation ")
                        || e.contains("stack frame")
                        || e.contains("StackFrames entry")
                        || e.contains("file location id");
                    assert!(located, "{}: {e}", o.file);
                }
            }
            _ => panic!("{}: the fronts disagree: {o:?}", o.file),
        }
    }
    assert!(
        refused >= 15 && accepted >= 10,
        "{refused} refused, {accepted} accepted"
    );
}
