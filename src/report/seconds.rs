//! What a step's per-second cost series (`efficiency.per_second`) were, in a few figures per
//! step: host and DBMS CPU, device MB/s and the DBMS's RSS, each as min / median / max over
//! the step's seconds; and the DBMS's memory beyond its cache (RSS less the buffer pool,
//! shared_buffers or block cache) where the cache's size is known. The terminal summary
//! (`ibench show`) and the reports (Markdown, HTML) show them; the HTML charts draw the series.

use serde::Serialize;

use crate::report::table::Table;
use crate::results::model::{RunResult, StepResult};

const MIB: f64 = 1024.0 * 1024.0;

/// Min, median and max of a series over a step's seconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    /// Smallest second.
    pub min: f64,
    /// Median second (the mean of the two middle ones for an even count).
    pub median: f64,
    /// Largest second.
    pub max: f64,
}

impl Spread {
    /// The spread of `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Spread> {
        let s = crate::report::stat::Stat::of(values)?;
        Some(Spread {
            min: s.min,
            median: s.median,
            max: s.max,
        })
    }

    /// `min/median/max` with `digits` decimals.
    pub fn text(&self, digits: usize) -> String {
        format!(
            "{:.digits$}/{:.digits$}/{:.digits$}",
            self.min, self.median, self.max
        )
    }
}

/// The DBMS's memory at a step and the part of it beyond its cache.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Memory {
    /// Peak RSS of the DBMS's processes over the step, MiB.
    pub rss_mib: Option<f64>,
    /// Peak PSS, MiB.
    pub pss_mib: Option<f64>,
    /// The setting that sizes the cache (`innodb_buffer_pool_size`, `shared_buffers`...).
    pub cache_setting: String,
    /// Its value in the run's settings, MiB.
    pub cache_mib: Option<f64>,
    /// What the cache held at the step's end, MiB, where the DBMS says (MyRocks' block cache:
    /// `Cache Total` of the stored MEMORY_STATS; embedded RocksDB: `rocksdb.block-cache-usage`).
    pub cache_in_use_mib: Option<f64>,
    /// The database's size at the step's end, MiB, when it bounds what a cache of pages can
    /// hold (its use not known, the database smaller than the cache).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db_bound_mib: Option<f64>,
    /// The memory beyond the cache: `pss_mib` (several processes: PostgreSQL's shared memory
    /// counts once) or `rss_mib` (one process), less `cache_in_use_mib`, or else the smaller
    /// of `cache_mib` and the database's size (a cache of pages holds no more than the
    /// database: `db_bound_mib`).
    pub beyond_cache_mib: Option<f64>,
    /// Why there is no `beyond_cache_mib`, when there is none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub why_not: String,
}

/// One run's step in per-second figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CostSpreads {
    /// The run.
    pub run_id: String,
    /// Seconds in the series.
    pub seconds: usize,
    /// The host's logical CPUs (100% of `host_cpu_pct`).
    pub cores: usize,
    /// Host CPU busy, % of all its CPUs.
    pub host_cpu_pct: Option<Spread>,
    /// The DBMS's processes' CPU, % of one core (200: two cores busy).
    pub dbms_cpu_pct: Option<Spread>,
    /// Device MB read per second (the database's block device).
    pub read_mb_s: Option<Spread>,
    /// Device MB written per second.
    pub write_mb_s: Option<Spread>,
    /// The DBMS's RSS at the end of each second, MiB.
    pub rss_mib: Option<Spread>,
    /// The DBMS's memory beyond its cache.
    pub memory: Memory,
    /// The series the spreads are of, second by second (index i: second [i, i+1) of the
    /// step), for charts drawn from the report model alone.
    pub series: CostSeries,
}

/// A step's per-second series in the units the report shows (empty where not measured: no
/// block device, no DBMS process, no RSS read).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CostSeries {
    /// Host CPU busy, % of all its CPUs.
    pub host_cpu_pct: Vec<f64>,
    /// The DBMS's CPU, % of one core.
    pub dbms_cpu_pct: Vec<f64>,
    /// ibench's own CPU (the clients), % of one core.
    pub client_cpu_pct: Vec<f64>,
    /// Device MB read per second.
    pub read_mb_s: Vec<f64>,
    /// Device MB written per second.
    pub write_mb_s: Vec<f64>,
    /// The DBMS's RSS at the end of each second, MiB.
    pub rss_mib: Vec<f64>,
}

/// The memory figures of `step` of `run`.
fn memory(run: &RunResult, step: &StepResult) -> Memory {
    let target = run.target();
    let setting = target.kind.cache(&target.params);
    let settings = &run.environment.dbms.settings;
    let Some(e) = &step.efficiency else {
        return Memory::default();
    };
    let rss = e.peak.dbms_rss_bytes.map(|b| b as f64 / MIB);
    let pss = e.peak.dbms_pss_bytes.map(|b| b as f64 / MIB);
    let cache = settings
        .get(setting.name)
        .and_then(|raw| (setting.parse)(raw.trim(), settings))
        .map(|b| b as f64 / MIB);
    let in_use = crate::dbms::mysql::compaction::block_cache_in_use(&step.engine_status)
        .map(|b| b as f64)
        .or_else(|| {
            let g = e.per_second.gauges.get("rocksdb.block-cache-usage")?;
            g.iter().rev().flatten().next().copied()
        })
        .map(|b| b / MIB);
    let several = e.dbms.as_ref().is_some_and(|d| d.processes > 1);
    let used = if several { pss.or(rss) } else { rss };
    let mut m = Memory {
        rss_mib: rss,
        pss_mib: pss,
        cache_setting: setting.name.to_string(),
        cache_mib: cache,
        cache_in_use_mib: in_use,
        ..Memory::default()
    };
    // Without its use, a cache of the database's pages (buffer pool, shared_buffers) holds
    // no more than the database; a block cache's use is known (its blocks are uncompressed:
    // they may exceed the files' size).
    let db = e.db_size.dbms_bytes.map(|b| b as f64 / MIB);
    if in_use.is_none() {
        m.db_bound_mib = db.filter(|d| cache.is_some_and(|c| *d < c));
    }
    match (used, in_use.or(m.db_bound_mib).or(cache)) {
        _ if setting.per_connection => {
            m.why_not = format!("{} is each connection's cache", setting.name)
        }
        (None, _) => m.why_not = "the DBMS's memory was not read".to_string(),
        (_, None) => m.why_not = format!("{} is not in the run's settings", setting.name),
        (Some(u), Some(c)) => m.beyond_cache_mib = Some(u - c),
    }
    m
}

impl CostSpreads {
    /// The figures of `step` of `run`; `None` for a step without cost figures.
    pub fn of(run: &RunResult, step: &StepResult) -> Option<CostSpreads> {
        let e = step.efficiency.as_ref()?;
        let p = &e.per_second;
        let cores = run.environment.cpu_cores.max(1);
        let scaled = |v: &[f64], f: f64| v.iter().map(|x| x * f).collect::<Vec<f64>>();
        let device = |v: &[f64]| match e.device {
            Some(_) => scaled(v, 1.0 / 1024.0),
            None => Vec::new(),
        };
        let rss: Vec<f64> = p.dbms_rss_bytes.iter().map(|&b| b as f64 / MIB).collect();
        let series = CostSeries {
            host_cpu_pct: scaled(&p.host_cpu_s, 100.0 / cores as f64),
            dbms_cpu_pct: match e.dbms {
                Some(_) => scaled(&p.dbms_cpu_s, 100.0),
                None => Vec::new(),
            },
            client_cpu_pct: scaled(&p.client_cpu_s, 100.0),
            read_mb_s: device(&p.device_kb_read),
            write_mb_s: device(&p.device_kb_written),
            rss_mib: if rss.iter().any(|&v| v > 0.0) {
                rss
            } else {
                Vec::new()
            },
        };
        Some(CostSpreads {
            run_id: run.run_id.clone(),
            seconds: p.host_cpu_s.len(),
            cores,
            host_cpu_pct: Spread::of(&series.host_cpu_pct),
            dbms_cpu_pct: Spread::of(&series.dbms_cpu_pct),
            read_mb_s: Spread::of(&series.read_mb_s),
            write_mb_s: Spread::of(&series.write_mb_s),
            rss_mib: Spread::of(&series.rss_mib),
            memory: memory(run, step),
            series,
        })
    }
}

fn spread(s: &Option<Spread>, digits: usize) -> String {
    s.as_ref()
        .map_or_else(|| "-".to_string(), |s| s.text(digits))
}

fn mib(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"))
}

/// The per-second columns of one step's row.
pub(crate) fn seconds_row(s: &CostSpreads) -> [String; 6] {
    [
        s.seconds.to_string(),
        spread(&s.host_cpu_pct, 0),
        spread(&s.dbms_cpu_pct, 0),
        spread(&s.read_mb_s, 1),
        spread(&s.write_mb_s, 1),
        spread(&s.rss_mib, 1),
    ]
}

/// The memory columns of one step's row.
pub(crate) fn memory_row(m: &Memory) -> [String; 4] {
    [
        mib(m.rss_mib),
        mib(m.pss_mib),
        match (m.cache_mib, m.cache_in_use_mib, m.db_bound_mib) {
            (c, Some(u), _) => format!("{} ({} in use)", mib(c), mib(Some(u))),
            (c, None, Some(d)) => format!("{} (db {})", mib(c), mib(Some(d))),
            (c, None, None) => mib(c),
        },
        match m.beyond_cache_mib {
            Some(b) => mib(Some(b)),
            None => format!("- ({})", m.why_not),
        },
    ]
}

pub(crate) const SECONDS_HEADER: [&str; 6] = [
    "s",
    "host CPU %",
    "DBMS CPU %",
    "rd MB/s",
    "wr MB/s",
    "RSS MiB",
];

pub(crate) fn memory_header(setting: &str) -> [String; 4] {
    [
        "RSS MiB".to_string(),
        "PSS MiB".to_string(),
        format!("{setting} MiB"),
        "beyond cache MiB".to_string(),
    ]
}

/// Says what the tables show, under them.
pub const LEGEND: &str = "min/median/max over the step's seconds; host CPU: % of all its \
    CPUs, DBMS CPU: % of one core; RSS and PSS: peak over the step; beyond cache: PSS \
    (several processes) or RSS (one process) less the cache in use at the step's end where \
    the DBMS says, else less the smaller of its configured size and the database's (db): a \
    cache not yet filled makes it low, even negative";

/// The terminal summary's per-second and memory tables; empty for a run without cost
/// figures.
pub fn section(run: &RunResult) -> String {
    let mut t = Table::new(std::iter::once("step").chain(SECONDS_HEADER));
    let mut setting = String::new();
    let mut mem_rows = Vec::new();
    for s in &run.steps {
        let Some(x) = CostSpreads::of(run, s) else {
            continue;
        };
        let name = crate::output::escape::line(&s.name).into_owned();
        t.row(std::iter::once(name.clone()).chain(seconds_row(&x)));
        setting = x.memory.cache_setting.clone();
        let [a, b, c, d] = memory_row(&x.memory);
        mem_rows.push([name, a, b, c, d]);
    }
    if t.is_empty() {
        return String::new();
    }
    let mut m = Table::new(std::iter::once("step".to_string()).chain(memory_header(&setting)));
    for r in mem_rows {
        m.row(r);
    }
    format!(
        "\nPer second (docs/metrics.md)\n\n{}\n{}\n({LEGEND})\n",
        t.to_text(),
        m.to_text()
    )
}
