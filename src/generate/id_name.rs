//! Function names read from call ids, for templates that write each call's id where the
//! function name goes and never the name ([`ToolAnalysis::name_in_id`]): the model names the
//! function inside the id it writes (`functions.get_weather:0`).
//!
//! [`ToolAnalysis::name_in_id`]: crate::analyze::ToolAnalysis::name_in_id

use crate::message::Tool;

/// Whether `c` continues a function name's word (`get_weather`, `get-current`).
fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

/// The function name written inside the call id `id`: the first of the `declared` names found
/// as whole words of the id (starting at its start or after a character that is not a word
/// character, ending at its end or before one), the longest where several start at the same
/// place; the whole id when none is found.
pub fn name_in_id<'a>(id: &'a str, declared: impl IntoIterator<Item = &'a str>) -> &'a str {
    let mut names: Vec<&str> = declared.into_iter().filter(|n| !n.is_empty()).collect();
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    let starts = std::iter::once(0).chain(
        id.char_indices()
            .filter(|&(_, c)| !word_char(c))
            .map(|(i, c)| i + c.len_utf8()),
    );
    for at in starts {
        let rest = &id[at..];
        let whole = names.iter().find(|n| {
            rest.starts_with(**n) && !rest[n.len()..].chars().next().is_some_and(word_char)
        });
        if let Some(n) = whole {
            return &id[at..at + n.len()];
        }
    }
    id
}

/// The declared tool a call whose reference names no tool (the model wrote another id there:
/// `call_3`, `0`) is a call to: the one tool whose parameters the `arguments` (a JSON object)
/// fit, each required parameter present and every key declared. `None` when the arguments are
/// no object, or no tool or more than one fits.
pub fn tool_fitting<'a>(arguments: &str, tools: &'a [Tool]) -> Option<&'a str> {
    let serde_json::Value::Object(args) = serde_json::from_str(arguments).ok()? else {
        return None;
    };
    let fits = |tool: &Tool| {
        let declared: Vec<&str> = tool.parameter_names().collect();
        let required = tool
            .parameters()
            .get("required")
            .and_then(serde_json::Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        required
            .iter()
            .filter_map(serde_json::Value::as_str)
            .all(|r| args.contains_key(r))
            && args.keys().all(|k| declared.contains(&k.as_str()))
    };
    let mut fitting = tools.iter().filter(|t| fits(t));
    match (fitting.next(), fitting.next()) {
        (Some(tool), None) => Some(tool.name()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{name_in_id, tool_fitting};
    use crate::message::Tool;

    fn tools() -> Vec<Tool> {
        serde_json::from_value(serde_json::json!([
            {"type": "function", "function": {"name": "weather", "parameters": {"type": "object",
                "properties": {"city": {}, "unit": {}}, "required": ["city"]}}},
            {"type": "function", "function": {"name": "search", "parameters": {"type": "object",
                "properties": {"query": {}, "limit": {}}, "required": ["query"]}}},
            {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object",
                "properties": {"query": {}}}}},
            {"type": "function", "function": {"name": "ping", "parameters": {}}}
        ]))
        .unwrap()
    }

    #[test]
    fn the_tool_is_the_one_whose_parameters_the_arguments_fit() {
        let tools = tools();
        assert_eq!(
            tool_fitting(r#"{"city": "Paris"}"#, &tools),
            Some("weather")
        );
        assert_eq!(
            tool_fitting(r#"{"query": "x", "limit": 2}"#, &tools),
            Some("search")
        );
        // `search` and `lookup` both take just a query: no one tool fits.
        assert_eq!(tool_fitting(r#"{"query": "x"}"#, &tools), None);
        // `ping` and `lookup` both require nothing: both fit no arguments.
        assert_eq!(tool_fitting("{}", &tools), None);
        assert_eq!(tool_fitting(r#"{"note": 1}"#, &tools), None);
        assert_eq!(tool_fitting("[1]", &tools), None);
        assert_eq!(tool_fitting("{not json", &tools), None);
    }

    #[test]
    fn the_declared_name_is_read_from_the_id() {
        let names = ["get_weather", "get", "weather.get-current", "ping"];
        assert_eq!(name_in_id("functions.get_weather:0", names), "get_weather");
        assert_eq!(name_in_id("get_weather", names), "get_weather");
        assert_eq!(
            name_in_id("call.weather.get-current:3", names),
            "weather.get-current"
        );
        assert_eq!(name_in_id("tool/ping#12", names), "ping");
        // `get` is a word of its own only where a non-word character follows it.
        assert_eq!(name_in_id("x.get.y", names), "get");
    }

    #[test]
    fn a_name_inside_a_longer_word_is_not_read() {
        let names = ["weather", "get"];
        assert_eq!(
            name_in_id("functions.get_weather:0", names),
            "functions.get_weather:0"
        );
        assert_eq!(name_in_id("", names), "");
        assert_eq!(name_in_id("anything", std::iter::empty()), "anything");
    }
}
