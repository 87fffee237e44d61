//! Generalization check: every shared template, with each of its markers renamed
//! (`<tool_call>` → `<tool_callQ>`, `<|im_start|>` → `<|im_startQ|>`, `[TOOL_CALLS]` →
//! `[TOOL_CALLSQ]`, `<｜tool▁calls▁begin｜>` → `<｜tool▁calls▁beginQ｜>`), must get the same
//! verdict from the render-then-parse check as the original, with the same kind of reasoning,
//! content and tool-call format. A difference means knowledge keyed to a marker's spelling
//! rather than derived from the renders. Templates whose difference is explained are listed
//! in `tests/marker_renaming_known.txt` (`name<TAB>reason`); the test fails when a listed
//! template agrees (then remove it) or an unlisted one differs.

use std::collections::BTreeMap;
use std::path::Path;

use chatparse::analyze::{analyze, Analysis};
use chatparse::fixtures::template_check::{check_template, jinja_files, Verdict};
use chatparse::shared_data::shared_path_or_skip;
use chatparse::template::ChatTemplate;

/// The suffix added to every marker word.
const MARK: char = 'Q';

/// `source` with every marker renamed (see the module docs). Markers: `<|word|>`, `<word>`,
/// `</word>` (lower-case words), `[WORD]`, `[/WORD]` (upper-case words), `<｜…｜>`.
fn rename(source: &str) -> String {
    let mut out = String::with_capacity(source.len() + 64);
    let mut rest = source;
    while let Some(c) = rest.chars().next() {
        if let Some((marker, len)) = marker_at(rest) {
            out.push_str(&marker);
            rest = &rest[len..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// A marker form: its opening text, its closing text, and the characters of its word.
type MarkerForm = (&'static str, &'static str, fn(char) -> bool);

/// The renamed marker starting `text`, with the length of the original.
fn marker_at(text: &str) -> Option<(String, usize)> {
    let forms: [MarkerForm; 6] = [
        ("<|", "|>", |c| c.is_ascii_alphabetic() || c == '_'),
        ("</", ">", |c| {
            c.is_ascii_lowercase() || c == '_' || c == ':'
        }),
        ("<", ">", |c| c.is_ascii_lowercase() || c == '_' || c == ':'),
        ("[/", "]", |c| c.is_ascii_uppercase() || c == '_'),
        ("[", "]", |c| c.is_ascii_uppercase() || c == '_'),
        ("<｜", "｜>", |c| !matches!(c, '｜' | '<' | '>' | '\n')),
    ];
    for (open, close, word) in forms {
        let Some(after) = text.strip_prefix(open) else {
            continue;
        };
        let len = after.find(|c: char| !word(c)).unwrap_or(after.len());
        let name = &after[..len];
        let first_ok = name.chars().next().is_some_and(|c| c.is_alphabetic());
        if first_ok && after[len..].starts_with(close) {
            let renamed = format!("{open}{name}{MARK}{close}");
            return Some((renamed, open.len() + len + close.len()));
        }
    }
    None
}

/// What the comparison looks at: the check's verdict and the kinds of format found.
fn summary(template: &ChatTemplate, analysis: &Analysis) -> String {
    let verdict = match check_template(template, analysis).verdict() {
        Verdict::Passed => "pass",
        Verdict::Refused => "refused",
        Verdict::Failed => "fail",
        Verdict::Unchecked => "unchecked",
    };
    let tools = analysis.tools.as_ref().map(|t| format!("{:?}", t.format));
    format!(
        "{verdict}; reasoning {:?}; content {:?}; tools {}; role switch {}; channels {}",
        analysis.reasoning.mode,
        analysis.content.mode,
        tools.as_deref().unwrap_or("none"),
        analysis.role_switch.is_some(),
        analysis.channels.is_some(),
    )
}

fn known() -> BTreeMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/marker_renaming_known.txt");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .map(|(name, reason)| (name.to_owned(), reason.to_owned()))
        .collect()
}

#[test]
fn renaming_markers_changes_no_verdict() {
    let mut dirs = Vec::new();
    for sub in ["templates", "templates-extra"] {
        if let Some(dir) = shared_path_or_skip(sub, "renaming_markers_changes_no_verdict") {
            dirs.push(dir);
        }
    }
    let known = known();
    let mut problems = Vec::new();
    let mut compared = 0;
    for dir in dirs {
        for path in jinja_files(&dir).unwrap() {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let source = std::fs::read_to_string(&path).unwrap();
            let renamed = rename(&source);
            if renamed == source {
                continue;
            }
            let (Ok(original), Ok(changed)) = (
                ChatTemplate::new(name.clone(), source),
                ChatTemplate::new(name.clone(), renamed),
            ) else {
                continue;
            };
            compared += 1;
            let before = summary(&original, &analyze(&original));
            let after = summary(&changed, &analyze(&changed));
            match (before == after, known.contains_key(&name)) {
                (true, true) => problems.push(format!(
                    "{name}: agrees after renaming but is listed in marker_renaming_known.txt: \
                     remove it"
                )),
                (false, false) => problems.push(format!(
                    "{name}: differs after renaming its markers\n  original: {before}\n  \
                     renamed:  {after}"
                )),
                _ => {}
            }
        }
    }
    println!("{compared} templates compared with their markers renamed");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn renaming_covers_every_marker_form() {
    assert_eq!(
        rename("<|im_start|>x<tool_call>{}</tool_call>[TOOL_CALLS][/INST]<｜tool▁sep｜> <b"),
        "<|im_startQ|>x<tool_callQ>{}</tool_callQ>[TOOL_CALLSQ][/INSTQ]<｜tool▁sepQ｜> <b"
    );
    // Jinja syntax and prose are left alone.
    assert_eq!(
        rename("{{ a[0] }} a < b > c [x]"),
        "{{ a[0] }} a < b > c [x]"
    );
}
