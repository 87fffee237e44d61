//! Unit and property tests of the message layer, one file per module.

mod builder;
mod chat_message;
mod compare;
mod delta;
mod heal;
mod python;
mod request;
mod stream;
mod stream_check;
