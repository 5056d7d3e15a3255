//! Integration tests of the `ibench` binary against real DBMS: embedded SQLite, managed and
//! local PostgreSQL and MariaDB servers, embedded RocksDB (feature `rocksdb`). One binary (see
//! Cargo.toml), one module per area. Each test works in its own temporary directory, runs the real binary at
//! a tiny size and checks outcomes with its own SQL on the database file wherever it can, not
//! only ibench's report of them.

/// Shared helpers: run the binary in a temp dir, find and load its results JSON, read the
/// SQLite file with our own SQL, decode histograms. No tests.
mod common;

/// The default step sequence end to end at tiny size: exit code, status, steps in order,
/// rates per op, environment and config recorded, histogram and per-second totals consistent
/// with each other and with the database; what a run leaves in --out; and runs that end early
/// (SIGINT: exit 130; a DBMS error: exit 1) keeping what they measured.
mod full_run;

/// The queue invariant and the schema: table sizes stay constant while l.i1/l.i2 insert and
/// delete, the oldest rows go first, l.x creates the right indexes, shared-table mode,
/// --no-deletes, table prefixes.
mod queue;

/// The background writer of query steps: rate accuracy against its target, and no coordinated
/// omission (a lock held by another connection shows in due-time latency, not in service time,
/// and the writer catches up).
mod rate;

/// `ibench history`: change points over real runs of one configuration (SQLite and a
/// PostgreSQL store), A/A runs without any, the `--check-last` gate, version and tag order,
/// `compare --fail-on-regression`.
mod history;

/// Reports over stored runs (HTML, Markdown, JSON; repeats, base, escaping, Chromium).
mod report;
mod report_charts;
/// Every format (JSON, Markdown, HTML) rendered from one report model agrees on its figures.
mod report_formats;
mod report_html;

/// What is measured and was hidden: per-second host CPU, device IO and RSS summarised per
/// step in `ibench show` and the Markdown report, as the stored series give them (SQLite).
mod measured;

/// Honest marks: a relative cell marked only where compare's test supports it (A/A marks
/// nothing; synchronous=FULL is marked worse where fsync binds), the headline, one run a side.
mod marks;

/// Step sanity on real SQLite runs (a reader locked out from midway is not steady, a free one
/// is) and the per-second mean and p95 response times of a real run.
mod steady;

/// Whether a run can judge its own steps: the default run's steps each have 3 full seconds
/// (release builds), a step too short names the flag that makes it longer; one CPU column
/// for an embedded DBMS; micro's and tpcc's load not judged.
mod judged;

/// `ibench compare`: A/A comparisons on SQLite and a managed PostgreSQL call (almost) nothing
/// a change, an injected change is found within its interval, one run a side says that only
/// noise within runs counts, bad thresholds are usage errors.
mod compare;

/// The rows themselves: seeded reproducibility, value ranges and formats, and point queries
/// (through the library's DBMS API and as the qpN step reports them).
mod data;

/// Bad input: every rejected flag exits 2 with one `error:` line naming the value, never
/// panics, and leaves no broken results file.
mod bad_input;

/// The README's and the guide's commands: each parsed by ibench's own parser, the README's
/// embedded ones run at a tiny scale.
mod docs;

/// Hostile and faulty input, grouped by cause (issue 38): planted links and devices, files
/// ibench did not create, imports, datasets, experiment files, Markdown, flags.
mod hostile;

/// `ibench tpcc`: sysbench-tpcc's cardinalities after a one-warehouse load, the consistency
/// conditions after a run, the mix and the rollbacks, on SQLite, PostgreSQL, MariaDB InnoDB
/// and MyRocks; bad flags refused in one line.
mod tpcc;

/// Prepared datasets: a TPC-C load saved (`--prepare-only`, `ibench dataset save`) and
/// restored (`--from-dataset`) on SQLite and a managed PostgreSQL with the same rows
/// (checksummed with the test's own SQL), a consistent run on it, mismatches refused.
mod dataset;

/// `ibench experiment` with TPC-C cells on SQLite, one loading and one from a saved dataset.
mod experiment_tpcc;

/// Managed throwaway servers started by ibench: PostgreSQL, MariaDB InnoDB and MyRocks (queue
/// invariants, config fragments in effect, LD_PRELOAD, no server left behind).
mod managed;

/// Servers reached by URL: row counts read with the test's own client, bad URLs and
/// passwords, password logins.
mod external;

/// Faults on real servers: lost connections reopened, a server killed mid-step; ibench killed
/// mid-step (the run found abandoned by the next one) or while MariaDB starts (its socket
/// directory removed by the next start); results writes that fail.
mod faults;

/// What a managed server exposes, and to whom (tried as user nobody, and as the host DBMS's
/// postgres and mysql accounts), and tables ibench did not create left alone.
mod security;

/// A shared --out: links and files planted by another user are never followed or trusted.
mod shared_out;

/// Tables ibench did not create: steps that write into them refuse unless told.
mod foreign;

/// Cost per operation: DBMS, client, host and device figures checked against the test's own
/// reading of /proc and the DBMS's own answers; exited children counted; figures absent, not
/// zero, when the DBMS process is unknown.
mod metrics;

/// Property tests of user-input parsing: URLs (no panic, no password in any rendering), step
/// names, command lines (a spec or a usage error, never a panic).
mod parsing;

/// The size of a results document: a summary per client, the full per-client series only on
/// request (`--per-client-series`), merged series and histograms exact either way.
mod results_size;

/// The results database: runs stored by `ibench run`, listed, shown, exported (JSON equal to
/// the run's file, CSV per step and op), imported; unknown, ambiguous and broken are usage
/// errors.
mod store;

/// `ibench import` of large documents: refused by size before reading, or by the memory their
/// runs would take while reading; several documents stored together or not at all.
mod import;

/// Experiments (`ibench experiment`): a tiny matrix end to end on managed servers with each
/// variant's settings in effect, resuming after a kill without redoing complete cells,
/// validation with file:line, and the dry-run estimate.
mod experiment;

/// Experiments over a server given by URL (the local PostgreSQL service): two setups, resumed
/// after Ctrl-C without rerunning the complete cell; a server option refused unless allowed.
mod experiment_url;

/// Runs from several hosts: `ibench report --by host` with prices per hour (recorded with
/// a run, or set on a host in the store) gives throughput per unit of cost.
mod hosts;

/// Clients through PgBouncer started by ibench in front of a managed PostgreSQL: the pool
/// seen from the server, the pooler recorded, plain SQL in transaction mode before 1.21.
mod pooler;

/// Studies across versions: PostgreSQL builds installed by `ibench server install` (checked
/// against the registry's sha512), a 13-vs-15 experiment's versions table and chart.
mod versions;

/// The DBMS in a cgroup of the run's own: a memory cap makes PostgreSQL read from the device
/// and holds, an IO write limit holds, pinned server and clients, cleanup after kill -9, bad
/// values (issue #31).
mod cgroup;

/// The DBMS's own pressure stall information against the kernel's count of its tasks'
/// run-queue waits (issue #37).
mod psi;

/// Storage studies: ext4, XFS and btrfs on loop devices, the data directory placed on each,
/// file system and device figures checked against the device's own counters.
mod storage;

/// OLTP microbenchmarks (`ibench micro`): sysbench-style tables as sysbench prepares them,
/// point selects counted against the server's own statistics, sysbench's tables reused.
mod micro;

/// The whole microbenchmark suite on SQLite, PostgreSQL, MariaDB InnoDB and MyRocks: every
/// benchmark runs, rows counted as the DBMS counts them, tables keep their size, warm-up not
/// counted, the maintenance pause after writes.
mod micro_suite;

/// `--warmup` on the Insert Benchmark's steps (run, in the tables and in a managed
/// PostgreSQL's own counters, in no figure; a load step's rows counted with it), `--cooldown`
/// between steps and client counts (in the recorded times), and `--no-sampling`.
mod warmup;

/// The microbenchmarks' reference order: `.pre` reads apart from post-write ones in results,
/// reports and compare, the post-write pause's maintenance seen by the DBMS, insert-random-pk
/// into prefilled tables.
mod micro_order;

/// Clients multiplexed on a few threads: a stalled connection delays only itself, writers hold
/// their rate, counts merge exactly.
mod multiplexed;

/// The Insert Benchmark's scan step on SQLite, PostgreSQL, MariaDB InnoDB and MyRocks: every
/// index scanned in turn, every row, through the index named (the DBMS's own counters).
mod scan;

/// The DBMS's gauges read once a second (PostgreSQL, MariaDB InnoDB and MyRocks, SQLite):
/// each agrees with the test's own reading of the server; a long-open transaction grows
/// InnoDB's history list length; tiny level0 triggers raise MyRocks' stall gauges.
mod gauges;

/// Wait events per step: a held table lock is a Lock wait on PostgreSQL (report, compare);
/// MariaDB's performance_schema wait summary.
mod waits;

/// `--profile`: flame graphs of the DBMS's processes per step (PostgreSQL backends, SQLite in
/// ibench itself) with the DBMS's function names; without perf, one line.
mod profile;

/// The conformance suite: every registered DBMS (embedded in a temporary directory; servers as
/// a managed throwaway server of each family and engine: PostgreSQL, MariaDB InnoDB and
/// MyRocks) opened through the library and put through the same checks: tables marked as
/// ibench's and foreign ones refused, ids that grow, the rows each operation and statement
/// must return or change (counted with the test's own client; TPC-C's shapes too: joins,
/// aggregates, foreign keys, row locks), error classes, counters,
/// gauges and what the DBMS says about itself; what a DBMS lacks is read from its capabilities.
mod conformance;

/// Embedded RocksDB (cargo feature `rocksdb`): the queue invariant and every index family read
/// back through the test's own handle, RocksDB's counters and properties against the test's
/// own reading, options RocksDB refuses, the default step sequence, report and compare columns.
#[cfg(feature = "rocksdb")]
mod rocksdb;

/// The run conditions as experiment keys: `post_write_pause`, `random_pk_rows`,
/// `no_sampling` and `scan_clients` in effect in the stored runs, a bad value one line.
mod experiment_conditions;

/// The order of an experiment's cells: rounds in rotated order (ABBA for two configs, a
/// balanced Latin square for more), each run's round and position recorded, the same order
/// after a killed experiment resumes.
mod experiment_order;

/// Verdicts on a shared host (issue #37): three runs a side decide a 2x change and call
/// nothing in A/A; a neighbour (the test's CPU burner and writer) is measured, its steps
/// named disturbed, and the history gate judges the runs it did not disturb.
mod verdicts;

/// The interference figures against an independent count (issue #37): a busy loop and a
/// writer the test starts as processes of their own; others' CPU and writes as stored match
/// the neighbours' own /proc counters over each step.
mod interference;

/// Duet (issue #37): the two cells of each round at once, each in a process of its own,
/// started together; each run names its partner and round; the partner is not a neighbour to
/// the interference test; a URL target and three cells a round refused.
mod duet;

/// Runs across several client hosts (`--group`): three ibench processes in network
/// namespaces make one run (counts, merged histograms and the tables' rows agree), a host
/// killed mid-step fails the step for the group naming it, a host that never joins fails the
/// group in time, a group name is used once.
mod multihost;

/// A managed PostgreSQL with streaming replicas (`--replicas`, `--sync-replicas`,
/// `--read-from`): every replica holds the primary's rows (counted on each node), the query
/// steps read from the replicas, lag series and per-step figures, sync slower than async,
/// bad flags exit 2.
mod replicas;

/// A managed MariaDB with binlog replicas (`--replicas`, semi-sync `--sync-replicas 1`,
/// `--read-from replicas`): every replica holds the primary's rows, the replicas served the
/// queries, r1 acknowledged commits, lag series and per-step figures; a second sync replica
/// exit 2.
mod replicas_mariadb;

/// `ibench micro --replicas 1 --read-from replicas` (PostgreSQL): the replica's own
/// statistics count the point queries, the primary's the updates; the replica replayed the
/// writes before the reads after them and holds the primary's rows at the end.
mod replicas_micro;

/// `ibench doctor`: the server binaries with their versions, perf and the cgroup
/// hierarchies as the test reads them on this host; a file hidden by `IBENCH_TEST_HIDE`
/// (sysbench) is missing with its `apt-get install`; a run records the checks in its results
/// and the store, and `ibench show` names what the host lacked.
mod doctor;

/// A managed MariaDB Galera cluster (`--galera 3`, clients on every node): the Insert
/// Benchmark and the update microbenchmarks leave the same rows on every node, every node
/// served queries, per-node wsrep gauges, TLS group communication; bad flags exit 2.
mod galera;

/// The architecture: every `crate::` import of src/ runs down docs/design.md's layers (its
/// ```` ```layers ```` block, top to bottom), and no files import each other in a circle
/// (the allowed ones named and printed). Reads the sources; runs nothing.
mod architecture;

/// docs/design.md's table of what adding a DBMS costs: each trait's methods, required and
/// optional, counted from the source (`src/dbms/`, and `ServerFamily`), must be the table's.
/// Reads the sources; runs nothing.
mod trait_table;
