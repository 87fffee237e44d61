//! The resumable JSON / Python-dict scanner: a byte-level state machine with an explicit
//! container stack, so it never recurses and can stop at any byte and continue later.

/// Which dialect the scanner accepts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Flavour {
    /// Strict JSON (RFC 8259), as accepted by `serde_json`.
    #[default]
    Json,
    /// Python literal dicts as printed by `repr()`: strings in `'` or `"`, `True`, `False`,
    /// `None` (the JSON words are accepted too), and the extra escapes `\'` and `\xHH`.
    Python,
}

/// What kind of value the scanner must find at its start offset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Target {
    /// Any value.
    #[default]
    Value,
    /// An object `{...}` (a dict in the Python flavour).
    Object,
    /// An array `[...]` (a list in the Python flavour).
    Array,
    /// A quoted string.
    String,
    /// A number.
    Number,
    /// `true` / `false` (also `True` / `False` in the Python flavour).
    Bool,
    /// `null` (also `None` in the Python flavour).
    Null,
    /// The content of a string, without quotes: everything up to (not including) the first
    /// unescaped closing quote. The quote is `"`, or in the Python flavour the quote byte just
    /// before the start offset when that is `'`.
    StringContent,
}

impl Target {
    /// A short human description used in "expected" messages.
    pub fn describe(self) -> &'static str {
        match self {
            Target::Value => "JSON value",
            Target::Object => "JSON object",
            Target::Array => "JSON array",
            Target::String => "JSON string",
            Target::Number => "JSON number",
            Target::Bool => "JSON boolean",
            Target::Null => "JSON null",
            Target::StringContent => "JSON string content",
        }
    }
}

/// The outcome of a scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scan {
    /// The value is complete and ends (exclusive) at this byte offset.
    Complete(usize),
    /// The input ended inside the value and more input may complete it (partial mode only).
    NeedMore,
    /// The input cannot be (the start of) such a value; `offset` is the offending byte.
    Fail {
        /// Byte offset of the first byte that cannot continue the value (or the input length).
        offset: usize,
        /// What was expected there.
        expected: &'static str,
    },
}

/// Default maximum nesting depth of arrays and objects.
pub const DEFAULT_MAX_DEPTH: usize = 128;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Container {
    Object,
    Array,
    /// A Python tuple `(...)` (Python flavour): an array in JSON.
    Tuple,
}

impl Container {
    /// The byte that closes the container.
    pub(crate) fn closer(self) -> u8 {
        match self {
            Container::Object => b'}',
            Container::Array => b']',
            Container::Tuple => b')',
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StrKind {
    Key,
    Value,
    Content,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Num {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    E,
    ESign,
    Exp,
}

impl Num {
    pub(crate) fn can_end(self) -> bool {
        matches!(self, Num::Zero | Num::Int | Num::Frac | Num::Exp)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Expecting a value (the first byte decides its type).
    Value,
    /// After `[`: a value or `]`.
    ArrFirst,
    /// After `{`: a key or `}`.
    ObjFirst,
    /// After `,` in an object: a key.
    ObjKey,
    /// After a key: `:`.
    Colon,
    /// After a value inside a container: `,` or the closing bracket.
    AfterValue,
    /// Inside a string.
    Str(StrKind),
    /// After a backslash in a string.
    Esc(StrKind),
    /// Reading `left` hex digits of a `\u` (or Python `\x`) escape; `val` accumulates.
    Hex {
        kind: StrKind,
        left: u8,
        val: u32,
        /// 0: a `\x` escape; 1: first `\u`; 2: the low surrogate after a high one.
        step: u8,
    },
    /// After a high surrogate escape: expecting `\`.
    SurrogateBackslash(StrKind),
    /// After a high surrogate escape and `\`: expecting `u`.
    SurrogateU(StrKind),
    /// Inside a number.
    Number(Num),
    /// Inside a keyword; `idx` bytes of `word` matched.
    Word { word: &'static [u8], idx: u8 },
    /// Finished.
    Done(Scan),
}

/// A resumable scanner over an append-only buffer.
///
/// Call [`Scanner::resume`] with the whole buffer each time (the buffer may only grow by
/// appending); the scanner continues from where it stopped, so scanning a value fed in pieces
/// costs O(total length). `eof = true` declares the buffer final (full mode).
#[derive(Clone, Debug)]
pub struct Scanner {
    flavour: Flavour,
    target: Target,
    max_depth: usize,
    pub(crate) pos: usize,
    pub(crate) state: State,
    pub(crate) stack: Vec<Container>,
    /// Per open container: where to cut the text to drop the current incomplete member
    /// (used by healing).
    pub(crate) cuts: Vec<usize>,
    /// The quote byte of the string being scanned.
    pub(crate) quote: u8,
    /// Start of the scalar being scanned (number, word, string escape).
    pub(crate) token_start: usize,
    /// Bytes examined so far (a work counter).
    work: u64,
}

impl Scanner {
    /// A scanner looking for `target` at byte offset `start`.
    pub fn new(flavour: Flavour, target: Target, start: usize) -> Self {
        Scanner {
            flavour,
            target,
            max_depth: DEFAULT_MAX_DEPTH,
            pos: start,
            state: if target == Target::StringContent {
                State::Str(StrKind::Content)
            } else {
                State::Value
            },
            stack: Vec::new(),
            cuts: Vec::new(),
            quote: b'"',
            token_start: start,
            work: 0,
        }
    }

    /// Sets the maximum nesting depth (default [`DEFAULT_MAX_DEPTH`]); deeper input fails.
    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth;
        self
    }

    /// The number of bytes examined so far (each byte is examined once across resumes).
    pub fn work(&self) -> u64 {
        self.work
    }

    /// The offset of the next byte to examine.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// Continues scanning `buf` (the whole input so far) from the saved position.
    pub fn resume(&mut self, buf: &[u8], eof: bool) -> Scan {
        if let State::Done(scan) = self.state {
            return scan;
        }
        if self.target == Target::StringContent && self.pos == self.token_start {
            self.quote = match self.flavour {
                Flavour::Python if self.pos > 0 && buf.get(self.pos - 1) == Some(&b'\'') => b'\'',
                _ => b'"',
            };
        }
        let before = self.pos;
        let scan = self.run(buf, eof);
        self.work += (self.pos.saturating_sub(before)) as u64 + 1;
        if !matches!(scan, Scan::NeedMore) {
            self.state = State::Done(scan);
        }
        scan
    }

    fn fail(&self, expected: &'static str) -> Scan {
        Scan::Fail {
            offset: self.pos,
            expected,
        }
    }

    fn is_quote(&self, b: u8) -> bool {
        b == b'"' || (b == b'\'' && self.flavour == Flavour::Python)
    }

    /// A value just ended at `self.pos` (exclusive).
    fn value_done(&mut self) -> Option<Scan> {
        if self.stack.is_empty() {
            return Some(Scan::Complete(self.pos));
        }
        self.state = State::AfterValue;
        None
    }

    fn open(&mut self, c: Container) -> Option<Scan> {
        if self.stack.len() >= self.max_depth {
            return Some(self.fail("at most the maximum nesting depth"));
        }
        self.stack.push(c);
        self.pos += 1;
        self.cuts.push(self.pos);
        self.state = match c {
            Container::Object => State::ObjFirst,
            Container::Array | Container::Tuple => State::ArrFirst,
        };
        None
    }

    /// Whether `b` closes the open list or tuple right after a comma (Python flavour).
    fn trailing_comma_close(&self, b: u8) -> bool {
        self.flavour == Flavour::Python
            && matches!(self.stack.last(), Some(c @ (Container::Array | Container::Tuple)) if c.closer() == b)
    }

    fn close(&mut self) -> Option<Scan> {
        self.stack.pop();
        self.cuts.pop();
        self.pos += 1;
        self.value_done()
    }

    fn start_value(&mut self, b: u8) -> Option<Scan> {
        let top = self.stack.is_empty();
        let target = if top { self.target } else { Target::Value };
        let ok = |t: Target| target == Target::Value || target == t;
        self.token_start = self.pos;
        match b {
            b'{' if ok(Target::Object) => self.open(Container::Object),
            b'[' if ok(Target::Array) => self.open(Container::Array),
            b'(' if ok(Target::Array) && self.flavour == Flavour::Python => {
                self.open(Container::Tuple)
            }
            b'"' | b'\'' if ok(Target::String) && self.is_quote(b) => {
                self.quote = b;
                self.pos += 1;
                self.state = State::Str(StrKind::Value);
                None
            }
            b'-' | b'0'..=b'9' if ok(Target::Number) => {
                self.pos += 1;
                self.state = State::Number(match b {
                    b'-' => Num::Minus,
                    b'0' => Num::Zero,
                    _ => Num::Int,
                });
                None
            }
            _ => {
                let python = self.flavour == Flavour::Python;
                let word: &'static [u8] = match b {
                    b't' if ok(Target::Bool) => b"true",
                    b'f' if ok(Target::Bool) => b"false",
                    b'n' if ok(Target::Null) => b"null",
                    b'T' if python && ok(Target::Bool) => b"True",
                    b'F' if python && ok(Target::Bool) => b"False",
                    b'N' if python && ok(Target::Null) => b"None",
                    _ => return Some(self.fail(target.describe())),
                };
                self.pos += 1;
                self.state = State::Word { word, idx: 1 };
                None
            }
        }
    }

    fn run(&mut self, buf: &[u8], eof: bool) -> Scan {
        loop {
            // Scalars that end by lookahead finish at end of input in full mode.
            let Some(&b) = buf.get(self.pos) else {
                if eof {
                    if let State::Number(n) = self.state {
                        if n.can_end() {
                            if let Some(s) = self.value_done() {
                                return s;
                            }
                            continue;
                        }
                    }
                    return self.fail(self.expected());
                }
                return Scan::NeedMore;
            };
            let done = match self.state {
                State::Done(s) => return s,
                State::Value => {
                    if is_ws(b) && !self.stack.is_empty() {
                        self.pos += 1;
                        None
                    } else if self.trailing_comma_close(b) {
                        // `(1,)`, `[1, 2,]`: Python allows a comma before the closer.
                        self.close()
                    } else {
                        self.start_value(b)
                    }
                }
                State::ArrFirst => match b {
                    _ if is_ws(b) => {
                        self.pos += 1;
                        None
                    }
                    _ if self.stack.last().is_some_and(|c| c.closer() == b) => self.close(),
                    _ => self.start_value(b),
                },
                State::ObjFirst | State::ObjKey => match b {
                    _ if is_ws(b) => {
                        self.pos += 1;
                        None
                    }
                    // (Python allows a comma before the closer: `{'a': 1,}`.)
                    b'}' if self.state == State::ObjFirst || self.flavour == Flavour::Python => {
                        self.close()
                    }
                    _ if self.is_quote(b) => {
                        self.quote = b;
                        self.pos += 1;
                        self.state = State::Str(StrKind::Key);
                        None
                    }
                    _ => Some(self.fail(self.expected())),
                },
                State::Colon => match b {
                    _ if is_ws(b) => {
                        self.pos += 1;
                        None
                    }
                    b':' => {
                        self.pos += 1;
                        self.state = State::Value;
                        None
                    }
                    _ => Some(self.fail("`:`")),
                },
                State::AfterValue => match (b, self.stack.last()) {
                    _ if is_ws(b) => {
                        self.pos += 1;
                        None
                    }
                    (b',', Some(c)) => {
                        if let Some(cut) = self.cuts.last_mut() {
                            *cut = self.pos;
                        }
                        self.pos += 1;
                        self.state = match c {
                            Container::Object => State::ObjKey,
                            Container::Array | Container::Tuple => State::Value,
                        };
                        None
                    }
                    (_, Some(c)) if c.closer() == b => self.close(),
                    _ => Some(self.fail(self.expected())),
                },
                State::Str(kind) => self.string(buf, kind),
                State::Esc(kind) => {
                    self.pos += 1;
                    let python = self.flavour == Flavour::Python;
                    match b {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                            self.state = State::Str(kind);
                            None
                        }
                        b'\'' if python => {
                            self.state = State::Str(kind);
                            None
                        }
                        b'u' => {
                            self.state = State::Hex {
                                kind,
                                left: 4,
                                val: 0,
                                step: 1,
                            };
                            None
                        }
                        b'x' if python => {
                            self.state = State::Hex {
                                kind,
                                left: 2,
                                val: 0,
                                step: 0,
                            };
                            None
                        }
                        _ => {
                            self.pos -= 1;
                            Some(self.fail("escape character"))
                        }
                    }
                }
                State::Hex {
                    kind,
                    left,
                    val,
                    step,
                } => {
                    let Some(d) = (b as char).to_digit(16) else {
                        return self.fail("hex digit");
                    };
                    self.pos += 1;
                    let val = val * 16 + d;
                    if left > 1 {
                        self.state = State::Hex {
                            kind,
                            left: left - 1,
                            val,
                            step,
                        };
                        None
                    } else {
                        match (step, val) {
                            (1, 0xDC00..=0xDFFF) => Some(self.fail("no lone low surrogate")),
                            (1, 0xD800..=0xDBFF) => {
                                self.state = State::SurrogateBackslash(kind);
                                None
                            }
                            (2, v) if !(0xDC00..=0xDFFF).contains(&v) => {
                                Some(self.fail("low surrogate"))
                            }
                            _ => {
                                self.state = State::Str(kind);
                                None
                            }
                        }
                    }
                }
                State::SurrogateBackslash(kind) => {
                    if b != b'\\' {
                        return self.fail("low surrogate escape");
                    }
                    self.pos += 1;
                    self.state = State::SurrogateU(kind);
                    None
                }
                State::SurrogateU(kind) => {
                    if b != b'u' {
                        return self.fail("low surrogate escape");
                    }
                    self.pos += 1;
                    self.state = State::Hex {
                        kind,
                        left: 4,
                        val: 0,
                        step: 2,
                    };
                    None
                }
                State::Number(n) => self.number(b, n),
                State::Word { word, idx } => {
                    if word.get(usize::from(idx)) != Some(&b) {
                        return self.fail(self.expected());
                    }
                    self.pos += 1;
                    if usize::from(idx) + 1 == word.len() {
                        self.value_done()
                    } else {
                        self.state = State::Word { word, idx: idx + 1 };
                        None
                    }
                }
            };
            if let Some(scan) = done {
                return scan;
            }
        }
    }

    fn number(&mut self, b: u8, n: Num) -> Option<Scan> {
        let digit = b.is_ascii_digit();
        let next = match (n, b) {
            (Num::Minus, b'0') => Num::Zero,
            (Num::Minus, _) if digit => Num::Int,
            (Num::Int, _) if digit => Num::Int,
            // A zero-padded integer (`07`): models write dates so in Python calls.
            (Num::Zero, _) if digit && self.flavour == Flavour::Python => Num::Int,
            (Num::Zero | Num::Int, b'.') => Num::Dot,
            (Num::Zero | Num::Int | Num::Frac, b'e' | b'E') => Num::E,
            (Num::Dot | Num::Frac, _) if digit => Num::Frac,
            (Num::E, b'+' | b'-') => Num::ESign,
            (Num::E | Num::ESign | Num::Exp, _) if digit => Num::Exp,
            _ if n.can_end() => return self.value_done(),
            // A top-level number followed by text that starts with `e` (`-17enabled`): the
            // exponent never came, so the number ends before the `e` (and its sign).
            (Num::E | Num::ESign, _) if self.stack.is_empty() => {
                self.pos -= if n == Num::E { 1 } else { 2 };
                return self.value_done();
            }
            _ => return Some(self.fail("digit")),
        };
        self.pos += 1;
        self.state = State::Number(next);
        None
    }

    /// The tight loop over string contents: 8 bytes at a time, stopping at a quote, a
    /// backslash or a control character.
    fn string(&mut self, buf: &[u8], kind: StrKind) -> Option<Scan> {
        let q = self.quote;
        let qw = LO * u64::from(q);
        let mut pos = self.pos;
        // Find the next quote, backslash or control byte, 8 bytes at a time; one-character
        // escapes are skipped without leaving the loop.
        let b = 'outer: loop {
            let Some(w) = word(buf, pos) else {
                match buf.get(pos) {
                    None => {
                        self.pos = pos;
                        return None;
                    }
                    Some(&b)
                        if b == b'\\' && buf.get(pos + 1).is_some_and(|&e| simple_escape(e)) =>
                    {
                        pos += 2;
                        continue;
                    }
                    Some(&b) if b == q || b == b'\\' || b < 0x20 => break b,
                    Some(_) => {
                        pos += 1;
                        continue;
                    }
                }
            };
            let mut m = eq_mask(w, qw) | eq_mask(w, LO * u64::from(b'\\')) | ctl_mask(w);
            loop {
                if m == 0 {
                    pos += 8;
                    continue 'outer;
                }
                let k = (m.trailing_zeros() / 8) as usize;
                let b = (w >> (k * 8)) as u8;
                if b != b'\\' || !buf.get(pos + k + 1).is_some_and(|&e| simple_escape(e)) {
                    pos += k;
                    break 'outer b;
                }
                if k >= 6 {
                    pos += k + 2;
                    continue 'outer;
                }
                m &= !0u64 << ((k + 2) * 8);
            }
        };
        self.pos = pos;
        if b == q {
            self.pos += 1;
            match kind {
                StrKind::Key => {
                    self.state = State::Colon;
                    None
                }
                StrKind::Value => self.value_done(),
                StrKind::Content => {
                    self.pos -= 1;
                    Some(Scan::Complete(self.pos))
                }
            }
        } else if b == b'\\' {
            self.token_start = self.pos;
            self.pos += 1;
            self.state = State::Esc(kind);
            None
        } else {
            Some(self.fail("string character (control characters must be escaped)"))
        }
    }

    fn expected(&self) -> &'static str {
        match self.state {
            State::Value if self.stack.is_empty() => self.target.describe(),
            State::Value => "JSON value",
            State::ArrFirst => "JSON value or `]`",
            State::ObjFirst => "object key or `}`",
            State::ObjKey => "object key",
            State::Colon => "`:`",
            State::AfterValue => match self.stack.last() {
                Some(Container::Object) => "`,` or `}`",
                Some(Container::Tuple) => "`,` or `)`",
                _ => "`,` or `]`",
            },
            State::Str(_) => "closing quote",
            State::Esc(_) => "escape character",
            State::Hex { .. } => "hex digit",
            State::SurrogateBackslash(_) | State::SurrogateU(_) => "low surrogate escape",
            State::Number(_) => "digit",
            State::Word { .. } => self.target.describe(),
            State::Done(_) => "end",
        }
    }
}

/// JSON whitespace.
pub(crate) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

pub(crate) const LO: u64 = 0x0101_0101_0101_0101;

const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;

/// Exactly the bytes of `w` equal to the byte repeated in `pat`, as 0x80 in that byte.
#[inline(always)]
pub(crate) fn eq_mask(w: u64, pat: u64) -> u64 {
    let x = w ^ pat;
    !(((x & LOW7).wrapping_add(LOW7)) | x | LOW7)
}

/// Exactly the bytes of `w` below 0x20, as 0x80 in that byte.
#[inline(always)]
pub(crate) fn ctl_mask(w: u64) -> u64 {
    !(((w & LOW7).wrapping_add(LO * 0x60)) | w | LOW7)
}

/// The escapes of one character after the backslash (JSON; the Python extras take the slow
/// path), as a table indexed by byte.
static SIMPLE_ESCAPES: [bool; 256] = {
    let mut t = [false; 256];
    let chars = *b"\"\\/bfnrt";
    let mut i = 0;
    while i < chars.len() {
        t[chars[i] as usize] = true;
        i += 1;
    }
    t
};

#[inline(always)]
fn simple_escape(e: u8) -> bool {
    // A `u8` index into a 256-entry table cannot be out of bounds.
    SIMPLE_ESCAPES[usize::from(e)]
}

#[inline(always)]
pub(crate) fn word(s: &[u8], i: usize) -> Option<u64> {
    let bytes: [u8; 8] = s.get(i..i + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// Scans `input` in one go for a value of `target` starting at offset 0.
///
/// With `partial = true`, input that ends inside the value is [`Scan::NeedMore`].
pub fn scan(input: &[u8], flavour: Flavour, target: Target, partial: bool) -> Scan {
    Scanner::new(flavour, target, 0).resume(input, !partial)
}

/// Validates a whole document: optional whitespace, one value, optional whitespace.
///
/// Non-UTF-8 input fails at the first invalid byte (an incomplete trailing code point is
/// need-more in partial mode). In full mode, anything but whitespace after the value fails;
/// in partial mode, a complete value is reported as soon as it is complete.
pub fn validate(input: &[u8], flavour: Flavour, partial: bool) -> Scan {
    if let Err(e) = std::str::from_utf8(input) {
        if e.error_len().is_some() || !partial {
            let offset = e.valid_up_to();
            // Report the UTF-8 error only if the scan would get that far.
            let scan = validate(input.get(..offset).unwrap_or(&[]), flavour, true);
            return match scan {
                Scan::Fail { .. } => scan,
                _ => Scan::Fail {
                    offset,
                    expected: "valid UTF-8",
                },
            };
        }
    }
    let start = input.iter().position(|&b| !is_ws(b)).unwrap_or(input.len());
    let mut scanner = Scanner::new(flavour, Target::Value, start);
    match scanner.resume(input, !partial) {
        Scan::Complete(end) => {
            let tail = input.get(end..).unwrap_or(&[]);
            match tail.iter().position(|&b| !is_ws(b)) {
                Some(i) if !partial => Scan::Fail {
                    offset: end + i,
                    expected: "end of input",
                },
                _ => Scan::Complete(end),
            }
        }
        other => other,
    }
}
