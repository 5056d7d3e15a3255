//! docs/design.md's table of what adding a DBMS costs ("Recipe: adding a DBMS") against the
//! source: for each trait it names, its methods, how many and which are required (no default
//! body) and optional, and the total below the table. Every trait under `src/dbms/` must have
//! a row. Reads the sources only (tokens as `architecture.rs` reads them).

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use crate::architecture::{Tok, tokens};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A trait's methods: required (declared with `;`) and optional (with a default body).
#[derive(Debug, Default, PartialEq)]
struct Methods {
    required: BTreeSet<String>,
    optional: BTreeSet<String>,
}

/// One row of the table: the trait, its file (under `src/`), its counts and method names.
#[derive(Debug)]
struct Row {
    name: String,
    file: String,
    total: usize,
    required: (usize, BTreeSet<String>),
    optional: (usize, BTreeSet<String>),
}

/// The methods of trait `name` in `source`.
fn methods(source: &str, name: &str) -> Option<Methods> {
    let toks = tokens(source);
    let at = toks
        .windows(2)
        .position(|w| w[0] == Tok::Ident("trait".into()) && w[1] == Tok::Ident(name.into()))?;
    let open = at + toks[at..].iter().position(|t| *t == Tok::Punct('{'))?;
    let mut out = Methods::default();
    let (mut depth, mut pending) = (0usize, None::<String>);
    for (i, t) in toks.iter().enumerate().skip(open) {
        match t {
            Tok::Punct('{') => {
                if let (1, Some(m)) = (depth, pending.take()) {
                    out.optional.insert(m);
                }
                depth += 1;
            }
            Tok::Punct('}') => {
                depth -= 1;
                if depth == 0 {
                    return Some(out);
                }
            }
            Tok::Punct(';') if depth == 1 => {
                if let Some(m) = pending.take() {
                    out.required.insert(m);
                }
            }
            Tok::Ident(fn_) if depth == 1 && fn_ == "fn" => {
                if let Some(Tok::Ident(m)) = toks.get(i + 1) {
                    pending = Some(m.clone());
                }
            }
            _ => {}
        }
    }
    None
}

/// The names in backticks of `cell`, outside parentheses (which hold remarks).
fn names(cell: &str) -> BTreeSet<String> {
    let mut plain = String::new();
    let mut depth = 0;
    for c in cell.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    plain
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// A count cell: `7: \`a\`, ...` or `0`.
fn counted(cell: &str) -> (usize, BTreeSet<String>) {
    let (n, rest) = cell.split_once(':').unwrap_or((cell, ""));
    let n = n
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("no count in {cell:?}"));
    (n, names(rest))
}

/// The rows of the table whose header starts with `| trait (file) |`.
fn rows(design: &str) -> Vec<Row> {
    let mut lines = design
        .lines()
        .skip_while(|l| !l.starts_with("| trait (file) |"));
    lines
        .next()
        .expect("docs/design.md has the table of trait methods");
    lines
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            let head: Vec<&str> = cells[0].split('`').skip(1).step_by(2).collect();
            Row {
                name: head[0].to_string(),
                file: head[1].to_string(),
                total: cells[2].parse().expect("a count of methods"),
                required: counted(cells[3]),
                optional: counted(cells[4]),
            }
        })
        .collect()
}

/// Every trait declared under `src/dbms/`: (name, file under `src/`).
fn dbms_traits() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut dirs = vec![root().join("src/dbms")];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let toks = tokens(&fs::read_to_string(&path).unwrap());
            let rel = path.strip_prefix(root().join("src")).unwrap();
            for w in toks.windows(2) {
                if let (Tok::Ident(t), Tok::Ident(name)) = (&w[0], &w[1])
                    && t == "trait"
                {
                    out.push((name.clone(), rel.display().to_string()));
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_trait_table_counts_the_methods_the_source_has() {
    let design = fs::read_to_string(root().join("docs/design.md")).unwrap();
    let rows = rows(&design);
    let mut wrong = Vec::new();
    for row in &rows {
        let source = fs::read_to_string(root().join("src").join(&row.file))
            .unwrap_or_else(|e| panic!("{}: {e}", row.file));
        let Some(m) = methods(&source, &row.name) else {
            wrong.push(format!("no trait {} in src/{}", row.name, row.file));
            continue;
        };
        let (required, optional) = (m.required.len(), m.optional.len());
        if (row.total, row.required.0, row.optional.0) != (required + optional, required, optional)
            || (&row.required.1, &row.optional.1) != (&m.required, &m.optional)
        {
            wrong.push(format!(
                "{}: the table says {} methods, {} required {:?}, {} optional {:?}; the source \
                 has {}, {required} required {:?}, {optional} optional {:?}",
                row.name,
                row.total,
                row.required.0,
                row.required.1,
                row.optional.0,
                row.optional.1,
                required + optional,
                m.required,
                m.optional
            ));
        }
    }
    for (name, file) in dbms_traits() {
        if !rows.iter().any(|r| r.name == name) {
            wrong.push(format!("trait {name} (src/{file}) has no row"));
        }
    }
    let total: usize = rows.iter().map(|r| r.total).sum();
    let required: usize = rows.iter().map(|r| r.required.0).sum();
    let sentence = format!("In all {total} methods, {required} of them required.");
    if !design.contains(&sentence) {
        wrong.push(format!(
            "the sentence below the table should say: {sentence:?}"
        ));
    }
    assert!(
        wrong.is_empty(),
        "docs/design.md's trait table (Recipe: adding a DBMS) disagrees with the source:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn methods_are_told_required_from_optional() {
    let source = "pub trait T: Send {\n    /// a { brace in a comment\n    fn a(&self) -> \
                  u8;\n    fn b(&self) -> Result<()> {\n        let s = \"}\";\n        \
                  Ok(())\n    }\n    #[doc = \"x\"]\n    fn c<F: Fn() -> u8>(&self, f: F)\n    \
                  where\n        F: Send;\n}\nfn outside() {}";
    let m = methods(source, "T").unwrap();
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(m.required, set(&["a", "c"]));
    assert_eq!(m.optional, set(&["b"]));
    assert_eq!(
        names("3: `x` (from `y`), `z` (required where `w`)"),
        set(&["x", "z"])
    );
}
