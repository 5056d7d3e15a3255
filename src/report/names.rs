//! Names the report reads structure from: a microbenchmark step's benchmark and client
//! count, a DBMS version string's version.

/// `(benchmark, clients)` of a microbenchmark step's name (`read-only_range=100.c8`); `None`
/// for other steps (`prepare`, the Insert Benchmark's).
pub fn parse_step(name: &str) -> Option<(&str, usize)> {
    let (benchmark, clients) = name.rsplit_once(".c")?;
    if benchmark.is_empty() || clients.is_empty() || !clients.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((benchmark, clients.parse().ok()?))
}

/// The version a DBMS reports, as numbers and dots: `PostgreSQL 13.23 on x86_64...` ->
/// `13.23`, `10.11.6-MariaDB-0+deb12u1` -> `10.11.6`; empty when there is none.
pub fn short_version(reported: &str) -> String {
    reported
        .split(|c: char| c.is_whitespace() || c == '-' || c == ',' || c == '(')
        .find_map(crate::server::version::version_in)
        .unwrap_or_default()
}
