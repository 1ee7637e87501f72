//! The interpreter's cancel hook ([`EvalOptions::cancel`]): a heavy loop
//! stops soon after the hook says so, with an error of its own kind, and
//! `--check-numerics` passes that on instead of checking region by region.

use hlo_opt::driver::check_numerics::{run_checked, CheckConfig, CheckError};
use hlo_opt::interp::array::Value;
use hlo_opt::interp::{
    evaluate_with, random::random_inputs, Cancel, ErrorKind, EvalError, EvalOptions,
};
use hlo_opt::ir::Module;
use hlo_opt::passes::{self, PassOptions};
use hlo_opt::text::parse_module;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn security_module(name: &str) -> Module {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/security")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    parse_module(&text, name).unwrap_or_else(|e| panic!("{e}"))
}

/// Evaluates `m` on `inputs` with a cancel flag another thread sets after
/// 300 ms: the evaluation's error, and how long after the flag it stopped.
fn evaluate_until_the_flag(m: &Module, inputs: &[Value]) -> (EvalError, Duration) {
    let flag = Arc::new(AtomicBool::new(false));
    let options = EvalOptions {
        cancel: Some(Cancel::on_flag(flag.clone())),
        ..EvalOptions::default()
    };
    let setter = {
        let flag = flag.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            flag.store(true, Ordering::Relaxed);
            Instant::now()
        })
    };
    let e = evaluate_with(m, inputs, &options).unwrap_err();
    let stopped = Instant::now();
    let set = setter.join().unwrap();
    (e, stopped.saturating_duration_since(set))
}

/// Without a hook, this loop runs to its 10^7-iteration cap (about 21 h).
#[test]
fn a_heavy_while_loop_stops_soon_after_the_flag_is_set() {
    let m = security_module("while_heavy.hlo");
    let (e, late) = evaluate_until_the_flag(&m, &[]);
    assert_eq!(e.kind, ErrorKind::Cancelled, "{e}");
    assert!(e.to_string().contains("interrupted"), "{e}");
    assert!(
        late < Duration::from_millis(500),
        "stopped {late:?} after the flag"
    );
}

/// Many cheap instructions (no while loop) also reach the hook, and a
/// hook that never says stop changes nothing.
#[test]
fn the_hook_is_asked_by_work_done_and_changes_no_result() {
    let mut text = String::from("HloModule chain\n\nENTRY e {\n  x0 = f32[4096] parameter(0)\n");
    for i in 1..=2000 {
        text.push_str(&format!("  x{i} = f32[4096] negate(x{})\n", i - 1));
    }
    text.push_str("  ROOT r = f32[4096] copy(x2000)\n}\n");
    let m = parse_module(&text, "chain.hlo").unwrap();
    let inputs = random_inputs(&m, 0).unwrap();
    let asked = Arc::new(AtomicU64::new(0));
    let options = EvalOptions {
        cancel: Some(Cancel::new({
            let asked = asked.clone();
            move || {
                asked.fetch_add(1, Ordering::Relaxed);
                false
            }
        })),
        ..EvalOptions::default()
    };
    let with_hook = evaluate_with(&m, &inputs, &options).unwrap();
    let without = evaluate_with(&m, &inputs, &EvalOptions::default()).unwrap();
    assert_eq!(with_hook.to_literal(), without.to_literal());
    // 2001 instructions reading and writing 4096 elements each: about 16M
    // elements of work, a question every 4M.
    let n = asked.load(Ordering::Relaxed);
    assert!((2..=8).contains(&n), "asked {n} times");
}

/// A cancelled evaluation is not "cannot run whole": the check stops
/// with it rather than falling back to region by region (which would
/// skip the loop and report success).
#[test]
fn check_numerics_stops_with_the_cancel_error() {
    let mut m = security_module("check_numerics_heavy.hlo");
    let asked = Arc::new(AtomicU64::new(0));
    let cfg = CheckConfig {
        eval: EvalOptions {
            cancel: Some(Cancel::new({
                let asked = asked.clone();
                move || asked.fetch_add(1, Ordering::Relaxed) >= 3
            })),
            ..EvalOptions::default()
        },
        ..CheckConfig::default()
    };
    let passes = passes::default_pipeline()
        .into_iter()
        .map(|n| (passes::find_pass(n).unwrap().make)())
        .collect();
    let start = Instant::now();
    let r = run_checked(&mut m, passes, &PassOptions::default(), &cfg, &mut |_| {});
    match r {
        Err(CheckError::Eval { error, .. }) => {
            assert_eq!(error.kind, ErrorKind::Cancelled, "{error}")
        }
        Err(e) => panic!("not the cancel error: {e}"),
        Ok(_) => panic!("the check finished"),
    }
    assert!(start.elapsed() < Duration::from_secs(10));
}

/// One instruction whose work is quadratic in its size: a reduce-window
/// (and a select-and-scatter) whose window is half its operand, some
/// 2.7e11 additions (minutes), or a window over padding alone. The hook
/// is asked within the instruction, not only after it (before: Ctrl-C in Python waited it out).
#[test]
fn one_quadratic_window_instruction_stops_soon_after_the_flag_is_set() {
    let reduce_window = "HloModule rw\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  x = f32[1048576] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[524289] reduce-window(x, z), window={size=524288}, to_apply=add\n}\n";
    let select_and_scatter = "HloModule sas\n\nge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=GE\n}\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  x = f32[1048576] parameter(0)\n  src = f32[524289] parameter(1)\n  z = f32[] constant(0)\n  ROOT r = f32[1048576] select-and-scatter(x, src, z), window={size=524288}, select=ge, scatter=add\n}\n";
    // A window over padding: no element is read, every position is visited.
    let padded = "HloModule pad\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  x = f32[1] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[1048576] reduce-window(x, z), window={size=1048576 pad=1048575_1048575}, to_apply=add\n}\n";
    for text in [reduce_window, select_and_scatter, padded] {
        let m = parse_module(text, "window.hlo").unwrap();
        let inputs = random_inputs(&m, 0).unwrap();
        let (e, late) = evaluate_until_the_flag(&m, &inputs);
        assert_eq!(e.kind, ErrorKind::Cancelled, "{e}");
        assert!(
            late < Duration::from_millis(1000),
            "stopped {late:?} after the flag"
        );
    }
}
