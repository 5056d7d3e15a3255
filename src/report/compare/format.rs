//! How `ibench compare` writes its numbers: p-values, percentages, intervals, confidence
//! levels, and its headline.

/// `p<0.001`, `p<0.01` or `p=0.034`.
pub fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "p<0.001".to_string()
    } else if p < 0.01 {
        "p<0.01".to_string()
    } else {
        format!("p={p:.3}")
    }
}

/// `q<0.001`, `q=0.034`, like [`fmt_p`].
pub fn fmt_q(q: f64) -> String {
    fmt_p(q).replacen('p', "q", 1)
}

/// A percentage with one decimal below 10 and none above: `-7.3%`, `+31%`; `>+999%` above
/// that (an interval from very few runs can reach far).
pub fn fmt_pct(v: f64) -> String {
    if v > 999.0 {
        ">+999%".to_string()
    } else if v.abs() < 9.95 {
        format!("{v:+.1}%")
    } else {
        format!("{v:+.0}%")
    }
}

/// `[-31%, +2.0%]`, or `-` for none.
pub fn fmt_ci(ci: Option<[f64; 2]>) -> String {
    match ci {
        Some([lo, hi]) => format!("[{}, {}]", fmt_pct(lo), fmt_pct(hi)),
        None => "-".to_string(),
    }
}

/// A confidence level with as many decimals as it needs: `99%`, `99.96%`.
pub fn fmt_level(level: f64) -> String {
    let miss = ((1.0 - level) * 100.0).max(1e-9);
    let digits = (-miss.log10()).ceil().max(0.0) as usize;
    let shown = 100.0 - miss;
    // Truncate rather than round, so 99.996 never shows as 100.
    let scale = 10f64.powi(digits as i32);
    format!("{:.*}%", digits, (shown * scale).floor() / scale)
}

/// A number without trailing zeros: `3`, `2.5`.
pub fn fmt_num(v: f64) -> String {
    let s = format!("{v:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// How many largest changes the headline names (as the report's, `marks.rs`).
const TOP: usize = 5;

/// The comparison in one line, what the terminal shows before the table (the report's
/// headline, `marks.rs`, counts its cells the same way): rows by verdict, and the largest
/// changes called, by the size of the log ratio.
pub fn headline(cmp: &super::Comparison) -> String {
    use super::Verdict;
    let count = |v: Verdict| cmp.rows.iter().filter(|r| r.verdict == v).count();
    let mut called: Vec<&super::Row> = cmp
        .rows
        .iter()
        .filter(|r| r.verdict.is_significant())
        .collect();
    let size = |r: &super::Row| r.test.as_ref().map_or(0.0, |t| t.log_ratio.abs());
    called.sort_by(|x, y| size(y).total_cmp(&size(x)));
    let largest: Vec<String> = called
        .iter()
        .take(TOP)
        .filter_map(|r| {
            let t = r.test.as_ref()?;
            Some(format!(
                "{} {} {} {} ({})",
                r.step,
                r.metric,
                fmt_pct(t.change_pct),
                fmt_ci(r.ci_pct),
                r.verdict.as_str()
            ))
        })
        .collect();
    format!(
        "Headline: {} better, {} worse, {} no change, {} inconclusive, {} untestable{}; largest \
         changes called: {}",
        count(Verdict::Better),
        count(Verdict::Worse),
        count(Verdict::NoChange),
        count(Verdict::Inconclusive),
        count(Verdict::Untestable),
        match (count(Verdict::Flagged), count(Verdict::Disturbed)) {
            (0, 0) => String::new(),
            (f, 0) => format!(", {f} in flagged steps (not steady or too short: not called)"),
            (0, d) => format!(", {d} in disturbed steps (a neighbour: not called)"),
            (f, d) => format!(
                ", {f} in flagged steps (not steady or too short) and {d} in disturbed steps \
                 (a neighbour): not called"
            ),
        },
        if largest.is_empty() {
            "none".to_string()
        } else {
            largest.join("; ")
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_wording() {
        assert_eq!(fmt_p(0.0001), "p<0.001");
        assert_eq!(fmt_p(0.005), "p<0.01");
        assert_eq!(fmt_p(0.25), "p=0.250");
        assert_eq!(fmt_q(0.0001), "q<0.001");
    }

    #[test]
    fn numbers_are_shown_as_the_issue_asks() {
        assert_eq!(fmt_ci(Some([-31.2, 2.04])), "[-31%, +2.0%]");
        assert_eq!(fmt_ci(None), "-");
        assert_eq!(fmt_level(0.99), "99%");
        assert_eq!(fmt_level(0.95), "95%");
        assert_eq!(fmt_level(1.0 - 0.01 / 26.0), "99.96%");
        assert_eq!(fmt_level(1.0 - 0.01 / 3.0), "99.6%");
        assert_eq!(fmt_num(3.0), "3");
        assert_eq!(fmt_num(2.5), "2.5");
    }
}
