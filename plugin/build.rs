//! Writes NLTK's English stop-word list, from the `stop-words` crate, into
//! `OUT_DIR/stop_words.rs` as one sorted array for search
//! (`src/search/terms.rs`). The crate is a build dependency so that only the
//! English list reaches the component: linked as a normal dependency, its
//! lookup brings every language's list along (about 166 KB of the
//! component).

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let mut words: Vec<&str> = stop_words::get(stop_words::Language::English).to_vec();
    words.sort_unstable();
    words.dedup();
    let source = format!(
        "/// NLTK's English stop words (the `stop-words` crate), sorted.\npub const STOP_WORDS: [&str; {}] = {words:?};\n",
        words.len()
    );
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("stop_words.rs");
    std::fs::write(out, source).expect("OUT_DIR is writable");
}
