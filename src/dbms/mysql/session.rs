//! Session variables of a MySQL-family server given by URL: `?sessionVariables=name=value,...`
//! (the parameter MariaDB Connector/J takes), set with one `SET SESSION` on every connection
//! ibench opens, the benchmark's and its own; the server's global values stay as they are.

use crate::dbms::literal::{Literal, push};
use crate::dbms::url::ServerUrl;

/// The URL parameter holding them.
pub(super) const PARAM: &str = "sessionVariables";

/// `url` with `settings` added to its session variables; `Err` (one line) for a name that is
/// not a variable's or a value the parameter cannot carry (a comma).
pub(super) fn with_settings(
    url: ServerUrl,
    settings: &[(String, String)],
) -> Result<ServerUrl, String> {
    if settings.is_empty() {
        return Ok(url);
    }
    let mut list = Vec::new();
    for (name, value) in settings {
        check_name(name)?;
        if value.contains(',') {
            return Err(format!(
                "session variable {name}: a value with a comma cannot be sent ({value:?})"
            ));
        }
        list.push(format!("{name}={value}"));
    }
    Ok(url.with_query_appended(PARAM, &list.join(",")))
}

/// A variable name: letters, digits and `_`.
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!("{name:?} is not a MySQL variable name"))
    }
}

/// The URL text without its session variables, and those (name, value) in order; `Err` for a
/// malformed list.
pub(super) fn split(url: &url::Url) -> Result<(url::Url, Vec<(String, String)>), String> {
    let mut vars = Vec::new();
    let mut kept = Vec::new();
    for (k, v) in url.query_pairs() {
        if k != PARAM {
            kept.push((k.into_owned(), v.into_owned()));
            continue;
        }
        for item in v.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (name, value) = item
                .split_once('=')
                .ok_or_else(|| format!("{PARAM}: expected name=value, got {item:?}"))?;
            check_name(name.trim())?;
            vars.push((name.trim().to_string(), value.trim().to_string()));
        }
    }
    let mut rest = url.clone();
    rest.set_query(None);
    if !kept.is_empty() {
        rest.query_pairs_mut().extend_pairs(kept);
    }
    Ok((rest, vars))
}

/// `SET SESSION a = 1, b = 'x'` for `vars` (numbers as they are, anything else quoted); `None`
/// when there are none.
pub(super) fn statement(vars: &[(String, String)]) -> Option<String> {
    if vars.is_empty() {
        return None;
    }
    let mut sql = String::from("SET SESSION ");
    for (i, (name, value)) in vars.iter().enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        sql.push_str(name);
        sql.push_str(" = ");
        let literal = match (value.parse::<i64>(), value.parse::<f64>()) {
            (Ok(n), _) => Literal::Int(n),
            (_, Ok(f)) if f.is_finite() => Literal::Float(f),
            _ => Literal::Str(value),
        };
        push(&mut sql, literal, true);
    }
    Some(sql)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_travel_in_the_url_and_become_one_statement() {
        let url = ServerUrl::parse("mysql://root@h:3306/test?socket=/s", "X").unwrap();
        let settings = [
            ("sort_buffer_size".to_string(), "1048576".to_string()),
            ("sql_mode".to_string(), "ANSI_QUOTES".to_string()),
        ];
        let url = with_settings(url, &settings).unwrap();
        let (rest, vars) = split(url.url()).unwrap();
        assert_eq!(rest.as_str(), "mysql://root@h:3306/test?socket=%2Fs");
        assert_eq!(vars, settings);
        assert_eq!(
            statement(&vars).unwrap(),
            "SET SESSION sort_buffer_size = 1048576, sql_mode = 'ANSI_QUOTES'"
        );
        let bad = [("a;b".to_string(), "1".to_string())];
        let url = ServerUrl::parse("mysql://root@h/test", "X").unwrap();
        assert!(with_settings(url.clone(), &bad).is_err());
        let comma = [("sql_mode".to_string(), "A,B".to_string())];
        assert!(with_settings(url, &comma).is_err());
    }
}
