//! Phase T: the tool-call format.
//!
//! - **T1** (`format`): one call with two arguments; the function name inside a JSON value
//!   means [`ToolFormat::JsonNative`], argument names inside a JSON object after a bare name
//!   mean [`ToolFormat::TagWithJson`], otherwise [`ToolFormat::TagWithTagged`].
//! - **JSON native** (`json_native`): the JSON layout (field names, `function` nesting,
//!   name-as-key, array wrapping, id fields, Python dicts) and the text around the JSON.
//! - **T2/T3** (`tagged`): one call vs two calls tells section markers from per-call markers
//!   and gives the call separator; the text before the function name splits into per-call
//!   start and name prefix.
//! - **A1/A2/T5** (`arguments`): argument name/value markers and separator from the gaps
//!   between the probe names and values (tagged arguments).
//! - **T7** (`call_id`): where the call id sits and the markers around it.
//! - **S** ([`stated`]): when calls do not render, the format the tools preamble states.
//! - **A4** ([`values`]): how tagged values are written beyond their markers (Python literals,
//!   a wrapper, escaped characters).

mod arguments;
mod call_id;
pub mod elements;
mod format;
mod json_native;
pub(crate) mod json_scan;
mod layout;
pub mod stated;
mod tagged;
pub mod values;

use serde::{Deserialize, Serialize};

use super::compare::{compare, Renderer};
use super::content::ContentAnalysis;
use super::frame::Frame;
use super::reasoning::ReasoningAnalysis;
use super::scenario::{Call, ProbeSet, Scenario};
use super::slots::{slot_repeats, Counters, Slot};

pub(crate) use format::call_text;

/// How tool calls are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolFormat {
    /// The whole call is JSON: `{"name": "f", "arguments": {...}}`.
    JsonNative,
    /// The function name is in markers, the arguments are a JSON object.
    TagWithJson,
    /// The function name and each argument are in markers; string values are unquoted.
    TagWithTagged,
}

/// Where the call id sits in a tag-based call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallIdPosition {
    /// No call id in the call text (or, for JSON native, it is a JSON field).
    None,
    /// Before the function name.
    PreFuncName,
    /// Between the function name and the arguments.
    BetweenFuncAndArgs,
    /// After the arguments.
    PostArgs,
}

/// Markers around the function name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionMarkers {
    /// Text right before the name (`<function=`, `functions.`).
    pub name_prefix: String,
    /// Text right after the name, up to the arguments (`>\n`).
    pub name_suffix: String,
    /// Text closing the function after the arguments (`</function>\n`).
    pub close: String,
}

/// Markers of the arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArgumentMarkers {
    /// Opening of the argument container.
    pub start: String,
    /// Closing of the argument container.
    pub end: String,
    /// Text before an argument name (`<parameter=`).
    pub name_prefix: String,
    /// Text after an argument name (`>\n`).
    pub name_suffix: String,
    /// Text before a value (`<arg_value>`).
    pub value_prefix: String,
    /// Text after a value (`\n</parameter>\n`).
    pub value_suffix: String,
    /// Text between two arguments.
    pub separator: String,
    /// Extra text before string values only (a quote: `'`, `<|"|>`); non-string values are
    /// written bare, as JSON.
    pub string_open: String,
    /// Extra text after string values only.
    pub string_close: String,
    /// How a non-string value renders.
    pub non_string_values: NonStringValues,
    /// The markers of non-string (JSON) values when they differ from the string markers
    /// ([`NonStringValues::Typed`]): e.g. a type attribute in the name suffix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_string: Option<TypedValueMarkers>,
    /// The kinds of non-string value the template writes as Python literals (`True`, `None`,
    /// `{'k': 'v'}`, `['a']`) instead of JSON (see [`values`](self::values)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub python_values: Vec<JsonKind>,
    /// A wrapper the template writes around some values (`<![CDATA[`…`]]>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_wrapper: Option<ValueWrapper>,
    /// Characters a bare value holds written as other text (`<` as `&lt;`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub escapes: Vec<Escape>,
    /// The escapes apply to string values only: other values are written unescaped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub escaped_strings_only: bool,
    /// String values are written between `string_open` and `string_close` as they are, with
    /// no escapes: a quote or a newline in the value is written raw (the template joins the
    /// quotes and the text). Such a string ends at a closing quote that the text after a value
    /// follows (the value suffix, then a separator or the end of the arguments or call).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verbatim_strings: bool,
    /// Objects and arrays are written as elements, recursively: each member as
    /// `open + key + name_value + value + close` (`<key>value</key>`), each array item the
    /// same with a fixed item name (see [`values`](self::values)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element_values: Option<ElementValues>,
}

/// How a template writes objects and arrays as elements (`<k>v</k>`, `<item>v</item>`),
/// found from renders of an object and an array value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ElementValues {
    /// Text before a member's name (`<`).
    pub open: String,
    /// Text between the name and the value (`>`).
    pub name_value: String,
    /// Text after the value; [`Slot::Key`](crate::analyze::slots::Slot::Key) where the
    /// name is written again (`</{key}>`).
    pub close: String,
    /// Text between two elements (whitespace, often empty).
    pub separator: String,
    /// The name every array item is written with (`item`).
    pub item: String,
}

/// A kind of non-string JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JsonKind {
    /// `true`/`false`.
    Boolean,
    /// `null`.
    Null,
    /// `{...}`.
    Object,
    /// `[...]`.
    Array,
}

/// Text the template writes around a value (the value itself is written verbatim inside).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValueWrapper {
    /// The opening text (`<![CDATA[`).
    pub open: String,
    /// The closing text (`]]>`).
    pub close: String,
    /// Only some values are wrapped (a plain string renders bare; others, e.g. holding `<`,
    /// are wrapped).
    pub conditional: bool,
    /// Only string values are wrapped: a wrapped value is a string, whatever the schema says.
    pub strings_only: bool,
    /// A value holding the closing text is written as several wrapped sections in a row
    /// (`]]]]><![CDATA[>`), whose texts join.
    pub sections: bool,
}

/// A character a bare value writes as other text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Escape {
    /// The character.
    pub character: String,
    /// The text written for it (`&lt;`).
    pub written: String,
}

/// The markers of a tagged argument whose value is not a string, when they differ from the
/// string markers; the name prefix and the separator are shared. The value is JSON text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypedValueMarkers {
    /// Text after an argument name (`" string="false">`).
    pub name_suffix: String,
    /// Text before a value.
    pub value_prefix: String,
    /// Text after a value.
    pub value_suffix: String,
}

impl ArgumentMarkers {
    /// What a value decoder undoes in a string value: the wrapper and the escapes.
    pub fn value_text(&self) -> crate::message::ValueText {
        self.text_with_escapes(true)
    }

    /// What a value decoder undoes in another value: the wrapper, and the escapes unless
    /// they apply to strings only.
    pub fn non_string_text(&self) -> crate::message::ValueText {
        self.text_with_escapes(!self.escaped_strings_only)
    }

    fn text_with_escapes(&self, escaped: bool) -> crate::message::ValueText {
        let escapes: Vec<(String, String)> = self
            .escapes
            .iter()
            .filter(|_| escaped)
            .map(|e| (e.written.clone(), e.character.clone()))
            .collect();
        let wrapper = self.value_wrapper.as_ref();
        crate::message::ValueText::new(
            wrapper.map(|w| (w.open.as_str(), w.close.as_str())),
            wrapper.is_some_and(|w| w.sections),
            &escapes,
        )
    }

    /// The structural markers (container, name, value, separator, and the non-string
    /// variants when present), possibly empty.
    pub fn markers(&self) -> Vec<&str> {
        let mut markers = vec![
            self.start.as_str(),
            &self.end,
            &self.name_prefix,
            &self.name_suffix,
            &self.value_prefix,
            &self.value_suffix,
            &self.separator,
        ];
        if let Some(n) = &self.non_string {
            markers.extend([n.name_suffix.as_str(), &n.value_prefix, &n.value_suffix]);
        }
        markers
    }
}

/// How tagged arguments render a non-string value (checked with a number).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NonStringValues {
    /// Not checked (arguments are not tagged, or the render failed).
    #[default]
    Unchecked,
    /// With the same markers as strings, as JSON text.
    SameMarkers,
    /// Bare JSON text; strings add `string_open`/`string_close`.
    StringsQuoted,
    /// With other markers (e.g. a type attribute) that could not be derived: only string
    /// arguments are expressed.
    Different,
    /// With other markers, given in [`ArgumentMarkers::non_string`], as JSON text.
    Typed,
}

/// Call id position and markers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallIdMarkers {
    /// Where the id sits.
    pub position: CallIdPosition,
    /// Text before the id (`[CALL_ID]`).
    pub prefix: String,
    /// Text after the id (`[ARGS]`).
    pub suffix: String,
    /// The template writes a per-call counter (`0`, `1`, ...) at this position instead of the
    /// given id.
    pub counter: bool,
}

impl Default for CallIdMarkers {
    fn default() -> CallIdMarkers {
        CallIdMarkers {
            position: CallIdPosition::None,
            prefix: String::new(),
            suffix: String::new(),
            counter: false,
        }
    }
}

/// The JSON layout of calls (JSON native) or of arguments (tag with JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JsonLayout {
    /// The key of an object nesting name and arguments (`function`), if any.
    pub function_field: Option<String>,
    /// The key holding the function name (`None` when the name is itself the key).
    pub name_field: Option<String>,
    /// The key holding the arguments (`None` when the name is the key).
    pub arguments_field: Option<String>,
    /// The key holding the call id, if the id renders.
    pub id_field: Option<String>,
    /// A key holding an id the template generates (not the given id), if any.
    pub generated_id_field: Option<String>,
    /// The call is `{"<name>": {arguments}}`.
    pub name_is_key: bool,
    /// Calls are elements of one JSON array.
    pub array_wrapped: bool,
    /// Single-quoted Python literals instead of JSON.
    pub python_dicts: bool,
    /// The arguments are a JSON-encoded string.
    pub arguments_as_string: bool,
    /// The keys of a call object in rendered order.
    pub field_order: Vec<String>,
    /// Keys of the call object whose value is the same text for every call
    /// (`"type": "function"` of OpenAI-shaped calls), with that value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constant_fields: Vec<(String, String)>,
}

/// The tool-call part of an [`Analysis`](super::Analysis).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolAnalysis {
    /// The format.
    pub format: ToolFormat,
    /// Opens the tool-call section (once for all calls).
    pub section_start: String,
    /// Closes the tool-call section.
    pub section_end: String,
    /// Opens each call.
    pub per_call_start: String,
    /// Closes each call.
    pub per_call_end: String,
    /// Between two calls.
    pub call_separator: String,
    /// Several calls in one turn render (markers above were checked with two calls).
    pub parallel_calls: bool,
    /// Function name markers (tag formats).
    pub function: FunctionMarkers,
    /// Argument markers (tagged arguments; container markers for tag + JSON).
    pub arguments: ArgumentMarkers,
    /// Call id (tag formats).
    pub call_id: CallIdMarkers,
    /// JSON layout (JSON native: of the call; tag + JSON: of the arguments).
    pub json: Option<JsonLayout>,
    /// The first value of the per-call counter written into the markers (as a
    /// [`Slot::Counter`]), when the format has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_base: Option<u64>,
    /// The template writes each call's id where the function name goes and never writes the
    /// name itself: a model names the function inside the id it writes
    /// (`functions.NAME:0`), and parsers read the name from the id.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub name_in_id: bool,
    /// A wrapper the tools preamble states around calls written as they render
    /// (`functools[`…`]` around rendered `{"name": …}` objects), which the template itself
    /// does not write: models follow the preamble, so the parser reads it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_wrapper: Option<StatedWrapper>,
}

/// The opener and closer of a [`ToolAnalysis::stated_wrapper`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatedWrapper {
    /// Before the calls (`functools[`).
    pub open: String,
    /// After the calls (`]`).
    pub close: String,
    /// Between two calls inside it (`, `).
    pub separator: String,
}

impl ToolAnalysis {
    /// Whether calls are Python call expressions (`name(key=value, ...)`) whose strings the
    /// template writes bare while it writes other values as Python literals (`%s` of each
    /// value): models quote such strings as Python does, so a quoted value is a string
    /// literal.
    pub fn python_calls_with_bare_strings(&self) -> bool {
        let a = &self.arguments;
        self.function.name_suffix.trim_end().ends_with('(')
            && a.name_suffix.trim() == "="
            && a.string_open.is_empty()
            && !a.python_values.is_empty()
    }

    /// Whether calls are Python call expressions with keyword arguments
    /// (`name(key=value, ...)`): argument names are identifiers, never a positional value.
    pub fn python_keyword_calls(&self) -> bool {
        self.function.name_suffix.trim_end().ends_with('(')
            && self.function.close.trim_start().starts_with(')')
            && self.arguments.name_suffix.trim() == "="
            && self.arguments.name_prefix.trim().is_empty()
    }

    /// Whether calls are Python call expressions (`name(key="value", ...)`) whose template
    /// writes every value, whatever its type, inside quotes that are part of the argument
    /// markers (`"%s"`): models write Python literals there instead, which the parser reads
    /// too.
    pub fn python_calls_with_quoted_values(&self) -> bool {
        let a = &self.arguments;
        let quote = a.name_suffix.trim().strip_prefix('=');
        self.format == ToolFormat::TagWithTagged
            && self.function.name_suffix.trim_end().ends_with('(')
            && self.function.close.trim_start().starts_with(')')
            && quote.is_some_and(|q| matches!(q, "\"" | "'") && a.value_suffix == q)
            && a.value_prefix.is_empty()
            && a.string_open.is_empty()
            && a.non_string_values == NonStringValues::SameMarkers
    }

    /// The markers that may come right after a tagged argument value (past its suffix) other
    /// than the next argument: the end of the arguments, of the call or of the section, or,
    /// where a call's end marker is left out, the next call.
    pub fn after_value_markers(&self) -> [&str; 7] {
        [
            &self.arguments.end,
            &self.function.close,
            &self.per_call_end,
            &self.call_separator,
            &self.section_end,
            &self.per_call_start,
            &self.section_start,
        ]
    }

    /// Every marker string (possibly empty) of the analysis.
    pub fn markers(&self) -> Vec<&str> {
        let (f, c) = (&self.function, &self.call_id);
        let mut markers: Vec<&str> = vec![
            &self.section_start,
            &self.section_end,
            &self.per_call_start,
            &self.per_call_end,
            &self.call_separator,
            &f.name_prefix,
            &f.name_suffix,
            &f.close,
        ];
        markers.extend(self.arguments.markers());
        markers.extend([c.prefix.as_str(), c.suffix.as_str()]);
        markers
    }
}

/// The reason given when tool definitions render but calls do not.
pub const NO_CALLS: &str = "tool definitions render but assistant tool calls do not";

/// How rendered call texts are rewritten before markers are read from them: per-call
/// counters and repeated names become [slots](super::slots).
#[derive(Debug, Clone, Default)]
pub struct Slotting {
    counters: Counters,
}

impl Slotting {
    /// Finds the counters of the format: three identical calls are rendered and compared
    /// (`json_native`: calls are JSON, whose own values are not counters).
    pub fn find(
        renderer: &Renderer<'_>,
        frame: &Frame,
        scenario: &Scenario,
        reasoning: &ReasoningAnalysis,
        content: &ContentAnalysis,
        json_native: bool,
    ) -> Slotting {
        let (p, c) = (&ProbeSet::PRIMARY, &ProbeSet::CHECK);
        let ids = [p.id_first, p.id_second, c.id_first];
        let calls = ids
            .iter()
            .map(|id| Call {
                id: (*id).to_owned(),
                ..Call::first(p, 2)
            })
            .collect();
        let three = renderer
            .render(&scenario.with_calls(calls, None))
            .ok()
            .map(|r| frame.body(&r, true));
        let probes: Vec<&str> = p.all().into_iter().chain(c.all()).collect();
        let counters = three
            .and_then(|body| {
                let text = call_text(&body, reasoning, content);
                Counters::find(text, p.fn_first, &ids, &probes).ok()
            })
            .unwrap_or_default();
        // In JSON-native calls, digits inside the JSON are a generated id field.
        let counters = if json_native {
            counters.outside_json()
        } else {
            counters
        };
        Slotting { counters }
    }

    /// The counter's first value, when the format has a counter.
    pub fn counter_base(&self) -> Option<u64> {
        self.counters
            .found()
            .then_some(self.counters.base)
            .flatten()
    }

    /// `text` (calls rendered with `probes`) with its counters and repeated function and
    /// argument names written as slots.
    pub fn apply(&self, text: &str, probes: &ProbeSet) -> String {
        let names = [probes.fn_first, probes.fn_second];
        let text = self.counters.apply(text);
        let text = slot_repeats(&text, &names, &[], Slot::Name);
        slot_repeats(
            &text,
            &[probes.arg_first, probes.arg_second],
            &names,
            Slot::Key,
        )
    }
}

/// Runs phase T. `Err` gives the reason the tool format is unsupported.
pub fn analyze(
    renderer: &Renderer<'_>,
    frame: &Frame,
    scenario: &Scenario,
    reasoning: &ReasoningAnalysis,
    content: &ContentAnalysis,
) -> Result<ToolAnalysis, String> {
    let p = &ProbeSet::PRIMARY;
    let body = frame.tool_body.as_deref().ok_or(NO_CALLS)?;
    let raw = call_text(body, reasoning, content);
    let json_native = format::classify(raw)?.format == ToolFormat::JsonNative;
    let slotting = Slotting::find(renderer, frame, scenario, reasoning, content, json_native);
    let one = slotting.apply(raw, p);
    let layout = format::classify(&one)?;
    // Two calls are always tried: capability probes can miss parallel calls (strict templates
    // reject their call ids).
    let one_call = scenario.with_calls(vec![Call::first(p, 2)], None);
    let two = compare(renderer, &one_call, |s| *s = tagged::two_calls(s))
        .ok()
        .map(|c| frame.body(&c.b, true))
        .filter(|body| body.contains(p.fn_second));
    let two = two
        .as_deref()
        .map(|b| slotting.apply(call_text(b, reasoning, content), p));
    let mut analysis = match layout.format {
        ToolFormat::JsonNative => json_native::analyze(&one, two.as_deref(), &layout)?,
        _ => tagged::analyze(&one, two.as_deref(), &layout)?,
    };
    analysis.counter_base = slotting.counter_base();
    analysis.name_in_id = scenario.ids_are_names;
    if analysis.format == ToolFormat::TagWithTagged {
        let number = compare(renderer, &one_call, |s| {
            *s = s.with_calls(vec![Call::first_with_number(p)], None);
            s.first_arg_type = Some("integer");
        });
        if let Ok(number) = number {
            let body = frame.body(&number.b, true);
            let text = slotting.apply(call_text(&body, reasoning, content), p);
            arguments::check_non_string(&text, &mut analysis.arguments);
        }
        if analysis.arguments.non_string.is_some() {
            let boolean = compare(renderer, &one_call, |s| {
                *s = s.with_calls(vec![Call::first_with_value(p, true.into())], None);
                s.first_arg_type = Some("boolean");
            });
            if let Ok(boolean) = boolean {
                let body = frame.body(&boolean.b, true);
                let text = slotting.apply(call_text(&body, reasoning, content), p);
                arguments::check_type_word(&text, &mut analysis.arguments);
            }
        }
        let render_first = |value: serde_json::Value| {
            let mut call = Call::first(p, 2);
            call.args[0].1 = value;
            let render = renderer
                .render(&scenario.with_calls(vec![call], None))
                .ok()?;
            let body = frame.body(&render, true);
            Some(slotting.apply(call_text(&body, reasoning, content), p))
        };
        values::analyze(&render_first, &one, &mut analysis.arguments);
    }
    Ok(analysis)
}
