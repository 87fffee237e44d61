use proptest::prelude::*;

use crate::message::{
    Appended, ChatDelta, ChatMessage, Conflict, DeltaAccumulator, DeltaTracker, MessageBuilder,
    PartialMessage, PartialToolCall, TrackerConfig,
};

fn text(content: &str, reasoning: &str) -> PartialMessage {
    PartialMessage {
        content: content.into(),
        reasoning_content: reasoning.into(),
        tool_calls: Vec::new(),
    }
}

fn call(id: &str, name: &str, name_final: bool, arguments: &str) -> PartialToolCall {
    PartialToolCall {
        id: id.into(),
        id_final: true,
        name: name.into(),
        name_final,
        arguments: arguments.into(),
        arguments_final: false,
        healed_arguments: None,
    }
}

/// Feeds the snapshots, checking after each that the accumulated deltas equal its stable view
/// when no conflict was reported; returns the deltas and the conflicts.
fn run(
    tracker: &mut DeltaTracker,
    snapshots: &[PartialMessage],
) -> (Vec<ChatDelta>, Vec<Conflict>) {
    let mut deltas = Vec::new();
    let mut conflicts = Vec::new();
    let mut acc = DeltaAccumulator::new();
    for snapshot in snapshots {
        let update = tracker.update(snapshot);
        if let Some(delta) = update.delta {
            acc.apply(&delta).unwrap();
            deltas.push(delta);
        }
        if update.conflicts.is_empty() {
            assert_eq!(acc.message(), &snapshot.stable_message());
        }
        conflicts.extend(update.conflicts);
    }
    (deltas, conflicts)
}

#[test]
fn text_streams_as_suffixes_with_role_first() {
    let mut tracker = DeltaTracker::new();
    let (deltas, conflicts) = run(
        &mut tracker,
        &[
            text("", ""),
            text("", "I'm"),
            text("He", "I'm thinking"),
            text("He", "I'm thinking"),
            text("Hello", "I'm thinking"),
        ],
    );
    assert!(conflicts.is_empty());
    assert_eq!(deltas.len(), 3, "empty updates emit nothing: {deltas:?}");
    assert_eq!(deltas[0].role.as_deref(), Some("assistant"));
    assert!(deltas[1..].iter().all(|d| d.role.is_none()));
    assert_eq!(deltas[1].reasoning_content.as_deref(), Some(" thinking"));
    assert_eq!(deltas[1].content.as_deref(), Some("He"));
    assert_eq!(deltas[2].content.as_deref(), Some("llo"));
    assert_eq!(deltas[2].reasoning_content, None);
}

#[test]
fn names_stream_whole_with_the_id() {
    let mut tracker = DeltaTracker::new();
    let mut partial_name = text("", "");
    partial_name
        .tool_calls
        .push(call("c0", "get_wea", false, ""));
    let mut named = text("", "");
    named
        .tool_calls
        .push(call("c0", "get_weather", true, r#"{"ci"#));
    let (deltas, conflicts) = run(&mut tracker, &[partial_name, named]);
    assert!(conflicts.is_empty());
    assert_eq!(deltas.len(), 1);
    let fragment = &deltas[0].tool_calls.as_ref().unwrap()[0];
    assert_eq!(fragment.index, 0);
    assert_eq!(fragment.id.as_deref(), Some("c0"));
    assert_eq!(fragment.kind.as_deref(), Some("function"));
    assert_eq!(fragment.function.name.as_deref(), Some("get_weather"));
    assert_eq!(fragment.function.arguments.as_deref(), Some(r#"{"ci"#));
}

#[test]
fn calls_wait_for_the_ids_and_the_calls_before_them() {
    let mut tracker = DeltaTracker::new();
    let mut first = call("", "f", true, "{}");
    first.id_final = false;
    let mut snapshot = text("", "");
    snapshot.tool_calls = vec![first.clone(), call("", "g", true, "{")];
    let update = tracker.update(&snapshot);
    assert_eq!(update.delta, None);
    first.id = "call_0".into();
    first.id_final = true;
    snapshot.tool_calls[0] = first;
    let (deltas, conflicts) = run(&mut tracker, &[snapshot]);
    assert!(conflicts.is_empty());
    let fragments = deltas[0].tool_calls.as_ref().unwrap();
    assert_eq!(fragments.len(), 2);
    assert_eq!(fragments[0].id.as_deref(), Some("call_0"));
    assert_eq!(fragments[1].id, None, "an empty id is not sent");
    assert_eq!(fragments[1].function.name.as_deref(), Some("g"));
}

#[test]
fn healed_closers_are_not_streamed() {
    let mut builder = MessageBuilder::new();
    builder.set_name("f");
    builder.push_arguments(r#"{"a": [1"#);
    let partial = builder.finish(true);
    assert!(partial.tool_calls[0].healed_arguments.is_some());
    let mut tracker = DeltaTracker::new();
    let delta = tracker.update(&partial).delta.unwrap();
    let arguments = delta.tool_calls.unwrap()[0].function.arguments.clone();
    assert_eq!(arguments.as_deref(), Some(r#"{"a": [1"#));

    let mut builder = MessageBuilder::new();
    builder.set_name("f");
    builder.push_arguments(r#"{"a": [1, 2"#);
    let done = builder.finish(false);
    let delta = tracker.update(&done).delta.unwrap();
    let arguments = delta.tool_calls.unwrap()[0].function.arguments.clone();
    assert_eq!(
        arguments.as_deref(),
        Some(", 2]}"),
        "closers stream once the call is final"
    );
}

#[test]
fn retractions_are_held_back_and_reported() {
    let mut tracker = DeltaTracker::new();
    let snapshots = [text("Hello", ""), text("Help", ""), text("Hello!", "")];
    let (deltas, conflicts) = run(&mut tracker, &snapshots);
    assert_eq!(conflicts, [Conflict::Content]);
    assert_eq!(tracker.conflicts(), 1);
    // A later snapshot that extends what was emitted resumes the field.
    assert_eq!(deltas.len(), 2);
    assert_eq!(deltas[1].content.as_deref(), Some("!"));
}

#[test]
fn a_code_point_is_never_split() {
    let mut tracker = DeltaTracker::new();
    tracker.update(&text("é", ""));
    // "😀" is 4 bytes: the emitted length 2 falls inside it.
    let update = tracker.update(&text("😀", ""));
    assert_eq!(update.conflicts, [Conflict::Content]);
    assert_eq!(update.delta, None);
}

#[test]
fn changed_calls_are_reported() {
    let mut tracker = DeltaTracker::new();
    let mut snapshot = text("", "");
    snapshot.tool_calls = vec![call("a", "f", true, "{\"x"), call("b", "g", true, "")];
    tracker.update(&snapshot);
    let mut changed = snapshot.clone();
    changed.tool_calls[0].name = "h".into();
    changed.tool_calls[1].id = "c".into();
    assert_eq!(
        tracker.update(&changed).conflicts,
        [Conflict::Name(0), Conflict::Id(1)]
    );
    let mut args = snapshot.clone();
    args.tool_calls[0].arguments = "{\"y".into();
    assert_eq!(tracker.update(&args).conflicts, [Conflict::Arguments(0)]);
    let mut unsettled = snapshot.clone();
    unsettled.tool_calls[0].name_final = false;
    unsettled.tool_calls[1].id_final = false;
    assert_eq!(
        tracker.update(&unsettled).conflicts,
        [Conflict::Name(0), Conflict::Id(1)]
    );
    snapshot.tool_calls.truncate(1);
    assert_eq!(
        tracker.update(&snapshot).conflicts,
        [Conflict::MissingCall(1)]
    );
    assert_eq!(tracker.conflicts(), 6);
    assert!(!Conflict::MissingCall(1).to_string().is_empty());
}

/// Snapshots where each step appends to one field only, with that field named.
fn appending_steps() -> Vec<(PartialMessage, Appended)> {
    let mut steps = Vec::new();
    let mut m = text("", "");
    for piece in ["Let me", " think ", "é→"] {
        m.reasoning_content.push_str(piece);
        steps.push((m.clone(), Appended::Reasoning));
    }
    for piece in ["Sure", ", here", "  "] {
        m.content.push_str(piece);
        steps.push((m.clone(), Appended::Content));
    }
    m.tool_calls.push(call("c1", "get", true, ""));
    steps.push((m.clone(), Appended::Arguments(0)));
    for piece in ["{\"a\"", ": 1", ""] {
        m.tool_calls[0].arguments.push_str(piece);
        steps.push((m.clone(), Appended::Arguments(0)));
    }
    steps
}

#[test]
fn appended_updates_equal_full_updates() {
    let config = TrackerConfig { verify_window: 0 };
    let (mut fast, mut full) = (
        DeltaTracker::with_config(config),
        DeltaTracker::with_config(config),
    );
    for (i, (snapshot, appended)) in appending_steps().into_iter().enumerate() {
        // The step that adds the call is not an append: both take the full update there.
        let update = if i == 6 {
            fast.update(&snapshot)
        } else {
            fast.update_appended(&snapshot, appended)
        };
        assert_eq!(update, full.update(&snapshot), "step {i}");
    }
}

#[test]
fn appended_updates_fall_back_after_a_conflict() {
    let mut tracker = DeltaTracker::with_config(TrackerConfig { verify_window: 0 });
    let _ = tracker.update(&text("", "abc"));
    // A retracted reasoning is held back and reported...
    assert_eq!(
        tracker.update(&text("", "ab")).conflicts,
        vec![Conflict::Reasoning]
    );
    // ...and the next step, though it only appends content, is checked in full: the
    // reasoning conflict is reported again, the content still streams.
    let update = tracker.update_appended(&text("x", "ab"), Appended::Content);
    assert_eq!(update.conflicts, vec![Conflict::Reasoning]);
    assert_eq!(update.delta.and_then(|d| d.content), Some("x".to_owned()));
}

#[test]
fn the_verify_window_bounds_the_check() {
    let long = "x".repeat(100);
    let edited = format!("y{}", &long[1..]);
    let mut spot = DeltaTracker::with_config(TrackerConfig { verify_window: 8 });
    spot.update(&text(&long, ""));
    assert!(spot
        .update(&text(&format!("{edited}!"), ""))
        .conflicts
        .is_empty());
    let mut full = DeltaTracker::with_config(TrackerConfig {
        verify_window: usize::MAX,
    });
    full.update(&text(&long, ""));
    assert_eq!(
        full.update(&text(&format!("{edited}!"), "")).conflicts,
        [Conflict::Content]
    );
}

/// One step of a mapper script.
#[derive(Debug, Clone)]
enum Step {
    Content(String),
    Reasoning(String),
    /// Start a call; `Some(id)`: the format carries an id, set after the (partial) name.
    Start(Option<String>),
    PartialName(String),
    Name(String),
    Id(String),
    Arguments(String),
    End,
}

fn piece() -> impl Strategy<Value = String> {
    "[a-z é😀\u{301}\"{}:]{1,4}"
}

/// A script: text, then calls (each: start, partial name, name, id, argument pieces, end),
/// with text pieces between.
fn script() -> impl Strategy<Value = Vec<Step>> {
    let call = (
        prop::option::of("[a-z0-9é]{1,4}"),
        "[a-zé_]{1,6}",
        prop::collection::vec(piece(), 0..4),
        any::<bool>(),
    )
        .prop_map(|(id, name, arguments, end)| {
            let mut steps = vec![Step::Start(id.clone())];
            let cut = name.char_indices().nth(1).map_or(name.len(), |(i, _)| i);
            steps.push(Step::PartialName(name[..cut].to_owned()));
            steps.push(Step::Name(name));
            steps.extend(id.map(Step::Id));
            steps.extend(arguments.into_iter().map(Step::Arguments));
            if end {
                steps.push(Step::End);
            }
            steps
        });
    let text = prop_oneof![
        piece().prop_map(Step::Content),
        piece().prop_map(Step::Reasoning)
    ];
    prop::collection::vec(prop_oneof![text.prop_map(|s| vec![s]), call], 0..6)
        .prop_map(|groups| groups.into_iter().flatten().collect())
}

/// The mapper: replays the first steps into a fresh builder.
fn replay(steps: &[Step], partial: bool) -> PartialMessage {
    let mut builder = MessageBuilder::new();
    for step in steps {
        match step {
            Step::Content(t) => builder.push_content(t),
            Step::Reasoning(t) => builder.push_reasoning(t),
            Step::Start(id) => {
                builder.start_tool_call();
                if id.is_some() {
                    builder.expect_id();
                }
            }
            Step::PartialName(n) => builder.set_partial_name(n),
            Step::Name(n) => builder.set_name(n),
            Step::Id(id) => builder.set_id(id),
            Step::Arguments(t) => builder.push_arguments(t),
            Step::End => builder.end_tool_call(),
        }
    }
    builder.finish(partial)
}

/// Every field of `later` extends the same field of `earlier`.
fn extends(later: &ChatMessage, earlier: &ChatMessage) -> bool {
    later.content.starts_with(&earlier.content)
        && later
            .reasoning_content
            .starts_with(&earlier.reasoning_content)
        && later.tool_calls.len() >= earlier.tool_calls.len()
        && later
            .tool_calls
            .iter()
            .zip(&earlier.tool_calls)
            .all(|(l, e)| l.id == e.id && l.name == e.name && l.arguments.starts_with(&e.arguments))
}

fn check_fragments(delta: &ChatDelta) {
    // Fragments are `String`s: they hold whole code points by construction; make sure no
    // replacement character sneaked in from a lossy conversion.
    let texts = [&delta.content, &delta.reasoning_content];
    for text in texts.into_iter().flatten() {
        assert!(!text.contains('\u{fffd}'));
    }
}

proptest! {
    /// Growing snapshots from a mapper script: no conflicts, the accumulated deltas equal each
    /// snapshot's stable view, nothing is retracted, and the end equals the final message.
    #[test]
    fn growing_snapshots_stream_exactly(steps in script(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8), window in prop_oneof![Just(4usize), Just(usize::MAX)]) {
        let mut ends: Vec<usize> = cuts.iter().map(|c| c.index(steps.len() + 1)).collect();
        ends.sort_unstable();
        ends.push(steps.len());
        let mut tracker = DeltaTracker::with_config(TrackerConfig { verify_window: window });
        let mut acc = DeltaAccumulator::new();
        let mut previous = ChatMessage::assistant();
        for &end in &ends {
            let snapshot = replay(&steps[..end], end < steps.len());
            let update = tracker.update(&snapshot);
            prop_assert!(update.conflicts.is_empty(), "{:?}", update.conflicts);
            if let Some(delta) = &update.delta {
                check_fragments(delta);
                acc.apply(delta).unwrap();
            }
            prop_assert_eq!(acc.message(), &snapshot.stable_message());
            prop_assert!(extends(acc.message(), &previous));
            previous = acc.message().clone();
        }
        let last = replay(&steps, false);
        prop_assert_eq!(acc.into_message(), last.to_message());
    }

    /// Arbitrary (non-monotone) snapshots: the tracker never panics, never retracts, and whenever
    /// it reports no conflict the accumulated deltas equal the snapshot's stable view.
    #[test]
    fn arbitrary_snapshots_never_retract(
        snapshots in prop::collection::vec(
            ("[aé😀]{0,4}", "[e😀]{0,3}", prop::collection::vec(("[ab]{0,1}", "[fg]", any::<bool>(), "[{é😀]{0,3}"), 0..3)),
            1..8,
        )
    ) {
        let mut tracker = DeltaTracker::with_config(TrackerConfig { verify_window: usize::MAX });
        let mut acc = DeltaAccumulator::new();
        let mut previous = ChatMessage::assistant();
        for (content, reasoning, calls) in snapshots {
            let snapshot = PartialMessage {
                content,
                reasoning_content: reasoning,
                tool_calls: calls.into_iter().map(|(id, name, final_, args)| call(&id, &name, final_, &args)).collect(),
            };
            let update = tracker.update(&snapshot);
            if let Some(delta) = &update.delta {
                acc.apply(delta).unwrap();
            }
            prop_assert!(extends(acc.message(), &previous));
            if update.conflicts.is_empty() {
                prop_assert_eq!(acc.message(), &snapshot.stable_message());
            }
            previous = acc.message().clone();
        }
    }
}
