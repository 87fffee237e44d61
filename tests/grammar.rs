//! The constrained-decoding grammars checked by llguidance: every Lark grammar compiles, a
//! byte-level matcher accepts every output the parser reads as calls to offered tools with valid
//! arguments (soundness), and rejects the same outputs with a tool name the request does not
//! offer or an argument key the schema does not have (tightness).
//!
//! Cases: every complete case of every `fixtures/` folder whose parse holds calls, and the
//! round-trip renders with calls of every `../shared/templates` template that has a tool format
//! (skipped with a NOTICE when `../shared` is absent).

mod grammar_support;

use chatparse::grammar::{GrammarFlavor, TriggerKind};
use chatparse::message::ToolChoice;
use grammar_support::{compiled, fixture_cases, grammar_start, template_cases, CallCase};

/// What a run over a set of cases found.
#[derive(Default)]
struct Tally {
    accepted: usize,
    rejected_names: usize,
    rejected_keys: usize,
    not_offered: usize,
    /// Cases whose calls start with the bare tool name (no marker): unoffered names are never
    /// constrained.
    limitations: Vec<String>,
    failures: Vec<String>,
}

fn mutate_all(text: &str, from: &str, to: &str) -> Option<String> {
    text.contains(from).then(|| text.replace(from, to))
}

fn check_case(case: &CallCase, tally: &mut Tally) {
    let (c, lark) = match compiled(&case.parser) {
        Ok(x) => x,
        Err(e) => {
            tally
                .failures
                .push(format!("{}: does not compile: {e}", case.id));
            return;
        }
    };
    if let Err(why) = case.offered_and_valid() {
        // Not what a constrained decoder writes: the grammar must reject it (or not start).
        tally.not_offered += 1;
        if let Some(start) = grammar_start(&c, &case.output) {
            if lark.accepts(&case.output[start..]).is_ok() {
                tally
                    .failures
                    .push(format!("{}: accepted although it {why}", case.id));
            }
        }
        return;
    }
    // Soundness.
    let Some(start) = grammar_start(&c, &case.output) else {
        tally.failures.push(format!(
            "{}: no trigger ({:?}) occurs in an output with calls",
            case.id, c.triggers
        ));
        return;
    };
    let region = &case.output[start..];
    match lark.accepts(region) {
        Ok(()) => tally.accepted += 1,
        Err(e) => {
            tally.failures.push(format!(
                "{}: rejected ({e})\n--- region ---\n{region}\n--- grammar ---\n{}",
                case.id,
                c.print(GrammarFlavor::Lark).grammar
            ));
            return;
        }
    }
    // Tightness 1: every call's name replaced by one the request does not offer.
    let mut wrong = case.output.clone();
    for call in &case.message.tool_calls {
        if let Some(w) = mutate_all(&wrong, &call.name, "zz_unoffered") {
            wrong = w;
        }
    }
    match grammar_start(&c, &wrong) {
        Some(s) if lark.accepts(&wrong[s..]).is_ok() => tally.failures.push(format!(
            "{}: accepted a call to an unoffered tool:\n{}",
            case.id,
            &wrong[s..]
        )),
        Some(_) => tally.rejected_names += 1,
        None => {
            // The trigger runs through the name: the grammar never starts, and the parser must
            // not read a call either.
            let parsed = case.parser.parse(&wrong);
            // Every trigger that could start the grammar in this output runs through a tool
            // name: the name itself, or a pattern anchored at the output's start (a call right
            // after an opener the prompt wrote, whose head is the name). A word or pattern
            // the output does not hold starts nothing here.
            let names_are_triggers = c.triggers.iter().all(|t| match t.kind {
                TriggerKind::Word => {
                    case.request.tool(&t.value).is_some() || !wrong.contains(t.value.as_str())
                }
                TriggerKind::Pattern => {
                    t.value.starts_with('^')
                        || regex_automata::meta::Regex::new(&t.value)
                            .is_ok_and(|re| re.find(wrong.as_str()).is_none())
                }
            });
            if names_are_triggers {
                // The format starts a call with its bare name (the prompt wrote the opener):
                // only offered names trigger, so a call to another name is never constrained.
                tally.limitations.push(case.id.clone());
            } else if parsed
                .message
                .tool_calls
                .iter()
                .any(|t| t.name == "zz_unoffered")
            {
                tally.failures.push(format!(
                    "{}: the parser reads a call to an unoffered tool the trigger does not see",
                    case.id
                ));
            } else {
                tally.rejected_names += 1;
            }
        }
    }
    // Tightness 2: an argument key renamed to one the schema does not declare.
    let key = case.message.tool_calls.iter().find_map(|call| {
        let args: serde_json::Value = serde_json::from_str(&call.arguments).ok()?;
        let key = args.as_object()?.keys().next()?.clone();
        (!call.name.contains(&key)).then_some(key)
    });
    if let Some(key) = key {
        let needle = key.clone();
        if let Some(bad) = mutate_all(region, &needle, &format!("{key}_zz")) {
            match lark.accepts(&bad) {
                Ok(()) => tally.failures.push(format!(
                    "{}: accepted an undeclared argument `{key}_zz`:\n{bad}",
                    case.id
                )),
                Err(_) => tally.rejected_keys += 1,
            }
        }
    }
}

fn run(cases: &[CallCase], what: &str) -> Tally {
    let mut tally = Tally::default();
    for case in cases {
        let t = std::time::Instant::now();
        check_case(case, &mut tally);
        if std::env::var_os("CHATPARSE_GRAMMAR_TIMES").is_some() {
            eprintln!("{} {:?}", case.id, t.elapsed());
        }
    }
    println!(
        "{what}: {} cases: {} accepted, {} rejected with an unoffered name, {} rejected with an \
         undeclared key, {} not offered or invalid (must be rejected), {} failures",
        cases.len(),
        tally.accepted,
        tally.rejected_names,
        tally.rejected_keys,
        tally.not_offered,
        tally.failures.len()
    );
    if !tally.limitations.is_empty() {
        println!(
            "NOTICE: calls start with the bare tool name (a call to another name never triggers \
             the grammar): {}",
            tally.limitations.join(", ")
        );
    }
    tally
}

/// The committed known failures: id to reason.
fn known() -> Vec<(String, String)> {
    let text = include_str!("grammar_known_failures.txt");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once('\t'))
        .map(|(id, why)| (id.to_owned(), why.to_owned()))
        .collect()
}

/// Fails on unlisted failures, and on listed cases (of this run's `prefix`) that pass.
fn report(tally: &Tally, prefix: &str) {
    let known = known();
    let id_of = |f: &String| f.split(": ").next().unwrap_or_default().to_owned();
    let mut problems: Vec<String> = tally
        .failures
        .iter()
        .filter(|f| !known.iter().any(|(id, _)| *id == id_of(f)))
        .cloned()
        .collect();
    for (id, why) in known.iter().filter(|(id, _)| id.starts_with(prefix)) {
        if tally.failures.iter().any(|f| id_of(f) == *id) {
            println!("known failure {id}: {why}");
        } else {
            problems.push(format!(
                "{id} is listed as a known failure but passes: unlist it"
            ));
        }
    }
    if !problems.is_empty() {
        panic!("{} failures:\n\n{}", problems.len(), problems.join("\n\n"));
    }
}

#[test]
fn fixture_outputs_with_calls_are_accepted_and_mutations_rejected() {
    let mut notices = Vec::new();
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let cases = fixture_cases(&corpus, &mut notices);
    for n in notices {
        println!("NOTICE: skipping {n}");
    }
    assert!(!cases.is_empty(), "no fixture case with calls");
    let tally = run(&cases, "fixtures");
    assert!(tally.accepted > 0);
    report(&tally, "fixtures/");
}

#[test]
fn template_renders_with_calls_are_accepted_and_mutations_rejected() {
    let Some(dir) = chatparse::shared_data::shared_path_or_skip(
        "templates",
        "template_renders_with_calls_are_accepted_and_mutations_rejected",
    ) else {
        return;
    };
    let cases = template_cases(&dir);
    let tally = run(&cases, "templates");
    assert!(tally.accepted > 0);
    report(&tally, "templates/");
}

/// `tool_choice: required` is not lazy and covers the whole output: outputs that are only
/// calls (after the reasoning) are accepted whole; a named function leaves only that function.
#[test]
fn required_and_named_function_grammars_cover_the_whole_output() {
    let mut notices = Vec::new();
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut cases = fixture_cases(&corpus, &mut notices);
    if let Some(dir) = chatparse::shared_data::shared_path("templates") {
        cases.extend(template_cases(&dir));
    }
    let (mut accepted, mut named_rejected) = (0, 0);
    let mut failures = Vec::new();
    for case in &cases {
        if !case.message.content.trim().is_empty() || case.offered_and_valid().is_err() {
            continue;
        }
        let Some(parser) = case.with_choice(ToolChoice::Required) else {
            continue;
        };
        let (c, lark) = match compiled(&parser) {
            Ok(x) => x,
            Err(e) => {
                failures.push(format!("required:{}: {e}", case.id));
                continue;
            }
        };
        assert!(!c.lazy && c.triggers.is_empty());
        if parser.prefill_text().is_empty() {
            match lark.accepts(&case.output) {
                Ok(()) => accepted += 1,
                Err(e) => failures.push(format!("required:{}: {e}\n{}", case.id, case.output)),
            }
        }
        // A named function other than the one called: the output is rejected.
        let called = &case.message.tool_calls[0].name;
        if let Some(other) = case.request.tools.iter().find(|t| t.name() != called) {
            let Some(parser) = case.with_choice(ToolChoice::Function(other.name().to_owned()))
            else {
                continue;
            };
            let (c, lark) = compiled(&parser).expect("named function grammar compiles");
            assert!(!c.lazy);
            if lark.accepts(&case.output).is_err() {
                named_rejected += 1;
            } else {
                failures.push(format!(
                    "{}: the grammar for `{}` accepts a call to `{called}`",
                    case.id,
                    other.name()
                ));
            }
        }
    }
    println!("required: {accepted} accepted whole; named function: {named_rejected} rejected");
    assert!(accepted > 0);
    let tally = Tally {
        failures,
        ..Tally::default()
    };
    report(&tally, "required:");
}

/// Triggers are words where the block starts with a distinctive marker, and a pattern
/// otherwise; a pattern compiles.
#[test]
fn triggers_are_words_or_compiling_patterns() {
    let mut notices = Vec::new();
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    for case in fixture_cases(&corpus, &mut notices) {
        if case.request.tool_choice != ToolChoice::Auto {
            continue;
        }
        let (c, _) = compiled(&case.parser).expect("compiles");
        assert!(c.lazy, "{}", case.id);
        assert!(!c.triggers.is_empty(), "{}", case.id);
        for t in &c.triggers {
            assert!(!t.value.is_empty(), "{}", case.id);
            if t.kind == TriggerKind::Pattern {
                regex_automata::meta::Regex::new(&t.value)
                    .unwrap_or_else(|e| panic!("{}: pattern {:?}: {e}", case.id, t.value));
            }
        }
    }
}
