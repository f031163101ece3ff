//! A `test:` block (the spec's own, or a mutation's override) resolved into a
//! [`TestConfig`]: command, preset and fail codes, timeout, JUnit path,
//! environment, check and select.

use std::time::Duration;

use serde_saphyr::Spanned;

use crate::spec::diag::Diagnostics;
use crate::spec::duration::parse_duration;
use crate::spec::model::{Command, FailCodes, Preset, Select, TestConfig, TimeoutSetting};
use crate::spec::yaml::{RawCommand, RawTest, SourceFile};

pub(super) fn resolve_command(
    src: &SourceFile,
    c: &Spanned<RawCommand>,
    diags: &mut Diagnostics,
) -> Option<Command> {
    match &c.value {
        RawCommand::Shell(s) if s.trim().is_empty() => {
            diags.push(
                src.at(c, "empty command")
                    .with_fix("give the command that runs the test suite"),
            );
            None
        }
        RawCommand::Argv(v) if v.is_empty() || v[0].trim().is_empty() => {
            diags.push(
                src.at(c, "empty argv list")
                    .with_fix("the first element is the program to run"),
            );
            None
        }
        RawCommand::Shell(s) => Some(Command::Shell(s.clone())),
        RawCommand::Argv(v) => Some(Command::Argv(v.clone())),
    }
}

/// Whether a word runs pytest (`pytest`, `py.test`, a path ending in one).
fn names_pytest(text: &str) -> bool {
    text.split(|ch: char| ch.is_whitespace() || ch == '/')
        .any(|w| w == "pytest" || w == "py.test")
}

/// Whether the command's exit code is pytest's own: pytest is its last
/// simple command, reached only through `&&` (`cd server && pytest`), with
/// nothing after it (no `|| exit 3`, `; echo`, `| tee`, `&`). A wrapper that
/// owns its exit code (or a script that merely mentions pytest) gets the
/// generic preset: any non-zero exit is a failure.
fn looks_like_pytest(c: &Command) -> bool {
    let script = match c {
        Command::Shell(s) => s.clone(),
        Command::Argv(v) => match v.as_slice() {
            [sh, flag, script, ..]
                if flag == "-c"
                    && ["sh", "bash", "dash", "zsh"]
                        .contains(&sh.rsplit('/').next().unwrap_or(sh)) =>
            {
                script.clone()
            }
            _ => return v.iter().any(|w| names_pytest(w)),
        },
    };
    let Some(simple) = crate::run::shell_line::commands(&script) else {
        return false;
    };
    let Some((last, before)) = simple.split_last() else {
        return false;
    };
    last.then.is_none()
        && last.words.iter().any(|w| names_pytest(&w.value))
        && before.iter().all(|s| s.then == Some("&&"))
}

/// A positive duration, or a diagnostic at `s` (suggesting `examples`).
pub(super) fn parse_timeout(
    src: &SourceFile,
    s: &Spanned<String>,
    examples: &str,
    diags: &mut Diagnostics,
) -> Option<Duration> {
    match parse_duration(&s.value) {
        Ok(d) if !d.is_zero() => Some(d),
        Ok(_) => {
            diags.push(
                src.at(s, "timeout must be greater than zero")
                    .with_fix(format!("write a duration like {examples}")),
            );
            None
        }
        Err(e) => {
            diags.push(
                src.at(s, format!("bad timeout `{}`: {e}", s.value))
                    .with_fix(format!("write a duration like {examples}")),
            );
            None
        }
    }
}

/// Resolve a `test:` block; with `base`, unset keys inherit from it.
pub(super) fn resolve_test(
    src: &SourceFile,
    t: &Spanned<RawTest>,
    base: Option<&TestConfig>,
    diags: &mut Diagnostics,
) -> Option<TestConfig> {
    let raw = &t.value;
    let before = diags.0.len();
    let command = match (&raw.command, base) {
        (Some(c), _) => resolve_command(src, c, diags),
        (None, Some(b)) => Some(b.command.clone()),
        (None, None) => {
            diags.push(
                src.at(t, "`test` needs a `command`")
                    .with_fix("add `command: \"python3 -m pytest -q --junitxml={junit}\"`"),
            );
            None
        }
    };
    let timeout = match &raw.timeout {
        None => base.map(|b| b.timeout).unwrap_or(TimeoutSetting::Auto),
        Some(s) if s.value.trim() == "auto" => TimeoutSetting::Auto,
        Some(s) => parse_timeout(src, s, "`45s`, `2m`, or `auto`", diags)
            .map(TimeoutSetting::Fixed)
            .unwrap_or(TimeoutSetting::Auto),
    };
    let junit = match &raw.junit {
        Some(j) if j.value.trim().is_empty() => {
            diags.push(
                src.at(j, "empty `junit` path")
                    .with_fix("use `{junit}` and pass it to the test command"),
            );
            None
        }
        Some(j) => Some(j.value.clone()),
        None => base.and_then(|b| b.junit.clone()),
    };
    let mut env = base.map(|b| b.env.clone()).unwrap_or_default();
    if let Some(e) = &raw.env {
        env.extend(e.clone());
    }
    let check = match &raw.check {
        Some(c) => resolve_command(src, c, diags),
        None => base.and_then(|b| b.check.clone()),
    };
    let select = match &raw.select {
        Some(c) => resolve_select(src, c, diags),
        None => base.map(|b| b.select.clone()).unwrap_or_default(),
    };
    let command = command?;
    let (fail_codes, preset) = match (&raw.fail_codes, &raw.preset) {
        (Some(codes), _) => {
            if codes.is_empty() || codes.contains(&0) {
                diags.push(
                    src.at(t, "`fail_codes` must list non-zero exit codes")
                        .with_fix("e.g. `fail_codes: [1]`"),
                );
            }
            (FailCodes::Only(codes.clone()), Preset::Custom)
        }
        (None, Some(p)) => match Preset::named(&p.value) {
            Some(preset) => (preset.fail_codes(), preset),
            None => {
                diags.push(
                    src.at(p, format!("unknown preset `{}`", p.value))
                        .with_fix("use `pytest` or `generic`, or set `fail_codes`"),
                );
                (FailCodes::AnyNonZero, Preset::Generic)
            }
        },
        (None, None) => match base {
            Some(b) if raw.command.is_none() => (b.fail_codes.clone(), b.preset),
            _ if looks_like_pytest(&command) => (Preset::Pytest.fail_codes(), Preset::Pytest),
            _ => (FailCodes::AnyNonZero, Preset::Generic),
        },
    };
    if diags.0.len() > before {
        return None;
    }
    Some(TestConfig {
        command,
        junit,
        timeout,
        env,
        fail_codes,
        preset,
        check,
        git: base.map(|b| b.git).unwrap_or_default(),
        select,
    })
}

/// `test.select`: `auto`, `off`, or a command template with `{tests}`.
fn resolve_select(src: &SourceFile, c: &Spanned<RawCommand>, diags: &mut Diagnostics) -> Select {
    match &c.value {
        RawCommand::Shell(s) if s.trim() == "auto" => return Select::Auto,
        RawCommand::Shell(s) if s.trim() == "off" => return Select::Off,
        _ => {}
    }
    let Some(cmd) = resolve_command(src, c, diags) else {
        return Select::Auto;
    };
    let has = |key: &str| match &cmd {
        Command::Shell(s) => s.contains(key),
        Command::Argv(v) => v.iter().any(|a| a == key),
    };
    if !has("{tests}") && !has("{files}") {
        diags.push(
            src.at(
                c,
                "`test.select` must contain `{tests}` or `{files}` (as an argument of its own in an argv list)",
            )
            .with_fix(
                "e.g. `select: \"python3 tests/run_tests.py --junit {junit} {tests}\"`, or `off`",
            ),
        );
        return Select::Auto;
    }
    Select::Template(cmd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_detection() {
        assert!(looks_like_pytest(&Command::Shell(
            "python3 -m pytest -q".into()
        )));
        assert!(looks_like_pytest(&Command::Argv(vec![
            ".venv/bin/pytest".into()
        ])));
        assert!(!looks_like_pytest(&Command::Shell(
            "python3 -m unittest".into()
        )));
        // pytest's exit code is the command's: after `&&` set-up steps.
        for own in [
            "cd server && PYTHONPATH=src python -m pytest -q",
            "pip install -q . && pytest -x\n",
            "exec pytest",
        ] {
            assert!(looks_like_pytest(&Command::Shell(own.into())), "{own}");
        }
        assert!(looks_like_pytest(&Command::Argv(vec![
            "bash".into(),
            "-c".into(),
            "cd s && pytest".into()
        ])));
        // A wrapper that owns its exit code, or one that runs more after it.
        for wrapped in [
            "pytest -q || exit 3",
            "pytest; echo done",
            "pytest | tee log",
            "pytest unit && pytest integration || true",
            "pytest &",
        ] {
            assert!(
                !looks_like_pytest(&Command::Shell(wrapped.into())),
                "{wrapped}"
            );
        }
    }
}
