//! Decoding a tagged argument value as the template writes it, incrementally: a wrapper
//! around the value (`<![CDATA[`…`]]>`, possibly several wrapped sections in a row that join)
//! and escaped characters (`&lt;` for `<`). What to undo comes from the analysis
//! ([`ArgumentMarkers`](crate::analyze::tools::ArgumentMarkers)); nothing here knows a marker.
//!
//! # Rules
//! - A value that starts with the wrapper's opening text is wrapped: its text runs to the
//!   closing text, verbatim (no escapes are undone inside). With `sections`, an opening right
//!   after a closing starts another section whose text is appended. Text after the last
//!   section (which the grammar only lets through when it is not followed by the value's
//!   suffix) is read like a bare value.
//! - Bare text has each escape's written form replaced by its character, left to right, the
//!   longest form first.
//!
//! # Monotonicity
//! Text that may still be the start of a wrapper marker or of an escape is held back until the
//! next text decides it; [`ValueDecoder::finish`] writes what is held as text. The output of a
//! prefix is therefore a prefix of the output of the whole value, and held text is always a
//! whole number of characters (it is cut from `&str`s at marker starts).

/// How value text is written: what a [`ValueDecoder`] undoes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValueText {
    /// The opening and closing text of a wrapper values may have.
    pub wrapper: Option<(String, String)>,
    /// A wrapped value may be several wrapped sections in a row; their texts join.
    pub sections: bool,
    /// `(written, character)` pairs: the text standing for a character in bare text, longest
    /// written form first.
    pub escapes: Vec<(String, String)>,
}

impl ValueText {
    /// Value text written with `wrapper` (empty texts: none), `sections` and `escapes`
    /// (`(written, character)` pairs, any order; empty written forms are ignored).
    pub fn new(
        wrapper: Option<(&str, &str)>,
        sections: bool,
        escapes: &[(String, String)],
    ) -> Self {
        let wrapper = wrapper
            .filter(|(open, close)| !open.is_empty() && !close.is_empty())
            .map(|(open, close)| (open.to_owned(), close.to_owned()));
        let mut escapes: Vec<(String, String)> = escapes
            .iter()
            .filter(|(written, _)| !written.is_empty())
            .cloned()
            .collect();
        escapes.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        escapes.dedup_by(|a, b| a.0 == b.0);
        ValueText {
            sections: sections && wrapper.is_some(),
            wrapper,
            escapes,
        }
    }

    /// Whether values are written as they are (nothing to undo).
    pub fn is_plain(&self) -> bool {
        self.wrapper.is_none() && self.escapes.is_empty()
    }

    /// The texts that decode to `value`: written bare (its characters escaped), and wrapped
    /// when values may be (and `value` does not hold the closing text).
    pub fn forms(&self, value: &str) -> Vec<String> {
        let mut bare = String::with_capacity(value.len());
        for c in value.chars() {
            let raw = c.encode_utf8(&mut [0; 4]).to_owned();
            match self.escapes.iter().find(|(_, r)| *r == raw) {
                Some((written, _)) => bare.push_str(written),
                None => bare.push(c),
            }
        }
        let mut forms = vec![bare];
        if let Some((open, close)) = &self.wrapper {
            if !value.contains(close.as_str()) {
                forms.push(format!("{open}{value}{close}"));
            }
        }
        forms
    }

    /// Decodes a whole value: its text, and whether it was wrapped.
    pub fn decode(&self, raw: &str) -> (String, bool) {
        let mut decoder = ValueDecoder::default();
        let mut out = String::with_capacity(raw.len());
        decoder.push(self, raw, &mut out);
        decoder.finish(self, &mut out);
        (out, decoder.wrapped())
    }
}

/// Where a [`ValueDecoder`] is in the value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    /// Nothing read yet: a wrapper may open.
    #[default]
    Start,
    /// Inside a wrapped section.
    Inside,
    /// Right after a wrapped section: another may open.
    AfterClose,
    /// Bare text.
    Bare,
}

/// An incremental decoder of one value (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct ValueDecoder {
    state: State,
    /// Text held back: a possible start of a marker or an escape.
    held: String,
    wrapped: bool,
}

impl ValueDecoder {
    /// A decoder at the start of a value.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the value opened with the wrapper.
    pub fn wrapped(&self) -> bool {
        self.wrapped
    }

    /// Decodes `text` (the value's next raw text), appending to `out` what is settled.
    pub fn push(&mut self, syntax: &ValueText, text: &str, out: &mut String) {
        if self.held.is_empty() {
            self.run(syntax, text, out, false);
        } else {
            let mut buf = std::mem::take(&mut self.held);
            buf.push_str(text);
            self.run(syntax, &buf, out, false);
        }
    }

    /// Ends the value: what was held back is text.
    pub fn finish(&mut self, syntax: &ValueText, out: &mut String) {
        let buf = std::mem::take(&mut self.held);
        self.run(syntax, &buf, out, true);
    }

    fn run(&mut self, syntax: &ValueText, buf: &str, out: &mut String, last: bool) {
        let mut i = 0;
        while i < buf.len() {
            let rest = &buf[i..];
            match self.state {
                State::Start | State::AfterClose => {
                    let open = match (&syntax.wrapper, self.state) {
                        (Some((open, _)), State::Start) => Some(open.as_str()),
                        (Some((open, _)), _) if syntax.sections => Some(open.as_str()),
                        _ => None,
                    };
                    if let Some(open) = open {
                        if rest.starts_with(open) {
                            self.wrapped |= self.state == State::Start;
                            self.state = State::Inside;
                            i += open.len();
                            continue;
                        }
                        if !last && open.starts_with(rest) {
                            self.held.push_str(rest);
                            return;
                        }
                    }
                    self.state = State::Bare;
                }
                State::Inside => {
                    let close = syntax.wrapper.as_ref().map_or("", |(_, c)| c.as_str());
                    match rest.find(close).filter(|_| !close.is_empty()) {
                        Some(at) => {
                            out.push_str(&rest[..at]);
                            i += at + close.len();
                            self.state = State::AfterClose;
                        }
                        None => {
                            let keep = if last { 0 } else { partial_tail(rest, close) };
                            let cut = rest.len() - keep;
                            out.push_str(&rest[..cut]);
                            self.held.push_str(&rest[cut..]);
                            return;
                        }
                    }
                }
                State::Bare => {
                    let Some(at) = rest
                        .char_indices()
                        .find(|(_, c)| syntax.escapes.iter().any(|(w, _)| w.starts_with(*c)))
                        .map(|(at, _)| at)
                    else {
                        out.push_str(rest);
                        return;
                    };
                    out.push_str(&rest[..at]);
                    let tail = &rest[at..];
                    i += at;
                    let mut step = None;
                    for (written, raw) in &syntax.escapes {
                        if tail.starts_with(written.as_str()) {
                            out.push_str(raw);
                            step = Some(written.len());
                            break;
                        }
                        if !last && written.starts_with(tail) {
                            self.held.push_str(tail);
                            return;
                        }
                    }
                    let step = step.unwrap_or_else(|| {
                        let c = tail.chars().next().unwrap_or_default();
                        out.push(c);
                        c.len_utf8()
                    });
                    i += step;
                }
            }
        }
    }
}

/// The length of the longest end of `text` that is a proper start of `marker` (cut at a
/// character boundary of `text`).
fn partial_tail(text: &str, marker: &str) -> usize {
    (1..marker.len().min(text.len() + 1))
        .rev()
        .find(|&k| {
            text.is_char_boundary(text.len() - k) && marker.starts_with(&text[text.len() - k..])
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::{ValueDecoder, ValueText};

    fn entities() -> ValueText {
        let table = [
            ("&amp;", "&"),
            ("&lt;", "<"),
            ("&gt;", ">"),
            ("&quot;", "\""),
            ("&#10;", "\n"),
        ];
        let escapes: Vec<(String, String)> = table
            .iter()
            .map(|(w, r)| (w.to_string(), r.to_string()))
            .collect();
        ValueText::new(None, false, &escapes)
    }

    fn cdata(sections: bool) -> ValueText {
        ValueText::new(Some(("<![CDATA[", "]]>")), sections, &[])
    }

    /// Decodes `raw` fed in every split into two chunks (and char by char), checking that each
    /// output extends the previous one and that all agree with the one-shot decoding.
    fn streamed(syntax: &ValueText, raw: &str) -> String {
        let (whole, _) = syntax.decode(raw);
        let cuts: Vec<usize> = (0..=raw.len())
            .filter(|i| raw.is_char_boundary(*i))
            .collect();
        for &cut in &cuts {
            let mut d = ValueDecoder::new();
            let mut out = String::new();
            d.push(syntax, &raw[..cut], &mut out);
            let first = out.clone();
            d.push(syntax, &raw[cut..], &mut out);
            d.finish(syntax, &mut out);
            assert!(out.starts_with(&first), "{raw:?} cut at {cut}");
            assert_eq!(out, whole, "{raw:?} cut at {cut}");
        }
        let mut d = ValueDecoder::new();
        let mut out = String::new();
        let mut previous = String::new();
        for c in raw.chars() {
            d.push(syntax, c.encode_utf8(&mut [0; 4]), &mut out);
            assert!(out.starts_with(&previous));
            previous = out.clone();
        }
        d.finish(syntax, &mut out);
        assert_eq!(out, whole);
        whole
    }

    #[test]
    fn unescapes_entities() {
        let e = entities();
        assert_eq!(streamed(&e, "a &lt; b &amp;&amp; c&#10;d"), "a < b && c\nd");
        assert_eq!(streamed(&e, "&amp;lt; stays"), "&lt; stays");
        assert_eq!(streamed(&e, "&unknown; & &am"), "&unknown; & &am");
        assert_eq!(streamed(&e, "日本 &quot;語&quot;"), "日本 \"語\"");
    }

    #[test]
    fn holds_back_a_partial_entity() {
        let e = entities();
        let mut d = ValueDecoder::new();
        let mut out = String::new();
        d.push(&e, "x &am", &mut out);
        assert_eq!(out, "x ");
        d.push(&e, "p; y", &mut out);
        assert_eq!(out, "x & y");
    }

    #[test]
    fn unwraps_and_joins_sections() {
        let c = cdata(true);
        assert_eq!(streamed(&c, "<![CDATA[a < b]]>"), "a < b");
        assert_eq!(
            streamed(&c, "<![CDATA[x]]]]><![CDATA[>y]]>"),
            "x]]>y",
            "a closing text split across two sections"
        );
        assert_eq!(streamed(&c, "<b>bare</b>"), "<b>bare</b>");
        assert_eq!(streamed(&c, "<![CDATA[open"), "open");
        assert!(c.decode("<![CDATA[a]]>").1);
        assert!(!c.decode("a").1);
        let single = cdata(false);
        assert_eq!(
            streamed(&single, "<![CDATA[x]]]]><![CDATA[>y]]>"),
            "x]]<![CDATA[>y]]>"
        );
    }

    #[test]
    fn a_wrapped_value_may_hold_the_value_suffix() {
        let c = cdata(false);
        assert_eq!(
            streamed(&c, "<![CDATA[<a>hi</a> </param>]]>"),
            "<a>hi</a> </param>"
        );
    }
}
