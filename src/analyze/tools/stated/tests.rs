//! Phase S on small authored templates, and a cross-check against templates that both state
//! and render their calls.

use crate::analyze::compare::Renderer;
use crate::analyze::scenario::Scenario;
use crate::analyze::{analyze, Part};
use crate::template::{ArgumentsForm, ChatTemplate};

/// Reads the stated format of `template` even when its calls render.
fn stated(template: &ChatTemplate) -> Result<(super::ToolAnalysis, super::StatedFormat), String> {
    let analysis = analyze(template);
    let renderer = Renderer::new(template);
    let scenario = Scenario {
        tools: true,
        arguments: ArgumentsForm::Object,
        ..Scenario::user_only()
    };
    super::analyze(&renderer, &scenario, &analysis)
}

/// `CHATPARSE_STATED_DIR=DIR cargo test --lib stated_cross_check -- --ignored --nocapture`:
/// for every template of DIR, the format its preamble states next to the one its rendered
/// calls show (a template that does both must agree with itself).
#[test]
#[ignore = "reads templates from CHATPARSE_STATED_DIR"]
fn stated_cross_check() {
    let Some(dir) = std::env::var_os("CHATPARSE_STATED_DIR") else {
        println!("NOTICE: CHATPARSE_STATED_DIR not set; nothing to cross-check");
        return;
    };
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jinja"))
        .collect();
    paths.sort();
    for path in paths {
        let source = std::fs::read_to_string(&path).unwrap();
        let Ok(template) = ChatTemplate::new("x", source) else {
            continue;
        };
        let rendered = analyze(&template);
        println!("== {}", path.display());
        println!(
            "   rendered: {}",
            rendered.tools.as_ref().map_or_else(
                || format!("{:?}", rendered.unsupported_reason(Part::Tools)),
                |t| serde_json::to_string(t).unwrap()
            )
        );
        match stated(&template) {
            Ok((t, s)) => println!(
                "   stated:   {}\n   from:     {} {:?}",
                serde_json::to_string(&t).unwrap(),
                s.source,
                s.example
            ),
            Err(why) => println!("   stated:   {why}"),
        }
    }
}
