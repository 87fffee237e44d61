//! Phase S: tool calls a template never renders from `tool_calls`, read from what its tools
//! preamble **states** instead.
//!
//! 1. The preamble is what the prompt rendered with the probe tools adds to the prompt
//!    rendered without them.
//! 2. Example calls are found there by their shape (`examples`): a JSON object naming a
//!    tool and holding its arguments, a Python call list, or XML-ish call elements; names are
//!    a declared tool's or a placeholder's (`$FUNCTION_NAME`, `<tool name>`, `func_name`); the
//!    marker written right around the example opens and closes the calls.
//! 3. An example built from the declared tools must be the same example, tool names aside, in
//!    the prompt rendered with other tools (the name is the slot that follows the tool set).
//! 4. The example's `Syntax` writes probe calls the way the preamble
//!    writes its example; the rendered-call analysis (T1–T5) reads the format from those
//!    writes, as it would from rendered turns.
//! 5. The format is checked (`check`): the generated parser must parse back the example
//!    itself (when its values are literal) and calls written like it (one, two, every JSON
//!    type). Several calls: the separator of an example with two calls, else the shape's
//!    default (`, ` in lists, a line break between blocks), checked by the same round trip.
//! 6. Without an example, a documented [family](crate::generate::families) applies when the
//!    preamble shows the tokens it needs, or tokens of the same vocabulary; it is checked the
//!    same way.
//! 7. Without either, a sentence that names a marker the preamble shows and says JSON
//!    follows it ([`prose`]) states JSON call objects after that marker; checked the same
//!    way. Otherwise the tools part stays unsupported, saying what the preamble shows.

mod check;
mod examples;
mod prose;
mod pycall;
mod sketch;
mod syntax;
mod words;
mod xml;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::analyze::compare::Renderer;
use crate::analyze::markers::{aligned_prefix_len, aligned_suffix_len};
use crate::analyze::scenario::{ProbeSet, Scenario, NUMBER_VALUE};
use crate::analyze::{Analysis, Part};
use crate::diff::{segments, SegmentKind};
use crate::generate::{families, TurnFormat};

use super::{arguments, format, json_native, tagged, ToolAnalysis, ToolFormat};
use examples::Example;
use syntax::{CallSpec, Syntax};

/// Where a tool-call format read from the preamble comes from (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatedFormat {
    /// What was read: the example's shape (`json`, `call_list`, `call_elements`),
    /// `family:NAME` for a documented family, or `prose:json_list` / `prose:json_object`
    /// for a format stated in words.
    pub source: String,
    /// The example as the prompt rendered with the probe tools writes it (for a family: the
    /// family's own example; for a format stated in words, the sentence).
    pub example: String,
    /// The calls the example writes; two or more state the separator between calls (0: a
    /// format stated in words).
    pub calls: usize,
}

/// The prompt rendered with tools, and what tools add to the prompt rendered without them.
struct Preamble {
    text: String,
    /// Markers the preamble shows that the prompt without tools does not use.
    markers: Vec<String>,
    /// Labels its prose quotes for the model to write (`'Action:'`).
    labels: Vec<String>,
}

impl Preamble {
    fn of(with: &str, without: &str) -> Preamble {
        let start = aligned_prefix_len(with, without);
        let end =
            with.len() - aligned_suffix_len(&with[start..], &without[start.min(without.len())..]);
        let text = with[start..end.max(start)].to_owned();
        let mut markers: Vec<String> = Vec::new();
        let mut add = |m: &str| {
            let plain = !m.contains(char::is_whitespace) && !m.contains(['"', '\'']);
            if plain
                && m.chars().any(char::is_alphanumeric)
                && !without.contains(m)
                && !markers.iter().any(|k| k == m)
            {
                markers.push(m.to_owned());
            }
        };
        // `<...>`/`[...]` markers, and marker-shaped words with other delimiters (`⟪x⟫`).
        for seg in segments(&text).filter(|s| s.kind == SegmentKind::Marker) {
            add(seg.text);
        }
        for run in text.split_whitespace() {
            let run = run.trim_matches(|c: char| matches!(c, '.' | ',' | ';' | ':' | '`'));
            if words::is_marker(run) && !run.contains(['<', '[']) {
                add(run);
            }
        }
        let labels = crate::analyze::prose::quoted_labels(&text);
        Preamble {
            text,
            markers,
            labels,
        }
    }
}

/// Runs phase S for a template whose calls do not render (`analysis`: the rest of its
/// analysis). `Err` says what the preamble shows and why no format was read from it.
pub fn analyze(
    renderer: &Renderer<'_>,
    scenario: &Scenario,
    analysis: &Analysis,
) -> Result<(ToolAnalysis, StatedFormat), String> {
    let render = |s: &Scenario| {
        renderer
            .render(s)
            .map_err(|e| format!("the prompt with tools does not render: {e}"))
    };
    let with = render(scenario)?;
    let without = render(&Scenario {
        tools: false,
        ..scenario.clone()
    })?;
    let other_tools = render(&Scenario {
        probes: ProbeSet::CHECK,
        ..scenario.clone()
    })?;
    let mut preamble = Preamble::of(&with, &without);
    if preamble.text.trim().is_empty() {
        return Err("the tool definitions do not render".into());
    }
    let mut other = Preamble::of(&other_tools, &without);
    let (p, c) = (&ProbeSet::PRIMARY, &ProbeSet::CHECK);
    let mut found = examples::find(&preamble.text, &[p.fn_first, p.fn_second]);
    if found.is_empty() {
        // A template may state the format whether or not tools are given (instructions in
        // every prompt, before or after the conversation): the examples are then in the
        // whole prompt rendered with tools.
        let whole = Preamble::of(&with, "");
        let in_whole = examples::find(&whole.text, &[p.fn_first, p.fn_second]);
        if !in_whole.is_empty() {
            preamble = whole;
            found = in_whole;
            other = Preamble::of(&other_tools, "");
        }
    }
    let found_other = examples::find(&other.text, &[c.fn_first, c.fn_second]);
    let labelled = prose::statements(&preamble.text, &preamble.labels);
    let mut problems = Vec::new();
    for example in &found {
        let text = &preamble.text[example.span.0..example.span.1];
        let label = label_of(example, text, &labelled);
        match read_example(analysis, example, text, &found_other, label) {
            Ok(tools) => {
                let text = match label {
                    Some(label) => format!("{label}\n{}", text.trim()),
                    None => text.trim().to_owned(),
                };
                let stated = StatedFormat {
                    source: example.shape.name().to_owned(),
                    example: text,
                    calls: example.calls(),
                };
                return Ok((tools, stated));
            }
            Err(why) => problems.push(format!("«{}»: {why}", text.trim())),
        }
    }
    match family(analysis, &preamble) {
        Ok(found) => return Ok(found),
        Err(why) => problems.extend(why),
    }
    let named: Vec<String> = preamble
        .markers
        .iter()
        .chain(&preamble.labels)
        .cloned()
        .collect();
    for statement in prose::statements(&preamble.text, &named) {
        let syntax = statement.syntax();
        let read = derive(&syntax).and_then(|tools| {
            check::check(&with_tools(analysis, &tools), &syntax, None)?;
            Ok(tools)
        });
        match read {
            Ok(tools) => {
                let stated = StatedFormat {
                    source: statement.shape().to_owned(),
                    example: statement.sentence.trim().to_owned(),
                    calls: 0,
                };
                return Ok((tools, stated));
            }
            Err(why) => problems.push(format!("«{}»: {why}", statement.sentence.trim())),
        }
    }
    let shows = if preamble.markers.is_empty() {
        "no marker".to_owned()
    } else {
        let shown: Vec<String> = preamble.markers.iter().map(|m| format!("«{m}»")).collect();
        shown.join(" ")
    };
    if found.is_empty() && problems.is_empty() {
        return Err(format!(
            "the tools preamble states no call format: the prompt rendered with tools shows \
             {shows} and no example call (a JSON object naming a tool with its arguments, a \
             call list [name(arg=value)], or call elements <call name=…>)"
        ));
    }
    Err(format!(
        "no format stated in the prompt rendered with tools checks ({shows}): {}",
        problems.join("; ")
    ))
}

/// For a template whose calls render: the wrapper its tools preamble states around calls
/// written as they render (an example list `functools[{"name": …}, ...]` of call objects that
/// open as the rendered ones do), where the rendered turn writes none. `None` otherwise.
pub fn wrapper(
    renderer: &Renderer<'_>,
    scenario: &Scenario,
    tools: &ToolAnalysis,
) -> Option<super::StatedWrapper> {
    let rendered_opener = tools.per_call_start.trim();
    // The keys of rendered JSON call objects (a plain call object, no function wrapper).
    let keys = tools
        .json
        .as_ref()
        .filter(|j| tools.format == ToolFormat::JsonNative && !j.array_wrapped)
        .filter(|j| j.function_field.is_none() && !j.name_is_key)
        .and_then(|j| Some((j.name_field.clone()?, j.arguments_field.clone()?)));
    if !tools.section_start.trim().is_empty()
        || (keys.is_none() && !rendered_opener.starts_with('{'))
    {
        return None;
    }
    let with = renderer.render(scenario).ok()?;
    let without = renderer
        .render(&Scenario {
            tools: false,
            ..scenario.clone()
        })
        .ok()?;
    let preamble = Preamble::of(&with, &without);
    let p = &ProbeSet::PRIMARY;
    examples::find(&preamble.text, &[p.fn_first, p.fn_second])
        .into_iter()
        .filter(|e| e.shape == examples::Shape::Json)
        .find_map(|e| {
            let s = &e.syntax;
            let (open, close) = (s.open.trim(), s.close.trim());
            let call = format!("{}{}{}", s.head, s.mid, s.tail);
            let opens_like_rendered = match &keys {
                Some((name, args)) => {
                    call.contains(&format!("\"{name}\"")) && call.contains(&format!("\"{args}\""))
                }
                None => s.head.trim() == rendered_opener,
            };
            (opens_like_rendered && open.ends_with('[') && close.starts_with(']') && open.len() > 1)
                .then(|| super::StatedWrapper {
                    open: open.to_owned(),
                    close: close.to_owned(),
                    separator: s.separator.clone(),
                })
        })
}

/// The label a sentence of the prose says the calls follow (`Write 'Action:' followed by a
/// JSON list`), where the example does not write it: a statement of the same shape (a list
/// of calls, or one object per call).
fn label_of<'s>(
    example: &Example,
    text: &str,
    labelled: &'s [prose::Statement],
) -> Option<&'s str> {
    let list = example.syntax.open.trim_end().ends_with('[');
    labelled
        .iter()
        .find(|s| s.list == list && s.close.is_none() && !text.contains(s.marker.as_str()))
        .map(|s| s.marker.as_str())
}

/// The format an example states (after `label`, when the prose names one), checked.
fn read_example(
    analysis: &Analysis,
    example: &Example,
    text: &str,
    other_render: &[Example],
    label: Option<&str>,
) -> Result<ToolAnalysis, String> {
    let p = &ProbeSet::PRIMARY;
    let declared = example
        .names
        .iter()
        .any(|n| n == p.fn_first || n == p.fn_second);
    if declared && !other_render.iter().any(|o| o.syntax == example.syntax) {
        return Err("it changes with the declared tools in more than the tool name".into());
    }
    let (syntax, text) = match label {
        Some(label) => (
            example.syntax.after_label(label),
            format!("{label}\n{text}"),
        ),
        None => (example.syntax.clone(), text.to_owned()),
    };
    let tools = derive(&syntax)?;
    let format = with_tools(analysis, &tools);
    let literal = example
        .literal
        .as_deref()
        .map(|calls| (text.as_str(), calls));
    check::check(&format, &syntax, literal)?;
    Ok(tools)
}

/// The turn format of `analysis` with `tools` as its tool-call format.
fn with_tools(analysis: &Analysis, tools: &ToolAnalysis) -> TurnFormat {
    let mut a = analysis.clone();
    a.tools = Some(tools.clone());
    a.unsupported.retain(|u| u.part != Part::Tools);
    TurnFormat::from_analysis(&a)
}

/// Reads the format from probe calls written in `syntax` (one call, two calls, a number
/// argument), the way phase T reads rendered calls.
fn derive(syntax: &Syntax) -> Result<ToolAnalysis, String> {
    let p = &ProbeSet::PRIMARY;
    let args = |first: Value| {
        [
            (p.arg_first, first),
            (p.arg_second, Value::from(p.value_second)),
        ]
    };
    let strings = args(Value::from(p.value_first));
    let first = CallSpec::new(p.fn_first, &strings);
    let second = CallSpec::new(p.fn_second, &strings);
    let one = syntax.write(std::slice::from_ref(&first));
    let two = syntax.write(&[first, second]);
    let number = syntax.write(&[CallSpec::new(p.fn_first, &args(Value::from(NUMBER_VALUE)))]);
    let layout = format::classify(&one)?;
    let mut tools = match layout.format {
        ToolFormat::JsonNative => json_native::analyze(&one, Some(&two), &layout)?,
        _ => tagged::analyze(&one, Some(&two), &layout)?,
    };
    if tools.format == ToolFormat::TagWithTagged {
        arguments::check_non_string(&number, &mut tools.arguments);
    }
    Ok(tools)
}

/// A documented family whose tokens the preamble shows, checked by its own example.
fn family(
    analysis: &Analysis,
    preamble: &Preamble,
) -> Result<(ToolAnalysis, StatedFormat), Vec<String>> {
    let shown: Vec<&str> = preamble.markers.iter().map(String::as_str).collect();
    let mut problems = Vec::new();
    for family in families::shown_by(&shown) {
        let Some(tools) = family.tools.clone() else {
            continue;
        };
        let Some(example) = &family.example else {
            continue;
        };
        let format = with_tools(analysis, &tools);
        let calls: Vec<CallSpec> = example
            .calls
            .iter()
            .map(|c| CallSpec {
                name: c.name.clone(),
                args: c.arguments.clone().into_iter().collect(),
            })
            .collect();
        match check::parses_back(&format, &example.text, &calls) {
            Ok(()) => {
                let stated = StatedFormat {
                    source: format!("family:{}", family.name),
                    example: example.text.clone(),
                    calls: example.calls.len(),
                };
                return Ok((tools, stated));
            }
            Err(why) => problems.push(format!("family {}: {why}", family.name)),
        }
    }
    Err(problems)
}

#[cfg(test)]
mod tests;
