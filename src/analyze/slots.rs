//! Slots: the parts of a marker that vary from call to call or from argument to argument.
//!
//! Most markers are fixed text (`<tool_call>`). Some carry a value the template writes into
//! them: a per-call counter (`<|call index="1"|>`, `<|call index="2"|>`), the function name
//! written a second time (`to=NAME<|msg|><invoke name="NAME">`), the argument name written
//! again in its closing tag (`<KEY>value</KEY>`). The analysis finds these on the rendered
//! probes and writes each as one **slot character** inside the marker string, so the rest of
//! the analysis (and the generator, which reads markers as text) keeps working on plain
//! strings: a slot is a private-use character no template renders.
//!
//! - [`slot_repeats`] replaces the second and later occurrences of a probe value inside one
//!   call (or one argument) by [`Slot::Name`] / [`Slot::Key`].
//! - [`Counters`] are found by rendering three identical calls: the per-call texts may differ
//!   only in digit runs that count up by one; each run is remembered by the text around it and
//!   [`Counters::apply`] writes [`Slot::Counter`] there in any render.
//! - [`pieces`] splits a marker back into text and slots for the generator; [`display`]
//!   shows slots as `{name}`, `{key}`, `{counter}`, `{type}`.

use std::fmt::Write as _;

/// A varying part of a marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The call's function name, written again (its first occurrence is the name itself).
    Name,
    /// The argument's name, written again (e.g. in a closing tag).
    Key,
    /// A per-call counter: decimal digits that count up from call to call.
    Counter,
    /// A word naming the value's JSON type (`string`, `number`, ...).
    Type,
}

impl Slot {
    const ALL: [Slot; 4] = [Slot::Name, Slot::Key, Slot::Counter, Slot::Type];

    /// The private-use character that stands for the slot in a marker string.
    pub const fn char(self) -> char {
        match self {
            Slot::Name => '\u{E000}',
            Slot::Key => '\u{E001}',
            Slot::Counter => '\u{E002}',
            Slot::Type => '\u{E003}',
        }
    }

    /// The slot a character stands for, if it is one.
    pub fn of(c: char) -> Option<Slot> {
        Slot::ALL.into_iter().find(|s| s.char() == c)
    }

    /// How the slot is shown in reports: `{name}`, `{key}`, `{counter}`, `{type}`.
    pub const fn label(self) -> &'static str {
        match self {
            Slot::Name => "{name}",
            Slot::Key => "{key}",
            Slot::Counter => "{counter}",
            Slot::Type => "{type}",
        }
    }
}

/// A piece of a marker: fixed text or a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Fixed text.
    Text(&'a str),
    /// A varying part.
    Slot(Slot),
}

/// The pieces of `marker`, in order (no empty text pieces).
pub fn pieces(marker: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (at, c) in marker.char_indices() {
        if let Some(slot) = Slot::of(c) {
            if at > start {
                out.push(Piece::Text(&marker[start..at]));
            }
            out.push(Piece::Slot(slot));
            start = at + c.len_utf8();
        }
    }
    if start < marker.len() {
        out.push(Piece::Text(&marker[start..]));
    }
    out
}

/// Whether `text` holds a slot character.
pub fn has_slots(text: &str) -> bool {
    text.chars().any(|c| Slot::of(c).is_some())
}

/// The fixed text of `marker` before its first slot (all of it when it has none).
pub fn head(marker: &str) -> &str {
    match marker.char_indices().find(|(_, c)| Slot::of(*c).is_some()) {
        Some((at, _)) => &marker[..at],
        None => marker,
    }
}

/// `marker` with its slots shown as `{name}`, `{key}`, `{counter}`, `{type}`.
pub fn display(marker: &str) -> String {
    let mut out = String::with_capacity(marker.len());
    for c in marker.chars() {
        match Slot::of(c) {
            Some(slot) => out.push_str(slot.label()),
            None => out.push(c),
        }
    }
    out
}

/// `text` with every occurrence of a probe that repeats the probe before it replaced by
/// `slot`.
///
/// `probes` are the probe values of one kind (function names, or argument names); an
/// occurrence of `p` whose closest preceding occurrence of any of `probes` is `p` itself
/// repeats it (`NAME ... NAME`, `KEY value KEY`): it is written a second time within the same
/// call or argument. An occurrence of any of `breakers` in between ends the repetition (for
/// argument names: the next call's function name).
pub fn slot_repeats(text: &str, probes: &[&str], breakers: &[&str], slot: Slot) -> String {
    let mut hits: Vec<(usize, usize, Option<usize>)> = Vec::new(); // (start, end, probe)
    for (i, p) in probes.iter().enumerate() {
        if !p.is_empty() {
            hits.extend(
                text.match_indices(p)
                    .map(|(at, _)| (at, at + p.len(), Some(i))),
            );
        }
    }
    for b in breakers.iter().filter(|b| !b.is_empty()) {
        hits.extend(
            text.match_indices(b)
                .map(|(at, _)| (at, at + b.len(), None)),
        );
    }
    hits.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut last: Option<usize> = None;
    for (start, end, probe) in hits {
        if start < copied {
            continue;
        }
        if probe.is_some() && last == probe {
            out.push_str(&text[copied..start]);
            out.push(slot.char());
            copied = end;
        }
        last = probe;
    }
    out.push_str(&text[copied..]);
    out
}

/// Where a per-call counter sits: the text right before and right after its digits.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CounterSite {
    before: String,
    after: String,
}

/// The per-call counters of a tool-call format, found by comparing the texts of identical
/// calls (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    sites: Vec<CounterSite>,
    /// The counter's value in the first call.
    pub base: Option<u64>,
}

/// What call ids are replaced with while counters are looked for (a private-use character no
/// template renders, so it never reads as a digit or as fixed text).
const ID_FILLER: char = '\u{E010}';

/// How much text around a counter identifies its site.
const SITE_CONTEXT: usize = 24;

impl Counters {
    /// No counters.
    pub fn none() -> Counters {
        Counters::default()
    }

    /// Whether any counter was found.
    pub fn found(&self) -> bool {
        !self.sites.is_empty()
    }

    /// Finds the counters of `text`, a render of three identical calls named `name` (their ids,
    /// `ids`, replaced here by a neutral filler). The text kept around a counter to find it
    /// again never reaches into one of `probes` (values that differ in other renders).
    /// `Ok(none)` when the calls render identically; `Err` when they differ otherwise than by
    /// counting digits.
    pub fn find(text: &str, name: &str, ids: &[&str], probes: &[&str]) -> Result<Counters, String> {
        let mut text = text.to_owned();
        for id in ids {
            text = text.replace(id, &ID_FILLER.to_string().repeat(id.chars().count()));
        }
        let starts: Vec<usize> = text.match_indices(name).map(|(at, _)| at).collect();
        if starts.is_empty() || starts.len() % 3 != 0 {
            return Ok(Counters::none());
        }
        let per_call = starts.len() / 3;
        let (n0, n1, n2) = (starts[0], starts[per_call], starts[2 * per_call]);
        let (first, second) = (&text[n0..n1], &text[n1..n2]);
        if first == second {
            return Ok(Counters::none());
        }
        if first.len() != second.len() {
            return Err("consecutive calls render differently (not only by a counter)".into());
        }
        let (a, b) = (first.as_bytes(), second.as_bytes());
        let mut sites: Vec<CounterSite> = Vec::new();
        let mut i = 0;
        while i < a.len() {
            if a[i] == b[i] {
                i += 1;
                continue;
            }
            // A differing run of digits, widened to the whole digit run.
            let digit = |x: &[u8], k: usize| x.get(k).is_some_and(u8::is_ascii_digit);
            if !digit(a, i) || !digit(b, i) {
                return Err(format!(
                    "consecutive calls differ in more than a counter: {:?} vs {:?}",
                    snippet(first, i),
                    snippet(second, i)
                ));
            }
            let mut s = i;
            while s > 0 && digit(a, s - 1) && digit(b, s - 1) {
                s -= 1;
            }
            let mut e = i;
            while digit(a, e) && digit(b, e) {
                e += 1;
            }
            let (va, vb) = (number(&first[s..e]), number(&second[s..e]));
            match (va, vb) {
                (Some(x), Some(y)) if y == x + 1 => {}
                _ => {
                    return Err(format!(
                        "consecutive calls differ by digits that do not count up: {:?} vs {:?}",
                        &first[s..e],
                        &second[s..e]
                    ))
                }
            }
            let filler = ID_FILLER.to_string();
            let mut cuts: Vec<&str> = vec![name, &filler];
            cuts.extend(probes.iter().copied().filter(|p| !p.is_empty()));
            let site = CounterSite {
                before: context_before(first, s, &cuts),
                after: context_after(first, e, &cuts),
            };
            if site.before.is_empty() && site.after.is_empty() {
                return Err("a counter with no fixed text around it".into());
            }
            if !sites.contains(&site) {
                sites.push(site);
            }
            i = e;
        }
        let mut counters = Counters { sites, base: None };
        counters.base = counters.first_value(&text);
        Ok(counters)
    }

    /// The value of the first counter occurrence in `text`.
    fn first_value(&self, text: &str) -> Option<u64> {
        self.occurrences(text)
            .first()
            .map(|(s, e)| number(&text[*s..*e]))?
    }

    /// The digit spans of every counter occurrence in `text`, in order.
    fn occurrences(&self, text: &str) -> Vec<(usize, usize)> {
        let mut spans = Vec::new();
        for site in &self.sites {
            let mut from = 0;
            while let Some(at) = text[from..].find(site.before.as_str()) {
                let s = from + at + site.before.len();
                let e = s + text[s..].bytes().take_while(u8::is_ascii_digit).count();
                if e > s && text[e..].starts_with(site.after.as_str()) {
                    spans.push((s, e));
                }
                from = if site.before.is_empty() {
                    e.max(s + 1)
                } else {
                    s
                };
                if from >= text.len() {
                    break;
                }
            }
        }
        spans.sort_unstable();
        spans.dedup();
        spans
    }

    /// Keeps only the counters outside JSON values: where the digits are a JSON string or
    /// number (`"id": "0"`), the template generates a field value, not a marker.
    pub fn outside_json(mut self) -> Counters {
        self.sites.retain(|s| {
            let before = s.before.trim_end();
            let quoted = before.ends_with('"') && s.after.starts_with('"');
            !(quoted || before.ends_with(':'))
        });
        self
    }

    /// `text` with every counter occurrence replaced by [`Slot::Counter`].
    pub fn apply(&self, text: &str) -> String {
        if self.sites.is_empty() {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        for (s, e) in self.occurrences(text) {
            if s < copied {
                continue;
            }
            out.push_str(&text[copied..s]);
            out.push(Slot::Counter.char());
            copied = e;
        }
        out.push_str(&text[copied..]);
        out
    }
}

fn number(digits: &str) -> Option<u64> {
    digits.parse().ok()
}

/// The fixed text right before a counter at `at`: back to the start of the marker it sits in
/// (`<`, `[`) or the whitespace before it, at most [`SITE_CONTEXT`] bytes, never reaching
/// back into any of `cuts`. Kept short so that it holds in every call, the first included.
fn context_before(text: &str, at: usize, cuts: &[&str]) -> String {
    let mut from = at.saturating_sub(SITE_CONTEXT);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let window = &text[from..at];
    let cut = cuts
        .iter()
        .filter_map(|c| window.rfind(c).map(|k| k + c.len()))
        .chain(window.rfind(['<', '[']))
        .chain(window.rfind(char::is_whitespace).map(|k| k + 1))
        .max()
        .unwrap_or(0);
    window[cut..].to_owned()
}

/// The fixed text right after a counter at `at`: to the end of the marker it sits in (`>`,
/// `]`) or the whitespace after it, at most [`SITE_CONTEXT`] bytes, never reaching into any
/// of `cuts`.
fn context_after(text: &str, at: usize, cuts: &[&str]) -> String {
    let mut to = (at + SITE_CONTEXT).min(text.len());
    while !text.is_char_boundary(to) {
        to -= 1;
    }
    let window = &text[at..to];
    let cut = cuts
        .iter()
        .filter_map(|c| window.find(c))
        .chain(window.find(['>', ']']).map(|k| k + 1))
        .chain(window.find(char::is_whitespace))
        .min()
        .unwrap_or(window.len());
    window[..cut].to_owned()
}

fn snippet(text: &str, at: usize) -> String {
    let mut from = at.saturating_sub(12);
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    let mut out = String::new();
    for c in text[from..].chars().take(24) {
        let _ = write!(out, "{c}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_and_display() {
        let m = format!(
            "<call n=\"{}\" i=\"{}\">",
            Slot::Name.char(),
            Slot::Counter.char()
        );
        assert_eq!(
            pieces(&m),
            [
                Piece::Text("<call n=\""),
                Piece::Slot(Slot::Name),
                Piece::Text("\" i=\""),
                Piece::Slot(Slot::Counter),
                Piece::Text("\">"),
            ]
        );
        assert_eq!(display(&m), "<call n=\"{name}\" i=\"{counter}\">");
        assert_eq!(head(&m), "<call n=\"");
        assert!(has_slots(&m));
        assert!(!has_slots("<call>"));
        assert_eq!(head("<call>"), "<call>");
    }

    #[test]
    fn repeats_within_one_call_become_slots() {
        let text = "to=fa<m><inv name=\"fa\">x</inv>to=fb<m><inv name=\"fb\">y</inv>";
        let out = slot_repeats(text, &["fa", "fb"], &[], Slot::Name);
        let n = Slot::Name.char();
        assert_eq!(
            out,
            format!("to=fa<m><inv name=\"{n}\">x</inv>to=fb<m><inv name=\"{n}\">y</inv>")
        );
        // Keys: `<k1>v</k1><k2>w</k2>`.
        let out = slot_repeats("<k1>v</k1><k2>w</k2>", &["k1", "k2"], &[], Slot::Key);
        let k = Slot::Key.char();
        assert_eq!(out, format!("<k1>v</{k}><k2>w</{k}>"));
        // Nothing repeats: unchanged.
        assert_eq!(
            slot_repeats("<k1>v<k2>w", &["k1", "k2"], &[], Slot::Key),
            "<k1>v<k2>w"
        );
        // One-argument calls: the next call's name ends the repetition.
        let text = "fa{\"k1\": 1}fb{\"k1\": 2}";
        assert_eq!(
            slot_repeats(text, &["k1", "k2"], &["fa", "fb"], Slot::Key),
            text
        );
    }

    #[test]
    fn counters_count_up_from_their_base() {
        let call = |i: u32| format!("<c idx=\"{i}\">fn<a>x</a></c>");
        let text = format!("{}{}{}", call(1), call(2), call(3));
        let counters = Counters::find(&text, "fn", &[], &[]).unwrap();
        assert!(counters.found());
        assert_eq!(counters.base, Some(1));
        let c = Slot::Counter.char();
        assert_eq!(
            counters.apply(&call(7)),
            format!("<c idx=\"{c}\">fn<a>x</a></c>")
        );
        // A counter glued after the name, starting at 0.
        let call = |i: u32| format!("<b>f.fn:{i}<args>{{}}<e>");
        let text = format!("{}{}{}", call(0), call(1), call(2));
        let counters = Counters::find(&text, "fn", &[], &[]).unwrap();
        assert_eq!(counters.base, Some(0));
        assert_eq!(
            counters.apply(&call(4)),
            format!("<b>f.fn:{c}<args>{{}}<e>")
        );
    }

    #[test]
    fn identical_calls_have_no_counter_and_other_differences_are_errors() {
        let text = "<c>fn</c><c>fn</c><c>fn</c>";
        assert!(!Counters::find(text, "fn", &[], &[]).unwrap().found());
        let text = "<c 1>fn</c><c 5>fn</c><c 9>fn</c>";
        assert!(Counters::find(text, "fn", &[], &[]).is_err());
        let text = "<c a>fn</c><c b>fn</c><c c>fn</c>";
        assert!(Counters::find(text, "fn", &[], &[]).is_err());
    }

    #[test]
    fn ids_are_not_counters() {
        let text = "<c id=call1>fn</c><c id=call2>fn</c><c id=call3>fn</c>";
        let counters = Counters::find(text, "fn", &["call1", "call2", "call3"], &[]).unwrap();
        assert!(!counters.found());
    }
}
