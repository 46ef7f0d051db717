//! The pages' routes: the dealer panel, the remote players' page, their scripts and style
//! sheet, and the plain status page (the files themselves: `super::assets`).

use super::cached_asset;
use axum::extract::Path;
use axum::http::HeaderMap;
use axum::response::{Html, Response};

/// `GET /`: the dealer panel.
#[utoipa::path(get, path = "/", tag = "pages",
    responses((status = 200, description = "The dealer panel", content_type = "text/html", body = String)))]
pub async fn index(h: HeaderMap) -> Response {
    cached_asset("index.html", &h)
}

/// `GET /public`: the remote players' page.
#[utoipa::path(get, path = "/public", tag = "pages",
    responses((status = 200, description = "The remote players' page", content_type = "text/html", body = String)))]
pub async fn public_page(h: HeaderMap) -> Response {
    cached_asset("public.html", &h)
}

/// `GET /ui/{file}`: the pages' scripts and style sheet.
#[utoipa::path(get, path = "/ui/{file}", tag = "pages",
    params(("file" = String, Path, description = "`panel.js`, `style.css`, ...", example = "panel.js")),
    responses(
        (status = 200, description = "The file", content(
            (String = "text/javascript"), (String = "text/css"), (String = "text/html"),
            (String = "text/plain"))),
        (status = 404, description = "No such file", body = super::api::ErrorBody)))]
pub async fn ui_file(Path(file): Path<String>, h: HeaderMap) -> Response {
    cached_asset(&file, &h)
}

/// `GET /status`: the plain status page.
#[utoipa::path(get, path = "/status", tag = "pages",
    responses((status = 200, description = "The plain status page", content_type = "text/html", body = String)))]
pub async fn page() -> Html<&'static str> {
    Html(include_str!("status.html"))
}
