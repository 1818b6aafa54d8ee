//! `scrape_url`: fetches one page the model names (through the SSRF guard of
//! [`crate::fetch`]) and returns its readable text.
//!
//! HTML is reduced to text here, without a parser dependency: the contents of `script`,
//! `style`, `noscript`, `template`, `svg`, `iframe` and `object` are dropped, tags are removed
//! (block-level ones become line breaks), whitespace is collapsed and the common character
//! references are decoded. Other text types (plain text, JSON, XML, ...) pass through; binary
//! types are refused. `crawl_url` reuses [`read_page`].

use std::borrow::Cow;

use serde_json::json;

use crate::config::FetchConfig;
use crate::fetch::{FetchRequest, Fetched, GuardedFetch};
use agent::tool::{Args, Tool, ToolError, ToolFuture, str_arg};

/// Characters of page text returned (the result must fit the tool output cap).
const MAX_TEXT_CHARS: usize = 8_000;

/// What `Accept` the page fetches send.
pub(crate) const ACCEPT: &str = "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5";

pub struct ScrapeUrl {
    fetch: GuardedFetch,
}

impl ScrapeUrl {
    pub fn new(fetch: &FetchConfig) -> Self {
        ScrapeUrl { fetch: GuardedFetch::new(fetch) }
    }
}

impl Tool for ScrapeUrl {
    fn name(&self) -> &'static str {
        "scrape_url"
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            let url = str_arg(args, "url")?.trim();
            let fetched = self.fetch.fetch(page_request(url)).await?;
            let page = read_page(&fetched, MAX_TEXT_CHARS)?;
            Ok(json!({
                "url": url,
                "finalUrl": fetched.final_url,
                "status": fetched.status,
                "title": page.title,
                "text": page.text,
                "truncated": fetched.truncated || page.text_cut,
            }))
        })
    }
}

/// A GET for a page.
pub(crate) fn page_request(url: &str) -> FetchRequest<'_> {
    FetchRequest {
        method: reqwest::Method::GET,
        url,
        headers: vec![("accept".to_string(), ACCEPT.to_string())],
        body: None,
    }
}

/// A fetched page, reduced for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub title: Option<String>,
    pub text: String,
    /// True when `text` was cut at the character limit.
    pub text_cut: bool,
    /// `href`s of `<a>` elements, entity-decoded, unresolved (HTML only).
    pub links: Vec<String>,
}

/// Turns a fetched body into a [`Page`]: HTML is reduced to text, other text types pass
/// through, binary types are refused.
pub fn read_page(fetched: &Fetched, max_text_chars: usize) -> Result<Page, ToolError> {
    let content_type = fetched.content_type.as_deref();
    match kind_of(content_type, &fetched.body) {
        Kind::Html => Ok(extract_html(&decode_body(content_type, &fetched.body), max_text_chars)),
        Kind::Text => {
            let text = decode_body(content_type, &fetched.body);
            let (text, text_cut) = cut_chars(text.trim(), max_text_chars);
            Ok(Page { title: None, text, text_cut, links: Vec::new() })
        }
        Kind::Binary(mime) => Err(ToolError::Refused(format!(
            "the URL serves `{mime}`, which is not text; only HTML and text pages can be read"
        ))),
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    Binary(String),
}

fn kind_of(content_type: Option<&str>, body: &[u8]) -> Kind {
    let mime = content_type.and_then(|ct| ct.split(';').next()).map(|m| m.trim().to_ascii_lowercase());
    let Some(mime) = mime.filter(|m| !m.is_empty()) else {
        return sniff(body);
    };
    match mime.as_str() {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        "application/json"
        | "application/xml"
        | "application/javascript"
        | "application/x-javascript"
        | "application/ecmascript"
        | "application/x-ndjson"
        | "application/yaml"
        | "application/x-yaml"
        | "application/toml"
        | "application/x-sh" => Kind::Text,
        m if m.starts_with("text/") || m.ends_with("+json") || m.ends_with("+xml") => Kind::Text,
        _ => Kind::Binary(mime),
    }
}

/// No `Content-Type`: text if the first KiB is NUL-free UTF-8, HTML if it looks like it.
fn sniff(body: &[u8]) -> Kind {
    let head = &body[..body.len().min(1024)];
    let utf8_ok = match std::str::from_utf8(head) {
        Ok(_) => true,
        // A character cut at the 1 KiB boundary is fine; an invalid byte is not.
        Err(e) => e.error_len().is_none(),
    };
    if head.contains(&0) || !utf8_ok {
        return Kind::Binary("unknown binary data".into());
    }
    let lower = String::from_utf8_lossy(head).to_ascii_lowercase();
    let lower = lower.trim_start();
    if lower.starts_with("<!doctype html") || lower.contains("<html") || lower.contains("<body") {
        Kind::Html
    } else {
        Kind::Text
    }
}

/// Decodes a body by its declared charset: Latin-1 family byte-for-byte, anything else as
/// UTF-8 (invalid sequences become U+FFFD).
fn decode_body(content_type: Option<&str>, body: &[u8]) -> String {
    let charset = content_type
        .map(str::to_ascii_lowercase)
        .and_then(|ct| ct.split(';').skip(1).find_map(|p| p.trim().strip_prefix("charset=").map(str::to_string)))
        .map(|c| c.trim_matches(|ch| ch == '"' || ch == '\'').to_string());
    match charset.as_deref() {
        Some("iso-8859-1" | "latin1" | "latin-1" | "windows-1252" | "cp1252" | "us-ascii" | "ascii") => {
            body.iter().map(|&b| char::from(b)).collect()
        }
        _ => String::from_utf8_lossy(body).into_owned(),
    }
}

/// At most `max` characters of `text`, and whether it was cut.
pub(crate) fn cut_chars(text: &str, max: usize) -> (String, bool) {
    match text.char_indices().nth(max) {
        Some((end, _)) => (text[..end].to_string(), true),
        None => (text.to_string(), false),
    }
}

/// Elements whose contents are never text for a reader.
const SKIPPED: [&str; 7] = ["script", "style", "noscript", "template", "svg", "iframe", "object"];

/// Elements that start or end a line.
const BLOCKS: [&str; 40] = [
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "caption",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "option",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "ul",
];

/// Reduces an HTML document to its title, readable text (at most `max_text_chars`) and links.
pub fn extract_html(html: &str, max_text_chars: usize) -> Page {
    // ASCII lowercasing keeps byte offsets, so `lower` finds closing tags for `html`.
    let lower = html.to_ascii_lowercase();
    let bytes = html.as_bytes();
    let len = bytes.len();
    let mut out = TextOut::new(max_text_chars);
    let mut title: Option<String> = None;
    let mut links = Vec::new();
    let mut i = 0;
    while i < len {
        if bytes[i] != b'<' {
            let end = html[i..].find('<').map_or(len, |p| i + p);
            out.push(&decode_entities(&html[i..end]));
            i = end;
            continue;
        }
        let next = bytes.get(i + 1).copied();
        match next {
            Some(b'!') if lower[i..].starts_with("<!--") => {
                i = lower[i + 4..].find("-->").map_or(len, |p| i + 4 + p + 3);
            }
            Some(b'!' | b'?') => {
                i = html[i..].find('>').map_or(len, |p| i + p + 1);
            }
            Some(b'/') if bytes.get(i + 2).is_some_and(u8::is_ascii_alphabetic) => {
                let name_end = tag_name_end(bytes, i + 2);
                if BLOCKS.contains(&&lower[i + 2..name_end]) {
                    out.block();
                }
                i = html[i..].find('>').map_or(len, |p| i + p + 1);
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let name_end = tag_name_end(bytes, i + 1);
                let name = &lower[i + 1..name_end];
                let (href, after) = parse_attributes(html, name_end);
                i = after;
                if SKIPPED.contains(&name) {
                    i = skip_past_close(&lower, i, name);
                } else if name == "title" {
                    let close = lower[i..].find("</title").map_or(len, |p| i + p);
                    if title.is_none() {
                        let mut t = TextOut::new(300);
                        t.push(&decode_entities(&html[i..close]));
                        title = Some(t.text).filter(|t| !t.is_empty());
                    }
                    i = skip_past_close(&lower, i, name);
                } else {
                    if name == "a"
                        && let Some(href) = href
                    {
                        links.push(href);
                    }
                    if BLOCKS.contains(&name) {
                        out.block();
                    }
                }
            }
            _ => {
                out.push("<");
                i += 1;
            }
        }
    }
    Page { title, text: out.text, text_cut: out.cut, links }
}

fn tag_name_end(bytes: &[u8], start: usize) -> usize {
    let mut j = start;
    while j < bytes.len() && !bytes[j].is_ascii_whitespace() && bytes[j] != b'>' && bytes[j] != b'/' {
        j += 1;
    }
    j
}

/// Reads attributes from `start` to the end of the tag; returns the `href` (decoded) if any
/// and the index just past `>`.
fn parse_attributes(html: &str, start: usize) -> (Option<String>, usize) {
    let bytes = html.as_bytes();
    let len = bytes.len();
    let mut href = None;
    let mut j = start;
    loop {
        while j < len && (bytes[j].is_ascii_whitespace() || bytes[j] == b'/') {
            j += 1;
        }
        if j >= len {
            return (href, len);
        }
        if bytes[j] == b'>' {
            return (href, j + 1);
        }
        let name_start = j;
        while j < len && !bytes[j].is_ascii_whitespace() && !matches!(bytes[j], b'=' | b'>' | b'/') {
            j += 1;
        }
        let name = &html[name_start..j];
        while j < len && bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        if j < len && bytes[j] == b'=' {
            j += 1;
            while j < len && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            let (value, after) = match bytes.get(j) {
                Some(&q @ (b'"' | b'\'')) => {
                    let close = html[j + 1..].find(char::from(q)).map_or(len, |p| j + 1 + p);
                    (&html[j + 1..close], (close + 1).min(len))
                }
                _ => {
                    let mut k = j;
                    while k < len && !bytes[k].is_ascii_whitespace() && bytes[k] != b'>' {
                        k += 1;
                    }
                    (&html[j..k], k)
                }
            };
            if href.is_none() && name.eq_ignore_ascii_case("href") {
                href = Some(decode_entities(value.trim()).into_owned());
            }
            j = after;
        }
    }
}

/// Index just past `</name ...>` at or after `from` (end of input if there is none).
fn skip_past_close(lower: &str, from: usize, name: &str) -> usize {
    let close = format!("</{name}");
    match lower[from..].find(&close) {
        Some(p) => {
            let at = from + p;
            lower[at..].find('>').map_or(lower.len(), |q| at + q + 1)
        }
        None => lower.len(),
    }
}

/// Collapses whitespace into single spaces and line breaks, up to a character limit.
struct TextOut {
    text: String,
    chars: usize,
    max: usize,
    cut: bool,
    space: bool,
    newline: bool,
}

impl TextOut {
    fn new(max: usize) -> Self {
        TextOut { text: String::new(), chars: 0, max, cut: false, space: false, newline: false }
    }

    fn push(&mut self, s: &str) {
        for c in s.chars() {
            if self.cut {
                return;
            }
            if c.is_whitespace() {
                self.space = true;
                continue;
            }
            if self.chars >= self.max {
                self.cut = true;
                return;
            }
            if !self.text.is_empty() && (self.newline || self.space) {
                self.text.push(if self.newline { '\n' } else { ' ' });
            }
            self.newline = false;
            self.space = false;
            self.text.push(c);
            self.chars += 1;
        }
    }

    fn block(&mut self) {
        self.newline = true;
    }
}

/// Decodes character references: numeric ones, and the named ones pages commonly use.
/// Unknown or malformed references are left as they are.
pub fn decode_entities(s: &str) -> Cow<'_, str> {
    if !s.contains('&') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(p) = rest.find('&') {
        out.push_str(&rest[..p]);
        let after = &rest[p + 1..];
        match reference(after) {
            Some((c, used)) => {
                out.push(c);
                rest = &after[used..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The character `s` (the text after `&`) refers to, and how many bytes the reference takes.
fn reference(s: &str) -> Option<(char, usize)> {
    let bytes = s.as_bytes();
    if bytes.first() == Some(&b'#') {
        let (radix, start) = if matches!(bytes.get(1), Some(b'x' | b'X')) { (16, 2) } else { (10, 1) };
        let digits = s[start..].bytes().take_while(|b| b.is_ascii_digit() || (radix == 16 && b.is_ascii_hexdigit()));
        let count = digits.count();
        if count == 0 || count > 8 {
            return None;
        }
        let value = u32::from_str_radix(&s[start..start + count], radix).ok()?;
        let c = char::from_u32(value).filter(|&c| c != '\0').unwrap_or('\u{FFFD}');
        let used = start + count + usize::from(bytes.get(start + count) == Some(&b';'));
        return Some((c, used));
    }
    let count = s.bytes().take(10).take_while(u8::is_ascii_alphanumeric).count();
    if count == 0 || bytes.get(count) != Some(&b';') {
        return None;
    }
    let c = match &s[..count] {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" | "ensp" | "emsp" | "thinsp" => ' ',
        "shy" => '\u{AD}',
        "ndash" => '–',
        "mdash" => '—',
        "hellip" => '…',
        "lsquo" => '‘',
        "rsquo" => '’',
        "sbquo" => '‚',
        "ldquo" => '“',
        "rdquo" => '”',
        "bdquo" => '„',
        "laquo" => '«',
        "raquo" => '»',
        "bull" => '•',
        "middot" => '·',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "deg" => '°',
        "plusmn" => '±',
        "times" => '×',
        "divide" => '÷',
        "frac12" => '½',
        "frac14" => '¼',
        "frac34" => '¾',
        "sect" => '§',
        "para" => '¶',
        "euro" => '€',
        "pound" => '£',
        "yen" => '¥',
        "cent" => '¢',
        "larr" => '←',
        "rarr" => '→',
        "uarr" => '↑',
        "darr" => '↓',
        "aacute" => 'á',
        "agrave" => 'à',
        "auml" => 'ä',
        "eacute" => 'é',
        "egrave" => 'è',
        "iacute" => 'í',
        "oacute" => 'ó',
        "ouml" => 'ö',
        "uacute" => 'ú',
        "uuml" => 'ü',
        "ccedil" => 'ç',
        "ntilde" => 'ñ',
        "szlig" => 'ß',
        _ => return None,
    };
    Some((c, count + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fetched(content_type: Option<&str>, body: &[u8]) -> Fetched {
        Fetched {
            final_url: "https://example.com/".into(),
            status: 200,
            content_type: content_type.map(str::to_string),
            body: body.to_vec(),
            truncated: false,
        }
    }

    #[test]
    fn html_becomes_title_text_and_links() {
        let html = r#"<!DOCTYPE html><html><head><title> Hello &amp; welcome </title>
            <style>body { color: red }</style><script>var x = "<p>not text</p>";</script></head>
            <body><!-- a comment <p>hidden</p> --><h1>Heading</h1><p>First   paragraph
            with <b>bold</b> and&nbsp;a <a href="/next?a=1&amp;b=2" class='x'>link</a>.</p>
            <noscript>enable JS</noscript><ul><li>one</li><li>two &lt;3 &#233;&#x263A;</li></ul>
            <svg><text>drawing</text></svg><p>5 < 6 &unknown; &copy</p><A HREF=relative.html>R</A></body></html>"#;
        let page = extract_html(html, 1000);
        assert_eq!(page.title.as_deref(), Some("Hello & welcome"));
        assert_eq!(
            page.text,
            "Heading\nFirst paragraph with bold and a link.\none\ntwo <3 é☺\n5 < 6 &unknown; &copy\nR"
        );
        assert_eq!(page.links, vec!["/next?a=1&b=2".to_string(), "relative.html".to_string()]);
        assert!(!page.text_cut);
    }

    #[test]
    fn unterminated_markup_does_not_panic_or_loop() {
        for html in
            ["<", "<a", "<a href=\"x", "<script>never closed", "<!-- open", "<p>é<", "&#", "&#x;", "</", "<a =>"]
        {
            let _ = extract_html(html, 100);
        }
        assert_eq!(extract_html("<p>é<", 100).text, "é<");
    }

    #[test]
    fn text_is_cut_at_the_limit() {
        let page = extract_html("<p>abcdef</p><p>ghij</p>", 8);
        assert_eq!(page.text, "abcdef\ngh");
        assert!(page.text_cut);
        assert_eq!(cut_chars("ééé", 2), ("éé".to_string(), true));
        assert_eq!(cut_chars("ab", 2), ("ab".to_string(), false));
    }

    #[test]
    fn content_types_are_classified() {
        assert_eq!(kind_of(Some("text/html; charset=utf-8"), b""), Kind::Html);
        assert_eq!(kind_of(Some("Application/XHTML+XML"), b""), Kind::Html);
        assert_eq!(kind_of(Some("text/plain"), b""), Kind::Text);
        assert_eq!(kind_of(Some("application/ld+json"), b""), Kind::Text);
        assert_eq!(kind_of(Some("image/png"), b""), Kind::Binary("image/png".into()));
        assert_eq!(kind_of(Some("application/octet-stream"), b""), Kind::Binary("application/octet-stream".into()));
        assert_eq!(kind_of(None, b"  <!doctype html><p>x"), Kind::Html);
        assert_eq!(kind_of(None, b"plain words"), Kind::Text);
        assert!(matches!(kind_of(None, b"\x89PNG\r\n\x1a\n\0\0"), Kind::Binary(_)));
    }

    #[test]
    fn pages_are_read_by_type_and_charset() {
        let page = read_page(&fetched(Some("text/plain; charset=ISO-8859-1"), b"caf\xe9  au lait\n"), 100).unwrap();
        assert_eq!(page.text, "café  au lait");
        assert_eq!(page.title, None);
        let err = read_page(&fetched(Some("application/pdf"), b"%PDF-1.7"), 100).unwrap_err();
        assert!(matches!(err, ToolError::Refused(m) if m.contains("application/pdf")));
    }
}
