//! Fingerprints: a SHA-256 of what decides a run's verdicts, so that results
//! made from different inputs are never mixed.
//!
//! [`of_run`] digests the spec's content as loaded (every mutation, its
//! resolved test config: command, env, preset, JUnit path, timeout…, and the
//! top-level `test` block) and unguard's version. It is stored once in
//! `outcomes.json` (`fingerprint`); `unguard merge` refuses shards whose
//! fingerprints differ. Paths are relative to the target root and positions
//! in the spec are left out, so the same spec on another machine (another
//! checkout dir) gives the same fingerprint, and moving a comment does not
//! change it.
//!
//! For reuse (incremental runs): [`Fingerprint`] is a builder of
//! length-prefixed, named fields (no two different field lists digest the
//! same bytes), and [`mutation_fields`] adds one mutation's inputs, so a
//! per-mutant fingerprint is `Fingerprint::new("mutant")` + its fields + the
//! bytes of its file.

use sha2::{Digest, Sha256};

use crate::spec::{MutationSpec, Spec, TestConfig};

/// The prefix of every fingerprint string: names the digest, so a later
/// change of algorithm reads as a different fingerprint, never a collision.
pub const PREFIX: &str = "sha256:";

/// A digest under construction.
pub struct Fingerprint(Sha256);

impl Fingerprint {
    /// A fingerprint of a `kind` of thing (`run`, `mutant`…): different kinds
    /// never share a digest.
    pub fn new(kind: &str) -> Fingerprint {
        let mut f = Fingerprint(Sha256::new());
        f.field("kind", kind.as_bytes());
        f
    }

    /// Add one named field. Name and value are length-prefixed.
    pub fn field(&mut self, name: &str, value: &[u8]) -> &mut Fingerprint {
        for part in [name.as_bytes(), value] {
            self.0.update((part.len() as u64).to_le_bytes());
            self.0.update(part);
        }
        self
    }

    /// `sha256:` and 64 lowercase hex digits.
    pub fn finish(self) -> String {
        let mut out = String::with_capacity(PREFIX.len() + 64);
        out.push_str(PREFIX);
        for b in self.0.finalize() {
            out.push_str(&format!("{b:02x}"));
        }
        out
    }
}

/// A test config as digested: every field that changes what runs (the
/// derived `Debug` of the resolved config; unguard's version is part of
/// every run fingerprint, so its format cannot drift unseen).
fn test_bytes(t: &TestConfig) -> Vec<u8> {
    format!("{t:?}").into_bytes()
}

/// Add mutation `m`'s inputs (not its position in the spec) to `f`.
pub fn mutation_fields(f: &mut Fingerprint, m: &MutationSpec) {
    f.field("id", m.id.as_bytes())
        .field("control", m.control.as_bytes())
        .field("rule", format!("{:?}", m.rule).as_bytes())
        .field("direction", format!("{:?}", m.direction).as_bytes())
        .field("file", m.file.as_bytes())
        .field("pattern", format!("{:?}", m.pattern).as_bytes())
        .field("replace", m.replace.as_bytes())
        .field("count", format!("{:?}", m.count).as_bytes())
        .field("canary", &[u8::from(m.canary)])
        .field("killed_by", format!("{:?}", m.killed_by).as_bytes())
        .field("timeout", format!("{:?}", m.timeout).as_bytes())
        .field("test", &test_bytes(&m.test));
}

/// The fingerprint of a run of `spec` by this unguard: its mutations in
/// order, their resolved test configs, the top-level `test` block, the
/// linked dirs and unguard's version.
pub fn of_run(spec: &Spec) -> String {
    let mut f = Fingerprint::new("run");
    f.field("unguard", env!("CARGO_PKG_VERSION").as_bytes())
        .field("test", &test_bytes(&spec.test))
        .field("link", format!("{:?}", spec.link).as_bytes())
        .field("mutations", &(spec.mutations.len() as u64).to_le_bytes());
    for m in &spec.mutations {
        mutation_fields(&mut f, m);
    }
    f.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(fields: &[(&str, &str)]) -> String {
        let mut f = Fingerprint::new("t");
        for (n, v) in fields {
            f.field(n, v.as_bytes());
        }
        f.finish()
    }

    #[test]
    fn a_fingerprint_is_stable_hex_and_depends_on_every_field() {
        let a = digest(&[("a", "1"), ("b", "2")]);
        assert_eq!(a, digest(&[("a", "1"), ("b", "2")]));
        assert!(a.starts_with(PREFIX) && a.len() == PREFIX.len() + 64, "{a}");
        assert_ne!(a, digest(&[("a", "1"), ("b", "3")]));
        assert_ne!(a, digest(&[("a", "1")]));
        // Length prefixes: moving a boundary changes the digest.
        assert_ne!(
            digest(&[("a", "12"), ("b", "")]),
            digest(&[("a", "1"), ("b", "2")])
        );
        assert_ne!(digest(&[("ab", "")]), digest(&[("a", "b")]));
        let mut other_kind = Fingerprint::new("u");
        other_kind.field("a", b"1").field("b", b"2");
        assert_ne!(a, other_kind.finish());
    }

    #[test]
    fn sha256_of_nothing_is_the_known_value() {
        // Guards the hex encoding against the published empty-input digest.
        let f = Fingerprint(Sha256::new());
        assert_eq!(
            f.finish(),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
