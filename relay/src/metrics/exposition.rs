//! The Prometheus text exposition format 0.0.4: `# HELP` and `# TYPE` once per family, then
//! its samples, label values escaped (`\\`, `\"`, `\n`).

use std::fmt::Write;

/// The `Content-Type` of a scrape.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The kinds of family this relay exposes.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// A scrape being written. Families must be written whole, one after the other (the format
/// does not allow a family's samples to be split).
#[derive(Debug, Default)]
pub struct Exposition {
    text: String,
}

impl Exposition {
    /// Starts a family: its help text and type.
    pub fn family(&mut self, name: &str, help: &str, kind: Kind) {
        let help = help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = writeln!(self.text, "# HELP {name} {help}");
        let _ = writeln!(self.text, "# TYPE {name} {}", kind.word());
    }

    /// One sample of the current family.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl Value) {
        self.text.push_str(name);
        if !labels.is_empty() {
            self.text.push('{');
            for (i, (label, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.text.push(',');
                }
                let _ = write!(self.text, "{label}=\"{}\"", escape(v));
            }
            self.text.push('}');
        }
        self.text.push(' ');
        value.write_to(&mut self.text);
        self.text.push('\n');
    }

    pub fn finish(self) -> String {
        self.text
    }
}

/// A sample's value: integers as they are, floats in Go's notation for the special values.
pub trait Value {
    fn write_to(&self, out: &mut String);
}

impl Value for u64 {
    fn write_to(&self, out: &mut String) {
        let _ = write!(out, "{self}");
    }
}

impl Value for f64 {
    fn write_to(&self, out: &mut String) {
        if self.is_nan() {
            out.push_str("NaN");
        } else if self.is_infinite() {
            out.push_str(if *self > 0.0 { "+Inf" } else { "-Inf" });
        } else {
            let _ = write!(out, "{self}");
        }
    }
}

/// A label value as the format wants it inside double quotes.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_samples_and_escapes() {
        let mut e = Exposition::default();
        e.family("svc_x_total", "Things.\nCounted \\ here", Kind::Counter);
        e.sample("svc_x_total", &[("route", "/a/{id}"), ("odd", "q\"b\\s\nn")], 3u64);
        e.sample("svc_x_total", &[], 0.25f64);
        e.sample("svc_x_total", &[], f64::INFINITY);
        assert_eq!(
            e.finish(),
            "# HELP svc_x_total Things.\\nCounted \\\\ here\n# TYPE svc_x_total counter\n\
             svc_x_total{route=\"/a/{id}\",odd=\"q\\\"b\\\\s\\nn\"} 3\nsvc_x_total 0.25\nsvc_x_total +Inf\n"
        );
    }
}
