//! Hostile and faulty input (issue 38): each case is a real `ibench` process against real files
//! and servers, as a hostile local user (as root, with `nobody` planting files) or a careless
//! one would try it. Grouped by the threat model's causes (docs/reliability.md); every case that
//! was broken once stays here, so it cannot come back.

/// Output paths: a device, FIFO or directory given to `-o`, never replaced by a rename.
mod output;

/// The SQLite file given by `--path`: planted links, open parents, a file ibench did not create
/// left unchanged by a refused run, TPC-C on tables sysbench-tpcc prepared.
mod sqlite;

/// `ibench import`: runs that exist, text fields without bound, histograms that do not
/// decode, documents of runs still `running`.
mod import;

/// Markdown cells and headings: one escaping for every label, hostname and setting.
mod markdown;

/// Datasets: the manifest's checksums, partial restores and interrupted saves.
mod datasets;

/// Experiment files: fragments outside the experiment's directory, errors that echo a file.
mod experiment_files;

/// Flags: exits of `dataset`, flags that do not apply to the target.
mod cli;

/// Faults: ibench killed (-9) while perf is attached to a server it did not start, or while a
/// global setting of such a server is changed for a moment.
mod faults;
