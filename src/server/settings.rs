//! A managed server's settings as a user gives them — flags of `ibench run` and `ibench micro`
//! (`--server-user`, `--malloc`, `--engine`, `--server-data-root`, `--pooler`) or keys of an
//! experiment file (`server_user`, `allocators`, `engine`, `data_dir`, `pooler`) — checked
//! here, once for both. A problem names its setting ([`ServerSetting`]) and says what is wrong
//! without naming it: each caller puts its own name for the setting before it (a flag on the
//! command line, `file:line: target t: server_user` in an experiment), and words in its own
//! terms the refusals that need more than a name ([`Refusal`]).

use std::path::{Path, PathBuf};

use super::ServerFamily;
use crate::dbms::Params;
use crate::request::{Malloc, Pooler};

/// A setting of a managed server, in the order [`ServerSettings::check`] checks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ServerSetting {
    /// The account it runs as.
    User,
    /// The allocator it runs with.
    Malloc,
    /// What the target's DBMS parameters need of it (the MySQL engine: MyRocks' plugin).
    Engine,
    /// The directory its data directory is created in.
    DataRoot,
    /// The connection pooler in front of it.
    Pooler,
}

/// Why a setting is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Said in full after the setting's name (`root: a managed server never runs as root`).
    Said(String),
    /// The directory given is not one (the caller says what to do).
    NotADirectory(PathBuf),
    /// The pooler is started in front of servers of other families only (`servers`: their
    /// names, `postgres`).
    PoolerIsFor {
        /// The pooler given.
        pooler: Pooler,
        /// The families it serves.
        servers: String,
    },
}

/// A refused setting of a managed server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerProblem {
    /// The setting refused.
    pub setting: ServerSetting,
    /// Why.
    pub refusal: Refusal,
}

/// A managed server's settings as given, in DBMS-neutral terms. Each one given is checked;
/// `None` is not given, or checked at another time (an experiment checks a target's account
/// once, each allocator once, each cell's pooler).
#[derive(Clone, Copy, Default)]
pub struct ServerSettings<'a> {
    /// Its family, which `params` and `pooler` are checked against (neither is without it).
    pub family: Option<&'static dyn ServerFamily>,
    /// The account it runs as.
    pub user: Option<&'a str>,
    /// Its allocator.
    pub malloc: Option<Malloc>,
    /// The target's DBMS parameters.
    pub params: Option<&'a Params>,
    /// The directory its data directory is created in.
    pub data_root: Option<&'a Path>,
    /// The pooler in front of it.
    pub pooler: Option<Pooler>,
}

impl ServerSettings<'_> {
    /// Every problem of the settings given, in [`ServerSetting`] order; a warning about one
    /// (said after the setting's name, as a [`Refusal::Said`] is) goes to `warn`.
    pub fn check(&self, warn: &mut dyn FnMut(ServerSetting, &str)) -> Vec<ServerProblem> {
        let mut problems = Vec::new();
        let mut refuse = |setting, refusal| problems.push(ServerProblem { setting, refusal });
        if let Some(name) = self.user {
            match super::account::check_named(name) {
                Ok(Some(w)) => warn(ServerSetting::User, &w),
                Ok(None) => {}
                Err(m) => refuse(ServerSetting::User, Refusal::Said(m)),
            }
        }
        if let Some(Err(m)) = self.malloc.map(Malloc::find_library) {
            refuse(ServerSetting::Malloc, Refusal::Said(m));
        }
        if let (Some(family), Some(params)) = (self.family, self.params)
            && let Err(m) = family.check_params(params)
        {
            refuse(ServerSetting::Engine, Refusal::Said(m));
        }
        if let Some(root) = self.data_root
            && !root.is_dir()
        {
            refuse(
                ServerSetting::DataRoot,
                Refusal::NotADirectory(root.to_path_buf()),
            );
        }
        if let (Some(family), Some(pooler)) = (self.family, self.pooler)
            && !family.poolers().contains(&pooler)
        {
            let servers = super::pooler_servers(pooler);
            refuse(
                ServerSetting::Pooler,
                Refusal::PoolerIsFor { pooler, servers },
            );
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbms::DbmsKind;

    #[test]
    fn each_setting_given_is_checked_in_order() {
        let mariadb = super::super::family(DbmsKind::find("mariadb").unwrap());
        let settings = ServerSettings {
            family: mariadb,
            user: Some("root"),
            data_root: Some(Path::new("/nonexistent/ibench")),
            pooler: Some(Pooler::Pgbouncer),
            ..Default::default()
        };
        let problems = settings.check(&mut |_, _| {});
        let found: Vec<ServerSetting> = problems.iter().map(|p| p.setting).collect();
        assert_eq!(
            found,
            [
                ServerSetting::User,
                ServerSetting::DataRoot,
                ServerSetting::Pooler
            ]
        );
        assert_eq!(
            problems[1].refusal,
            Refusal::NotADirectory(PathBuf::from("/nonexistent/ibench"))
        );
        assert_eq!(
            problems[2].refusal,
            Refusal::PoolerIsFor {
                pooler: Pooler::Pgbouncer,
                servers: "postgres".to_string()
            }
        );
        assert!(ServerSettings::default().check(&mut |_, _| {}).is_empty());
    }
}
