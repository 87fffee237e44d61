use crate::message::{
    check_stream, Conflict, MessageBuilder, PartialMessage, StreamMismatch, StreamProblem,
};

fn content(text: &str) -> PartialMessage {
    PartialMessage {
        content: text.into(),
        ..PartialMessage::default()
    }
}

#[test]
fn accepts_growing_snapshots_and_returns_the_accumulation() {
    let mut builder = MessageBuilder::new();
    builder.push_content("Hi");
    builder.set_name("f");
    builder.push_arguments("{");
    let partial = builder.finish(true);
    let mut builder = MessageBuilder::new();
    builder.push_content("Hi");
    builder.set_name("f");
    builder.push_arguments("{}");
    let done = builder.finish(false);
    let message = check_stream([&content(""), &content("H"), &partial, &done]).unwrap();
    assert_eq!(message, done.to_message());
}

#[test]
fn reports_the_step_of_a_retraction() {
    let snapshots = [content("ab"), content("abc"), content("ax")];
    let error = check_stream(&snapshots).unwrap_err();
    assert_eq!(
        error,
        StreamMismatch {
            step: 2,
            problem: StreamProblem::Conflicts(vec![Conflict::Content])
        }
    );
    assert_eq!(
        error.to_string(),
        "stream step 2: content does not extend the streamed content"
    );
}
