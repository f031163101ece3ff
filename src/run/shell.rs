//! Quoting a value as one `sh` word: the one quoter for every command
//! unguard writes (placeholders expanded into a shell command, the lock
//! file's holder record, the commands `init` and error messages propose).
//! A leaf: it uses nothing else of unguard.

/// `value` as one shell word: bare when it needs no quoting, else in
/// single quotes.
pub fn quote(value: &str) -> String {
    if !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c))
    {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(quote("/tmp/a-b/x.xml"), "/tmp/a-b/x.xml");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}
