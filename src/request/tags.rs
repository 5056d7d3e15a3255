//! Provenance tags of a run (`--tag commit=abc123`): what the user says the run was made
//! with (a commit, a build, a branch). Stored with the run (its document's `config.tags`
//! and the store's `run_tags` table), shown by `list`, `show` and reports, filtered on by
//! `ibench list --tag`, and an order for `ibench history --order tag:KEY`.

use std::collections::BTreeMap;

/// Longest tag key.
pub const MAX_KEY: usize = 64;
/// Longest tag value, bytes.
pub const MAX_VALUE: usize = 256;
/// Most tags one run may have.
pub const MAX_TAGS: usize = 32;

/// A run's tags, by key.
pub type Tags = BTreeMap<String, String>;

/// Whether `key` is a tag key: 1 to 64 of `a-z 0-9 _ . -`.
pub fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= MAX_KEY
        && key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.-".contains(&b))
}

/// Parses `KEY=VALUE` (clap value parser): a valid key, and a value of at most 256 bytes
/// without control characters (it may be empty).
pub fn parse(s: &str) -> Result<(String, String), String> {
    let Some((key, value)) = s.split_once('=') else {
        return Err(format!(
            "{:?} is not a tag: expected KEY=VALUE, e.g. commit=3f2a9c1",
            crate::output::escape::line(s)
        ));
    };
    if !valid_key(key) {
        return Err(format!(
            "tag key {:?} is not allowed: expected 1 to {MAX_KEY} of a-z 0-9 _ . -",
            crate::output::escape::line(key)
        ));
    }
    if value.len() > MAX_VALUE {
        return Err(format!(
            "the value of tag {key} is {} bytes long: at most {MAX_VALUE}",
            value.len()
        ));
    }
    if value.chars().any(char::is_control) {
        return Err(format!(
            "the value of tag {key} holds a control character: {:?}",
            crate::output::escape::line(value)
        ));
    }
    Ok((key.to_string(), value.to_string()))
}

/// The tags of repeated `--tag` flags: a key given twice, or more than 32 tags, is refused.
pub fn collect(pairs: &[(String, String)]) -> Result<Tags, String> {
    if pairs.len() > MAX_TAGS {
        return Err(format!(
            "{} tags given: at most {MAX_TAGS} per run",
            pairs.len()
        ));
    }
    let mut tags = Tags::new();
    for (k, v) in pairs {
        if tags.insert(k.clone(), v.clone()).is_some() {
            return Err(format!("--tag {k} is given twice"));
        }
    }
    Ok(tags)
}

/// `k=v, k2=v2`, for tables.
pub fn text(tags: &Tags) -> String {
    tags.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_checked() {
        assert_eq!(
            parse("commit=abc=1").unwrap(),
            ("commit".into(), "abc=1".into())
        );
        assert_eq!(parse("branch=").unwrap(), ("branch".into(), "".into()));
        assert!(parse("Commit=1").unwrap_err().contains("tag key"));
        assert!(parse("=1").unwrap_err().contains("tag key"));
        assert!(parse("nokey").unwrap_err().contains("KEY=VALUE"));
        assert!(parse(&format!("{}=1", "k".repeat(65))).is_err());
        assert!(
            parse(&format!("k={}", "v".repeat(257)))
                .unwrap_err()
                .contains("257")
        );
        assert!(parse("k=a\nb").unwrap_err().contains("control"));
        let dup = [("a".to_string(), "1".to_string()), ("a".into(), "2".into())];
        assert!(collect(&dup).unwrap_err().contains("twice"));
    }
}
