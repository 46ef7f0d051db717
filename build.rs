//! Rebuilds the crate when a migration is added or changed. `sqlx::migrate!` embeds the
//! migration directories at compile time, and cargo does not know it reads them: without
//! this, an incremental build after a new migration file keeps the old set and the new
//! migration never runs (what sqlx's own `sqlx migrate build-script` writes).

fn main() {
    println!("cargo:rerun-if-changed=src/store/migrations");
    println!("cargo:rerun-if-changed=src/floor/migrations");
}
