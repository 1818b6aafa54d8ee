//! The scraping tools' readers (`scrape_url`, `crawl_url`): a fetched body classified by its
//! content type and charset, HTML reduced to title, text and links, and character references
//! decoded.
//!
//! Input: the `Content-Type` up to the first NUL (none when the input has no NUL), then the
//! body; the first byte of the body also sets the text limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use relay_tools::fetch::Fetched;
use relay_tools::tools::scrape_url::{decode_entities, extract_html, read_page};

/// Characters counted against the text limit: the separators the reader puts between words
/// and blocks are not (`text_is_cut_at_the_limit` in scrape_url.rs: limit 8, "abcdef\ngh").
fn visible(text: &str) -> usize {
    text.chars().filter(|c| !c.is_whitespace()).count()
}

fuzz_target!(|data: &[u8]| {
    let (content_type, body) = match data.iter().position(|b| *b == 0) {
        Some(at) => (Some(String::from_utf8_lossy(&data[..at]).into_owned()), &data[at + 1..]),
        None => (None, data),
    };
    let max = usize::from(body.first().copied().unwrap_or(0)) * 8;
    let fetched = Fetched {
        final_url: "https://example.com/".into(),
        status: 200,
        content_type,
        body: body.to_vec(),
        truncated: false,
    };
    if let Ok(page) = read_page(&fetched, max) {
        assert!(visible(&page.text) <= max);
        assert!(page.title.as_deref().is_none_or(|t| visible(t) <= 300));
    }
    let text = String::from_utf8_lossy(body);
    let page = extract_html(&text, max);
    assert!(visible(&page.text) <= max);
    let decoded = decode_entities(&text);
    if !text.contains('&') {
        assert_eq!(decoded, text);
    }
});
