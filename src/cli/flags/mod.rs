//! The flag groups every benchmark subcommand (`run`, `micro`, `tpcc`) flattens into its own
//! flags, one per concern: the target DBMS (`target.rs`), the server it runs on, managed or
//! external (`server.rs`), the run's conditions (`conditions.rs`, the DBMS's resources in
//! `resources.rs`) and the output (`output.rs`). [`RunFlags`] takes them together and turns
//! them and a workload into a [`RunSpec`], checked once, with messages that name the flags.

pub mod conditions;
pub mod output;
pub mod resources;
pub mod server;
pub mod target;

pub use conditions::ConditionArgs;
pub use output::OutputArgs;
pub use server::ServerArgs;
pub use target::TargetArgs;

use crate::dbms::{DbmsKind, StatementMode, TargetSpec};
use crate::error::UsageError;
use crate::request::{MAX_SECONDS, RunSpec, ServerSpec, WorkloadSpec};

/// A benchmark subcommand's flag groups, together.
pub struct RunFlags<'a> {
    /// The target DBMS.
    pub target: &'a TargetArgs,
    /// The server it runs on.
    pub server: &'a ServerArgs,
    /// The run's conditions.
    pub conditions: &'a ConditionArgs,
    /// Where results go and how the run is shown.
    pub output: &'a OutputArgs,
}

impl RunFlags<'_> {
    /// The run's spec for `workload` on this target: checks the flags, resolves the DBMS, the
    /// URL (parsed once; password from the URL or the environment), the DBMS's own settings
    /// and the managed server.
    pub fn run_spec(
        &self,
        workload: WorkloadSpec,
        maintenance: bool,
    ) -> Result<RunSpec, UsageError> {
        self.check_bounds()?;
        let (target, server) = self.target_and_server(&workload)?;
        let (t, c, output) = (self.target, self.conditions, self.output);
        let embedded = target.kind.embedded();
        let tags = crate::request::tags::collect(&output.tags).map_err(UsageError::new)?;
        let resources = c.resources.spec(embedded, self.server.server.is_some())?;
        Ok(RunSpec {
            target,
            scratch_database: embedded && t.path.is_none(),
            keep_data: output.keep_data,
            out_dir: output.out.clone(),
            label: output.label.clone(),
            report_interval_s: output.report_interval,
            maintenance,
            workload,
            server,
            statements: if t.plain_sql {
                StatementMode::Plain
            } else {
                StatementMode::Prepared
            },
            drop_existing: t.drop_existing,
            write_existing: t.write_existing,
            allow_server_changes: self.server.allow_server_changes,
            client_threads: c.client_threads,
            client_io: c.client_io,
            per_client_series: output.per_client_series,
            prepare_only: false,
            dataset: None,
            tags,
            resources,
            cooldown_s: c.cooldown,
            no_sampling: c.no_sampling,
            canary: c.canary,
        })
    }

    /// The flags' bounds: seconds, the label, the settings' names and values.
    fn check_bounds(&self) -> Result<(), UsageError> {
        for (flag, v, min) in [
            ("--report-interval", self.output.report_interval, 0),
            ("--cooldown", self.conditions.cooldown, 0),
            // 0 s would give up on a managed server before it could start.
            (
                "--server-start-timeout",
                self.server.server_start_timeout,
                1,
            ),
        ] {
            if !(min..=MAX_SECONDS).contains(&v) {
                return Err(UsageError::new(format!(
                    "{flag} {v} is out of range: expected {min}..={MAX_SECONDS} seconds"
                )));
            }
        }
        if let Some(label) = &self.output.label {
            crate::results::bounds::check_label("--label", label).map_err(UsageError::new)?;
        }
        for (flag, pairs) in [
            ("--sqlite-pragma", &self.target.db_options),
            ("--server-option", &self.server.server_options),
        ] {
            crate::results::bounds::check_setting_flags(flag, pairs).map_err(UsageError::new)?;
        }
        Ok(())
    }

    /// The target and the managed server (when --server), each checked, in the flags' order;
    /// a pooler also against the connections `workload` makes.
    fn target_and_server(
        &self,
        workload: &WorkloadSpec,
    ) -> Result<(TargetSpec, Option<ServerSpec>), UsageError> {
        let (t, s) = (self.target, self.server);
        let url = t.server_url()?;
        let kind = t.dbms_kind(s.server, url.as_ref())?;
        if kind.embedded() {
            self.refuse_server_flags(kind)?;
        }
        t.check_path(kind)?;
        let params = t.params(kind)?;
        // The password may come from the DBMS's environment variable.
        let url = url.map(|u| u.or_password_from(kind.password_env()));
        if let Some(dir) = &s.data_dir
            && !dir.is_dir()
        {
            return Err(UsageError::new(format!(
                "--data-dir {} is not a directory",
                dir.display()
            )));
        }
        let server = s.server_spec(kind, &params)?;
        if let Some(p) = server.as_ref().and_then(|s| s.pooler.as_ref()) {
            crate::server::pooler::binary()?;
            p.check(workload.connections(), "--pool-size", "--pool-mode")
                .map_err(UsageError::new)?;
        }
        let target = TargetSpec {
            kind,
            path: t.path.clone(),
            url,
            client_url: None,
            replica_urls: Vec::new(),
            read_from_replicas: false,
            node_urls: Vec::new(),
            clients_on_all_nodes: false,
            params,
        };
        Ok((target, server))
    }

    /// Refuses the flags that only a server (or its client connections) has, given for the
    /// embedded `kind`: they used to be ignored without a word.
    fn refuse_server_flags(&self, kind: DbmsKind) -> Result<(), UsageError> {
        let given = [
            (self.server.server_pid.is_some(), "--server-pid"),
            (self.server.server_pid_file.is_some(), "--server-pid-file"),
            (self.server.data_dir.is_some(), "--data-dir"),
            (self.server.allow_server_changes, "--allow-server-changes"),
            (self.conditions.client_threads.is_some(), "--client-threads"),
            (self.conditions.client_io.is_some(), "--client-io"),
        ];
        match given.iter().find(|(g, _)| *g) {
            Some((_, flag)) => Err(UsageError::new(format!(
                "{flag} is for a server DBMS; {kind} runs inside ibench (a thread per \
                 connection, its figures are ibench's own): drop {flag}"
            ))),
            None => Ok(()),
        }
    }

    /// Runs `spec` (built from these flags) as `ibench micro` and `ibench tpcc` do.
    pub fn launch(&self, spec: RunSpec) -> anyhow::Result<()> {
        let options = self.run_options(&spec)?;
        crate::launch::run_to_out(spec, self.output.results.as_deref(), options)
    }

    /// How to run `spec` (built from these flags).
    pub fn run_options(&self, spec: &RunSpec) -> anyhow::Result<crate::launch::RunOptions> {
        Ok(crate::launch::RunOptions {
            quiet: self.output.quiet,
            server_pid: if spec.server.is_none() && !spec.target.kind.embedded() {
                self.server.external_pid()?
            } else {
                None
            },
            data_dir: self.server.data_dir.clone(),
            cost_per_hour: self.output.cost_per_hour,
            profile: self.conditions.profile,
            ..Default::default()
        })
    }
}

fn parse_key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!("expected NAME=VALUE, got {s:?}")),
    }
}

/// How `ibench run`, `ibench micro` and `ibench tpcc` name a spec field: its flag (`l0_rows` is
/// `--l0-rows`, `max_error_pct` is `--max-error-rate`).
pub fn flag_name(field: &str) -> String {
    match field {
        "max_error_pct" => "--max-error-rate".to_string(),
        other => format!("--{}", other.replace('_', "-")),
    }
}
