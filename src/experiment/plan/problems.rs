//! Collecting problems instead of stopping at the first, so the user sees all of them at once,
//! each as `file:line: message`; and the checks every named table shares.

use std::collections::BTreeSet;

use toml::Spanned;

use super::super::file::{Problem, Source};

/// Collects problems, each once.
pub(super) struct Problems<'a> {
    pub source: &'a Source,
    pub list: Vec<Problem>,
}

impl Problems<'_> {
    /// A problem at the value `spanned`.
    pub fn at<T>(&mut self, spanned: &Spanned<T>, message: impl Into<String>) {
        let at = self.source.at_span(spanned.span());
        self.push(at, message);
    }

    /// A problem at `at` (`file:line`).
    pub fn push(&mut self, at: String, message: impl Into<String>) {
        let p = Problem {
            at,
            message: message.into(),
        };
        if !self.list.contains(&p) {
            self.list.push(p);
        }
    }

    /// `file:1`, for problems with no better place.
    pub fn file_start(&self) -> String {
        format!("{}:1", self.source.path.display())
    }
}

/// Checks the name of a target, config, setup or the experiment.
pub(super) fn check_name(problems: &mut Problems<'_>, what: &str, name: &Spanned<String>) {
    let n = name.get_ref();
    let ok = !n.is_empty()
        && n.len() <= 64
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok {
        problems.at(
            name,
            format!(
                "{what} name {n:?} is not allowed: use letters, digits, '-', '_' and '.' (max 64)"
            ),
        );
    }
}

/// Each name once.
pub(super) fn unique<'n>(
    problems: &mut Problems<'_>,
    what: &str,
    names: impl Iterator<Item = &'n Spanned<String>>,
) {
    let mut seen = BTreeSet::new();
    for n in names {
        if !seen.insert(n.get_ref().clone()) {
            problems.at(n, format!("{what} {:?} is defined twice", n.get_ref()));
        }
    }
}
