//! Bounds on a run's text fields. ibench's own runs stay far below them; a document from
//! elsewhere (`ibench import`) or a flag (`--label`) may say anything, and a report repeats a
//! label or a host name in every table that names the run: a 50 MB label made `ibench report`
//! take 23.8 GB of memory. Every text field a report or `list` shows is bounded here, checked
//! at import ([`check`]) and on the command line ([`check_label`], [`check_setting_flags`]),
//! so that the work of everything that reads runs follows their size.

use std::collections::BTreeMap;

use crate::results::model::{Environment, RunResult, StepResult};

/// Longest label (`--label`, `config.label`), bytes.
pub const MAX_LABEL: usize = 4096;
/// Longest host name, bytes (a DNS name is at most 253; `ibench host price` takes 255).
pub const MAX_HOSTNAME: usize = 255;
/// Longest description of where a run ran (OS, kernel, CPU model, DBMS name, version and
/// location, ibench version) or of its experiment (name, cell, base, fingerprint), bytes.
pub const MAX_TEXT: usize = 16 << 10;
/// Most settings a run may record (PostgreSQL has about 350, MariaDB with MyRocks about 1,000).
pub const MAX_SETTINGS: usize = 10_000;
/// Longest setting name, bytes.
pub const MAX_SETTING_NAME: usize = 256;
/// Longest setting value, bytes (Galera's `wsrep_provider_options` is about 4 KiB).
pub const MAX_SETTING_VALUE: usize = 64 << 10;
/// Longest message: a run's or a step's error, a step's note, bytes.
pub const MAX_MESSAGE: usize = 64 << 10;
/// Most notes one step may have.
pub const MAX_NOTES: usize = 256;
/// Longest name a step's figures are keyed by (a DBMS counter, a wait event, an error kind),
/// bytes.
pub const MAX_NAME: usize = 256;

/// `field is N bytes, more than the MAX allowed` when `text` is longer than `max` bytes.
fn text(field: &str, text: &str, max: usize) -> Result<(), String> {
    if text.len() > max {
        return Err(format!(
            "{field} is {} bytes, more than the {max} allowed",
            text.len()
        ));
    }
    Ok(())
}

/// A label given as `flag` (`--label`), as [`check`] takes it from a document.
pub fn check_label(flag: &str, label: &str) -> Result<(), String> {
    text(flag, label, MAX_LABEL)
}

/// Settings given as repeated `flag NAME=VALUE` (`--sqlite-pragma`, `--server-option`), as
/// [`check`] takes recorded settings.
pub fn check_setting_flags(flag: &str, pairs: &[(String, String)]) -> Result<(), String> {
    if pairs.len() > MAX_SETTINGS {
        return Err(format!(
            "{flag} is given {} times, more than the {MAX_SETTINGS} allowed",
            pairs.len()
        ));
    }
    for (name, value) in pairs {
        if name.len() > MAX_SETTING_NAME {
            return Err(format!(
                "{flag} names a setting of {} bytes, more than the {MAX_SETTING_NAME} allowed",
                name.len()
            ));
        }
        let at = format!("{flag} {}", crate::output::escape::line(name));
        text(&at, value, MAX_SETTING_VALUE)?;
    }
    Ok(())
}

/// The first text field of `run` beyond its bound, as `field is N bytes, more than the MAX
/// allowed` (tags are checked with the run id, in `validate`).
pub fn check(run: &RunResult) -> Result<(), String> {
    if let Some(label) = &run.config.label {
        text("config.label", label, MAX_LABEL)?;
    }
    if let Some(e) = &run.error {
        text("error", e, MAX_MESSAGE)?;
    }
    check_environment(&run.environment)?;
    if let Some(t) = &run.experiment {
        for (field, v) in [
            ("experiment.name", &t.name),
            ("experiment.cell", &t.cell),
            ("experiment.base", &t.base),
            ("experiment.fingerprint", &t.fingerprint),
        ] {
            text(field, v, MAX_TEXT)?;
        }
        if let Some(d) = &t.duet {
            text("experiment.duet.partner", &d.partner, MAX_TEXT)?;
            if let Some(id) = &d.partner_run {
                text("experiment.duet.partner_run", id, MAX_TEXT)?;
            }
        }
    }
    if let Some(g) = &run.group {
        text("group.name", &g.name, MAX_TEXT)?;
        for (i, m) in g.members.iter().enumerate() {
            text(
                &format!("group.members[{i}].hostname"),
                &m.hostname,
                MAX_HOSTNAME,
            )?;
        }
    }
    for (i, s) in run.steps.iter().enumerate() {
        check_step(&format!("steps[{i}]"), s)?;
    }
    Ok(())
}

fn check_environment(e: &Environment) -> Result<(), String> {
    text("environment.hostname", &e.hostname, MAX_HOSTNAME)?;
    for (field, v) in [
        ("environment.ibench_version", &e.ibench_version),
        ("environment.os", &e.os),
        ("environment.kernel", &e.kernel),
        ("environment.cpu_model", &e.cpu_model),
        ("environment.dbms.name", &e.dbms.name),
        ("environment.dbms.version", &e.dbms.version),
        ("environment.dbms.location", &e.dbms.location),
    ] {
        text(field, v, MAX_TEXT)?;
    }
    check_settings("environment.dbms.settings", &e.dbms.settings)
}

/// At most [`MAX_SETTINGS`] settings, each name and value within its bound.
fn check_settings(field: &str, settings: &BTreeMap<String, String>) -> Result<(), String> {
    if settings.len() > MAX_SETTINGS {
        return Err(format!(
            "{field} has {} settings, more than the {MAX_SETTINGS} allowed",
            settings.len()
        ));
    }
    for (name, value) in settings {
        if name.len() > MAX_SETTING_NAME {
            return Err(format!(
                "{field} names a setting of {} bytes, more than the {MAX_SETTING_NAME} allowed",
                name.len()
            ));
        }
        let at = format!("{field}[{:?}]", crate::output::escape::line(name));
        text(&at, value, MAX_SETTING_VALUE)?;
    }
    Ok(())
}

fn check_step(at: &str, s: &StepResult) -> Result<(), String> {
    if let Some(e) = &s.error {
        text(&format!("{at}.error"), e, MAX_MESSAGE)?;
    }
    if s.notes.len() > MAX_NOTES {
        return Err(format!(
            "{at}.notes has {} notes, more than the {MAX_NOTES} allowed",
            s.notes.len()
        ));
    }
    for (i, n) in s.notes.iter().enumerate() {
        text(&format!("{at}.notes[{i}]"), n, MAX_MESSAGE)?;
    }
    let names = s
        .dbms_counters
        .keys()
        .map(|k| ("dbms_counters", k))
        .chain(s.wait_events.keys().map(|k| ("wait_events", k)))
        .chain(s.errors.keys().map(|k| ("errors", k)));
    for (kind, name) in names {
        if name.len() > MAX_NAME {
            return Err(format!(
                "{at}.{kind} names a figure of {} bytes, more than the {MAX_NAME} allowed",
                name.len()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_names_the_field_the_size_and_the_bound() {
        assert!(check_label("--label", &"x".repeat(MAX_LABEL)).is_ok());
        assert_eq!(
            check_label("--label", &"x".repeat(MAX_LABEL + 1)).unwrap_err(),
            "--label is 4097 bytes, more than the 4096 allowed"
        );
        let mut settings = BTreeMap::new();
        settings.insert("a\nb".to_string(), "v".repeat(MAX_SETTING_VALUE + 1));
        let e = check_settings("s", &settings).unwrap_err();
        assert_eq!(
            e,
            "s[\"a\\\\x0ab\"] is 65537 bytes, more than the 65536 allowed"
        );
    }
}
