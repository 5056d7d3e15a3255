//! Every format from one report model: the model is built once from real SQLite runs
//! (synchronous=OFF twice as the base, FULL once), then rendered as JSON, Markdown and HTML,
//! and each step's throughput, its relative value and its mark, and the headline's counts,
//! read back from each rendering, agree. (There is no CSV or terminal rendering of a report
//! model: `ibench export --format csv` and `ibench show` are of one run.)

use std::collections::BTreeMap;

use ibench::report::render::Format;
use ibench::report::{build, figures, select};
use ibench::results::store::Store;
use serde_json::Value;

use crate::common::Bench;

/// The Markdown table titled `title…`: header and rows of cells (trimmed).
fn md_table(md: &str, title: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let after = md
        .split(&format!("\n*{title}"))
        .nth(1)
        .unwrap_or_else(|| panic!("no table {title} in {md}"));
    let mut lines = after
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'));
    let cells = |l: &str| -> Vec<String> {
        let v: Vec<String> = l.split('|').map(|c| c.trim().to_string()).collect();
        v[1..v.len() - 1].to_vec()
    };
    let header = cells(lines.next().unwrap());
    let rows = lines.skip(1).map(cells).collect();
    (header, rows)
}

/// The HTML table captioned `title…`: header and rows of cells as (class, text).
fn html_table(page: &str, title: &str) -> (Vec<String>, Vec<Vec<(String, String)>>) {
    let after = page
        .split(&format!("<caption>{title}"))
        .nth(1)
        .unwrap_or_else(|| panic!("no table {title}"));
    let table = after.split("</table>").next().unwrap();
    // (minijinja escapes `/` too.)
    let text = |s: &str| {
        s.split('<')
            .next()
            .unwrap()
            .replace("&#x2f;", "/")
            .replace("&#x27;", "'")
            .replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
    };
    let head = table
        .split("<thead>")
        .nth(1)
        .unwrap()
        .split("</thead>")
        .next();
    let header = head.unwrap().split("<th>").skip(1).map(text).collect();
    let body = table.split("<tbody>").nth(1).unwrap();
    let rows = body
        .split("<tr>")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|td| {
                    let (attrs, rest) = td.split_once('>').unwrap();
                    let class = attrs
                        .split("class=\"")
                        .nth(1)
                        .map(|c| c.split('"').next().unwrap().to_string())
                        .unwrap_or_default();
                    (class, text(rest))
                })
                .collect()
        })
        .collect();
    (header, rows)
}

/// The step's primary throughput figure: q/s, else indexed rows/s, else ins/s.
fn primary(step: &Value) -> &'static str {
    ["queries_per_s", "index_rows_per_s", "inserts_per_s"]
        .into_iter()
        .find(|k| !step["groups"][0]["throughput"][*k].is_null())
        .unwrap()
}

#[test]
fn json_markdown_and_html_of_one_model_agree_on_rates_marks_and_headline() {
    // The host to itself: a change in a step other tests' runs disturbed is not called.
    let bench = Bench::exclusive();
    let size = ["--l0-rows", "20000", "--l1-rows", "24000", "--clients", "1"];
    for (label, sync) in [("off", "OFF"), ("off", "OFF"), ("full", "FULL")] {
        let pragma = format!("synchronous={sync}");
        let mut args = vec!["--steps", "l.i0,l.x,l.i1,l.i2,qr100", "--label", label];
        args.extend(["--query-seconds", "3", "--sqlite-pragma", &pragma]);
        args.extend(size);
        bench.run(&args).result();
    }
    let store = Store::open_existing(&bench.out().join("results.db")).unwrap();
    let names = ["off".to_string(), "full".to_string()];
    let groups = select::groups_by(&store, &names, None, select::GroupBy::Label).unwrap();
    let report = build::build(&groups).unwrap();
    let render = |format: Format| format.renderer().render(&report).unwrap();
    let json: Value = serde_json::from_str(&render(Format::Json)).unwrap();
    let md = render(Format::Md);
    let page = render(Format::Html);

    let (md_head, md_rows) = md_table(&md, "absolute (median");
    let (html_head, html_rows) = html_table(&page, "absolute (median");
    assert_eq!(md_head, html_head);
    let (md_rel_head, md_rel) = md_table(&md, "relative to off");
    let (html_rel_head, html_rel) = html_table(&page, "relative to off");
    assert_eq!(md_rel_head, html_rel_head);
    let mut marked = BTreeMap::new();
    for (si, step) in json["step_reports"].as_array().unwrap().iter().enumerate() {
        let key = primary(step);
        let def = figures::find(key).unwrap();
        let col = si + 1;
        assert!(md_head[col].starts_with(step["name"].as_str().unwrap()));
        for (gi, g) in step["groups"].as_array().unwrap().iter().enumerate() {
            let stat = &g["throughput"][key];
            let rate = def.format(stat["median"].as_f64().unwrap());
            // The absolute rate: the same text in Markdown (its range after it) and HTML.
            assert!(
                md_rows[gi][col].starts_with(&rate),
                "{}: {md}",
                md_rows[gi][col]
            );
            assert_eq!(html_rows[gi][col].1, rate, "{:?}", html_rows[gi]);
            if gi == 0 {
                continue;
            }
            // The relative value and its mark: bold in Markdown exactly where the HTML cell
            // has the mark's class, and that mark is the model's.
            let rel = format!("{:.2}", stat["relative"].as_f64().unwrap());
            let mark = stat["judged"]["mark"].as_str().unwrap();
            let (class, text) = &html_rel[gi][col];
            assert_eq!(text, &rel, "{} {key}", step["name"]);
            let bold = md_rel[gi][col].starts_with("**");
            assert!(md_rel[gi][col].trim_matches('*').starts_with(&rel));
            let is_marked = mark == "better" || mark == "worse";
            assert_eq!(
                bold, is_marked,
                "{}: {mark} {}",
                step["name"], md_rel[gi][col]
            );
            assert_eq!(
                is_marked,
                class == mark,
                "{}: {class} vs {mark}",
                step["name"]
            );
            if is_marked {
                marked.insert(step["name"].as_str().unwrap().to_string(), mark.to_string());
            }
        }
    }
    // FULL fsyncs l.i2's small commits: a real difference is marked in every format (unless
    // a busy host left the step not steady, which the cell then says).
    let l_i2 = &json["step_reports"][3]["groups"][1]["throughput"]["inserts_per_s"];
    assert!(
        marked.get("l.i2").map(String::as_str) == Some("worse")
            || l_i2["judged"]["mark"] == "flagged",
        "{l_i2}"
    );
    // The headline's counts: the same numbers in the model, Markdown and HTML.
    let h = &json["headline"][0];
    let title = "configurations against off";
    let (_, md_h) = md_table(&md, title);
    let (_, html_h) = html_table(&page, title);
    for (col, key) in [
        (1, "better"),
        (2, "worse"),
        (3, "unchanged"),
        (4, "too_noisy"),
    ] {
        let n = h[key].as_u64().unwrap().to_string();
        assert_eq!(md_h[0][col].trim_matches('*'), n, "{key}: {md_h:?}");
        assert_eq!(html_h[0][col].1, n, "{key}: {html_h:?}");
    }
    assert!(
        h["worse"].as_u64().unwrap() >= marked.values().filter(|m| *m == "worse").count() as u64
    );
}
