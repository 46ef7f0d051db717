//! Credentials a configuration may carry inside a URL (`nats://user:password@host`, a
//! wallet or base URL with a user), masked wherever a configuration or an error is shown
//! or kept: the logs, error texts, and the audit log's `config` rows (which every backup
//! and export copies). A secret the table needs lives in a file of its own (a `.creds`
//! file, a wallet's `secret_file`, `<db>.key`), which a configuration names by path.

use serde_json::Value;

/// What stands for a masked secret.
pub const MASK: &str = "***";

/// `url` (one or more comma-separated URLs, as a NATS cluster is given) with every
/// password replaced by `***` (a user alone — a NATS token — is all secret, and is
/// replaced whole). Only the authority's user information is touched: an `@` in a path
/// or query is left alone.
pub fn url(url: &str) -> String {
    url.split(',')
        .map(|one| {
            let one = one.trim();
            let (scheme, rest) = match one.find("://") {
                Some(i) => (&one[..i + 3], &one[i + 3..]),
                None => ("", one),
            };
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            let (authority, tail) = rest.split_at(end);
            match authority.rfind('@') {
                Some(at) => {
                    let user = &authority[..at];
                    let host = &authority[at + 1..];
                    match user.split_once(':') {
                        Some((name, _)) => format!("{scheme}{name}:{MASK}@{host}{tail}"),
                        None => format!("{scheme}{MASK}@{host}{tail}"),
                    }
                }
                None => one.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `value` (a configuration as JSON) with [`url`] applied to every string that is a URL
/// (holds `://`) or is the value of a key named `…url` (a NATS address may omit its
/// scheme): what the audit log records of a configuration.
pub fn json(value: &mut Value) {
    walk(value, false);
}

fn walk(value: &mut Value, url_key: bool) {
    match value {
        Value::String(s) if url_key || s.contains("://") => *s = url(s),
        Value::Array(items) => items.iter_mut().for_each(|v| walk(v, url_key)),
        Value::Object(map) => map
            .iter_mut()
            .for_each(|(k, v)| walk(v, k.to_ascii_lowercase().ends_with("url"))),
        _ => {}
    }
}

/// `text` with [`json`] applied if it is JSON (the text itself when nothing was masked);
/// else [`url`] applied to each of its space-separated words that holds `://` (an
/// error's text naming a URL).
pub fn text(text: &str) -> String {
    if let Ok(original) = serde_json::from_str::<Value>(text) {
        let mut masked = original.clone();
        json(&mut masked);
        return if masked == original {
            text.to_string()
        } else {
            masked.to_string()
        };
    }
    text.split(' ')
        .map(|w| {
            if w.contains("://") {
                url(w)
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_and_tokens_never_show() {
        assert_eq!(
            url("nats://tbla:tbla-pw@10.0.0.5:4222"),
            "nats://tbla:***@10.0.0.5:4222"
        );
        assert_eq!(
            url("nats://s3cret@a:4222, tls://u:p@b:4222,nats://c:4222"),
            "nats://***@a:4222,tls://u:***@b:4222,nats://c:4222"
        );
        assert_eq!(url("127.0.0.1:4222"), "127.0.0.1:4222");
        assert_eq!(url("u:p@127.0.0.1:4222"), "u:***@127.0.0.1:4222");
        assert_eq!(
            url("https://w:pw@wallet:8443/api/v1?to=a@b"),
            "https://w:***@wallet:8443/api/v1?to=a@b"
        );
        assert_eq!(url("http://wallet/a@b"), "http://wallet/a@b");
    }

    #[test]
    fn a_configuration_keeps_everything_but_its_urls_passwords() {
        let mut v = serde_json::json!({
            "table": {"name": "Bob@Home", "variant": "/etc/croupier/house.toml"},
            "publish": {"nats_url": "u:secret@n:4222", "credentials": "/etc/t.creds"},
            "play": {"base_url": "https://a:b@play", "http_wallet": {"url": "http://w:x@w"}},
            "list": ["nats://t0ken@h"],
        });
        json(&mut v);
        let text = v.to_string();
        for secret in ["secret", ":b@", ":x@", "t0ken"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        for kept in [
            "Bob@Home",
            "/etc/croupier/house.toml",
            "/etc/t.creds",
            "u:***@n:4222",
        ] {
            assert!(text.contains(kept), "{kept} in {text}");
        }
        assert_eq!(
            super::text("cannot reach http://w:x@w/debit: refused"),
            "cannot reach http://w:***@w/debit: refused"
        );
    }
}
