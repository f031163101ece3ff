//! Reading JUnit XML reports (pytest, unittest runners, jest-junit, nextest …)
//! into the [report model](crate::outcome::reading::model).

use quick_xml::events::Event;
use quick_xml::Reader;

use crate::outcome::reading::model::{Report, ReportError, Status, TestCase};

fn attr(e: &quick_xml::events::BytesStart<'_>, key: &[u8]) -> String {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == key)
        .and_then(|a| {
            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .ok()
                .map(|v| v.into_owned())
        })
        .unwrap_or_default()
}

/// Parse a JUnit XML document.
pub fn parse(xml: &str) -> Result<Report, ReportError> {
    let mut reader = Reader::from_str(xml);
    let mut cases = Vec::new();
    let mut current: Option<TestCase> = None;
    let mut saw_root = false;
    loop {
        match reader.read_event() {
            Err(e) => {
                return Err(ReportError::Malformed {
                    position: reader.buffer_position(),
                    reason: e.to_string(),
                })
            }
            Ok(Event::Eof) => break,
            Ok(Event::Start(e)) => match e.name().as_ref() {
                b"testsuites" | b"testsuite" => saw_root = true,
                b"testcase" => {
                    current = Some(TestCase {
                        classname: attr(&e, b"classname"),
                        name: attr(&e, b"name"),
                        status: Status::Passed,
                    })
                }
                other => mark(&mut current, other),
            },
            Ok(Event::Empty(e)) => match e.name().as_ref() {
                b"testsuites" | b"testsuite" => saw_root = true,
                b"testcase" => cases.push(TestCase {
                    classname: attr(&e, b"classname"),
                    name: attr(&e, b"name"),
                    status: Status::Passed,
                }),
                other => mark(&mut current, other),
            },
            Ok(Event::End(e)) if e.name().as_ref() == b"testcase" => {
                if let Some(c) = current.take() {
                    cases.push(c);
                }
            }
            Ok(_) => {}
        }
    }
    if !saw_root {
        return Err(ReportError::NotJunit);
    }
    Ok(Report { cases })
}

fn mark(current: &mut Option<TestCase>, element: &[u8]) {
    if let Some(c) = current {
        let new = match element {
            b"failure" => Status::Failed,
            b"error" => Status::Error,
            b"skipped" => Status::Skipped,
            _ => return,
        };
        // Failure/error outrank skipped; keep the worst.
        if !(c.is_red() && new == Status::Skipped) {
            c.status = new;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::reading::model::TestPattern;

    const PYTEST: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="4">
<testcase classname="tests.test_transport" name="test_right_host_wrong_port_is_rejected" time="0.01"><failure message="assert 200 == 421">x</failure></testcase>
<testcase classname="tests.test_transport.TestOrigin" name="test_ok[a|b]" time="0.01" />
<testcase classname="tests.test_transport" name="test_skip" time="0.0"><skipped message="no"/></testcase>
<testcase classname="tests.test_auth" name="test_err" time="0.0"><error message="boom"/></testcase>
</testsuite></testsuites>"#;

    #[test]
    fn parses_statuses() {
        let r = parse(PYTEST).unwrap();
        assert_eq!(r.total(), 4);
        let red = r.red_ids();
        assert_eq!(
            red,
            vec![
                "tests.test_transport::test_right_host_wrong_port_is_rejected",
                "tests.test_auth::test_err"
            ]
        );
        assert_eq!(r.cases[2].status, Status::Skipped);
    }

    #[test]
    fn rejects_non_junit() {
        assert!(parse("<html></html>").is_err());
        assert!(
            parse("<testsuite><testcase").is_err()
                || parse("<testsuite><testcase").unwrap().total() == 0
        );
    }

    #[test]
    fn patterns() {
        let r = parse(PYTEST).unwrap();
        let c0 = &r.cases[0];
        let c1 = &r.cases[1];
        assert!(
            TestPattern::new("tests.test_transport::test_right_host_wrong_port_is_rejected")
                .matches(c0)
        );
        assert!(TestPattern::new(
            "tests/test_transport.py::test_right_host_wrong_port_is_rejected"
        )
        .matches(c0));
        assert!(TestPattern::new("tests/test_transport.py::TestOrigin::test_ok[a|b]").matches(c1));
        assert!(TestPattern::new("*wrong_port*").matches(c0));
        assert!(!TestPattern::new("*wrong_port").matches(c1));
        assert!(!TestPattern::new("tests.test_transport::test_right_host").matches(c0));
    }

    #[test]
    fn ids_are_relative_to_the_copy_and_a_whole_file_is_a_load_error() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("test")).unwrap();
        std::fs::write(root.join("test/guard.test.js"), "").unwrap();
        let file = root.join("test/guard.test.js").display().to_string();
        let xml = format!(
            r#"<testsuites><testcase name="{file}" classname="test"><failure type="testCodeFailure" message="test failed"/></testcase><testcase name="a" classname="{file}"/></testsuites>"#
        );
        let r = parse(&xml).unwrap().relative_to(&root);
        assert_eq!(r.cases[0].id(), "test/guard.test.js");
        assert_eq!(r.cases[0].status, Status::Error);
        assert_eq!(r.load_errors().len(), 1);
        assert_eq!(r.cases[1].id(), "test/guard.test.js::a");
        // A red test whose name only mentions a path stays a red test.
        let xml = format!(
            r#"<testsuite><testcase classname="t" name="reads {file}"><failure/></testcase></testsuite>"#
        );
        let r = parse(&xml).unwrap().relative_to(&root);
        assert_eq!(r.red_ids(), vec!["t::reads test/guard.test.js"]);
        assert!(r.load_errors().is_empty());
    }

    #[test]
    fn vitest_and_jest_whole_file_failures_are_load_errors() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("vt")).unwrap();
        std::fs::write(root.join("vt/guard.test.js"), "").unwrap();
        // vitest --reporter=junit: a file that failed to load.
        let r = parse(r#"<testsuites><testsuite name="vt/guard.test.js"><testcase classname="vt/guard.test.js" name="vt/guard.test.js"><failure message="SyntaxError"/></testcase></testsuite></testsuites>"#)
            .unwrap()
            .relative_to(&root);
        assert_eq!(r.load_errors().len(), 1, "{r:?}");
        assert!(r.red_ids().iter().all(|id| !id.contains("::")), "{r:?}");
        // jest-junit with reportTestSuiteErrors.
        let r = parse(r#"<testsuites><testsuite name="guard"><testcase classname="Test suite failed to run" name="vt/guard.test.js"><error message="Cannot find module"/></testcase></testsuite></testsuites>"#)
            .unwrap()
            .relative_to(&root);
        assert_eq!(r.load_errors().len(), 1, "{r:?}");
        // A real vitest test keeps its id and stays a red test.
        let r = parse(r#"<testsuites><testcase classname="vt/guard.test.js" name="guard &gt; refuses evil"><failure/></testcase></testsuites>"#)
            .unwrap()
            .relative_to(&root);
        assert!(r.load_errors().is_empty());
        assert_eq!(r.red_ids(), vec!["vt/guard.test.js::guard > refuses evil"]);
    }

    #[test]
    fn unittest_import_placeholders_are_load_errors() {
        let r = parse(r#"<testsuite><testcase classname="unittest.loader._FailedTest" name="tests.test_x"><error/></testcase><testcase classname="tests.test_y" name="import"><error/></testcase><testcase classname="tests.test_z.T" name="test_a"><error/></testcase></testsuite>"#).unwrap();
        let ids: Vec<String> = r.load_errors().iter().map(|c| c.id()).collect();
        assert_eq!(
            ids,
            vec![
                "unittest.loader._FailedTest::tests.test_x",
                "tests.test_y::import"
            ]
        );
    }
}
