//! The OpenAPI document against the service: what it says the service accepts, and every
//! route declared with its method and role.

use super::*;

/// Issue #32 item 14: what the contract fuzzers found. Every request body has a schema of
/// its own (the players' `BetBody` had replaced the staff's, whose seat is required); a
/// seat, box or hand ends at 255; a POST that reads nothing documents the JSON body its
/// session requests must send (it answered 415 with no body in the contract).
#[test]
fn the_openapi_document_says_what_the_service_accepts() {
    let doc: Value = serde_json::from_str(
        &croupier::web::openapi::document()
            .to_json()
            .expect("the document serialises"),
    )
    .expect("openapi.json");
    let body = |path: &str| {
        let r = doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
            ["$ref"]
            .as_str()
            .unwrap_or_else(|| panic!("{path} has a JSON body"))
            .rsplit('/')
            .next()
            .expect("name")
            .to_string();
        doc["components"]["schemas"][r.as_str()].clone()
    };
    let required = |schema: &Value, field: &str| {
        schema["required"]
            .as_array()
            .is_some_and(|r| r.iter().any(|f| f == field))
    };
    assert!(
        required(&body("/api/bets"), "seat"),
        "{}",
        body("/api/bets")
    );
    assert!(!required(&body("/api/play/bet"), "seat"));
    assert!(required(&body("/api/decision"), "seat"));
    assert_ne!(body("/api/decision"), body("/api/play/decision"));
    assert_eq!(doc["components"]["schemas"]["u8"]["maximum"], 255);
    assert_eq!(body("/api/bets")["properties"]["seat"]["maximum"], 255);
    for path in [
        "/api/betting/open",
        "/api/betting/close",
        "/api/shuffle",
        "/api/logout",
    ] {
        assert_eq!(body(path)["type"], "object", "{path}");
    }
}

#[test]
fn the_openapi_document_declares_every_route_with_its_method_and_role() {
    let doc: Value = serde_json::from_str(
        &croupier::web::openapi::document()
            .to_json()
            .expect("the document serialises"),
    )
    .expect("openapi.json");
    // The catch-all answers 404 `not_found` for any other /api/ path: the document's
    // description says so; a path template cannot.
    let specs: Vec<_> = croupier::web::route_specs()
        .into_iter()
        .filter(|s| s.path != "/api/{*rest}")
        .collect();
    for spec in &specs {
        let op = &doc["paths"][spec.path][spec.method.to_ascii_lowercase()];
        assert!(
            op.is_object(),
            "{} {} is not in openapi.json",
            spec.method,
            spec.path
        );
        match spec.access {
            Access::Public | Access::Open => {
                assert_eq!(op["security"], serde_json::json!([]), "{}", spec.path);
                assert!(op.get("x-min-role").is_none(), "{}", spec.path);
            }
            Access::Player | Access::Platform => {
                let scheme = if spec.access == Access::Player {
                    "playerToken"
                } else {
                    "platformKey"
                };
                assert_eq!(
                    op["security"],
                    serde_json::json!([{ scheme: [] }]),
                    "{}",
                    spec.path
                );
                assert!(op.get("x-min-role").is_none(), "{}", spec.path);
                assert!(op["responses"]["401"].is_object(), "{}", spec.path);
            }
            Access::Role(r) => {
                assert_eq!(op["x-min-role"], r.as_str(), "{}", spec.path);
                let schemes: Vec<&str> = op["security"]
                    .as_array()
                    .expect("security")
                    .iter()
                    .flat_map(|req| req.as_object().expect("requirement").keys())
                    .map(String::as_str)
                    .collect();
                // The token first: the server reads a bearer header before any cookie.
                assert_eq!(schemes, ["localToken", "session"], "{}", spec.path);
                assert!(
                    op["responses"]["401"].is_object() && op["responses"]["403"].is_object(),
                    "{}",
                    spec.path
                );
            }
        }
    }
    // And the other way: the document lists nothing the router does not serve.
    let methods = doc["paths"].as_object().expect("paths");
    for (path, item) in methods {
        for method in item.as_object().expect("path item").keys() {
            if method == "parameters" {
                continue;
            }
            assert!(
                specs
                    .iter()
                    .any(|s| s.path == path && s.method.eq_ignore_ascii_case(method)),
                "{method} {path} is documented but not routed"
            );
        }
    }
    // Every schema the document refers to is defined (`Resolution` among them).
    let text = doc.to_string();
    for (i, _) in text.match_indices("#/components/schemas/") {
        let name: String = text[i + 21..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        assert!(
            doc["components"]["schemas"][&name].is_object(),
            "schema {name} is referred to but not defined"
        );
    }
    assert!(
        text.contains("#/components/schemas/Resolution"),
        "the propose body names the Resolution schema"
    );
    // Readiness names every reason /readyz gives.
    let reasons = &doc["components"]["schemas"]["Reason"]["enum"];
    for reason in [
        "store",
        "shoe",
        "alarm",
        "dispute",
        "table_loop",
        "publish_lag",
    ] {
        assert!(
            reasons
                .as_array()
                .is_some_and(|r| r.iter().any(|x| x == reason)),
            "readiness reason {reason} missing: {reasons}"
        );
    }
    // One error body: every JSON error answer documented is the Error schema.
    for (path, item) in methods {
        for (method, op) in item.as_object().expect("path item") {
            for (status, resp) in op["responses"].as_object().expect("responses") {
                if status.starts_with('4') || status.starts_with('5') {
                    let json = &resp["content"]["application/json"];
                    if json.is_object() && path != "/readyz" {
                        assert_eq!(
                            json["schema"]["$ref"], "#/components/schemas/Error",
                            "{method} {path} {status}"
                        );
                    }
                }
            }
        }
    }
}
