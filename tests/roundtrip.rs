//! Byte-exact round trips: parse, print, compare with the input.

mod common;
use common::*;
use hlo_opt::ir::PrintOptions;

#[test]
fn corpus_modules_round_trip() {
    let paths = files("corpus", |n| {
        n.ends_with(".hlo") && !n.ends_with(".short.hlo")
    });
    check_round_trips("corpus", &paths, None, read);
}

#[test]
fn large_corpus_modules_round_trip() {
    let paths = files("large", |n| {
        n.ends_with(".hlo") && !n.ends_with(".short.hlo")
    });
    check_round_trips("large", &paths, None, read);
}

#[test]
fn xla_parser_long_cases_round_trip() {
    let paths = files("xla_parser/long", |n| n.ends_with(".hlo"));
    check_round_trips("xla_parser/long", &paths, None, read);
}

#[test]
fn corpus_short_forms_round_trip_in_short_form() {
    let mut paths = files("corpus", |n| n.ends_with(".short.hlo"));
    paths.extend(files("large", |n| n.ends_with(".short.hlo")));
    check_round_trips(
        "corpus short",
        &paths,
        Some(PrintOptions::short_form()),
        read,
    );
}

#[test]
fn xla_parser_short_cases_round_trip_in_short_form() {
    let paths = files("xla_parser/short", |n| n.ends_with(".hlo"));
    check_round_trips(
        "xla_parser/short",
        &paths,
        Some(PrintOptions::short_form()),
        read,
    );
}

#[test]
fn corpus_default_form_prints_as_the_short_form() {
    // XLA printed both files from one module: ours must agree.
    let paths = files("corpus", |n| {
        n.ends_with(".hlo") && !n.ends_with(".short.hlo") && !n.contains(".opt.")
    });
    check_round_trips(
        "corpus default->short",
        &paths,
        Some(PrintOptions::short_form()),
        |p| read(&p.with_extension("short.hlo")),
    );
}

#[test]
fn xla_parser_nonroundtrip_cases_print_as_expected() {
    let paths = files("xla_parser/nonroundtrip", |n| n.ends_with(".in.hlo"));
    check_round_trips(
        "xla_parser/nonroundtrip",
        &paths,
        Some(PrintOptions::short_form()),
        |p| {
            let out = p.to_string_lossy().replace(".in.hlo", ".out.hlo");
            read(std::path::Path::new(&out)).trim().to_string() + "\n\n"
        },
    );
}

#[test]
fn neuron_dumps_round_trip() {
    let paths = files("neuron", |n| {
        n.ends_with(".txt") && n != "dummy_hlo_nki_kernel.txt"
    });
    check_round_trips("neuron", &paths, None, read);
}

/// The typed attributes print in XLA's canonical form on their own: with
/// every remembered text forgotten, the modules XLA printed print the same.
#[test]
fn corpus_modules_print_canonically_without_their_texts() {
    let paths = files("corpus", |n| {
        n.ends_with(".hlo") && !n.ends_with(".short.hlo")
    });
    check_round_trips_after("corpus canonical", &paths, None, read, |m| {
        for a in &mut m.header {
            a.value = a.value.canonical();
        }
        let comps: Vec<_> = m.computation_ids().collect();
        for c in comps {
            let comp = m.comp_mut(c);
            let ids: Vec<_> = comp.sequence().collect();
            for i in ids {
                for a in comp.instr_mut(i).attrs.iter_mut() {
                    a.value = a.value.canonical();
                }
            }
        }
    });
}

/// The verifier's cycle check keeps the post order it walks, which the
/// printer then uses: it is the one the module finds itself, on every
/// module with calls the tests hold (fusions, loops, conditionals, nested
/// calls, async sugar). These texts define callees before their callers;
/// a module the other way round is the verifier's unit test
/// `the_fast_path_reads_each_computations_calls_in_order`.
#[test]
fn the_verifier_keeps_the_computation_post_order_the_module_finds() {
    let mut checked = 0;
    for dir in [
        "corpus",
        "frontend/jax",
        "xla_parser/short",
        "xla_parser/long",
    ] {
        for p in files(dir, |n| n.ends_with(".hlo")) {
            // `parse` verifies, which keeps the order; read again
            // unverified, the module finds it.
            let Ok(m) = parse(&p) else {
                continue;
            };
            let fresh = hlo_opt::text::parse_module(&read(&p), "").expect("parsed once");
            let kept = m.computation_post_order();
            assert_eq!(
                kept,
                fresh.computation_post_order(),
                "{}: the verifier's post order",
                p.display()
            );
            checked += usize::from(kept.len() > 2);
        }
    }
    assert!(checked > 50, "{checked} modules with calls");
}
