//! A strict reader of the Prometheus text exposition format 0.0.4, for the tests: every
//! line must be a `# HELP`, a `# TYPE` or a sample; every sample must belong to a family
//! declared before it (histograms by their `_bucket`, `_sum`, `_count` series); a family
//! is declared once; counters end in `_total`; values are numbers.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};

/// The samples of one scrape: `name{k="v",...}` (labels as written) → value.
#[derive(Debug, Default)]
pub struct Scrape {
    /// Every sample.
    pub samples: BTreeMap<String, f64>,
    /// Each family's type.
    pub types: HashMap<String, String>,
}

impl Scrape {
    /// A sample's value; panics if it is missing.
    pub fn get(&self, series: &str) -> f64 {
        *self
            .samples
            .get(series)
            .unwrap_or_else(|| panic!("no sample {series} in the scrape"))
    }

    /// The sum of the samples of `name` (any labels).
    pub fn sum(&self, name: &str) -> f64 {
        self.samples
            .iter()
            .filter(|(k, _)| k.as_str() == name || k.starts_with(&format!("{name}{{")))
            .map(|(_, v)| v)
            .sum()
    }
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// Parses `{k="v",...}`: returns the rest of the line after `}`.
fn labels(mut s: &str, line: &str) -> Result<String, String> {
    s = s
        .strip_prefix('{')
        .ok_or_else(|| format!("labels: {line}"))?;
    loop {
        if let Some(rest) = s.strip_prefix('}') {
            return Ok(rest.to_string());
        }
        let eq = s
            .find('=')
            .ok_or_else(|| format!("label without '=': {line}"))?;
        if !valid_name(&s[..eq]) {
            return Err(format!("bad label name {:?}: {line}", &s[..eq]));
        }
        s = s[eq + 1..]
            .strip_prefix('"')
            .ok_or_else(|| format!("label value not quoted: {line}"))?;
        let mut escaped = false;
        let mut end = None;
        for (i, c) in s.char_indices() {
            match (escaped, c) {
                (true, '\\' | '"' | 'n') => escaped = false,
                (true, _) => return Err(format!("bad escape: {line}")),
                (false, '\\') => escaped = true,
                (false, '"') => {
                    end = Some(i);
                    break;
                }
                (false, '\n') => return Err(format!("raw newline: {line}")),
                _ => {}
            }
        }
        let end = end.ok_or_else(|| format!("unterminated label value: {line}"))?;
        s = &s[end + 1..];
        s = s.strip_prefix(',').unwrap_or(s);
    }
}

/// Parses and checks a whole exposition.
pub fn parse(text: &str) -> Result<Scrape, String> {
    let mut scrape = Scrape::default();
    let mut helped = HashMap::new();
    for line in text.lines() {
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# ") {
            let mut parts = rest.splitn(3, ' ');
            let (kw, name, tail) = (parts.next(), parts.next(), parts.next());
            let name = name.ok_or_else(|| format!("comment without a name: {line}"))?;
            if !valid_name(name) {
                return Err(format!("bad metric name: {line}"));
            }
            match kw {
                Some("HELP") => {
                    if helped.insert(name.to_string(), ()).is_some() {
                        return Err(format!("HELP twice for {name}"));
                    }
                }
                Some("TYPE") => {
                    let kind = tail.unwrap_or("");
                    if !["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind) {
                        return Err(format!("bad type: {line}"));
                    }
                    if kind == "counter" && !name.ends_with("_total") {
                        return Err(format!("counter without _total: {name}"));
                    }
                    if scrape
                        .types
                        .insert(name.to_string(), kind.to_string())
                        .is_some()
                    {
                        return Err(format!("TYPE twice for {name}"));
                    }
                }
                _ => return Err(format!("unknown comment: {line}")),
            }
            continue;
        }
        let name_end = line
            .find(['{', ' '])
            .ok_or_else(|| format!("sample without a value: {line}"))?;
        let name = &line[..name_end];
        if !valid_name(name) {
            return Err(format!("bad sample name: {line}"));
        }
        let rest = if line[name_end..].starts_with('{') {
            labels(&line[name_end..], line)?
        } else {
            line[name_end..].to_string()
        };
        let series = &line[..line.len() - rest.len()];
        let value = rest.trim();
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            "NaN" => f64::NAN,
            v => v
                .parse()
                .map_err(|_| format!("value is not a number: {line}"))?,
        };
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| {
                let base = name.strip_suffix(suffix)?;
                (scrape.types.get(base).map(String::as_str) == Some("histogram")).then_some(base)
            })
            .unwrap_or(name);
        if !scrape.types.contains_key(family) {
            return Err(format!("sample before its TYPE: {line}"));
        }
        if scrape.samples.insert(series.to_string(), value).is_some() {
            return Err(format!("series twice: {series}"));
        }
    }
    Ok(scrape)
}
