//! Targets given by URL: servers ibench does not start (`url = "..."`, as `ibench run --url`).
//! What only a managed server takes (binaries, version, account, allocators, a config
//! fragment, the setup's server keys) is refused at its key; a config's options only unless
//! the experiment allows server changes, and then they are settings of ibench's own sessions.

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::super::file::TargetTable;
use super::problems::Problems;
use super::setups::Setup;
use crate::dbms::DbmsKind;
use crate::dbms::url::ServerUrl;

/// A server given by URL, with what its host figures need.
#[derive(Clone, Debug)]
pub struct External {
    /// The server (password from the DBMS's environment variable, never shown or stored).
    pub url: ServerUrl,
    /// The file holding its pid on this host, read when each cell starts.
    pub pid_file: Option<PathBuf>,
    /// Its data directory: size and device.
    pub data_dir: Option<PathBuf>,
    /// Cells may replace tables of the benchmark's names that ibench did not create
    /// (`drop_existing`, as `--drop-existing`).
    pub drop_existing: bool,
}

impl External {
    /// The server's pid now (its pid file's first line), when a pid file is given.
    pub fn pid(&self) -> anyhow::Result<Option<u32>> {
        match &self.pid_file {
            Some(file) => Ok(Some(crate::launch::pid_from_file(file, "server_pid_file")?)),
            None => Ok(None),
        }
    }
}

/// Where problems with a target's DBMS point: `dbms`, else `url`, else its name.
pub(super) fn kind_span(t: &TargetTable) -> Range<usize> {
    match (&t.dbms, &t.url) {
        (Some(d), _) => d.span(),
        (None, Some(u)) => u.span(),
        (None, None) => t.name.span(),
    }
}

/// The target's DBMS (`dbms`, else `url`'s scheme) and its URL, parsed, with the password
/// from the DBMS's environment variable; a problem when neither names one, when they differ,
/// or when the file holds a password.
pub(super) fn kind(p: &mut Problems<'_>, t: &TargetTable) -> (DbmsKind, Option<ServerUrl>) {
    let name = t.name.get_ref();
    let given = t.dbms.as_ref().map(|d| *d.get_ref());
    let Some(text) = &t.url else {
        if given.is_none() {
            p.at(
                &t.name,
                format!(
                    "target {name}: give dbms = ({}) or url = \"postgres://...\" / \
                     \"mysql://...\"",
                    DbmsKind::names(true)
                ),
            );
        }
        return (given.unwrap_or_else(DbmsKind::default_embedded), None);
    };
    let fallback = given.unwrap_or_else(DbmsKind::default_embedded);
    let url = match ServerUrl::parse(text.get_ref(), "") {
        Ok(url) => url,
        Err(e) => {
            let msg = e.to_string().replacen("--url", "url", 1);
            p.at(text, format!("target {name}: {msg}"));
            return (fallback, None);
        }
    };
    if url.password().is_some() {
        p.at(
            text,
            format!(
                "target {name}: url holds a password: keep it out of the file (give it in the \
                 environment, e.g. PGPASSWORD or MYSQL_PWD)"
            ),
        );
        return (fallback, None);
    }
    let Some(kind) = DbmsKind::from_scheme(url.scheme()) else {
        let schemes: Vec<String> = DbmsKind::all()
            .iter()
            .flat_map(|k| k.url_schemes())
            .map(|s| format!("{s}://"))
            .collect();
        p.at(
            text,
            format!(
                "target {name}: url scheme {:?} is not supported: use one of {}",
                url.scheme(),
                schemes.join(", ")
            ),
        );
        return (fallback, None);
    };
    if let Some(d) = &t.dbms
        && *d.get_ref() != kind
    {
        p.at(
            d,
            format!(
                "target {name}: dbms {} does not match url, which names {}",
                d.get_ref().server_name(),
                kind.server_name()
            ),
        );
    }
    (kind, Some(url.or_password_from(kind.password_env())))
}

/// A target without `url`: `server_pid_file` and `drop_existing` are refused.
pub(super) fn refuse_url_keys(p: &mut Problems<'_>, t: &TargetTable) {
    if let Some(v) = &t.server_pid_file {
        p.at(
            v,
            format!(
                "target {}: server_pid_file is for a server given by url (ibench knows the \
                 pid of a server it starts)",
                t.name.get_ref()
            ),
        );
    }
    if let Some(v) = &t.drop_existing {
        p.at(
            v,
            format!(
                "target {}: drop_existing is for a server given by url (a server ibench \
                 starts, or an embedded scratch database, holds only the tables ibench creates)",
                t.name.get_ref()
            ),
        );
    }
}

/// A URL target: the keys of a server ibench starts refused, its pid file resolved against
/// the experiment file's directory `dir` (it must be there), `data_dir` checked already.
pub(super) fn external(
    p: &mut Problems<'_>,
    t: &TargetTable,
    url: ServerUrl,
    data_dir: Option<PathBuf>,
    dir: &Path,
) -> External {
    let name = t.name.get_ref();
    let start_timeout = t.start_timeout_seconds.as_ref().map(|v| v.span());
    for (span, key) in [
        (t.bin_dir.as_ref().map(|v| v.span()), "bin_dir"),
        (t.version.as_ref().map(|v| v.span()), "version"),
        (start_timeout, "start_timeout_seconds"),
        (t.server_user.as_ref().map(|v| v.span()), "server_user"),
    ] {
        if let Some(span) = span {
            p.push(
                p.source.at_span(span),
                format!(
                    "target {name}: {key} is for a server ibench starts; url names one it does \
                     not start"
                ),
            );
        }
    }
    let pid_file = t.server_pid_file.as_ref().and_then(|v| {
        let path = dir.join(v.get_ref());
        if !path.is_file() {
            p.at(
                v,
                format!(
                    "target {name}: server_pid_file {} is not a file",
                    path.display()
                ),
            );
            return None;
        }
        // Read again when each cell starts (the server may restart between cells).
        match crate::launch::pid_from_file(&path, "server_pid_file") {
            Ok(_) => Some(path),
            Err(e) => {
                p.at(v, format!("target {name}: {e}"));
                None
            }
        }
    });
    External {
        url,
        pid_file,
        data_dir,
        drop_existing: t.drop_existing.as_ref().is_some_and(|v| *v.get_ref()),
    }
}

/// A URL target's cell: the setup's keys that only a server ibench starts takes refused (one
/// problem each, at the setup), and the config's settings refused unless `allow`, when they
/// become settings of ibench's sessions (in the URL the cell connects with). `fragments`: the
/// `file:line` of each of the config's fragments; `options`: its options with their
/// `file:line`.
pub(super) struct UrlCell<'a> {
    pub target: &'a str,
    pub kind: DbmsKind,
    pub url: &'a ServerUrl,
    pub config: &'a str,
    pub config_at: &'a str,
    pub fragments: Vec<String>,
    pub options: &'a [(String, String, String)],
    pub allow: bool,
}

impl UrlCell<'_> {
    /// The URL the cell connects with.
    pub fn url(&self, p: &mut Problems<'_>, setup: &Setup) -> ServerUrl {
        self.refuse_setup_keys(p, setup);
        let (target, config) = (self.target, self.config);
        for at in &self.fragments {
            p.push(
                at.clone(),
                format!(
                    "config {config}: target {target} is a server given by url: ibench writes \
                     no config file for a server it does not start"
                ),
            );
        }
        if !self.allow {
            for (key, _, at) in self.options {
                p.push(
                    at.clone(),
                    format!(
                        "config {config} sets server option {key} on target {target}, a server \
                         given by url, which ibench does not configure: set it on the server \
                         yourself, or allow_server_changes = true (--allow-server-changes) to \
                         set it in ibench's sessions"
                    ),
                );
            }
            return self.url.clone();
        }
        let settings: Vec<(String, String)> = self
            .options
            .iter()
            .map(|(k, v, _)| (k.clone(), v.clone()))
            .collect();
        match self.kind.with_session_settings(self.url.clone(), &settings) {
            Ok(url) => url,
            Err(msg) => {
                p.push(
                    self.config_at.to_string(),
                    format!("config {config} on target {target} (a server given by url): {msg}"),
                );
                self.url.clone()
            }
        }
    }

    /// The setup's keys that only a server ibench starts takes, each a problem.
    fn refuse_setup_keys(&self, p: &mut Problems<'_>, setup: &Setup) {
        let r = &setup.resources;
        let c = &setup.cluster;
        let keys = [
            ("dbms_cache", setup.cache.is_some()),
            ("data_dir", setup.data_dir.is_some()),
            ("pooler", setup.pooler.is_some()),
            ("dataset", setup.dataset.is_some()),
            ("memory_limit", r.memory_limit.is_some()),
            ("io_limit", r.io_limit.is_some()),
            ("server_cpus", r.server_cpus.is_some()),
            ("replicas", c.replicas.is_some()),
            ("galera", c.galera.is_some()),
        ];
        for (key, _) in keys.iter().filter(|(_, set)| *set) {
            p.push(
                setup.at.clone(),
                format!(
                    "setup {}: {key} is for a server ibench starts; target {} is a server given \
                     by url, which ibench does not configure",
                    setup.name, self.target
                ),
            );
        }
    }
}
