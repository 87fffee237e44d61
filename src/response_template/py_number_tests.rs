use super::*;

#[test]
fn ints_like_python() {
    assert_eq!(py_int(" 42 "), Some(42));
    assert_eq!(py_int("+5"), Some(5));
    assert_eq!(py_int("-1_000"), Some(-1000));
    assert_eq!(py_int("007"), Some(7));
    assert_eq!(py_int("٣"), Some(3));
    assert_eq!(py_int("\u{a0}12\u{2003}"), Some(12));
    assert_eq!(py_int("𝟗"), Some(9));
    for bad in [
        "",
        "3.0",
        "0x1F",
        "1__0",
        "_1",
        "1_",
        "- 5",
        "abc",
        "²",
        "99999999999999999999",
    ] {
        assert_eq!(py_int(bad), None, "{bad}");
    }
}

#[test]
fn floats_like_python() {
    assert_eq!(py_float(" 3.25 "), Some(3.25));
    assert_eq!(py_float("1_0.5"), Some(10.5));
    assert_eq!(py_float("1e1_0"), Some(1e10));
    assert_eq!(py_float(".5"), Some(0.5));
    assert_eq!(py_float("5."), Some(5.0));
    assert_eq!(py_float("1.e3"), Some(1000.0));
    assert_eq!(py_float("٣.٥"), Some(3.5));
    for bad in [
        "",
        "1_.5",
        "1._5",
        "inf",
        "-Infinity",
        "nan",
        "1e400",
        "0x1p3",
        "abc",
        ".",
    ] {
        assert_eq!(py_float(bad), None, "{bad}");
    }
}

#[test]
fn bools_like_the_reference() {
    assert!(py_bool("TRUE"));
    assert!(py_bool("1"));
    for no in ["yes", "false", "0", "garbage", "", " true"] {
        assert!(!py_bool(no), "{no}");
    }
}
