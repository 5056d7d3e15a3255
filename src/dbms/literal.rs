//! Plain-SQL mode (`--plain-sql`): statements sent as text with their values inlined, the way
//! clients without prepared statements talk to the server (sysbench `--db-ps-mode=disable`).
//!
//! The DBMS files keep one SQL text per statement; [`bind`] fills its placeholders (`?`, `?N`,
//! `$N`) with literals. Values are numbers or strings that ibench generated; strings are quoted
//! with `'` doubled (and `\` doubled where the server treats it as an escape).

use std::fmt::Write;

/// A value bound to a statement's parameter, or inlined into its text in plain-SQL mode.
#[derive(Clone, Copy, Debug)]
pub enum Literal<'a> {
    /// An integer.
    Int(i64),
    /// A float (written with enough digits to read back the same value).
    Float(f64),
    /// A string, quoted.
    Str(&'a str),
}

/// Appends `value` as an SQL literal.
pub fn push(out: &mut String, value: Literal<'_>, backslash_escapes: bool) {
    match value {
        Literal::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Literal::Float(f) => {
            let _ = write!(out, "{f:?}");
        }
        Literal::Str(s) => {
            out.push('\'');
            for c in s.chars() {
                match c {
                    '\'' => out.push_str("''"),
                    '\\' if backslash_escapes => out.push_str("\\\\"),
                    c => out.push(c),
                }
            }
            out.push('\'');
        }
    }
}

/// `sql` with its placeholders replaced by `values`: `?N` and `$N` take value N (1-based), a
/// bare `?` takes the next value in order.
pub fn bind(sql: &str, values: &[Literal<'_>], backslash_escapes: bool) -> String {
    let mut out = String::with_capacity(sql.len() + 16 * values.len());
    let mut next = 0;
    let mut chars = sql.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '?' && c != '$' {
            out.push(c);
            continue;
        }
        let mut end = i + 1;
        while let Some(&(j, d)) = chars.peek() {
            if !d.is_ascii_digit() {
                break;
            }
            end = j + 1;
            chars.next();
        }
        let index = match sql[i + 1..end].parse::<usize>() {
            Ok(n) => n - 1,
            Err(_) if c == '?' => {
                next += 1;
                next - 1
            }
            Err(_) => {
                out.push(c);
                continue;
            }
        };
        match values.get(index) {
            Some(v) => push(&mut out, *v, backslash_escapes),
            None => out.push_str("NULL"),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binds_every_placeholder_style() {
        let v = [Literal::Int(5), Literal::Str("it's"), Literal::Float(0.1)];
        assert_eq!(
            bind("a = ?1 AND b = ?2 OR c >= ?3", &v, false),
            "a = 5 AND b = 'it''s' OR c >= 0.1"
        );
        assert_eq!(bind("x IN ($1,$3)", &v, false), "x IN (5,0.1)");
        assert_eq!(bind("x = ? AND y = ?", &v, false), "x = 5 AND y = 'it''s'");
        assert_eq!(
            bind("s = ?2", &[Literal::Int(1), Literal::Str("a\\b")], true),
            "s = 'a\\\\b'"
        );
    }
}
