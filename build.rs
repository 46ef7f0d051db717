//! Build steps cargo cannot know of by itself:
//! - Rebuilds the crate when a migration is added or changed. `sqlx::migrate!` embeds the
//!   migration directories at compile time, and cargo does not know it reads them: without
//!   this, an incremental build after a new migration file keeps the old set and the new
//!   migration never runs (what sqlx's own `sqlx migrate build-script` writes).
//! - Gzips the pages' files (`dealer-ui/*.{html,js,css,ftl}`, `src/web/status.js`) into
//!   `OUT_DIR/assets/NAME.gz`, which `src/web/assets.rs` embeds: the Pi's binary has a size
//!   budget (`.ci/aarch64`), and the files shrink to about a quarter of their size.

use std::io::Write;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=src/store/migrations");
    println!("cargo:rerun-if-changed=src/floor/migrations");
    let out =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("assets");
    std::fs::create_dir_all(&out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    println!("cargo:rerun-if-changed=dealer-ui");
    let mut files: Vec<PathBuf> = std::fs::read_dir("dealer-ui")
        .expect("the dealer-ui directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| ["html", "js", "css", "ftl"].contains(&x))
        })
        .collect();
    files.push(PathBuf::from("src/web/status.js"));
    for file in files {
        pack(&file, &out);
    }
}

/// `file` gzipped at the best level into `out/NAME.gz`; a file that is not UTF-8 stops the
/// build (the service serves each as text).
fn pack(file: &Path, out: &Path) {
    println!("cargo:rerun-if-changed={}", file.display());
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(text.as_bytes())
        .and_then(|()| gz.finish())
        .and_then(|packed| {
            let name = file.file_name().expect("a file name").to_string_lossy();
            std::fs::write(out.join(format!("{name}.gz")), packed)
        })
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
}
