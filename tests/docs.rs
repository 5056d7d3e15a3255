//! The documents' commands: every `ibench` command in a shell block of README.md and
//! docs/guide.md is parsed by ibench's own command-line parser (so the docs cannot drift from
//! the CLI), and the README's commands on the embedded default run, in order, at a tiny scale,
//! in a directory of their own.

use std::fs;
use std::path::Path;

use clap::Parser;
use ibench::cli::Cli;

use crate::common::{Bench, path_str};

/// The documents whose shell blocks are checked.
const DOCS: [&str; 2] = ["README.md", "docs/guide.md"];

/// The lines of every ```sh block of `text`, continuation lines (`\`) joined.
fn shell_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut pending = String::new();
    for line in text.lines() {
        let t = line.trim_end();
        if t.starts_with("```") {
            in_block = !in_block && t == "```sh";
            continue;
        }
        if !in_block {
            continue;
        }
        match t.strip_suffix('\\') {
            Some(head) => pending.push_str(head),
            None => {
                pending.push_str(t);
                out.push(std::mem::take(&mut pending));
            }
        }
    }
    out
}

/// Splits a shell line into words as sh would (quotes, `#` comments, `$(...)` as one word), and
/// into commands at `;`, `&&`, `|`; a redirection (`> file`) is dropped.
fn commands(line: &str) -> Vec<Vec<String>> {
    let mut cmds = vec![Vec::new()];
    let mut word: Option<String> = None;
    let mut chars = line.chars().peekable();
    let mut skip_next_word = false;
    let end_word = |word: &mut Option<String>, cmds: &mut Vec<Vec<String>>, skip: &mut bool| {
        if let Some(w) = word.take() {
            if *skip {
                *skip = false;
            } else {
                cmds.last_mut().unwrap().push(w);
            }
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                let w = word.get_or_insert_with(String::new);
                for d in chars.by_ref() {
                    if d == c {
                        break;
                    }
                    w.push(d);
                }
            }
            '$' if chars.peek() == Some(&'(') => {
                // A command substitution: one word, its value unknown.
                let mut depth = 0;
                for d in chars.by_ref() {
                    match d {
                        '(' => depth += 1,
                        ')' if depth == 1 => break,
                        ')' => depth -= 1,
                        _ => {}
                    }
                }
                word.get_or_insert_with(String::new).push('x');
            }
            '#' if word.is_none() => break,
            ' ' | '\t' => end_word(&mut word, &mut cmds, &mut skip_next_word),
            ';' | '|' | '&' => {
                end_word(&mut word, &mut cmds, &mut skip_next_word);
                if chars.peek() == Some(&c) {
                    chars.next();
                }
                cmds.push(Vec::new());
            }
            '>' | '<' => {
                end_word(&mut word, &mut cmds, &mut skip_next_word);
                skip_next_word = true;
            }
            _ => word.get_or_insert_with(String::new).push(c),
        }
    }
    end_word(&mut word, &mut cmds, &mut skip_next_word);
    cmds.retain(|c| !c.is_empty());
    cmds
}

/// The arguments after `ibench` (or `cargo run --release --`) of a command, without the
/// environment assignments before it; `None` for any other command.
fn ibench_args(words: &[String]) -> Option<Vec<String>> {
    let keywords = ["do", "then", "else", "time"];
    let start = words
        .iter()
        .position(|w| !w.contains('=') && !keywords.contains(&w.as_str()))?;
    let words = &words[start..];
    match words.first()?.as_str() {
        "ibench" => Some(words[1..].to_vec()),
        "cargo" if words.get(1).is_some_and(|w| w == "run") => {
            let dash = words.iter().position(|w| w == "--")?;
            Some(words[dash + 1..].to_vec())
        }
        _ => None,
    }
}

/// Every ibench command of `doc` (a path from the repository's root).
fn doc_commands(doc: &str) -> Vec<Vec<String>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(doc);
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{doc}: {e}"));
    shell_lines(&text)
        .iter()
        .flat_map(|l| commands(l))
        .filter_map(|c| ibench_args(&c))
        .collect()
}

#[test]
fn the_shell_splitting_the_check_relies_on() {
    let c = commands("PGPASSWORD=x ibench run --url 'a b' --tag c=$(git rev-parse x) # note");
    assert_eq!(
        c,
        vec![vec![
            "PGPASSWORD=x",
            "ibench",
            "run",
            "--url",
            "a b",
            "--tag",
            "c=x"
        ]]
    );
    let c = commands("for i in 1 2; do ibench export R > run.json; done");
    assert_eq!(
        ibench_args(&c[1]),
        Some(vec!["export".to_string(), "R".to_string()])
    );
    assert_eq!(
        shell_lines("x\n```sh\na \\\n b\n```\n```toml\nc\n```\n"),
        vec!["a  b"]
    );
}

#[test]
fn every_command_in_the_readme_and_the_guide_parses() {
    for doc in DOCS {
        let cmds = doc_commands(doc);
        assert!(
            cmds.len() >= 8,
            "{doc}: only {} ibench commands found",
            cmds.len()
        );
        for args in cmds {
            let argv = std::iter::once("ibench".to_string()).chain(args.iter().cloned());
            if let Err(e) = Cli::try_parse_from(argv) {
                panic!("{doc}: `ibench {}` does not parse:\n{e}", args.join(" "));
            }
        }
    }
}

/// Whether a command needs a server (or a file of the docs' own), so it is parsed, not run.
fn needs_more_than_sqlite(args: &[String]) -> bool {
    let flags = ["--server", "--url", "--out", "--results", "--path"];
    args.iter().any(|a| flags.contains(&a.as_str()))
        || matches!(
            args.first().map(String::as_str),
            Some("server" | "experiment" | "dataset" | "micro" | "tpcc")
        )
}

#[test]
fn the_readmes_embedded_commands_run_at_a_tiny_scale() {
    let bench = Bench::new();
    let mut ran = Vec::new();
    for args in doc_commands("README.md") {
        if needs_more_than_sqlite(&args) {
            continue;
        }
        let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
        if all[0] == "run" {
            // A hundredth of the rows, a third of a second per query step.
            all.extend(["--scale", "0.01", "--query-seconds", "30"]);
        }
        let o = bench.run_raw(&all, &[]);
        assert_eq!(
            o.code,
            Some(0),
            "`ibench {}`:\n{}",
            args.join(" "),
            o.describe()
        );
        ran.push(args.join(" "));
    }
    assert!(
        ran.iter().any(|c| c.starts_with("run"))
            && ran.iter().any(|c| c.starts_with("report"))
            && ran.iter().any(|c| c.starts_with("compare"))
            && ran.iter().any(|c| c.starts_with("history")),
        "the README's embedded tour: {ran:?}"
    );
    let store = bench.path("ibench-results/results.db");
    assert!(store.is_file(), "{} holds the runs", path_str(&store));
}
