//! The terminal summary's TPC-C section: per step, tpmC, each transaction type's rate, share
//! of the mix, rollbacks and retries, the consistency conditions, and after a load the rows
//! of each table.

use crate::output::escape;
use crate::output::format::rate;
use crate::report::table::Table;
use crate::results::model::RunResult;

/// The section, empty for a run without TPC-C figures.
pub fn section(run: &RunResult) -> String {
    let mut out = String::new();
    let mut t = Table::new(["step", "type", "tps", "share %", "rollbacks", "retries"]);
    for s in &run.steps {
        let Some(f) = &s.tpcc else { continue };
        let step = escape::line(&s.name);
        if !f.rows.is_empty() {
            let rows: Vec<String> = f.rows.iter().map(|(k, v)| format!("{k} {v}")).collect();
            out.push_str(&format!("\n{step}: rows {}\n", rows.join(", ")));
        }
        out.push_str(&format!(
            "{step}: isolation {}; foreign keys {}\n",
            escape::line(&f.isolation),
            escape::line(&f.foreign_keys)
        ));
        if f.transactions.is_empty() {
            continue;
        }
        out.push_str(&format!("{step}: tpmC {:.0}\n", f.tpmc));
        for c in &f.consistency {
            let verdict = if c.pass { "PASS" } else { "FAIL" };
            let detail = c.detail.as_deref().map(escape::line).unwrap_or_default();
            out.push_str(&format!(
                "{step}: consistency {} ({}): {verdict}{}{detail}\n",
                c.condition,
                c.name,
                if detail.is_empty() { "" } else { ": " }
            ));
        }
        for op in crate::metrics::recorder::Op::TPCC {
            if let Some(x) = f.transactions.get(op.name()) {
                t.row([
                    step.to_string(),
                    op.name().to_string(),
                    rate(x.per_s),
                    format!("{:.1}", x.share_pct),
                    x.rollbacks.to_string(),
                    x.retries.to_string(),
                ]);
            }
        }
    }
    if out.is_empty() {
        return out;
    }
    out.insert_str(0, "\nTPC-C\n");
    if !t.is_empty() {
        out.push('\n');
        out.push_str(&t.to_text());
    }
    out
}
