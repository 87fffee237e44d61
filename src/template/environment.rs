//! The minijinja [`Environment`] configured to render like transformers' Jinja2 sandbox.
//!
//! transformers compiles chat templates with `ImmutableSandboxedEnvironment(trim_blocks=True,
//! lstrip_blocks=True, extensions=[AssistantTracker, loopcontrols])` and adds `tojson`,
//! `raise_exception`, `strftime_now`, `dict` and `namespace`. Here:
//!
//! - syntax: `trim_blocks` and `lstrip_blocks` through [`SyntaxConfig`]; loop controls are a
//!   minijinja feature; `{% generation %}` is handled by [`super::preprocess`];
//! - no auto-escaping, undefined values are lenient like Jinja2's default `Undefined`;
//! - printing follows Python `str()` (`None`, `True`, `['a', 1]`) via a formatter;
//! - filters, tests, globals and Python methods from the sibling modules;
//! - [`Limits`]: fuel (instructions per render), recursion depth, and the memory guard's
//!   value and output sizes (see [`super::guard`]).

use minijinja::syntax::SyntaxConfig;
use minijinja::{AutoEscape, Environment, Error, ErrorKind, UndefinedBehavior};

use super::{filters, globals, guard, python, tests_jinja, value};

/// Resource limits of one render; exceeding one is a [`TemplateErrorKind::Limit`] error.
///
/// [`TemplateErrorKind::Limit`]: super::TemplateErrorKind::Limit
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Maximum minijinja instructions executed by one render.
    pub fuel: u64,
    /// Maximum nesting depth (loops, conditionals, macro calls count toward it).
    pub recursion: usize,
    /// Maximum printed size, in bytes, of any value a render builds (a string, or a list or map
    /// measured by walking its items); render inputs themselves are not measured.
    pub max_value_bytes: usize,
    /// Maximum bytes one render may write: its output plus everything written into captured
    /// blocks (`{% set x %}...{% endset %}`, macro bodies, `{% filter %}` blocks).
    pub max_output_bytes: usize,
}

impl Default for Limits {
    /// 5 million instructions (real chat templates need well under 100k per render), a depth
    /// of 200, values up to 16 MiB and 64 MiB written per render (real renders of the shared
    /// templates stay under 100 KiB).
    fn default() -> Limits {
        Limits {
            fuel: 5_000_000,
            recursion: 200,
            max_value_bytes: 16 << 20,
            max_output_bytes: 64 << 20,
        }
    }
}

/// The syntax of chat templates: Jinja2's delimiters with `trim_blocks` and `lstrip_blocks`.
pub(crate) fn syntax() -> Result<SyntaxConfig, Error> {
    SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .build()
}

/// Builds an environment with the transformers-compatible configuration and no templates.
pub(crate) fn build(limits: Limits) -> Result<Environment<'static>, Error> {
    let mut env = Environment::new();
    env.set_syntax(syntax()?);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_undefined_behavior(UndefinedBehavior::Lenient);
    // Debug info makes errors name the undefined variable involved; minijinja turns it on only
    // in debug builds by default, which would make error texts differ between debug and
    // release builds (and analysis snapshots record them).
    env.set_debug(true);
    env.set_fuel(Some(limits.fuel));
    env.set_recursion_limit(limits.recursion);
    env.set_formatter(|out, _state, value| {
        if let Some(s) = value.as_str() {
            guard::count_written(s.len())?;
            return out
                .write_str(s)
                .map_err(|_| Error::new(ErrorKind::WriteFailure, "write failed"));
        }
        let mut text = String::new();
        python::py_str(value, &mut text);
        guard::count_written(text.len())?;
        out.write_str(&text)
            .map_err(|_| Error::new(ErrorKind::WriteFailure, "write failed"))
    });
    env.set_unknown_method_callback(globals::unknown_method);

    env.add_filter("tojson", filters::tojson);
    env.add_filter("from_json", filters::from_json);
    env.add_filter("indent", filters::indent);
    env.add_filter("int", filters::int);
    env.add_filter("float", filters::float);
    env.add_filter("length", filters::length);
    env.add_filter("count", filters::length);
    env.add_filter("replace", filters::replace);
    env.add_filter("string", filters::string);
    env.add_filter("pprint", guard::pprint);
    for (name, native, precheck) in guard::guarded_native_filters() {
        env.add_filter(
            name,
            move |state: &mut minijinja::State, args: minijinja::value::Rest<minijinja::Value>| {
                guard::call_guarded(state, &native, precheck, args)
            },
        );
    }

    env.add_test("iterable", tests_jinja::is_iterable);
    env.add_test("sequence", tests_jinja::is_sequence);

    env.add_function("raise_exception", globals::raise_exception);
    env.add_function("strftime_now", globals::strftime_now);
    env.add_function("namespace", globals::namespace);
    env.add_function(value::SETATTR_FN, value::set_attr);
    env.add_function(guard::CHECK_FN, guard::check);
    env.add_function(guard::MUL_GUARD_FN, guard::mul_guard);
    Ok(env)
}
