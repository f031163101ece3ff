//! What a run left behind, read into one model: the JUnit report
//! ([`junit`], whose `Report` every verdict rule reads), `go test -json`
//! events ([`go_test_json`]), libtest's text ([`libtest_text`]), and the
//! runner's summary line and load errors in the log ([`suite_log`]).

pub mod go_test_json;
pub mod junit;
pub mod libtest_text;
pub mod suite_log;
