//! `unguard.yaml` for fixtures, built instead of hand-written per file:
//! [`SpecBuilder`] for the `test:` section and the list, [`Mutation`] for
//! one entry. Every value is written as a single-quoted YAML scalar (no
//! escapes, `'` doubled), so a `find` is taken exactly as the test wrote it.

/// A value as a single-quoted YAML scalar.
pub fn q(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// One entry of `mutations:`.
#[derive(Debug, Clone)]
pub struct Mutation {
    id: String,
    control: String,
    rule: Option<String>,
    file: String,
    find: Option<(String, String)>,
    lines: Vec<String>,
}

/// A mutation `id` of `file` that replaces `find` with `replace`; its
/// control is `control <id>` unless [`Mutation::control`] says otherwise.
pub fn mutation(id: &str, file: &str, find: &str, replace: &str) -> Mutation {
    Mutation::new(id, file).find(find, replace)
}

impl Mutation {
    /// A mutation `id` of `file` with no `find` yet (add one, or the
    /// matcher's keys as [`Mutation::line`]s).
    pub fn new(id: &str, file: &str) -> Mutation {
        Mutation {
            id: id.into(),
            control: format!("control {id}"),
            rule: None,
            file: file.into(),
            find: None,
            lines: Vec::new(),
        }
    }

    pub fn control(mut self, control: &str) -> Mutation {
        self.control = control.into();
        self
    }

    pub fn rule(mut self, rule: &str) -> Mutation {
        self.rule = Some(rule.into());
        self
    }

    /// A literal `find` and its `replace`.
    pub fn find(mut self, find: &str, replace: &str) -> Mutation {
        self.find = Some((find.into(), replace.into()));
        self
    }

    /// A raw line under the entry, as written (`canary: false`, `timeout:
    /// 15s`, `regex: '…'`).
    pub fn line(mut self, line: &str) -> Mutation {
        self.lines.push(line.into());
        self
    }

    /// Raw lines under the entry.
    pub fn lines(mut self, lines: &[&str]) -> Mutation {
        self.lines.extend(lines.iter().map(|l| l.to_string()));
        self
    }

    /// The entry as YAML, indented for the list.
    pub fn yaml(&self) -> String {
        let mut s = format!("  - id: {}\n    control: {}\n", self.id, q(&self.control));
        if let Some(rule) = &self.rule {
            s.push_str(&format!("    rule: {}\n", q(rule)));
        }
        s.push_str(&format!("    file: {}\n", self.file));
        if let Some((find, replace)) = &self.find {
            s.push_str(&format!(
                "    find: {}\n    replace: {}\n",
                q(find),
                q(replace)
            ));
        }
        for l in &self.lines {
            s.push_str(&format!("    {l}\n"));
        }
        s
    }
}

/// A whole `unguard.yaml`, version 1.
#[derive(Debug, Clone)]
pub struct SpecBuilder {
    test: Vec<(String, String)>,
    env: Vec<(String, String)>,
    mutations: Vec<Mutation>,
    tail: String,
}

impl SpecBuilder {
    /// A spec whose suite is `command` (a string, run by `sh -c`).
    pub fn new(command: &str) -> SpecBuilder {
        SpecBuilder {
            test: vec![("command".into(), q(command))],
            env: Vec::new(),
            mutations: Vec::new(),
            tail: String::new(),
        }
    }

    /// A spec whose `test.command` is the YAML `command` as written (an
    /// argv list `[python3, run.py]`, a quoted string).
    pub fn command_yaml(command: &str) -> SpecBuilder {
        let mut s = SpecBuilder::new("");
        s.test[0].1 = command.into();
        s
    }

    /// A key of the `test:` section, its value written as given.
    pub fn test_key(mut self, key: &str, value: &str) -> SpecBuilder {
        self.test.push((key.into(), value.into()));
        self
    }

    /// `test.preset` (`generic`, `pytest`).
    pub fn preset(self, preset: &str) -> SpecBuilder {
        self.test_key("preset", preset)
    }

    /// `test.timeout` (`60s`, `auto`).
    pub fn timeout(self, timeout: &str) -> SpecBuilder {
        self.test_key("timeout", timeout)
    }

    /// `test.junit`.
    pub fn junit(self, junit: &str) -> SpecBuilder {
        let junit = q(junit);
        self.test_key("junit", &junit)
    }

    /// One variable of `test.env`.
    pub fn env(mut self, key: &str, value: &str) -> SpecBuilder {
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn mutation(mut self, m: Mutation) -> SpecBuilder {
        self.mutations.push(m);
        self
    }

    pub fn mutations(mut self, ms: impl IntoIterator<Item = Mutation>) -> SpecBuilder {
        self.mutations.extend(ms);
        self
    }

    /// Top-level YAML after the list (`gate:`, `thresholds:`), as written.
    pub fn tail(mut self, yaml: &str) -> SpecBuilder {
        self.tail.push_str(yaml);
        self
    }

    pub fn build(&self) -> String {
        let mut s = String::from("version: 1\ntest:\n");
        for (k, v) in &self.test {
            s.push_str(&format!("  {k}: {v}\n"));
        }
        if !self.env.is_empty() {
            s.push_str("  env:\n");
            for (k, v) in &self.env {
                s.push_str(&format!("    {k}: {}\n", q(v)));
            }
        }
        s.push_str("mutations:\n");
        for m in &self.mutations {
            s.push_str(&m.yaml());
        }
        s.push_str(&self.tail);
        s
    }
}

/// The mutants of the [`super::SIX_FN_APP`] fixture: one `m-a` … `m-f` per
/// function, each turning `return N` into `return 0`.
pub fn six_fn_mutations() -> Vec<Mutation> {
    ["a", "b", "c", "d", "e", "f"]
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let find = format!("return {}", i + 1);
            mutation(&format!("m-{f}"), "app.py", &find, "return 0")
        })
        .collect()
}

/// The spec of the [`super::SIX_FN_APP`] fixture with `mutations`:
/// `python3 check.py`, generic preset, 20 s.
pub fn six_fn_spec_of(mutations: impl IntoIterator<Item = Mutation>) -> SpecBuilder {
    SpecBuilder::new("python3 check.py")
        .preset("generic")
        .timeout("20s")
        .mutations(mutations)
}

/// The spec of the [`super::SIX_FN_APP`] fixture with its six mutants.
pub fn six_fn_spec() -> SpecBuilder {
    six_fn_spec_of(six_fn_mutations())
}
