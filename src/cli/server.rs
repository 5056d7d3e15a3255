//! `ibench server install|list|remove`: server builds in ibench's cache (see
//! [`crate::server::install`]), for studies across releases.

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::output::stdout;
use crate::report::table::Table;
use crate::server::install;

/// Flags of `ibench server`.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: ServerAction,
}

/// `ibench server` subcommands.
#[derive(Debug, Subcommand)]
pub enum ServerAction {
    /// Download and install server builds (the newest build of each major version given,
    /// checked against the registry's sha512): `ibench server install postgres 13 16 18`.
    Install {
        /// The server (postgres).
        server: String,
        /// Major versions (13) or versions (13.22).
        #[arg(required = true)]
        versions: Vec<String>,
    },
    /// List the installed builds (and Debian's PostgreSQL packages).
    List,
    /// Remove installed builds: `ibench server remove postgres 13` removes every 13.x.
    Remove {
        /// The server (postgres).
        server: String,
        /// Major versions or versions.
        #[arg(required = true)]
        versions: Vec<String>,
    },
}

/// Runs `ibench server`.
pub fn execute(args: &ServerArgs) -> Result<()> {
    match &args.action {
        ServerAction::Install { server, versions } => {
            crate::interrupt::install_handler();
            let outcomes = install::install(server, versions, &mut |line| eprintln!("{line}"))?;
            for o in outcomes {
                let b = &o.build;
                let what = if o.already {
                    "already installed".to_string()
                } else {
                    format!(
                        "installed (build {}, sha512 checked, {} soname links)",
                        b.build, o.links
                    )
                };
                stdout::print(&format!(
                    "{} {} {what}: {}\n",
                    b.server,
                    b.version,
                    b.bin_dir().display()
                ))?;
            }
            Ok(())
        }
        ServerAction::List => list(),
        ServerAction::Remove { server, versions } => {
            for b in install::remove(server, versions)? {
                stdout::print(&format!(
                    "removed {} {} ({})\n",
                    b.server,
                    b.version,
                    b.dir.display()
                ))?;
            }
            Ok(())
        }
    }
}

fn list() -> Result<()> {
    let mut t = Table::new(["server", "version", "from", "bin"]).align_left(0..4);
    let mut any = false;
    for b in install::installed() {
        any = true;
        t.row([
            b.server.clone(),
            b.version.clone(),
            format!("ibench ({})", b.build),
            b.bin_dir().display().to_string(),
        ]);
    }
    for family in crate::server::families() {
        for (version, dir) in family.system_builds() {
            any = true;
            t.row([
                family.dbms().server_name().to_string(),
                version,
                "system package".to_string(),
                dir.display().to_string(),
            ]);
        }
    }
    if !any {
        return stdout::print(&format!(
            "no server builds installed in {} (ibench server install postgres 16)\n",
            install::cache_root().display()
        ));
    }
    stdout::print(&t.to_text())?;
    stdout::print(&format!("cache: {}\n", install::cache_root().display()))
}
