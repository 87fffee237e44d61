//! The per-render memory guard: no template can make a render allocate much more than
//! [`Limits::max_value_bytes`] per value or write more than [`Limits::max_output_bytes`] in total.
//!
//! Fuel bounds the number of instructions, not memory: `{% set s = s ~ s %}` in a loop of 60
//! doubles a string 60 times in 60 cheap instructions. The guard has three parts.
//!
//! 1. **Instrumented program.** When a [`super::ChatTemplate`] is built, minijinja's compiled
//!    program (its `Instructions`, through the `unstable_machinery` API) is copied once with
//!    checks spliced in ([`instrument`]), jump targets renumbered, lines and spans kept; renders
//!    run that copy (`machinery::eval`):
//!    - after every operation that builds a new value — `~`, `+`, `*`, list/tuple/map literals,
//!      filter, method, function and macro calls — a call to [`CHECK_FN`], which measures the
//!      value's *printed size* (its [`weight`]: strings by length, containers by walking their
//!      items, shared items counted each time) and fails past `max_value_bytes`; native values
//!      pass through untouched, so the native semantics and error texts are kept;
//!    - before `*`, a call to [`MUL_GUARD_FN`], because one repetition can multiply its operand;
//!    - each `EmitRaw` (template text) becomes `LoadConst` + `Emit`, so every byte a render
//!      writes — to its output or into a `{% set %}`/macro/filter-block capture — goes through
//!      the formatter, which counts them against `max_output_bytes`.
//!
//!    With every produced value bounded, printing, `tojson`, `string` and the like of any value
//!    are bounded by a small multiple of the limit (render inputs excepted: they are already in
//!    the caller's memory and print in linear size).
//! 2. **Pre-checks** for the operations whose single step can overshoot the limit by a large
//!    factor before the check after them runs: `join` (filter and `str.join`), `replace` (filter
//!    and method), `format` (filter and `str.format`), `split`/`rsplit`/`splitlines`/`lines`,
//!    `batch`/`slice` sizes, `list` of a string, `indent`, `pprint`, and the in-place list
//!    methods of namespace lists (`append`, `extend`, `insert`).
//! 3. **The counter** of written bytes lives in a thread-local scope ([`enter`]) for the
//!    duration of one render (renders are synchronous and never nest across templates).
//! 4. **Constant folding.** minijinja evaluates literal-only expressions while compiling, before
//!    any check can run; [`check_constant_folding`] refuses, before compiling, a template whose
//!    literal repetitions (`['x'] * 100000000`) could fold into an oversized constant.
//!
//! What is not measured: render inputs (messages, tools: already in the caller's memory), and
//! time spent comparing or sorting large values (fuel counts instructions, not the work inside
//! one); values nested deeper than 200 levels count as over the limit.
//!
//! Names starting with [`RESERVED_PREFIX`] cannot be assigned by a template (it could otherwise
//! shadow the check functions). Exceeding a limit is an error whose detail starts with
//! [`LIMIT_PREFIX`]; it is reported as [`super::TemplateErrorKind::Limit`].

use std::cell::RefCell;
use std::fmt::{self, Write as _};

use minijinja::machinery::{Instruction, Instructions};
use minijinja::value::{Rest, ValueKind};
use minijinja::{Error, ErrorKind, State, Value};

use super::environment::Limits;

/// Prefix of the names chatparse reserves for its own globals.
pub(crate) const RESERVED_PREFIX: &str = "__chatparse_";

/// The check spliced in after each value-producing instruction.
pub(crate) const CHECK_FN: &str = "__chatparse_check";

/// The check spliced in before each `*`.
pub(crate) const MUL_GUARD_FN: &str = "__chatparse_mul_guard";

/// Prefix of the detail of a limit error.
pub(crate) const LIMIT_PREFIX: &str = "memory limit: ";

/// Containers nested deeper than this count as over the limit (printing and dropping them
/// recurses, and real templates nest a handful of levels).
const MAX_DEPTH: usize = 200;

/// What one list item costs at least, in bytes (a minijinja `Value` slot plus separators).
const ITEM_BYTES: usize = 24;

struct Scope {
    limits: Limits,
    written: usize,
}

thread_local! {
    static SCOPES: RefCell<Vec<Scope>> = const { RefCell::new(Vec::new()) };
}

/// The active render's guard; dropping it ends the scope.
pub(crate) struct RenderScope(());

/// Starts the guard scope of one render with these limits.
pub(crate) fn enter(limits: Limits) -> RenderScope {
    SCOPES.with(|s| s.borrow_mut().push(Scope { limits, written: 0 }));
    RenderScope(())
}

impl Drop for RenderScope {
    fn drop(&mut self) {
        SCOPES.with(|s| s.borrow_mut().pop());
    }
}

/// The limits of the active render (the defaults outside a render).
fn limits() -> Limits {
    SCOPES.with(|s| s.borrow().last().map(|s| s.limits).unwrap_or_default())
}

/// The active render's `max_value_bytes`.
pub(crate) fn max_value() -> usize {
    limits().max_value_bytes
}

/// A limit error.
pub(crate) fn limit_error(what: impl fmt::Display) -> Error {
    Error::new(ErrorKind::InvalidOperation, format!("{LIMIT_PREFIX}{what}"))
}

fn value_error(what: &str, size: usize) -> Error {
    limit_error(format_args!(
        "{what} would be larger than max_value_bytes ({} bytes; at least {size} needed)",
        max_value()
    ))
}

/// Counts `n` more bytes written by the active render; fails past `max_output_bytes`.
pub(crate) fn count_written(n: usize) -> Result<(), Error> {
    SCOPES.with(|s| {
        let mut scopes = s.borrow_mut();
        let Some(scope) = scopes.last_mut() else {
            return Ok(());
        };
        scope.written = scope.written.saturating_add(n);
        if scope.written > scope.limits.max_output_bytes {
            return Err(limit_error(format_args!(
                "the render wrote more than max_output_bytes ({} bytes, output and captured \
                 blocks together)",
                scope.limits.max_output_bytes
            )));
        }
        Ok(())
    })
}

/// The printed size of `value` (an upper estimate of `str(value)`/`tojson`), walking
/// containers and counting shared items each time; stops at `cap + 1`.
pub(crate) fn weight(value: &Value, cap: usize) -> usize {
    let mut budget = cap.saturating_add(1);
    walk(value, &mut budget, 0);
    cap.saturating_add(1) - budget
}

/// Subtracts `value`'s printed size from `budget` (saturating at 0, where it stops).
fn walk(value: &Value, budget: &mut usize, depth: usize) {
    let take = |budget: &mut usize, n: usize| *budget = budget.saturating_sub(n);
    match value.kind() {
        ValueKind::String => take(budget, value.as_str().map_or(0, str::len) + 2),
        ValueKind::Seq | ValueKind::Map | ValueKind::Iterable => {
            if depth >= MAX_DEPTH {
                *budget = 0;
                return;
            }
            take(budget, 2);
            let Some(len) = value.len() else {
                // An unsized iterable (a generator-like object): not materialised here.
                return;
            };
            if len.saturating_mul(2) >= *budget {
                *budget = 0;
                return;
            }
            let Ok(iter) = value.try_iter() else {
                return;
            };
            let is_map = value.kind() == ValueKind::Map;
            for item in iter {
                if *budget == 0 {
                    return;
                }
                take(budget, 2);
                if is_map {
                    walk(&item, budget, depth + 1);
                    if let Ok(v) = value.get_item(&item) {
                        walk(&v, budget, depth + 1);
                    }
                } else {
                    walk(&item, budget, depth + 1);
                }
            }
        }
        _ => take(budget, 8),
    }
}

/// `__chatparse_check(value)`: `value` itself, or a limit error if it is too large.
pub(crate) fn check(value: Value) -> Result<Value, Error> {
    let cap = max_value();
    let w = weight(&value, cap);
    if w > cap {
        return Err(value_error("a value", w));
    }
    Ok(value)
}

/// `__chatparse_mul_guard((a, b))`: the pair itself, or a limit error when `a * b` repeats a
/// string or a list beyond the limit.
pub(crate) fn mul_guard(pair: Value) -> Result<Value, Error> {
    let (Ok(a), Ok(b)) = (pair.get_item_by_index(0), pair.get_item_by_index(1)) else {
        return Ok(pair);
    };
    let repeated = |v: &Value, n: &Value| -> Result<(), Error> {
        let Some(n) = n.as_i64().filter(|_| n.kind() == ValueKind::Number) else {
            return Ok(());
        };
        let n = usize::try_from(n).unwrap_or(0);
        if !matches!(v.kind(), ValueKind::String | ValueKind::Seq) || n == 0 {
            return Ok(());
        }
        let cap = max_value();
        let unit = weight(v, cap).max(ITEM_BYTES);
        let total = unit.saturating_mul(n);
        if total > cap {
            return Err(value_error("a repetition (`*`)", total));
        }
        Ok(())
    };
    repeated(&a, &b)?;
    repeated(&b, &a)?;
    Ok(pair)
}

/// Fails when an estimated result size exceeds `max_value_bytes`.
pub(crate) fn require_size(what: &str, estimate: usize) -> Result<(), Error> {
    if estimate > max_value() {
        return Err(value_error(what, estimate));
    }
    Ok(())
}

/// Argument `i` (after the filtered value) or keyword `name`.
fn arg(args: &[Value], i: usize, name: &str) -> Option<Value> {
    let (positional, kwargs) = super::filters::split_args(args);
    positional
        .get(i)
        .cloned()
        .or_else(|| kwargs.into_iter().find(|(k, _)| k == name).map(|(_, v)| v))
}

fn text_len(v: &Option<Value>) -> usize {
    v.as_ref().map_or(0, |v| weight(v, max_value()))
}

/// Size of joining the items of `items` with `sep_len` bytes between them.
fn join_estimate(items: &Value, sep_len: usize) -> Result<usize, Error> {
    let cap = max_value();
    let mut total = 0usize;
    let Ok(iter) = items.try_iter() else {
        return Ok(0);
    };
    for (i, item) in iter.enumerate() {
        total = total
            .saturating_add(weight(&item, cap))
            .saturating_add(if i > 0 { sep_len } else { 0 });
        if total > cap {
            break;
        }
    }
    Ok(total)
}

/// Non-overlapping occurrences of `needle` in `hay` (Python's count; `len + 1` for "").
fn occurrences(hay: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return hay.chars().count() + 1;
    }
    memchr::memmem::find_iter(hay.as_bytes(), needle.as_bytes()).count()
}

/// Size of `s.replace(old, new, count)`.
pub(crate) fn replace_estimate(s: &str, old: &str, new: &str, count: Option<i64>) -> usize {
    let mut n = occurrences(s, old);
    if let Some(c) = count.and_then(|c| usize::try_from(c).ok()) {
        n = n.min(c);
    }
    s.len().saturating_add(n.saturating_mul(new.len()))
}

/// Size of a format string expanded with these arguments: each placeholder may print the
/// largest argument, plus the largest number in the format (a width or precision).
fn format_estimate(fmt: &str, args: &[Value], placeholder: char) -> usize {
    let cap = max_value();
    let largest = args
        .iter()
        .map(|a| {
            if a.is_kwargs() {
                a.try_iter()
                    .map(|keys| {
                        keys.map(|k| weight(&a.get_item(&k).unwrap_or_default(), cap))
                            .max()
                            .unwrap_or(0)
                    })
                    .unwrap_or(0)
            } else {
                weight(a, cap)
            }
        })
        .max()
        .unwrap_or(0);
    let widest = fmt
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|d| {
            d.parse::<usize>()
                .ok()
                .or((!d.is_empty()).then_some(usize::MAX))
        })
        .max()
        .unwrap_or(0);
    let placeholders = fmt.matches(placeholder).count();
    fmt.len()
        .saturating_add(placeholders.saturating_mul(largest.saturating_add(widest)))
}

/// Pieces of `s.split(sep)` (`None`: whitespace runs).
fn split_pieces(s: &str, sep: Option<&str>) -> usize {
    match sep {
        Some(sep) if !sep.is_empty() => occurrences(s, sep) + 1,
        _ => s.split_whitespace().count() + 1,
    }
}

/// Pieces of `s.splitlines()`.
fn line_pieces(s: &str) -> usize {
    s.chars()
        .filter(|&c| super::filters::is_line_break(c))
        .count()
        + 1
}

fn pieces_estimate(s: &str, pieces: usize) -> usize {
    s.len()
        .saturating_add(pieces.saturating_mul(ITEM_BYTES + 8))
}

/// Pre-checks a Python string method call on `value` (`str.join`, `replace`, `format`,
/// `split`, `rsplit`, `splitlines`) before it runs.
pub(crate) fn precheck_method(value: &Value, method: &str, args: &[Value]) -> Result<(), Error> {
    let Some(s) = value.as_str() else {
        return Ok(());
    };
    match method {
        "join" => {
            if let Some(items) = args.first() {
                require_size("str.join", join_estimate(items, s.len())?)?;
            }
        }
        "replace" => {
            let old = args.first().and_then(Value::as_str).unwrap_or_default();
            let new = args.get(1).and_then(Value::as_str).unwrap_or_default();
            let count = args.get(2).and_then(Value::as_i64);
            require_size("str.replace", replace_estimate(s, old, new, count))?;
        }
        "format" => require_size("str.format", format_estimate(s, args, '{'))?,
        "split" | "rsplit" => {
            let sep = args.first().and_then(Value::as_str);
            require_size("str.split", pieces_estimate(s, split_pieces(s, sep)))?;
        }
        "splitlines" => require_size("str.splitlines", pieces_estimate(s, line_pieces(s)))?,
        _ => {}
    }
    Ok(())
}

/// A native filter with a size pre-check: `(name, precheck)`.
type Precheck = fn(&[Value]) -> Result<(), Error>;

fn precheck_join(args: &[Value]) -> Result<(), Error> {
    let (Some(value), rest) = (args.first(), args.get(1..).unwrap_or_default()) else {
        return Ok(());
    };
    let sep = arg(rest, 0, "d");
    require_size("join", join_estimate(value, text_len(&sep))?)
}

fn precheck_format(args: &[Value]) -> Result<(), Error> {
    let Some(fmt) = args.first().and_then(Value::as_str) else {
        return Ok(());
    };
    require_size("format", format_estimate(fmt, &args[1..], '%'))
}

fn precheck_split(args: &[Value]) -> Result<(), Error> {
    let Some(s) = args.first().and_then(Value::as_str) else {
        return Ok(());
    };
    let sep = arg(&args[1..], 0, "split");
    let sep = sep.as_ref().and_then(Value::as_str);
    require_size("split", pieces_estimate(s, split_pieces(s, sep)))
}

fn precheck_lines(args: &[Value]) -> Result<(), Error> {
    let Some(s) = args.first().and_then(Value::as_str) else {
        return Ok(());
    };
    require_size("lines", pieces_estimate(s, line_pieces(s)))
}

fn precheck_groups(args: &[Value]) -> Result<(), Error> {
    let Some(value) = args.first() else {
        return Ok(());
    };
    let n = arg(&args[1..], 0, "count")
        .and_then(|v| v.as_i64())
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(0);
    let fill = arg(&args[1..], 1, "fill_with");
    let len = value.len().unwrap_or(0);
    let estimate = len
        .saturating_add(n)
        .saturating_mul(ITEM_BYTES)
        .saturating_add(n.saturating_mul(text_len(&fill)));
    require_size("batch/slice", estimate)
}

fn precheck_list(args: &[Value]) -> Result<(), Error> {
    match args.first().and_then(Value::as_str) {
        Some(s) => require_size("list", s.chars().count().saturating_mul(ITEM_BYTES + 8)),
        None => Ok(()),
    }
}

/// The native filters that get a pre-check, with the check.
pub(crate) fn guarded_native_filters() -> Vec<(&'static str, Value, Precheck)> {
    use minijinja::filters as f;
    vec![
        (
            "join",
            Value::from_function(f::join),
            precheck_join as Precheck,
        ),
        ("format", Value::from_function(f::format), precheck_format),
        ("split", Value::from_function(f::split), precheck_split),
        ("lines", Value::from_function(f::lines), precheck_lines),
        ("batch", Value::from_function(f::batch), precheck_groups),
        ("slice", Value::from_function(f::slice), precheck_groups),
        ("list", Value::from_function(f::list), precheck_list),
    ]
}

/// Runs `precheck`, then the native filter.
pub(crate) fn call_guarded(
    state: &mut State,
    native: &Value,
    precheck: Precheck,
    args: Rest<Value>,
) -> Result<Value, Error> {
    precheck(&args)?;
    native.call(state, &args)
}

/// A `fmt::Write` into a string that fails past a byte cap.
pub(crate) struct CappedString {
    /// The text written so far.
    pub(crate) text: String,
    cap: usize,
}

impl CappedString {
    /// An empty string that accepts up to `cap` bytes.
    pub(crate) fn new(cap: usize) -> CappedString {
        CappedString {
            text: String::new(),
            cap,
        }
    }
}

impl fmt::Write for CappedString {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.text.len() + s.len() > self.cap {
            return Err(fmt::Error);
        }
        self.text.push_str(s);
        Ok(())
    }
}

/// minijinja's `pprint` (`{:#?}`), with the output capped at `max_value_bytes`.
pub(crate) fn pprint(value: &Value) -> Result<Value, Error> {
    let mut out = CappedString::new(max_value());
    write!(out, "{value:#?}").map_err(|_| value_error("pprint", max_value()))?;
    Ok(Value::from(out.text))
}

/// Fails if a constant expression of `source` could be folded by minijinja's compiler into a
/// value larger than `max_value_bytes`.
///
/// minijinja evaluates expressions made only of literals when it compiles a template (`['x'] *
/// 100000000` becomes one constant), before any render and so before the guard's checks. Such
/// an expression lies inside one run of literal and operator tokens (an identifier, a filter
/// or the end of a tag ends a run). Only `*` repeats: a run with a string, list, tuple or map
/// literal and a `*` can fold into at most (its strings' bytes plus a value slot per list item)
/// × (the product of its integer literals); with `**` as well it is not bounded that way and
/// is refused outright.
pub(crate) fn check_constant_folding(
    source: &str,
    syntax: minijinja::syntax::SyntaxConfig,
    max_value_bytes: usize,
) -> Result<(), Error> {
    use minijinja::machinery::Token as T;
    #[derive(Default)]
    struct Run {
        bytes: usize,
        factor: usize,
        container: bool,
        mul: bool,
        pow: bool,
    }
    let mut run = Run {
        factor: 1,
        ..Run::default()
    };
    let end_run = |run: &mut Run| -> Result<(), Error> {
        let folded = if run.pow {
            usize::MAX
        } else {
            run.bytes.saturating_mul(run.factor)
        };
        if run.container && run.mul && folded > max_value_bytes {
            return Err(limit_error(format_args!(
                "a constant expression repeats literals into more than max_value_bytes \
                 ({max_value_bytes} bytes) when minijinja folds it at compile time"
            )));
        }
        *run = Run {
            factor: 1,
            ..Run::default()
        };
        Ok(())
    };
    for token in minijinja::machinery::tokenize(source, false, syntax) {
        let Ok((token, _)) = token else {
            break; // the compiler reports the syntax error
        };
        match token {
            T::Str(s) => {
                run.bytes = run.bytes.saturating_add(s.len().max(1));
                run.container = true;
            }
            T::String(s) => {
                run.bytes = run.bytes.saturating_add(s.len().max(1));
                run.container = true;
            }
            T::Int(n) => {
                let n = usize::try_from(n).unwrap_or(usize::MAX).max(1);
                run.factor = run.factor.saturating_mul(n);
            }
            T::Int128(_) => run.factor = usize::MAX,
            // A list, tuple or map literal: each item costs a value slot.
            T::BracketOpen | T::ParenOpen | T::BraceOpen | T::Comma => {
                run.bytes = run.bytes.saturating_add(ITEM_BYTES);
                run.container = true;
            }
            T::Mul => run.mul = true,
            T::Pow => run.pow = true,
            T::Float(_)
            | T::Plus
            | T::Minus
            | T::Div
            | T::FloorDiv
            | T::Mod
            | T::Colon
            | T::Tilde
            | T::Eq
            | T::Ne
            | T::Gt
            | T::Gte
            | T::Lt
            | T::Lte
            | T::BracketClose
            | T::ParenClose
            | T::BraceClose
            | T::Ident("true" | "false" | "none" | "True" | "False" | "None") => {}
            _ => end_run(&mut run)?,
        }
    }
    end_run(&mut run)
}

/// Fails if a template assigns a reserved name.
fn check_name(name: &str) -> Result<(), Error> {
    if name.starts_with(RESERVED_PREFIX) {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("names starting with {RESERVED_PREFIX} are reserved, cannot assign {name}"),
        ));
    }
    Ok(())
}

/// How many instructions `instr` becomes in the instrumented program (see [`expand`]).
fn expansion_len(instr: &Instruction<'_>) -> u32 {
    use Instruction as I;
    match instr {
        I::EmitRaw(_) => 2,
        I::Mul => 6,
        I::Add
        | I::StringConcat
        | I::BuildList(_)
        | I::BuildTuple(_)
        | I::BuildMap(_)
        | I::ApplyFilter(..)
        | I::CallMethod(..)
        | I::CallObject(_) => 2,
        I::CallFunction(name, _) if *name != CHECK_FN && *name != "super" => 2,
        _ => 1,
    }
}

/// Passes what `instr` becomes in the instrumented program to `push`, in order
/// ([`expansion_len`] of them).
fn expand<'s>(instr: &Instruction<'s>, push: &mut impl FnMut(Instruction<'s>)) {
    use Instruction as I;
    let check = || I::CallFunction(CHECK_FN, Some(1));
    match instr {
        I::EmitRaw(s) => {
            push(I::LoadConst(Value::from(*s)));
            push(I::Emit);
        }
        I::Mul => {
            push(I::BuildTuple(Some(2)));
            push(I::CallFunction(MUL_GUARD_FN, Some(1)));
            push(I::UnpackList(2));
            push(I::Swap);
            push(I::Mul);
            push(check());
        }
        other if expansion_len(other) == 2 => {
            push(other.clone());
            push(check());
        }
        other => push(other.clone()),
    }
}

/// Copies `program` with the guard's checks spliced in (see the module docs); fails if the
/// program assigns a reserved name.
pub(crate) fn instrument<'s>(program: &Instructions<'s>) -> Result<Instructions<'s>, Error> {
    use Instruction as I;
    // new_index[i]: where old instruction i starts; the last entry: the end.
    let mut new_index = Vec::with_capacity(512);
    let mut next = 0u32;
    let mut i = 0u32;
    while let Some(instr) = program.get(i) {
        new_index.push(next);
        next += expansion_len(instr);
        i += 1;
    }
    new_index.push(next);
    let len = i;
    let target = |t: u32| new_index.get(t as usize).copied().unwrap_or(t);
    let mut out = Instructions::new(program.name(), program.source());
    let mut failure = None;
    for i in 0..len {
        let Some(instr) = program.get(i) else { break };
        let span = program.get_span(i);
        let line = program.get_line(i);
        expand(instr, &mut |instr| {
            let instr = match instr {
                I::StoreLocal(name) => {
                    if let Err(e) = check_name(name) {
                        failure.get_or_insert(e);
                    }
                    instr
                }
                I::BuildMacro(name, offset, flags) => {
                    if let Err(e) = check_name(name) {
                        failure.get_or_insert(e);
                    }
                    I::BuildMacro(name, target(offset), flags)
                }
                I::Jump(t) => I::Jump(target(t)),
                I::JumpIfFalse(t) => I::JumpIfFalse(target(t)),
                I::JumpIfFalseOrPop(t) => I::JumpIfFalseOrPop(target(t)),
                I::JumpIfTrueOrPop(t) => I::JumpIfTrueOrPop(target(t)),
                I::Iterate(t) => I::Iterate(target(t)),
                other => other,
            };
            match (span, line) {
                (Some(span), _) => out.add_with_span(instr, span),
                (None, Some(line)) => {
                    out.add_with_line(instr, u16::try_from(line).unwrap_or(u16::MAX))
                }
                (None, None) => out.add(instr),
            };
        });
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_counts_shared_items_and_stops_at_the_cap() {
        let s = Value::from("abcd");
        assert_eq!(weight(&s, 100), 6);
        let mut v = Value::from(vec![s.clone(), s]);
        for _ in 0..60 {
            v = Value::from(vec![v.clone(), v]);
        }
        assert_eq!(weight(&v, 1000), 1001);
    }

    #[test]
    fn estimates() {
        assert_eq!(replace_estimate("aaa", "a", "bb", None), 9);
        assert_eq!(replace_estimate("aaa", "a", "bb", Some(1)), 5);
        assert_eq!(occurrences("abc", ""), 4);
        assert_eq!(split_pieces("a b  c", None), 4);
        assert_eq!(line_pieces("a\nb"), 2);
        let fmt = format_estimate("%1000000s", &[Value::from("x")], '%');
        assert!(fmt >= 1_000_000, "{fmt}");
    }
}

#[cfg(test)]
mod explosion_tests {
    //! Each way a template could grow memory must end in a limit error, quickly. The limits are
    //! small so that a regression fails fast instead of exhausting memory.

    use crate::template::{ChatTemplate, Limits, RenderInput, TemplateErrorKind};

    fn limits() -> Limits {
        Limits {
            max_value_bytes: 1 << 20,
            max_output_bytes: 4 << 20,
            ..Limits::default()
        }
    }

    fn assert_limited(source: &str) {
        let template = ChatTemplate::with_limits("boom.jinja", source, limits()).unwrap();
        let started = std::time::Instant::now();
        let err = match template.render(&RenderInput::default()) {
            Ok(out) => panic!("{source}: rendered {} bytes", out.len()),
            Err(err) => err,
        };
        assert_eq!(err.kind(), TemplateErrorKind::Limit, "{source}: {err}");
        assert_eq!(err.template(), "boom.jinja");
        assert!(
            err.message().contains("max_value_bytes") || err.message().contains("max_output_bytes"),
            "{source}: {err}"
        );
        assert!(started.elapsed().as_secs() < 30, "{source}: too slow");
    }

    #[test]
    fn string_doubling_by_concatenation() {
        // (A `{% set %}` inside a loop body does not outlive the iteration: a namespace does.)
        assert_limited(
            "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}\
             {% endfor %}",
        );
        assert_limited(
            "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s + ns.s %}\
             {% endfor %}",
        );
    }

    #[test]
    fn recursive_macros() {
        assert_limited(
            "{% macro m(s, n) %}{% if n > 0 %}{{ m(s ~ s, n - 1) }}{% else %}{{ s }}{% endif %}\
             {% endmacro %}{{ m('x', 60) }}",
        );
        assert_limited(
            "{% macro m(n) %}{% if n > 0 %}{% set r = m(n - 1) %}{{ r }}{{ r }}{% else %}x\
             {% endif %}{% endmacro %}{{ m(25) }}",
        );
    }

    #[test]
    fn filters_and_methods() {
        assert_limited("{% set n = 1000 %}{% set l = ['x' * n] * n %}{{ l | join(l[0]) }}");
        assert_limited("{% set s = 'x' * 1000 %}{{ (s ~ s) | replace('x', s) }}");
        assert_limited("{% set s = 'x' * 1000 %}{{ (s ~ s).replace('x', s) }}");
        assert_limited("{{ '%100000000s' | format('x') }}");
        assert_limited("{% set s = 'x' * 1000 %}{{ '{0}{0}'.format(s ~ s) | replace('x', s) }}");
        assert_limited("{{ '{0:>100000000}'.format('x') }}");
        assert_limited("{% set n = 1000 %}{% set s = 'x' * n %}{{ s.join([s] * n) }}");
        assert_limited("{% set s = ',' * 100000 %}{{ s.split(',') | length }}");
        assert_limited("{{ range(10) | batch(100000000, 'x') | list | length }}");
    }

    #[test]
    fn repetition() {
        // Variables, not literals: minijinja folds constant expressions when compiling.
        assert_limited("{% set n = 100000000 %}{{ ['x'] * n }}");
        assert_limited("{% set n = 100000 %}{{ ('x' * 1000) * n }}");
        assert_limited("{% set n = 100000 %}{{ n * ['x' * 1000] }}");
    }

    #[test]
    fn tojson_of_a_huge_list() {
        assert_limited(
            "{% set ns = namespace(l=['x' * 100]) %}{% for i in range(30) %}\
             {% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l | tojson }}",
        );
        assert_limited(
            "{% set ns = namespace(l=['x']) %}{% for i in range(60) %}\
             {% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l | tojson }}",
        );
    }

    #[test]
    fn list_concatenation_and_append() {
        assert_limited(
            "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}{% set ns.l = ns.l + ns.l %}\
             {% endfor %}{{ ns.l | length }}",
        );
        assert_limited(
            "{% set ns = namespace(l=['x']) %}{% for i in range(60) %}{% do ns.l.extend(ns.l) %}\
             {% endfor %}",
        );
        assert_limited(
            "{% set ns = namespace(l=[]) %}{% set s = 'x' * 100000 %}\
             {% for i in range(100000) %}{% do ns.l.append(s) %}{% endfor %}{{ ns.l }}",
        );
    }

    #[test]
    fn namespace_setattr() {
        assert_limited(
            "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}\
             {% endfor %}",
        );
    }

    #[test]
    fn output_and_captures() {
        assert_limited("{% for i in range(100000) %}{% for j in range(100) %}xxxxxxxxxx{% endfor %}{% endfor %}");
        assert_limited(
            "{% set s %}{% for i in range(100000) %}{% for j in range(40) %}xxxxxxxxxxxxxxxxxx\
             {% endfor %}{% endfor %}{% endset %}",
        );
        assert_limited(
            "{% set s = 'x' * 100000 %}{% set c %}{% for i in range(1000) %}{{ s }}{% endfor %}\
             {% endset %}",
        );
        assert_limited(
            "{% set s = 'x' * 100000 %}{% filter upper %}{% for i in range(1000) %}{{ s }}\
             {% endfor %}{% endfilter %}",
        );
    }

    #[test]
    fn constant_folding_at_compile_time() {
        for source in [
            "{{ ['x'] * 100000000 }}",
            "{{ ('x' * 1000) * 100000 }}",
            "{{ 'x' * 10 ** 9 }}",
            "{% set y = [1, 2] * (100000 * 1000) %}",
        ] {
            let err = ChatTemplate::with_limits("c.jinja", source, limits()).unwrap_err();
            assert_eq!(err.kind(), TemplateErrorKind::Limit, "{source}: {err}");
            assert!(err.message().contains("max_value_bytes"), "{source}: {err}");
        }
        for fine in [
            "{{ '=' * 40 }}",
            "{{ 1000 * 1000 * 1000 }}",
            "{{ 2 ** 10 }}",
            "{{ ['a', 'b'] * 3 }}",
            "{% for i in range(3) %}{{ '  ' * i }}{% endfor %}",
        ] {
            ChatTemplate::with_limits("c.jinja", fine, limits()).unwrap();
        }
    }

    #[test]
    fn reserved_names_cannot_be_assigned() {
        for source in [
            "{% set __chatparse_check = 1 %}",
            "{% macro __chatparse_mul_guard(x) %}{% endmacro %}",
            "{% for __chatparse_check in [1] %}{% endfor %}",
        ] {
            let err = ChatTemplate::new("r.jinja", source).unwrap_err();
            assert!(err.message().contains("reserved"), "{source}: {err}");
        }
    }

    #[test]
    fn ordinary_templates_are_unaffected() {
        let template = ChatTemplate::with_limits(
            "ok.jinja",
            "{% set ns = namespace(l=[]) %}{% for i in range(3) %}{% do ns.l.append(i * 2) %}\
             {% endfor %}{{ ns.l | join(',') }}|{{ 'a' ~ (1 + 2) }}|{{ ('ab' * 2) | upper }}|\
             {{ [1, 2] + [3] }}|{{ 'x'.join(['a', 'b']) }}|{% set c %}raw {{ 1 }}{% endset %}{{ c }}",
            limits(),
        )
        .unwrap();
        assert_eq!(
            template.render(&RenderInput::default()).unwrap(),
            "0,2,4|a3|ABAB|[1, 2, 3]|axb|raw 1"
        );
    }
}
