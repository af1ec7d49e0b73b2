//! Axes and ticks: what an axis's numbers mean, round tick steps that fit the axis, tick labels in
//! the axis's unit, and the mesh every chart draws them on.

use super::*;

/// What the numbers on an axis mean; decides tick steps and label format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Dollars: `$0.25`.
    Usd,
    /// Token counts: `12k`, `1.5M`.
    Tokens,
    /// Whole counts such as call numbers (steps of at least 1).
    Count,
    /// Seconds.
    Seconds,
    /// Any other number.
    Plain,
}

/// An axis: its description (with the unit in words) and how its numbers are formatted.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// Description printed along the axis, e.g. `cumulative cost (USD)`.
    pub label: String,
    /// Format of tick labels.
    pub unit: Unit,
}

impl Axis {
    /// An axis of `unit` described by `label`.
    pub fn new(label: impl Into<String>, unit: Unit) -> Self {
        Axis {
            label: label.into(),
            unit,
        }
    }
}

/// Tick positions between `lo` and `hi` with a 1/2/2.5/5 x 10^k step, at most about `max_count` of
/// them, and the step.
pub(crate) fn nice_ticks(lo: f64, hi: f64, max_count: usize, unit: Unit) -> (Vec<f64>, f64) {
    let span = (hi - lo).abs().max(f64::MIN_POSITIVE);
    let raw = span / max_count.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let mut step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag);
    if unit == Unit::Count {
        step = step.max(1.0).round();
    }
    let first = (lo / step).ceil();
    let mut ticks = Vec::new();
    let mut k = first;
    while k * step <= hi + step * 1e-9 && ticks.len() < 1000 {
        // Multiplying (not accumulating) keeps ticks free of drift; the rounding removes 0.1+0.2 noise.
        let v = k * step;
        ticks.push((v / step).round() * step);
        k += 1.0;
    }
    (ticks, step)
}

/// Tick label of `v` on an axis of `unit` whose ticks are `step` apart.
pub(crate) fn tick_label(v: f64, step: f64, unit: Unit) -> String {
    // The fewest decimals that show the step exactly (0.25 -> 2, 2.5 -> 1, 20 -> 0).
    let decimals = |step: f64| -> usize {
        (0..9)
            .find(|&d| {
                let scaled = step * 10f64.powi(d as i32);
                (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0)
            })
            .unwrap_or(9)
    };
    if v.abs() < step * 1e-9 && unit != Unit::Usd {
        return "0".to_string();
    }
    let v = if v.abs() < step * 1e-9 { 0.0 } else { v };
    match unit {
        Unit::Usd => {
            let d = if step >= 1.0 {
                0
            } else {
                decimals(step).max(2)
            };
            if v < 0.0 {
                format!("-${}", group(-v, d))
            } else {
                format!("${}", group(v, d))
            }
        }
        Unit::Tokens if step >= 1e6 => format!("{}M", trim(v / 1e6, decimals(step / 1e6))),
        Unit::Tokens if step >= 1e3 => format!("{}k", trim(v / 1e3, decimals(step / 1e3))),
        Unit::Tokens | Unit::Count => group(v, 0),
        Unit::Seconds | Unit::Plain => group(v, decimals(step)),
    }
}

fn trim(v: f64, d: usize) -> String {
    format!("{v:.d$}")
}

/// `v` with `d` decimals and thousands separators.
pub fn group(v: f64, d: usize) -> String {
    let s = format!("{:.*}", d, v.abs());
    let (int, frac) = match s.find('.') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s.as_str(), ""),
    };
    let mut out = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    let sign = if v < 0.0 && s.chars().any(|c| c.is_ascii_digit() && c != '0') {
        "-"
    } else {
        ""
    };
    format!("{sign}{out}{frac}")
}

/// Picks about as many ticks as fit along an axis of `length` pixels when each label needs its own
/// width plus a gap (so labels never overlap); `vertical` axes need one text height per label instead.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fitting_ticks<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    lo: f64,
    hi: f64,
    unit: Unit,
    length: i32,
    vertical: bool,
    sc: &Scale,
) -> (Vec<f64>, f64) {
    let style = font(sc.label());
    let mut best = nice_ticks(lo, hi, 2, unit);
    for n in (2..=12).rev() {
        let (ticks, step) = nice_ticks(lo, hi, n, unit);
        let need: i32 = if vertical {
            (sc.label() * 2.4).round() as i32 * ticks.len() as i32
        } else {
            let widest = ticks
                .iter()
                .map(|t| text_width(area, &tick_label(*t, step, unit), &style))
                .max()
                .unwrap_or(0) as i32;
            (widest + sc.ipx(28.0)) * ticks.len() as i32
        };
        if need <= length {
            best = (ticks, step);
            break;
        }
    }
    best
}

/// Widest tick label of `ticks`.
pub(crate) fn widest_label<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    ticks: &[f64],
    step: f64,
    unit: Unit,
    sc: &Scale,
) -> i32 {
    let style = font(sc.label());
    ticks
        .iter()
        .map(|t| text_width(area, &tick_label(*t, step, unit), &style))
        .max()
        .unwrap_or(0) as i32
}

/// A linear f64 axis whose ticks are exactly the given values (plotters' own `with_key_points`
/// cannot take a custom label formatter); light grid lines are off.
#[derive(Debug, Clone)]
pub(crate) struct Ticked {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
    log: bool,
}

impl Ticked {
    /// The axis `lo..hi` with `ticks`.
    pub(crate) fn new(lo: f64, hi: f64, ticks: Vec<f64>) -> Self {
        Ticked {
            lo,
            hi,
            ticks,
            log: false,
        }
    }

    /// A logarithmic axis `lo..hi` (both > 0) with `ticks`; values at or below zero map to the
    /// bottom.
    pub(crate) fn log(lo: f64, hi: f64, ticks: Vec<f64>) -> Self {
        Ticked {
            lo,
            hi,
            ticks,
            log: true,
        }
    }
}

/// Ticks of a logarithmic axis from `lo` to `hi` (> 0): 1, 2 and 5 times each power of ten, thinned
/// to 1 and 10^k when there would be more than `max_count`.
pub(crate) fn log_ticks(lo: f64, hi: f64, max_count: usize) -> Vec<f64> {
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    for mantissas in [&[1.0, 2.0, 5.0][..], &[1.0][..]] {
        let ticks: Vec<f64> = (a..=b)
            .flat_map(|k| mantissas.iter().map(move |m| m * 10f64.powi(k)))
            .filter(|v| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9))
            .collect();
        if ticks.len() <= max_count.max(2) {
            return ticks;
        }
    }
    let step = ((b - a) as usize / max_count.max(1)).max(1);
    (a..=b)
        .step_by(step)
        .map(|k| 10f64.powi(k))
        .filter(|v| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9))
        .collect()
}

impl Ranged for Ticked {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        // Same arithmetic as plotters' RangedCoordf64 (on log10 values for a log axis).
        let logic = if self.log {
            let (lo, hi) = (self.lo.log10(), self.hi.log10());
            (v.max(self.lo).log10() - lo) / (hi - lo)
        } else {
            (*v - self.lo) / (self.hi - self.lo)
        };
        let actual = limit.1 - limit.0;
        if actual == 0 || !logic.is_finite() {
            return limit.1;
        }
        limit.0 + (actual as f64 * logic + 1e-3).floor() as i32
    }

    fn key_points<H: plotters::coord::ranged1d::KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// The look every chart's mesh shares: axis-title and tick-label fonts for the chart's scale, light
/// grid, no minor grid, dark axes, scaled tick marks. Callers add their labels and formatters.
pub(crate) fn house_mesh<'m, 'a, 'b, X, Y, DB>(
    mesh: &'m mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>,
    sc: &Scale,
) -> &'m mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>
where
    X: plotters::coord::ranged1d::Ranged,
    Y: plotters::coord::ranged1d::Ranged,
    DB: plotters::prelude::DrawingBackend,
{
    mesh.axis_desc_style(font(sc.axis()))
        .label_style(font(sc.label()))
        .bold_line_style(GRID)
        .light_line_style(plotters::style::colors::TRANSPARENT)
        .axis_style(INK)
        .set_all_tick_mark_size(sc.ipx(6.0))
}
