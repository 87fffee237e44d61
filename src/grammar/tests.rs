//! Unit tests of the grammar generator's parts.

use super::ir::{CharSet, Expr};

#[test]
fn charset_complement_round_trips() {
    let set = CharSet::new([('a', 'z'), ('0', '9')]).unwrap();
    let comp = set.complement().unwrap();
    assert!(!comp.contains('q'));
    assert!(comp.contains('-'));
    assert_eq!(comp.complement().unwrap(), set);
}

#[test]
fn seq_merges_literals() {
    assert_eq!(
        Expr::seq([Expr::lit("a"), Expr::lit("b"), Expr::Empty]),
        Expr::lit("ab")
    );
}
