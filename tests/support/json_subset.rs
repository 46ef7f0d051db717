//! Comparing a program's JSON with an expected file that may leave fields out (the replay
//! scenarios' `.expected.json`).

use serde_json::Value;

/// Differences between `want` and `got`, where `want` may leave object fields out; each
/// as `PATH: want X got Y` or `PATH: missing`, appended to `out`.
pub fn subset_diffs(want: &Value, got: &Value, path: &str, out: &mut Vec<String>) {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, wv) in w {
                match g.get(k) {
                    Some(gv) => subset_diffs(wv, gv, &format!("{path}.{k}"), out),
                    None => out.push(format!("{path}.{k}: missing")),
                }
            }
        }
        (Value::Array(w), Value::Array(g)) if w.len() == g.len() => {
            for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                subset_diffs(wv, gv, &format!("{path}[{i}]"), out);
            }
        }
        _ if want == got => {}
        _ => out.push(format!("{path}: want {want} got {got}")),
    }
}
