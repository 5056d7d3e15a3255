//! Stored text made safe for a terminal. Labels, names and settings in the results store may
//! come from an imported document, i.e. from anyone: printed raw, an escape sequence in a
//! label could rewrite the screen, the window title or the clipboard (OSC 52), or hide text
//! (bidirectional overrides). Every control character (C0, DEL, C1) and every bidirectional
//! control is printed as a visible escape (`\x1b`, `\u{202e}`) instead. In Markdown
//! ([`markdown`]), the same text must also not be read as markup: a newline or a pipe would
//! break a table row, `<script>` would be HTML.

use std::borrow::Cow;

/// Whether `c` must not reach a terminal raw.
fn is_unsafe(c: char) -> bool {
    c.is_control() // C0, DEL, C1
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn escape<'a>(s: &'a str, keep: &[char], json: bool) -> Cow<'a, str> {
    if !s.chars().any(|c| is_unsafe(c) && !keep.contains(&c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !is_unsafe(c) || keep.contains(&c) {
            out.push(c);
        } else if json {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    Cow::Owned(out)
}

/// `s` for one line (a table cell, a name in a message): every control escaped, newlines
/// and tabs included.
pub fn line(s: &str) -> Cow<'_, str> {
    escape(s, &[], false)
}

/// `s` for multi-line output (a Markdown report on stdout): as [`line`], but newlines and
/// tabs stay.
pub fn text(s: &str) -> Cow<'_, str> {
    escape(s, &['\n', '\t'], false)
}

/// `s` for one Markdown table cell or heading (every Markdown output: reports, `history`):
/// as [`line`] (every control character shown escaped, newlines included, so a row stays
/// one row), with `\\`, `|` and `` ` `` backslash-escaped (no column added, no code span)
/// and `&`, `<`, `>` as HTML entities (no tag, no entity of the text's own).
pub fn markdown(s: &str) -> Cow<'_, str> {
    let special = |c: char| matches!(c, '\\' | '|' | '`' | '&' | '<' | '>');
    if !s.chars().any(special) {
        return line(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '\\' | '|' | '`' => {
                out.push('\\');
                out.push(c);
            }
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
    Cow::Owned(line(&out).into_owned())
}

/// JSON text from serde (which escapes C0 controls itself) with DEL, C1 and bidirectional
/// controls escaped too, as JSON `\u` escapes: the same document, safe on a terminal.
pub fn json(s: &str) -> Cow<'_, str> {
    escape(s, &['\n', '\t'], true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_shown_not_sent() {
        assert_eq!(line("plain label"), "plain label");
        assert!(matches!(line("plain"), Cow::Borrowed(_)));
        assert_eq!(line("a\u{1b}[2Jb"), "a\\x1b[2Jb");
        assert_eq!(
            line("x\u{1b}]52;c;ZXZpbA==\u{7}"),
            "x\\x1b]52;c;ZXZpbA==\\x07"
        );
        assert_eq!(line("csi\u{9b}1m"), "csi\\u{9b}1m");
        assert_eq!(line("rtl\u{202e}txt"), "rtl\\u{202e}txt");
        assert_eq!(line("two\nlines\tand\rcr"), "two\\x0alines\\x09and\\x0dcr");
        assert_eq!(text("two\nlines\tx\u{1b}"), "two\nlines\tx\\x1b");
        assert_eq!(line("naïve 東京"), "naïve 東京");
        let doc = serde_json::to_string_pretty(&serde_json::json!({"l": "a\u{1b}b\u{9b}c\u{7f}"}))
            .unwrap();
        let safe = json(&doc);
        assert!(!safe.chars().any(|c| c.is_control() && c != '\n'), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back["l"], "a\u{1b}b\u{9b}c\u{7f}");
    }

    #[test]
    fn markdown_is_one_cell_of_plain_text() {
        assert_eq!(markdown("l.i0 <=256us"), "l.i0 &lt;=256us");
        assert!(matches!(markdown("plain"), Cow::Borrowed(_)));
        assert_eq!(
            markdown("a|b\n<script>x</script>"),
            "a\\|b\\x0a&lt;script&gt;x&lt;/script&gt;"
        );
        assert_eq!(markdown("`c` \\| &amp;"), "\\`c\\` \\\\\\| &amp;amp;");
        assert_eq!(markdown("rtl\u{202e}"), "rtl\\u{202e}");
    }
}
