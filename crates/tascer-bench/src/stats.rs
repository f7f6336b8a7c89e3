//! Sample statistics and markdown tables shared by the benchmarks.

use std::time::Instant;

/// Milliseconds elapsed since `start`.
pub fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

/// The `p`-th percentile (nearest rank) of sorted samples.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// Sorts samples ascending.
pub fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

/// Summary of timing samples, in milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct Stats {
    /// Median.
    pub median: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Fastest sample.
    pub min: f64,
}

impl Stats {
    /// Summarizes samples given in milliseconds.
    pub fn of(samples: Vec<f64>) -> Stats {
        let s = sorted(samples);
        Stats {
            median: percentile(&s, 50.0),
            p99: percentile(&s, 99.0),
            min: s.first().copied().unwrap_or(f64::NAN),
        }
    }
}

/// A duration in milliseconds, in the unit that reads best.
pub fn fmt_ms(ms: f64) -> String {
    if !ms.is_finite() {
        "n/a".into()
    } else if ms < 0.001 {
        format!("{:.0} ns", ms * 1e6)
    } else if ms < 0.1 {
        format!("{:.2} µs", ms * 1e3)
    } else if ms < 1.0 {
        format!("{:.1} µs", ms * 1e3)
    } else if ms < 100.0 {
        format!("{ms:.2} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

/// A ratio such as `1.23×`.
pub fn fmt_ratio(r: f64) -> String {
    if !r.is_finite() {
        String::new()
    } else if r >= 100.0 {
        format!("{r:.0}×")
    } else {
        format!("{r:.2}×")
    }
}

/// A markdown table `measure | median | p99 | ratio`.
pub struct Table {
    title: String,
    ratio_header: String,
    rows: Vec<[String; 4]>,
    notes: Vec<String>,
}

impl Table {
    /// A table under a `##` heading; `ratio_header` names what the ratio
    /// column compares (e.g. `ratio tool / rg`).
    pub fn new(title: impl Into<String>, ratio_header: impl Into<String>) -> Table {
        Table {
            title: title.into(),
            ratio_header: ratio_header.into(),
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Adds a row from timing stats.
    pub fn row(&mut self, measure: impl Into<String>, stats: &Stats, ratio: Option<f64>) {
        self.raw_row(
            measure,
            fmt_ms(stats.median),
            fmt_ms(stats.p99),
            ratio.map(fmt_ratio).unwrap_or_default(),
        );
    }

    /// Adds a row of preformatted cells.
    pub fn raw_row(
        &mut self,
        measure: impl Into<String>,
        median: impl Into<String>,
        p99: impl Into<String>,
        ratio: impl Into<String>,
    ) {
        self.rows
            .push([measure.into(), median.into(), p99.into(), ratio.into()]);
    }

    /// Adds a line printed under the table.
    pub fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }

    /// Prints the table as markdown.
    pub fn print(&self) {
        println!("\n## {}\n", self.title);
        println!("| measure | median | p99 | {} |", self.ratio_header);
        println!("| --- | --- | --- | --- |");
        for [m, a, b, r] in &self.rows {
            println!("| {m} | {a} | {b} | {r} |");
        }
        if !self.notes.is_empty() {
            println!();
            for n in &self.notes {
                println!("{n}");
            }
        }
    }
}
