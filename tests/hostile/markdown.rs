//! Markdown output (`report --format md`, `history --format md`) of runs whose label, host
//! name and tags hold Markdown and HTML: a newline broke every table row it was in, a pipe
//! added a column, and `history` put a raw `<script>` in its heading. One escaping serves
//! every cell and heading. See the module list in tests/hostile/mod.rs.

use std::fs;

use serde_json::{Value, json};

use crate::common::{Bench, path_str};

/// A label and host name that would break a table row, add a column and run a script.
const HOSTILE: &str = "a|b\n<script>x</script> `code` \\| &amp;";

/// Unescaped pipes of a Markdown line: those not after an odd number of backslashes.
fn pipes(line: &str) -> usize {
    let (mut n, mut backslashes) = (0, 0);
    for c in line.chars() {
        if c == '|' && backslashes % 2 == 0 {
            n += 1;
        }
        backslashes = if c == '\\' { backslashes + 1 } else { 0 };
    }
    n
}

/// Every table of `md` keeps its header's columns in every row, and nothing of the hostile
/// text is raw: no tag, no line break inside it.
fn check(md: &str, what: &str) {
    assert!(
        !md.to_lowercase().contains("<script"),
        "{what}: raw tag\n{md}"
    );
    assert!(!md.contains("</script"), "{what}: raw tag\n{md}");
    assert!(
        md.contains("&lt;script&gt;"),
        "{what}: the label is shown\n{md}"
    );
    let lines: Vec<&str> = md.lines().collect();
    let mut tables = 0;
    let mut i = 0;
    while i < lines.len() {
        // The hostile text's second line, wherever a newline of it was kept.
        assert!(
            !lines[i].starts_with("&lt;script"),
            "{what}: a newline of the label is kept: {:?}",
            lines.get(i.wrapping_sub(1))
        );
        if !lines[i].starts_with('|') {
            // Outside tables, an unescaped pipe could only come from a stored text.
            assert_eq!(
                pipes(lines[i]),
                0,
                "{what}: a pipe outside a table: {}",
                lines[i]
            );
            i += 1;
            continue;
        }
        tables += 1;
        let columns = pipes(lines[i]);
        while i < lines.len() && lines[i].starts_with('|') {
            assert_eq!(pipes(lines[i]), columns, "{what}: row {:?}", lines[i]);
            i += 1;
        }
        // A row broken by a newline would leave its rest on the next line.
        assert!(
            i == lines.len() || lines[i].is_empty(),
            "{what}: a table ends in {:?}",
            lines[i]
        );
    }
    assert!(tables > 0, "{what}: no table\n{md}");
}

#[test]
fn hostile_labels_and_hosts_never_break_a_markdown_table() {
    let bench = Bench::new();
    let run = bench.run(&["--steps", "l.i0", "--l0-rows", "300"]).result();
    let file = bench.out().join(format!("{}.json", run.run_id));
    let doc: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    let store = bench.path("md.db");
    for id in ["md-1", "md-2", "md-3"] {
        let mut d = doc.clone();
        d["run_id"] = id.into();
        d["config"]["label"] = HOSTILE.into();
        d["environment"]["hostname"] = HOSTILE.into();
        d["config"]["tags"] = json!({"commit": "c|<b>x</b>`"});
        let path = bench.path(&format!("{id}.json"));
        fs::write(&path, serde_json::to_vec(&d).unwrap()).unwrap();
        bench
            .run_raw(
                &["import", path_str(&path), "--results", path_str(&store)],
                &[],
            )
            .assert_success();
    }
    for (what, args) in [
        ("report", vec!["report", "--format", "md"]),
        (
            "report by host",
            vec!["report", "--format", "md", "--by", "host"],
        ),
        ("history", vec!["history", HOSTILE, "--format", "md"]),
    ] {
        let mut all = args.clone();
        all.extend(["--results", path_str(&store)]);
        let o = bench.run_raw(&all, &[]);
        o.assert_success();
        check(&o.stdout, what);
    }
}
