//! Targets: the DBMS's own parameters (the engine), and for a server its binaries, version and
//! what its parameters need (MyRocks' plugin), each problem at the key that causes it.

use std::path::{Path, PathBuf};

use super::super::file::TargetTable;
use super::problems::Problems;
use super::url::{self, External};
use crate::dbms::{DbmsKind, Params, Setting, TargetSettings};
use crate::server::{Binaries, BinaryField, Refusal, ServerFamily, ServerSetting, ServerSettings};

/// A target, checked.
pub(super) struct Target {
    /// The DBMS: `dbms`, else what `url`'s scheme names.
    pub kind: DbmsKind,
    /// A server given by URL, which ibench does not start (`None`: managed or embedded).
    pub external: Option<External>,
    /// The DBMS's parameters from the target table alone (an embedded DBMS's options come
    /// from the config, per cell).
    pub params: Params,
    /// Its server family (`None`: embedded).
    pub family: Option<&'static dyn ServerFamily>,
    /// Its binary directory (`None`: the family's default locations).
    pub bin_dir: Option<PathBuf>,
    /// Where the server's data directory goes (`None`: beside the results).
    pub data_dir: Option<PathBuf>,
    /// The account its server runs as, when one is named.
    pub user: Option<String>,
}

/// A `data_dir` resolved against the experiment file's directory `dir`; a problem at its
/// line when it is not a directory.
pub(super) fn data_dir(
    p: &mut Problems<'_>,
    value: Option<&toml::Spanned<String>>,
    dir: &Path,
) -> Option<PathBuf> {
    let v = value?;
    let path = dir.join(v.get_ref());
    let root = ServerSettings {
        data_root: Some(&path),
        ..Default::default()
    };
    if let Some(Refusal::NotADirectory(path)) = root.check(&mut |_, _| {}).pop().map(|p| p.refusal)
    {
        p.at(
            v,
            format!(
                "data_dir {} is not a directory: create (or mount) it first",
                path.display()
            ),
        );
        return None;
    }
    Some(path)
}

/// The target settings of `t` without any config: its engine.
pub(super) fn settings(t: &TargetTable) -> TargetSettings {
    TargetSettings {
        engine: t.engine.as_ref().map(|e| e.get_ref().clone()),
        ..Default::default()
    }
}

/// Checks `t`'s parameters, binaries, version and plugin; `dir` is the experiment file's
/// directory (a relative `bin_dir` is relative to it).
pub(super) fn check(p: &mut Problems<'_>, t: &TargetTable, dir: &Path) -> Target {
    let (kind, server_url) = url::kind(p, t);
    let name = t.name.get_ref();
    let params = match kind.params(&settings(t)) {
        Ok(params) => params,
        Err(e) => {
            let at = match (&e.setting, &t.engine) {
                (Setting::Engine, Some(engine)) => p.source.at_span(engine.span()),
                _ => p.source.at_span(url::kind_span(t)),
            };
            p.push(at, format!("target {name}: {}", e.message));
            Params::new()
        }
    };
    if let Some(v) = &t.start_timeout_seconds
        && !(1..=crate::request::MAX_SECONDS).contains(v.get_ref())
    {
        p.at(
            v,
            format!(
                "target {name}: start_timeout_seconds {} is out of range: expected 1..={}",
                v.get_ref(),
                crate::request::MAX_SECONDS
            ),
        );
    }
    let family = crate::server::family(kind);
    let data_dir = data_dir(p, t.data_dir.as_ref(), dir);
    let mut target = Target {
        kind,
        external: None,
        params,
        family,
        bin_dir: None,
        data_dir,
        user: None,
    };
    if let Some(server_url) = server_url {
        target.external = Some(url::external(p, t, server_url, target.data_dir.take(), dir));
        return target;
    }
    url::refuse_url_keys(p, t);
    let Some(family) = family else {
        // Embedded: nothing to find.
        for (value, what) in [
            (&t.bin_dir, "bin_dir"),
            (&t.version, "version"),
            (&t.data_dir, "data_dir"),
            (&t.server_user, "server_user"),
        ] {
            if let Some(v) = value {
                p.at(
                    v,
                    format!("{what} is for server targets: {kind} is built into ibench"),
                );
            }
        }
        return target;
    };
    let bin_dir = t.bin_dir.as_ref().map(|b| dir.join(b.get_ref()));
    let version = t.version.as_ref().map(|v| v.get_ref().as_str());
    match Binaries::locate(family, bin_dir.as_deref(), version, "bin_dir") {
        Ok(b) => target.bin_dir = b.dir,
        Err(e) => {
            let at = match (e.field, &t.bin_dir, &t.version) {
                (BinaryField::BinDir, Some(b), _) => p.source.at_span(b.span()),
                (BinaryField::Version, _, Some(v)) => p.source.at_span(v.span()),
                _ => p.source.at_span(url::kind_span(t)),
            };
            p.push(at, format!("target {name}: {}", e.message));
        }
    }
    let user = t.server_user.as_ref();
    let problems = ServerSettings {
        family: Some(family),
        user: user.map(|u| u.get_ref().as_str()),
        params: Some(&target.params),
        ..Default::default()
    }
    .check(&mut |_, w| eprintln!("warning: target {name}: server_user {w}"));
    target.user = user.map(|u| u.get_ref().clone());
    // The account and the engine are refused in words.
    for problem in problems {
        let Refusal::Said(msg) = problem.refusal else {
            continue;
        };
        if let (ServerSetting::User, Some(user)) = (problem.setting, user) {
            p.at(user, format!("target {name}: server_user {msg}"));
            target.user = None;
        } else {
            let at = t.engine.as_ref().map_or(url::kind_span(t), |e| e.span());
            p.push(p.source.at_span(at), format!("target {name}: {msg}"));
        }
    }
    target
}
