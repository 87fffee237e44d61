//! The turn frame: where the assistant turn starts in a render, the header every assistant
//! turn begins with, the footer it ends with, and what the generation prompt adds.
//!
//! A render of `[user, assistant]` minus the render of `[user]` (cut on a marker boundary) is
//! the assistant *turn*. The *header* is the common start of several turns (content only,
//! tool call, an earlier turn followed by another user message) and of the generation prompts
//! with thinking on and off; the *footer* is the common end of a content turn and a tool-call
//! turn. Between them is the *body*: what the model writes.

use crate::template::{ArgumentsForm, TemplateError};

use super::compare::{compare, Renderer};
use super::markers::{
    after_last_turn_end, aligned_prefix_len, aligned_suffix_len, contains_probe, marker_spans,
    probes, switch_before, trailing_marker,
};
use super::scenario::{
    Call, ProbeSet, Scenario, Turn, CONTENT, REASONING, TOOL_RESULT, USER, USER_AGAIN,
};
use crate::diff::segments;

/// The frame of assistant turns, with the renders it was computed from.
#[derive(Debug, Clone)]
pub struct Frame {
    /// Render of the user message alone (no tools).
    base: String,
    /// Render of the user message alone with tools, when tool calls render.
    base_tools: Option<String>,
    /// The common start of assistant turns (`<|im_start|>assistant\n`).
    pub header: String,
    /// The common end of assistant turns (`<|im_end|>\n`); empty when it cannot be told apart
    /// from the content (no tool-call turn to compare with).
    pub footer: String,
    /// The end of tool-call turns: the footer, or the tool-call turn's own end marker when
    /// content turns end with the user turns' end-of-turn marker and tool-call turns with
    /// another one (`<|eot_id|>` vs `<|eom_id|>`).
    pub tool_footer: String,
    /// When turns have no end of their own (`footer` empty): the marker the turn after a
    /// content turn (a user turn) opens with, which models stop by writing (`<|user|>`).
    pub next_turn: String,
    /// The same after a tool-call turn (the tool result's turn: `<|observation|>`), when
    /// tool-call turns have no end of their own.
    pub tool_next_turn: String,
    /// Markers only tool results are written with (`<｜tool▁output▁begin｜>`,
    /// `<tool_response>`): no user or assistant turn holds them (see
    /// [`tool_result_markers`]).
    pub tool_result_markers: Vec<String>,
    /// The first segment of the generation prompt (anchors turns, see `turn_of`).
    anchor: String,
    /// Turns open with a mode switch before the header (text the prompt writes before the
    /// assistant marker, such as ` /think_on `): stripped with the header.
    switch_lead: bool,
    /// The generation prompt after the header, thinking enabled.
    pub prompt_thinking_on: String,
    /// The generation prompt after the header, thinking disabled.
    pub prompt_thinking_off: String,
    /// The body of a turn with content [`CONTENT`] only.
    pub content_body: String,
    /// The body of a turn with one tool call of two arguments (empty content), if tool calls
    /// render.
    pub tool_body: Option<String>,
}

impl Frame {
    /// Renders the frame scenarios. `tool_scenario` is the base scenario for tool-call turns
    /// (tools passed, the arguments form that renders), or `None` when tools do not render.
    pub fn build(
        renderer: &Renderer<'_>,
        tool_scenario: Option<&mut Scenario>,
    ) -> Result<Frame, TemplateError> {
        let user = Scenario::user_only();
        let user_off = Scenario {
            enable_thinking: false,
            ..user.clone()
        };
        let gen_on = compare(renderer, &user, |s| s.generation_prompt = true)?;
        let gen_off = compare(renderer, &user_off, |s| s.generation_prompt = true)?;
        let base = gen_on.a.clone();
        let gen_on = turn_of(&gen_on.a, &gen_on.b, "");
        let gen_off = turn_of(&gen_off.a, &gen_off.b, "");
        let anchor = segments(&gen_on).next().map_or("", |s| s.text).to_owned();
        let content = compare(renderer, &user, |s| {
            s.turn = Some(Turn::content(CONTENT));
        })?;
        let content_turn = turn_of(&content.a, &content.b, &anchor);
        let earlier = compare(renderer, &user, |s| {
            s.turn = Some(Turn::content(CONTENT));
            s.user_after = true;
        })?;
        let earlier_turn = turn_of(&earlier.a, &earlier.b, &anchor);
        let mut tool = None;
        let mut tool_next_turn = String::new();
        let mut result_renders = None;
        if let Some(scenario) = tool_scenario {
            let name = ProbeSet::PRIMARY.fn_first;
            // Calls that do not render with empty content are retried with null content, and
            // with arguments as a JSON string.
            let forms = [scenario.arguments, ArgumentsForm::String];
            // Last, with each call's id set to its name: a template that writes the id where
            // the name goes (and never the name) shows the name's place that way.
            let attempts: Vec<(ArgumentsForm, bool)> = forms
                .iter()
                .enumerate()
                .filter(|(i, f)| *i == 0 || **f != forms[0])
                .flat_map(|(_, f)| [(*f, false), (*f, true)])
                .collect();
            let attempts = attempts
                .iter()
                .map(|&(f, n)| (f, n, false))
                .chain(attempts.iter().map(|&(f, n)| (f, n, true)));
            let original = scenario.arguments;
            for (form, null, ids_are_names) in attempts {
                scenario.arguments = form;
                scenario.null_call_content = null;
                scenario.ids_are_names = ids_are_names;
                let call = vec![Call::first(&ProbeSet::PRIMARY, 2)];
                let Ok(c) = compare(renderer, scenario, |s| *s = s.with_calls(call, None)) else {
                    continue;
                };
                // The call shows the name: more often in the whole render, or in the turn (a
                // template that lists the tools only while the user turn ends the
                // conversation drops the list once a call follows).
                let turn = turn_of(&c.a, &c.b, &anchor);
                if c.b.matches(name).count() > c.a.matches(name).count() || turn.contains(name) {
                    tool = Some((c.a, turn));
                    break;
                }
            }
            if tool.is_none() {
                scenario.null_call_content = false;
                scenario.ids_are_names = false;
                scenario.arguments = original;
            } else {
                let call = vec![Call::first(&ProbeSet::PRIMARY, 2)];
                let with_calls = scenario.with_calls(call, None);
                if let Ok(c) = compare(renderer, &with_calls, |s| s.tool_result_after = true) {
                    tool_next_turn = next_turn_opener(&c.a, &c.b, TOOL_RESULT);
                    result_renders = Some((c.a, c.b));
                }
            }
        }

        // The header all assistant turns and the generation prompts start with; when they
        // share none, the one they share after leading whitespace (a template that writes
        // the line break after the previous turn's end in some turns only).
        // The content turn first.
        let turns: Vec<&str> = [&content_turn, &earlier_turn, &gen_on, &gen_off]
            .into_iter()
            .chain(tool.as_ref().map(|(_, t)| t))
            .map(String::as_str)
            .collect();
        let header_of = |trim: bool| {
            let t = |s: &'_ str| if trim { s.trim_start() } else { s }.to_owned();
            common_start(&turns.iter().map(|s| t(s)).collect::<Vec<_>>())
        };
        let mut header = header_of(false);
        if header.trim().is_empty() {
            header = header_of(true);
        }
        // A header cut inside a word (` /think_o` of ` /think_on <asst>` and ` /think_off
        // <asst>`), or plain text before the turns part (`mode=` of `mode=slow [BOT]`): the
        // turns may open with a mode switch the prompt writes before the assistant marker.
        // Then the header starts at that marker; the switch is stripped before it.
        let mut switch_lead = false;
        // Or no header at all, where the turns part before a header written as a plain word
        // (` /think_on ASSISTANT:` against ` ASSISTANT:`).
        let plain = marker_spans(&header).is_empty();
        if plain || cut_in_word(&header, &content_turn) {
            if let Some(led) = header_after_switch(&turns) {
                header = led;
                switch_lead = true;
            }
        }

        let after_content = content_turn
            .rfind(CONTENT)
            .map_or("", |at| &content_turn[at + CONTENT.len()..]);
        // Whether a turn has nothing between its header and the content.
        let bare_content = [&content_turn, &earlier_turn].into_iter().any(|turn| {
            let body = strip_header(turn, &header, switch_lead);
            body.find(CONTENT)
                .is_some_and(|at| body[..at].trim().is_empty())
        });
        let (footer, tool_footer) = match &tool {
            Some((_, turn)) => {
                // Compared without trailing whitespace: turns may differ only in the newlines
                // after their end marker.
                let after_call = after_last_probe(turn, &ProbeSet::PRIMARY).trim_end();
                let content_end = after_content.trim_end();
                let n = aligned_suffix_len(content_end, after_call);
                let user_end = trailing_marker(base.trim_end());
                // The marker user turns open with (`<|user|>`): a template may write it into
                // the assistant turn, as the end a model stops with.
                let user_opener = base
                    .rfind(USER)
                    .and_then(|at| trailing_marker(base[..at].trim_end()));
                let ends_turn = |m: &str| user_end == Some(m) || user_opener == Some(m);
                match (trailing_marker(content_end), trailing_marker(after_call)) {
                    // No common end, but content turns end like user turns (an end-of-turn
                    // token), or with the marker the user turn opens with, and tool-call
                    // turns end with another marker: their own end token.
                    (Some(content), Some(tool)) if n == 0 && ends_turn(content) => {
                        (content.to_owned(), tool.to_owned())
                    }
                    // Content turns end like user turns and tool-call turns end with their
                    // own syntax (a closing fence): the content turns' end-of-turn token.
                    (Some(content), None) if n == 0 && ends_turn(content) => {
                        let ws = after_content[content_end.len()..].to_owned();
                        (content.to_owned(), ws)
                    }
                    // Content is followed by one marker alone, which no tool-call turn writes,
                    // and nothing stands before the content (no wrapper the marker could
                    // close): the content turns' end of turn; tool-call turns end with their
                    // own syntax.
                    (Some(content), Some(_))
                        if n == 0
                            && content.len() == content_end.trim_start().len()
                            && !after_call.contains(content)
                            && bare_content =>
                    {
                        let ws = after_content[content_end.len()..].to_owned();
                        (content.to_owned(), ws)
                    }
                    _ if n == 0 => {
                        let ws = after_content[content_end.len()..].to_owned();
                        (ws.clone(), ws)
                    }
                    _ => {
                        let end = content_end[content_end.len() - n..].to_owned();
                        (end.clone(), end)
                    }
                }
            }
            // Without a tool-call turn to compare with, the turn ends like the user turn: the
            // common end of what follows the user message and what follows the content.
            None => {
                let after_user = base.rfind(USER).map_or("", |at| &base[at + USER.len()..]);
                let n = aligned_suffix_len(after_content, after_user);
                let own_end = after_content[..after_content.len() - n].trim();
                // A lone marker after bare content ends the turn (no wrapper it could close).
                let lone_marker = bare_content
                    && trailing_marker(own_end).is_some_and(|m| m.len() == own_end.len());
                let footer = if own_end.is_empty() || n == 0 || lone_marker {
                    after_content
                } else {
                    &after_content[after_content.len() - n..]
                };
                (footer.to_owned(), footer.to_owned())
            }
        };
        // Turns without an end of their own end where the next turn starts: its opening
        // marker is what a model stops with.
        // The content turn's render, and the same followed by a user turn.
        let next_turn = if footer.trim().is_empty() {
            next_turn_opener(&content.b, &earlier.b, USER_AGAIN)
        } else {
            String::new()
        };
        if !tool_footer.trim().is_empty() {
            tool_next_turn.clear();
        }
        let tool_result_markers = result_renders.map_or_else(Vec::new, |(without, with)| {
            let turns = [&base, &content_turn, &earlier_turn, &gen_on, &gen_off]
                .into_iter()
                .chain(tool.iter().flat_map(|(base_tools, t)| [base_tools, t]))
                .map(String::as_str);
            tool_result_markers(&without, &with, turns)
        });
        let after_header = |turn: &str| strip_header(turn, &header, switch_lead).to_owned();
        let mut frame = Frame {
            tool_result_markers,
            next_turn,
            tool_next_turn,
            prompt_thinking_on: after_header(&gen_on),
            prompt_thinking_off: after_header(&gen_off),
            content_body: String::new(),
            tool_body: None,
            base_tools: None,
            base,
            anchor,
            switch_lead,
            header,
            footer,
            tool_footer,
        };
        frame.content_body = frame.body_of_turn(&content_turn, false);
        if let Some((base_tools, turn)) = tool {
            frame.tool_body = Some(frame.body_of_turn(&turn, true));
            frame.base_tools = Some(base_tools);
        }
        Ok(frame)
    }

    /// The body of the assistant turn in `render` (a render of the user message followed by an
    /// assistant turn; `tools`: rendered with the tool definitions).
    pub fn body(&self, render: &str, tools: bool) -> String {
        let base = match (&self.base_tools, tools) {
            (Some(b), true) => b,
            _ => &self.base,
        };
        self.body_of_turn(&turn_of(base, render, &self.anchor), tools)
    }

    /// The assistant turn in `render` after the header, whole (not cut at the footer).
    pub fn after_header(&self, render: &str) -> String {
        let turn = turn_of(&self.base, render, &self.anchor);
        strip_header(&turn, &self.header, self.switch_lead).to_owned()
    }

    /// The body of a content turn in `render`, rendered with the tool definitions.
    pub fn content_body_with_tools(&self, render: &str) -> Option<String> {
        let base = self.base_tools.as_ref()?;
        Some(self.body_of_turn(&turn_of(base, render, &self.anchor), false))
    }

    /// The body of the tool-call turn in `render`, a render of `base` followed by the turn.
    pub fn tool_body_against(&self, base: &str, render: &str) -> String {
        self.body_of_turn(&turn_of(base, render, &self.anchor), true)
    }

    /// A turn without the header, cut at the first footer after the last probe value.
    fn body_of_turn(&self, turn: &str, tools: bool) -> String {
        let body = strip_header(turn, &self.header, self.switch_lead);
        let footer = if tools {
            &self.tool_footer
        } else {
            &self.footer
        };
        if footer.is_empty() {
            return body.to_owned();
        }
        let last = last_probe_end(body);
        if tools && footer.trim().is_empty() {
            // A blank footer (a line break) ends a tool-call turn: the text after the last
            // probe up to the trailing whitespace (a fence's closer on its own line) closes
            // the calls.
            let kept = body.trim_end().len().max(last);
            if body[kept..].contains(footer.as_str()) {
                return body[..kept].to_owned();
            }
        }
        match body[last..].find(footer.as_str()) {
            Some(at) => body[..last + at].to_owned(),
            None => body.to_owned(),
        }
    }
}

/// The assistant turn of `render`: what it inserts into `base` (cut on a marker boundary). When
/// `base` has text after the insertion point (a template that appends instructions after the
/// conversation), that text is left out and the insertion is rotated back so the turn starts
/// with `anchor` (the start of
/// the generation prompt) when that is consistent.
fn turn_of(base: &str, render: &str, anchor: &str) -> String {
    let turn = inserted_turn(base, render, anchor);
    // A turn that holds the user message started earlier than the assistant turn (a template
    // that writes the system message into the last user turn only while that turn ends the
    // conversation): it starts after the user message and the user turn's end.
    if turn.contains(USER) {
        if let Some(after) = after_last_turn_end(base, render, USER) {
            return after.to_owned();
        }
    }
    after_changed_user_turn(base, render).unwrap_or(turn)
}

/// The turn `render` adds after the user turn of `base` when the two part inside that user
/// turn, before its end marker: a template that writes a switch after the user message
/// depending on what follows it (` /think` while the turn ends the conversation, ` /no_think`
/// once an answer follows; `[MODE=deep]` and `[MODE=fast]`). The user turn's end is the first
/// marker on the user message's line, after where the renders part, that both write there;
/// the switch is what `base` writes before it, which `render` writes otherwise. The turn
/// starts after that marker (and the whitespace `base` writes after it); what `base` writes
/// after that is left out at the end. `None` when the renders part after the user turn, or
/// no such marker or switch is found.
fn after_changed_user_turn(base: &str, render: &str) -> Option<String> {
    let user_end = base.rfind(USER)? + USER.len();
    let parted = aligned_prefix_len(base, render);
    let line_of = |text: &str| text.find('\n').map_or(text.len(), |at| at);
    let tail = &base[user_end..];
    let line = &tail[..line_of(tail)];
    let r_user = render.find(USER)? + USER.len();
    let r_tail = &render[r_user..];
    // The user turn's line in `render`, up to the next turn's probe values.
    let r_line = &r_tail[..line_of(r_tail)];
    let next_value = probes()
        .iter()
        .filter_map(|probe| r_line.find(probe))
        .min()
        .unwrap_or(r_line.len());
    let r_line = &r_line[..next_value];
    let found = marker_spans(line)
        .into_iter()
        .filter(|&(_, to)| user_end + to > parted)
        .find_map(|(from, to)| Some((from, to, r_line.find(&line[from..to])?)));
    let Some((at, to, r_at)) = found else {
        return after_glued_switch(tail, render, r_user, r_line);
    };
    let switch = &line[..at];
    if user_end + at < parted || switch.trim().is_empty() || r_line[..r_at] == *switch {
        return None;
    }
    let after = &tail[to..];
    let ws = &after[..after.len() - after.trim_start().len()];
    let rest = &after[ws.len()..];
    let r_end = r_user + r_at + (to - at);
    let start = r_end + render[r_end..].strip_prefix(ws).map_or(0, |_| ws.len());
    let turn = &render[start..];
    Some(turn.strip_suffix(rest).unwrap_or(turn).to_owned())
}

/// The turn of `render` when the user turn of `base` ends with a switch and no marker
/// (`USER/think`, the conversation's end): `tail` (what `base` writes after the user message)
/// is text on one line holding no marker, and `render` writes other such text there
/// (`/no_think`) before the marker its turn starts with.
fn after_glued_switch(tail: &str, render: &str, r_user: usize, r_line: &str) -> Option<String> {
    let plain = |t: &str| !t.trim().is_empty() && !t.contains('\n') && marker_spans(t).is_empty();
    let &(r_at, _) = marker_spans(r_line).first()?;
    let r_switch = &r_line[..r_at];
    (plain(tail) && plain(r_switch) && r_switch != tail).then(|| render[r_user + r_at..].to_owned())
}

/// The text `render` inserts into `base` (see [`turn_of`]).
fn inserted_turn(base: &str, render: &str, anchor: &str) -> String {
    let k = aligned_prefix_len(base, render);
    let grown = render.len().checked_sub(base.len());
    if let Some(inserted) =
        grown.filter(|_| k < base.len() && !anchor.is_empty() && !render[k..].starts_with(anchor))
    {
        let earliest = k.saturating_sub(anchor.len());
        for start in (earliest..k).rev() {
            if render.is_char_boundary(start)
                && render[start..].starts_with(anchor)
                && render.get(start + inserted..) == base.get(start..)
            {
                return render[start..start + inserted].to_owned();
            }
        }
    }
    // Text the base has after the insertion point (instructions appended after the
    // conversation) is not part of the turn.
    match render.strip_suffix(&base[k..]) {
        Some(head) if head.len() >= k && !render[k..].starts_with(&base[k..]) => {
            render[k..head.len()].to_owned()
        }
        _ => render[k..].to_owned(),
    }
}

/// The marker the turn that `with` adds after `without` opens with (`<|user|>`, the turn
/// holding `probe`): the first marker of the addition, when it stands alone (whitespace,
/// another marker or the probe follows it, not a role word: `<|start|>user` is no lone
/// opener). Empty when there is none.
fn next_turn_opener(without: &str, with: &str, probe: &str) -> String {
    let added = &with[aligned_prefix_len(without, with)..];
    let Some(at) = added.find(probe) else {
        return String::new();
    };
    let head = added[..at].trim_start();
    let Some(&(from, to)) = marker_spans(head).first() else {
        return String::new();
    };
    let marker = &head[from..to];
    let rest = &head[to..];
    let plain =
        !marker.contains(char::is_whitespace) && !contains_probe(marker, &ProbeSet::PRIMARY.all());
    let alone = plain
        && (rest.is_empty()
            || rest.starts_with(char::is_whitespace)
            || marker_spans(rest).first().is_some_and(|&(f, _)| f == 0));
    if from == 0 && alone {
        head[..to].to_owned()
    } else {
        String::new()
    }
}

/// The markers that wrap the tool result in `with` (the render `without` it, plus a tool
/// message): the run of markers right before the result and right after it (whitespace
/// between them), each a token none of `turns` holds (the prompts with and without tools,
/// the assistant turns). A marker holding whitespace or a probe value (`response:NAME{`) is
/// no token, and text ends the run: a role header before the tool's name is the turn's.
fn tool_result_markers<'t>(
    without: &str,
    with: &str,
    turns: impl Iterator<Item = &'t str> + Clone,
) -> Vec<String> {
    let added = &with[aligned_prefix_len(without, with)..];
    let Some(at) = added.find(TOOL_RESULT) else {
        return Vec::new();
    };
    let probes = ProbeSet::PRIMARY.all();
    let spans = marker_spans(added);
    let wrapper = |&&(from, to): &&(usize, usize)| {
        let marker = &added[from..to];
        !marker.contains(char::is_whitespace)
            && !contains_probe(marker, &probes)
            && !marker.contains(TOOL_RESULT)
            && !turns.clone().any(|t| t.contains(marker))
    };
    let mut before = Vec::new();
    let mut edge = at;
    for span in spans.iter().rev().filter(|&&(_, to)| to <= at) {
        if !added[span.1..edge].trim().is_empty() || !wrapper(&span) {
            break;
        }
        before.push(span);
        edge = span.0;
    }
    let result_end = at + TOOL_RESULT.len();
    let mut edge = result_end;
    let mut after = Vec::new();
    for span in spans.iter().filter(|&&(from, _)| from >= result_end) {
        if !added[edge..span.0].trim().is_empty() || !wrapper(&span) {
            break;
        }
        after.push(span);
        edge = span.1;
    }
    let mut markers: Vec<String> = Vec::new();
    for &(from, to) in before.into_iter().rev().chain(after) {
        let marker = &added[from..to];
        if !markers.iter().any(|m| m == marker) {
            markers.push(marker.to_owned());
        }
    }
    markers
}

/// `turn` after `header`, which it may start with after leading whitespace, or (`switch`)
/// after a mode switch (see [`switch_before`]); all of `turn` when it does not start with it.
fn strip_header<'t>(turn: &'t str, header: &str, switch: bool) -> &'t str {
    turn.strip_prefix(header)
        .or_else(|| turn.trim_start().strip_prefix(header))
        .or_else(|| {
            let at = switch_before(turn, header).filter(|_| switch)?;
            Some(&turn[at + header.len()..])
        })
        .unwrap_or(turn)
}

/// Whether `header` (the common start of the turns) ends inside a word of `turn`: it stops
/// where the turns' texts part in the middle of a word, not at a marker or whitespace.
fn cut_in_word(header: &str, turn: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    !header.trim().is_empty()
        && word(header.chars().next_back())
        && word(turn.get(header.len()..).and_then(|t| t.chars().next()))
        && trailing_marker(header.trim_end()).is_none()
}

/// The header the `turns` share after each one's mode switch: from the first marker of the
/// first turn, else from one of the words on its first line (a header written as a plain
/// word), which every turn holds after a switch (see [`switch_before`]). `None` when a
/// turn does not, when the texts before it are all the same (no switch), or the turns share
/// nothing from there.
fn header_after_switch(turns: &[&str]) -> Option<String> {
    let first = turns.first()?;
    marker_spans(first)
        .first()
        .copied()
        .into_iter()
        .chain(words_before_probes(first))
        .find_map(|(from, to)| header_after_switch_at(turns, from, to))
}

/// The words of `turn`'s first line before any marker or probe value, as byte ranges: where a
/// header written as a plain word (`ASSISTANT:`) may stand, after a switch written as words.
fn words_before_probes(turn: &str) -> Vec<(usize, usize)> {
    let line = turn.split('\n').next().unwrap_or("");
    let mut end = line.len();
    if let Some(&(at, _)) = marker_spans(line).first() {
        end = end.min(at);
    }
    let probe = ProbeSet::PRIMARY;
    for value in [CONTENT, REASONING, probe.fn_first] {
        if let Some(at) = line.find(value) {
            end = end.min(at);
        }
    }
    let head = &line[..end];
    head.split_whitespace()
        .map(|word| {
            let from = word.as_ptr() as usize - head.as_ptr() as usize;
            (from, from + word.len())
        })
        .collect()
}

/// [`header_after_switch`] from the anchor `first[from..to]`.
fn header_after_switch_at(turns: &[&str], from: usize, to: usize) -> Option<String> {
    let first = turns.first()?;
    let marker = &first[from..to];
    let ats: Vec<usize> = turns
        .iter()
        .map(|t| switch_before(t, marker))
        .collect::<Option<_>>()?;
    // A switch: the texts before the marker differ (the same text in every turn is a
    // header written as plain text, such as `### Assistant:`).
    if turns
        .iter()
        .zip(&ats)
        .all(|(t, &at)| t[..at] == first[..from])
    {
        return None;
    }
    let rests: Vec<&str> = turns.iter().zip(&ats).map(|(t, &at)| &t[at..]).collect();
    let header = common_start(&rests);
    (header.len() >= marker.len()).then_some(header)
}

/// The start all `texts` share, cut on a marker boundary (see [`aligned_prefix_len`]).
fn common_start<S: AsRef<str>>(texts: &[S]) -> String {
    let Some((first, others)) = texts.split_first() else {
        return String::new();
    };
    let first = first.as_ref();
    let len = others.iter().fold(first.len(), |len, other| {
        len.min(aligned_prefix_len(&first[..len], other.as_ref()))
    });
    first[..len].to_owned()
}

/// The end of the last probe value (tool call, content or reasoning) in `text`, or 0.
fn last_probe_end(text: &str) -> usize {
    let (p, c) = (ProbeSet::PRIMARY, ProbeSet::CHECK);
    p.all()
        .iter()
        .chain(c.all().iter())
        .filter_map(|probe| text.rfind(probe).map(|at| at + probe.len()))
        .max()
        .unwrap_or(0)
}

/// The text after the last occurrence of any tool-call probe of `probes` in `text`.
pub fn after_last_probe<'a>(text: &'a str, probes: &ProbeSet) -> &'a str {
    let end = [
        probes.fn_first,
        probes.arg_first,
        probes.arg_second,
        probes.value_first,
        probes.value_second,
        probes.id_first,
    ]
    .iter()
    .filter_map(|p| text.rfind(p).map(|at| at + p.len()))
    .max()
    .unwrap_or(0);
    &text[end..]
}

#[cfg(test)]
mod tests {
    use super::tool_result_markers;
    use crate::analyze::scenario::TOOL_RESULT;

    #[test]
    fn tool_result_markers_are_the_tokens_right_around_the_result() {
        let without = "<|u|>Hi<|end|><|a|>call<|end|>";
        let turns = ["<|u|>Hi<|end|>", "<|a|>call<|end|>"];
        // Role header, then wrapper tokens around the result: the header is a turn's.
        let with = format!("{without}<|u|>\n<res><out>{TOOL_RESULT}</out></res><|end|>");
        assert_eq!(
            tool_result_markers(without, &with, turns.iter().copied()),
            ["<res>", "<out>", "</out>", "</res>"]
        );
        // Text between ends the run: a tool's name before the result keeps the opener out.
        let with = format!("{without}[TOOL] name=f [BODY]{TOOL_RESULT}[/TOOL]");
        assert_eq!(
            tool_result_markers(without, &with, turns.iter().copied()),
            ["[BODY]", "[/TOOL]"]
        );
        // No result in the render: none.
        assert!(tool_result_markers(without, without, turns.iter().copied()).is_empty());
    }
}
