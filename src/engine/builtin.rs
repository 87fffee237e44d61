//! The built-in engine `chatparse`: the parser generated from the case's chat template
//! ([`ChatParser`]), one shot and streamed ([`ChatStream`](crate::generate::ChatStream)).
//!
//! Its stream reports, after every chunk that ends on a character boundary, the stable part
//! of the parse of the prefix so far as its snapshot: the harness checks that the deltas
//! reproduce it after every such chunk (the streaming rule of the fixtures and vectors). It
//! takes chunks that cut code points.

use crate::generate::ChatParser;

use super::{Engine, EngineCase, EngineError, EngineSession, OneShot, StreamRun};

/// The engine's name.
pub const NAME: &str = "chatparse";

/// The generated parser as an engine.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChatParserEngine;

struct Session {
    parser: ChatParser,
}

impl Engine for ChatParserEngine {
    fn name(&self) -> &str {
        NAME
    }

    fn byte_chunks(&self) -> bool {
        true
    }

    fn open<'s>(
        &'s self,
        case: &'s EngineCase<'_>,
    ) -> Result<Box<dyn EngineSession + 's>, EngineError> {
        let chat = case
            .chat
            .ok_or_else(|| EngineError::Unsupported("the case has no chat template".into()))?;
        let parser = ChatParser::new(chat.template, chat.analysis, &case.request)
            .map_err(|e| EngineError::Failed(format!("cannot build the parser: {e}")))?;
        Ok(Box::new(Session { parser }))
    }
}

impl EngineSession for Session {
    fn one_shot(&mut self, output: &str, partial: bool) -> Result<OneShot, EngineError> {
        Ok(if partial {
            OneShot {
                message: self.parser.parse_partial(output).to_message(),
                problem: None,
            }
        } else {
            let parsed = self.parser.parse(output);
            OneShot {
                message: parsed.message,
                problem: Some(parsed.problem.map(|p| p.to_string())),
            }
        })
    }

    fn stream(&mut self, chunks: &[&[u8]], finish: bool) -> Result<StreamRun, EngineError> {
        let output: Vec<u8> = chunks.concat();
        let text = std::str::from_utf8(&output).ok();
        let mut run = StreamRun::default();
        let mut stream = self.parser.stream();
        let mut at = 0;
        for chunk in chunks {
            run.deltas.push(stream.feed(chunk).into_iter().collect());
            at += chunk.len();
            run.snapshots.push(
                text.and_then(|text| text.get(..at))
                    .map(|prefix| self.parser.parse_partial(prefix).stable_message()),
            );
        }
        if finish {
            let (delta, parsed) = stream.finish();
            run.deltas.push(delta.into_iter().collect());
            run.message = Some(parsed.message);
        } else {
            run.message = run.snapshots.last().cloned().flatten();
        }
        Ok(run)
    }
}
