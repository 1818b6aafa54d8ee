//! Where the relay's log lines go and in which shape: stderr, text by default, or one JSON
//! object per line with `SVC_LOG_FORMAT=json` (for a log shipper). The level comes from
//! `RUST_LOG` (default `info`). An environment variable rather than a configuration field,
//! because logging starts before the configuration is read, so that reading it can be logged.
//!
//! JSON lines carry `timestamp`, `level`, `target` and the event's fields at the top level
//! (`message`, and e.g. `method`, `path`, `route`, `status`, `elapsed_ms` for a request).

use tracing_subscriber::EnvFilter;

/// The variable that chooses the format.
pub const FORMAT_VAR: &str = "SVC_LOG_FORMAT";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("SVC_LOG_FORMAT must be `text` or `json`, not `{0}`")]
pub struct UnknownFormat(String);

impl LogFormat {
    /// `text`, `json`, or unset / empty (text). Anything else is refused, so a typo does not
    /// quietly leave a log shipper reading text.
    pub fn parse(value: Option<&str>) -> Result<Self, UnknownFormat> {
        match value.map(str::trim) {
            None | Some("") | Some("text") => Ok(LogFormat::Text),
            Some("json") => Ok(LogFormat::Json),
            Some(other) => Err(UnknownFormat(other.chars().take(32).collect())),
        }
    }

    pub fn from_env() -> Result<Self, UnknownFormat> {
        Self::parse(std::env::var(FORMAT_VAR).ok().as_deref())
    }
}

/// Installs the global subscriber; call once, first thing.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())).init(),
        // Spans would nest fields under `span`/`spans`; the relay logs events, flat.
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(false).with_span_list(false).init(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(LogFormat::parse(None), Ok(LogFormat::Text));
        assert_eq!(LogFormat::parse(Some("")), Ok(LogFormat::Text));
        assert_eq!(LogFormat::parse(Some("text")), Ok(LogFormat::Text));
        assert_eq!(LogFormat::parse(Some(" json ")), Ok(LogFormat::Json));
        assert_eq!(LogFormat::parse(Some("JSON")), Err(UnknownFormat("JSON".into())));
    }
}
