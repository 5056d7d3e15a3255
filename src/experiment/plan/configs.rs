//! Configs: `extends` resolved into config-file fragments and options, each setting with the
//! place it was written.

use std::path::{Path, PathBuf};

use super::super::file::{ConfigTable, Source};
use super::super::limits;
use super::problems::Problems;
use crate::server::{Located, normalize};

/// A config with `extends` resolved.
#[derive(Clone, Debug, Default)]
pub(super) struct Resolved {
    /// Fragments in order (parent's first), each with the `file:line` of its first line.
    pub fragments: Vec<Fragment>,
    /// Options in order; a later one with the same key replaced the earlier.
    pub options: Vec<(String, String, String)>,
    /// Targets this config applies to (None: all).
    pub targets: Option<Vec<String>>,
}

#[derive(Clone, Debug)]
pub(super) struct Fragment {
    pub text: String,
    /// Path shown for its lines.
    pub path: String,
    /// Line of the fragment's first line in `path`.
    pub first_line: usize,
    /// Set when the fragment is a file.
    pub file: Option<PathBuf>,
    /// A file not every user may read: what a server says of its lines (which may quote
    /// their values) is not shown.
    pub private: bool,
}

impl Fragment {
    /// Settings (`key = value` lines) of the fragment with their locations.
    pub fn settings(&self) -> Vec<Located> {
        self.text
            .lines()
            .enumerate()
            .filter_map(|(i, line)| {
                let key = setting_key(line)?;
                Some(Located {
                    key,
                    at: format!("{}:{}", self.path, self.first_line + i),
                    private: self.private,
                })
            })
            .collect()
    }
}

/// Whether `key` can be a setting's name: letters, digits, `_`, `-`, `.` (MariaDB's
/// `loose-...`, PostgreSQL's `custom.name`), and at most 128 of them.
fn name_shaped(key: &str) -> bool {
    key.len() <= 128
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// The key of a config-file line (`key = value`, `key=value`, `key value`), if it is one.
fn setting_key(line: &str) -> Option<String> {
    let t = line.trim();
    if t.is_empty() || t.starts_with(['#', ';', '[', '!']) {
        return None;
    }
    let end = t
        .find(|c: char| c == '=' || c.is_whitespace())
        .unwrap_or(t.len());
    let key = t[..end].trim();
    (!key.is_empty()).then(|| key.to_string())
}

fn option_value(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(if *b { "ON" } else { "OFF" }.to_string()),
        _ => None,
    }
}

/// Resolves `c` along `extends`; `stack` detects cycles.
pub(super) fn resolve(
    p: &mut Problems<'_>,
    c: &ConfigTable,
    all: &[&ConfigTable],
    dir: &Path,
    source: &Source,
    stack: &mut Vec<String>,
) -> Resolved {
    let name = c.name.get_ref().clone();
    if !may_extend(p, c, stack) {
        return Resolved::default();
    }
    stack.push(name.clone());
    let mut r = match &c.extends {
        None => Resolved::default(),
        Some(parent) => match all.iter().find(|x| x.name.get_ref() == parent.get_ref()) {
            Some(pc) => resolve(p, pc, all, dir, source, stack),
            None => {
                p.at(
                    parent,
                    format!(
                        "config {name} extends {:?}, which is not defined",
                        parent.get_ref()
                    ),
                );
                Resolved::default()
            }
        },
    };
    stack.pop();
    add_fragments(p, c, &mut r, dir, source);
    add_options(p, c, &mut r, source);
    if c.targets.is_some() {
        r.targets = c
            .targets
            .as_ref()
            .map(|ts| ts.iter().map(|t| t.get_ref().clone()).collect());
    }
    r
}

/// Whether `c` may be resolved below the configs of `stack`: not when it is one of them (a
/// cycle), nor when they are as many as configs may extend.
fn may_extend(p: &mut Problems<'_>, c: &ConfigTable, stack: &[String]) -> bool {
    let name = c.name.get_ref();
    if stack.contains(name) {
        p.at(
            &c.name,
            format!(
                "config {name} extends itself ({} -> {name})",
                stack.join(" -> ")
            ),
        );
        return false;
    }
    if stack.len() >= limits::MAX_EXTENDS {
        p.at(
            &c.name,
            format!(
                "config {name}: extends is more than {} configs deep",
                limits::MAX_EXTENDS
            ),
        );
        return false;
    }
    true
}

/// Adds `c`'s config-file fragments (its file, then its text) after its parents', all of them
/// together within the size limit.
fn add_fragments(
    p: &mut Problems<'_>,
    c: &ConfigTable,
    r: &mut Resolved,
    dir: &Path,
    source: &Source,
) {
    let name = c.name.get_ref();
    if c.file.is_some() && c.text.is_some() {
        p.at(
            &c.name,
            format!("config {name}: give file or text, not both"),
        );
    }
    if let Some(f) = &c.file {
        match read_fragment(dir, f.get_ref()) {
            Ok(fragment) => r.fragments.push(fragment),
            Err(FragmentError::At(line, message)) => {
                // The file's own line, never its text: it may be a file the user cannot read.
                p.push(
                    format!("{}:{line}", dir.join(f.get_ref()).display()),
                    format!("config {name}: {message}"),
                );
            }
            Err(FragmentError::File(message)) => p.at(f, format!("config {name}: {message}")),
        }
    }
    if let Some(t) = &c.text {
        let start = t.span().start;
        let rest = &source.text[start.min(source.text.len())..];
        // A multi-line string's first newline is not part of its value.
        let skip = usize::from(rest.starts_with("\"\"\"\n") || rest.starts_with("'''\n"));
        r.fragments.push(Fragment {
            text: t.get_ref().clone(),
            path: source.path.display().to_string(),
            first_line: source.line_of(start) + skip,
            file: None,
            private: false,
        });
    }
    if r.fragments.iter().map(|f| f.text.len()).sum::<usize>() > limits::MAX_CONFIG_TEXT {
        p.at(
            &c.name,
            format!(
                "config {name}: its text and files (with extends) are larger than {} MiB",
                limits::MAX_CONFIG_TEXT >> 20
            ),
        );
        r.fragments.clear();
    }
}

/// Why a config's file was not taken.
enum FragmentError {
    /// About the file as a whole.
    File(String),
    /// About its line (1-based).
    At(usize, String),
}

/// Reads the config fragment `given` (as the experiment names it): a relative path lies in
/// the experiment's directory `dir` (after `..` and links are resolved), else it is refused;
/// an absolute one may be anywhere. Every setting line must start with a setting's name: a
/// file that is not a config fragment (`/etc/shadow`) is refused at its first such line,
/// without its text.
fn read_fragment(dir: &Path, given: &str) -> Result<Fragment, FragmentError> {
    let path = dir.join(given);
    let cannot = |e: std::io::Error| {
        FragmentError::File(format!("cannot read file {}: {e}", path.display()))
    };
    if Path::new(given).is_relative() {
        let base = dir.canonicalize().map_err(cannot)?;
        let real = path.canonicalize().map_err(cannot)?;
        if !real.starts_with(&base) {
            return Err(FragmentError::File(format!(
                "file {given} is outside the experiment's directory {}: give its absolute \
                 path to use a file there",
                base.display()
            )));
        }
    }
    let text = crate::bounded::read_to_string(&path, limits::MAX_FILE_BYTES).map_err(cannot)?;
    for (i, line) in text.lines().enumerate() {
        if setting_key(line).is_some_and(|k| !name_shaped(&k)) {
            return Err(FragmentError::At(
                i + 1,
                format!(
                    "line {} of file {given} is not a setting (`name = value`, a name of \
                     letters, digits, '_', '-' and '.'); the line is not shown",
                    i + 1
                ),
            ));
        }
    }
    use std::os::unix::fs::MetadataExt;
    let private = std::fs::metadata(&path).map_or(true, |m| m.mode() & 0o004 == 0);
    Ok(Fragment {
        text,
        path: path.display().to_string(),
        first_line: 1,
        file: Some(path),
        private,
    })
}

/// Adds `c`'s options after its parents', each replacing an earlier one of the same key; an
/// option must be a string, number or boolean on one line.
fn add_options(p: &mut Problems<'_>, c: &ConfigTable, r: &mut Resolved, source: &Source) {
    let name = c.name.get_ref();
    for (k, v) in &c.options {
        let key = k.get_ref();
        let bad_key = key.is_empty() || key.contains(['=', ' ', '\t', '\n', '\r', '[', ']', '#']);
        let value = option_value(v.get_ref());
        match &value {
            _ if bad_key => p.at(
                k,
                format!("config {name}: option name {key:?} is not allowed"),
            ),
            None => p.at(
                v,
                format!("config {name}: option {key} must be a string, number or boolean"),
            ),
            _ if matches!(v.get_ref(), toml::Value::Float(f) if !f.is_finite()) => p.at(
                v,
                format!("config {name}: option {key} is not a number: expected a finite number"),
            ),
            Some(s) if s.contains(['\n', '\r']) => p.at(
                v,
                format!("config {name}: option {key} must be on one line"),
            ),
            Some(s) => {
                let nk = normalize(key);
                r.options.retain(|(ok, _, _)| normalize(ok) != nk);
                r.options
                    .push((key.clone(), s.clone(), source.at_span(k.span())));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setting_keys_of_config_lines() {
        assert_eq!(
            setting_key("innodb_io_capacity = 200"),
            Some("innodb_io_capacity".into())
        );
        assert_eq!(setting_key("skip-log-bin"), Some("skip-log-bin".into()));
        assert_eq!(setting_key("# comment"), None);
        assert_eq!(setting_key("[mysqld]"), None);
        assert_eq!(
            setting_key("shared_buffers=1GB"),
            Some("shared_buffers".into())
        );
    }
}
