//! Server URLs (`postgres://...`, `mysql://...`) with the password kept apart: it can be used
//! to connect but never printed, logged or serialized (`***` stands in for it).

use std::fmt;

use percent_encoding::percent_decode_str;
use serde::{Deserialize, Serialize};
use url::Url;

use crate::error::UsageError;

/// What stands in for a password wherever a URL is shown or stored.
pub const REDACTED: &str = "***";

/// Query parameters that carry a secret.
pub(crate) fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key.contains("password") || key == "pass" || key == "pwd"
}

/// A server URL whose password (from the URL or an environment variable) is never shown.
#[derive(Clone)]
pub struct ServerUrl {
    /// The URL without its password.
    url: Url,
    password: Option<String>,
}

impl ServerUrl {
    /// Parses `text`; the password comes from the URL, else from `password_env` when set.
    pub fn parse(text: &str, password_env: &str) -> Result<Self, UsageError> {
        let mut url = Url::parse(text).map_err(|e| {
            UsageError::new(format!(
                "invalid --url: {e} (expected e.g. postgres://user@host:5432/db)"
            ))
        })?;
        let mut from_url = url
            .password()
            .map(|p| percent_decode_str(p).decode_utf8_lossy().into_owned());
        let _ = url.set_password(None);
        // `?password=` is accepted by the PostgreSQL client: move it apart as well.
        if url.query_pairs().any(|(k, _)| is_secret_key(&k)) {
            let pairs: Vec<(String, String)> = url
                .query_pairs()
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            url.set_query(None);
            let mut kept = Vec::new();
            for (k, v) in pairs {
                if is_secret_key(&k) {
                    from_url = from_url.or(Some(v));
                } else {
                    kept.push((k, v));
                }
            }
            if !kept.is_empty() {
                url.query_pairs_mut().extend_pairs(kept);
            }
        }
        let password =
            from_url.or_else(|| std::env::var(password_env).ok().filter(|p| !p.is_empty()));
        let parsed = ServerUrl { url, password };
        parsed.check_host()?;
        Ok(parsed)
    }

    /// A PostgreSQL or MySQL URL names a host (PostgreSQL: or `?host=` / `?hostaddr=`, e.g. a
    /// socket directory): without one, no connection can be made, and that is the URL's fault.
    fn check_host(&self) -> Result<(), UsageError> {
        let url = &self.url;
        let has = |keys: &[&str]| {
            url.query_pairs()
                .any(|(k, v)| keys.contains(&k.as_ref()) && !v.is_empty())
        };
        let (example, ok) = match url.scheme() {
            "postgres" | "postgresql" => (
                "postgres://user@host:5432/db, or postgres:///db?host=/run/postgresql for a \
                 Unix socket",
                has(&["host", "hostaddr"]),
            ),
            "mysql" | "mariadb" => (
                "mysql://user@host:3306/db, or \
                 mysql://user@localhost/db?socket=/run/mysqld/mysqld.sock for a Unix socket",
                false,
            ),
            _ => return Ok(()),
        };
        if url.host_str().is_none_or(str::is_empty) && !ok {
            return Err(UsageError::new(format!(
                "invalid --url {}: it names no host (expected e.g. {example})",
                self.redacted()
            )));
        }
        Ok(())
    }

    /// This URL with the password from environment variable `env` when it has none.
    pub fn or_password_from(self, env: &str) -> Self {
        match (&self.password, std::env::var(env)) {
            (None, Ok(p)) if !env.is_empty() && !p.is_empty() => self.with_password(p),
            _ => self,
        }
    }

    /// This URL with `password` (kept apart, never shown), e.g. a managed server's.
    pub fn with_password(mut self, password: impl Into<String>) -> Self {
        self.password = Some(password.into());
        self
    }

    /// This URL with query parameter `key` set to `value`, appended to what the URL gives it
    /// (joined by a space) when it gives one.
    pub fn with_query_appended(mut self, key: &str, value: &str) -> Self {
        let mut pairs: Vec<(String, String)> = self
            .url
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        match pairs.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = format!("{v} {value}"),
            None => pairs.push((key.to_string(), value.to_string())),
        }
        // Percent-encoded, a space as %20: PostgreSQL's clients do not read `+` as a space.
        const SET: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
            .remove(b'-')
            .remove(b'_')
            .remove(b'.')
            .remove(b'~');
        let encode = |t: &str| percent_encoding::utf8_percent_encode(t, SET).to_string();
        let query: Vec<String> = pairs
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect();
        self.url.set_query(Some(&query.join("&")));
        self
    }

    /// The URL scheme (`postgres`, `postgresql`, `mysql`, `mariadb`).
    pub fn scheme(&self) -> &str {
        self.url.scheme()
    }

    /// The URL without the password, for the DBMS client to parse.
    pub fn without_password(&self) -> String {
        self.url.to_string()
    }

    /// The password, for the DBMS client only.
    pub fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    /// The parsed URL, without its password.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The URL for display: `***` where a password is set.
    pub fn redacted(&self) -> String {
        let mut shown = self.url.clone();
        if self.password.is_some() && !shown.username().is_empty() {
            let _ = shown.set_password(Some(REDACTED));
        }
        shown.to_string()
    }
}

impl fmt::Debug for ServerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl fmt::Display for ServerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl Serialize for ServerUrl {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.redacted())
    }
}

impl<'de> Deserialize<'de> for ServerUrl {
    /// A stored URL has no password (it was redacted when written).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let mut url = Url::parse(&text).map_err(serde::de::Error::custom)?;
        let _ = url.set_password(None);
        Ok(ServerUrl {
            url,
            password: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn password_is_kept_apart_and_redacted() {
        let u = ServerUrl::parse(
            "postgres://bob:s%40cret@db.example:5433/bench",
            "IBENCH_NO_SUCH_ENV",
        )
        .unwrap();
        assert_eq!(u.password(), Some("s@cret"));
        assert_eq!(u.redacted(), "postgres://bob:***@db.example:5433/bench");
        assert!(!u.without_password().contains("cret"));
        assert!(!format!("{u:?} {u}").contains("cret"));
        assert!(!serde_json::to_string(&u).unwrap().contains("cret"));
    }

    #[test]
    fn password_in_query_is_moved_apart() {
        let u = ServerUrl::parse("postgres://u@h/db?sslmode=disable&password=s3cret", "X").unwrap();
        assert_eq!(u.password(), Some("s3cret"));
        assert!(!u.without_password().contains("s3cret"));
        assert!(!u.redacted().contains("s3cret"));
        assert!(u.without_password().contains("sslmode=disable"));
    }

    #[test]
    fn bad_url_is_a_usage_error() {
        assert!(ServerUrl::parse("not a url", "X").is_err());
    }

    #[test]
    fn a_url_without_a_host_is_a_usage_error() {
        for bad in [
            "postgres://",
            "postgres:///db",
            "postgresql://u:pw@/db",
            "mysql://",
            "mariadb:///test?socket=/s",
        ] {
            let e = ServerUrl::parse(bad, "X")
                .err()
                .unwrap_or_else(|| panic!("{bad}"));
            assert!(e.to_string().contains("host"), "{e}");
            assert!(!e.to_string().contains(":pw@"), "{e}");
        }
        for good in [
            "postgres:///db?host=/run/postgresql",
            "postgres://h/db",
            "mysql://h/db",
            "redis://",
        ] {
            assert!(ServerUrl::parse(good, "X").is_ok(), "{good}");
        }
    }
}
