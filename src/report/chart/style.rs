//! Shared look of every chart: the embedded font, the colour palette, dash patterns, font sizes that
//! scale with the image, tick choice and tick-label formatting.

use std::sync::Once;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The font family every chart uses; it is registered from the embedded DejaVu Sans so no system
/// font or fontconfig is ever consulted and PNG output is identical on every machine. The name is
/// also a CSS font list, written as is into SVG `font-family`, so SVG viewers use DejaVu Sans when
/// they have it (the metrics the layout was computed with) and another sans-serif otherwise.
pub const FAMILY: &str = "DejaVu Sans, sans-serif";

static FONTS: Once = Once::new();

/// Registers the embedded font once per process (plotters keeps a global font table).
pub fn register_fonts() {
    FONTS.call_once(|| {
        // The bytes are a valid TrueType font shipped in the `dejavu` crate; a failure here would be
        // a broken dependency, and every text draw would then report it as a drawing error.
        let _ = plotters::style::register_font(FAMILY, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FAMILY, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// Okabe–Ito colour-blind-safe palette, reordered for a white background (the pale yellow is
/// replaced by a darker olive so that thin lines stay visible). Models take colours in order.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x00, 0x00, 0x00), // black
    RGBColor(0x8C, 0x7A, 0x00), // olive
];

/// Colour of the `i`-th group (cycles after eight groups).
pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// The colour of every model of one report, fixed before any chart is drawn, so a model has the
/// same colour in every chart of the report (a chart showing only some of the models does not
/// shift the others). Ids take palette colours in the order given (the order of the report's models).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColourKey(Vec<(String, RGBColor)>);

impl ColourKey {
    /// Colours for `ids` (duplicates ignored) in order; cycles after eight ids.
    pub fn new<'a>(ids: impl IntoIterator<Item = &'a str>) -> Self {
        let mut out: Vec<(String, RGBColor)> = Vec::new();
        for id in ids {
            if !out.iter().any(|(k, _)| k == id) {
                let c = colour(out.len());
                out.push((id.to_string(), c));
            }
        }
        ColourKey(out)
    }

    /// The colour of `id`, if the key has it.
    pub fn get(&self, id: &str) -> Option<RGBColor> {
        self.0.iter().find(|(k, _)| k == id).map(|(_, c)| *c)
    }

    /// The ids in the key, in colour order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }
}

/// Text colour (near-black) and grid colour.
pub const INK: RGBColor = RGBColor(0x20, 0x20, 0x20);
/// Light grey of grid lines.
pub const GRID: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);
/// Grey used for legend samples of line styles (the colour there means nothing).
pub const NEUTRAL: RGBColor = RGBColor(0x55, 0x55, 0x55);

/// How a line is stroked: solid (empty pattern), or alternating on/off lengths in pixels at
/// 1600x1000 (scaled with the image), repeated along the whole line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dash(pub &'static [f64]);

/// Solid first (for the uncached baseline), then eight patterns that stay distinct in grey print:
/// dashed, dotted, long dash, dash-dot, short dash, long dash-dot-dot, dash-dot-dot, dense dots.
pub const DASHES: [Dash; 9] = [
    Dash(&[]),
    Dash(&[22.0, 10.0]),
    Dash(&[4.0, 8.0]),
    Dash(&[34.0, 12.0]),
    Dash(&[22.0, 8.0, 4.0, 8.0]),
    Dash(&[10.0, 10.0]),
    Dash(&[34.0, 8.0, 4.0, 8.0, 4.0, 8.0]),
    Dash(&[22.0, 8.0, 4.0, 8.0, 4.0, 8.0]),
    Dash(&[2.0, 4.0]),
];

impl Dash {
    /// Whether the line is solid.
    pub fn is_solid(&self) -> bool {
        self.0.is_empty()
    }

    /// The "on" pieces of the pixel polyline `points` under this pattern scaled by `sc`; the pattern
    /// continues across vertices so dashes stay even along a line of many short segments.
    pub fn pieces(&self, points: &[(i32, i32)], sc: &Scale) -> Vec<Vec<(i32, i32)>> {
        if self.is_solid() || points.len() < 2 {
            return vec![points.to_vec()];
        }
        let pattern: Vec<f64> = self.0.iter().map(|l| sc.px(*l).max(1.0)).collect();
        let mut out: Vec<Vec<(i32, i32)>> = Vec::new();
        let mut k = 0; // index in the pattern; even = on
        let mut left = pattern[0];
        let mut current: Vec<(i32, i32)> = vec![points[0]];
        let to_i = |p: (f64, f64)| (p.0.round() as i32, p.1.round() as i32);
        for w in points.windows(2) {
            let (a, b) = (
                (w[0].0 as f64, w[0].1 as f64),
                (w[1].0 as f64, w[1].1 as f64),
            );
            let len = (b.0 - a.0).hypot(b.1 - a.1);
            let mut pos = 0.0;
            while len - pos > left {
                pos += left;
                let t = pos / len;
                let p = to_i((a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t));
                if k % 2 == 0 {
                    current.push(p);
                    out.push(std::mem::take(&mut current));
                } else {
                    current = vec![p];
                }
                k = (k + 1) % pattern.len();
                left = pattern[k];
            }
            left -= len - pos;
            if k % 2 == 0 {
                current.push(w[1]);
            }
        }
        if k % 2 == 0 && current.len() > 1 {
            out.push(current);
        }
        out
    }
}

/// Sizes of fonts and strokes for one image size. Designed at 1600x1000; smaller images shrink the
/// fonts less than the image so that text stays readable at 800x500.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    factor: f64,
}

impl Scale {
    /// The scale of a `width` x `height` image.
    pub fn new(width: u32, height: u32) -> Self {
        let raw = (width as f64 / 1600.0).min(height as f64 / 1000.0);
        // Text shrinks with the square root of the image below the design size: at half size fonts
        // are ~70 %, which keeps 800x500 labels at 16-17 px.
        let factor = if raw < 1.0 { raw.sqrt() } else { raw };
        Scale {
            width,
            height,
            factor,
        }
    }

    /// `base` pixels at the design size, scaled (at least 1).
    pub fn px(&self, base: f64) -> f64 {
        (base * self.factor).max(1.0)
    }

    /// Pixels as an integer.
    pub fn ipx(&self, base: f64) -> i32 {
        self.px(base).round() as i32
    }

    /// Font size of the title.
    pub fn title(&self) -> f64 {
        self.px(36.0)
    }
    /// Font size of the subtitle.
    pub fn subtitle(&self) -> f64 {
        self.px(24.0)
    }
    /// Font size of axis descriptions.
    pub fn axis(&self) -> f64 {
        self.px(24.0)
    }
    /// Font size of tick labels and the legend.
    pub fn label(&self) -> f64 {
        self.px(21.0)
    }
    /// Stroke width of data lines.
    pub fn stroke(&self) -> u32 {
        self.px(3.0).round().max(2.0) as u32
    }
    /// Outer padding.
    pub fn pad(&self) -> i32 {
        self.ipx(20.0)
    }
}

/// A text style of `size` pixels in the embedded font.
pub fn font(size: f64) -> TextStyle<'static> {
    (FAMILY, size).into_font().color(&INK)
}

/// A bold text style.
pub fn bold(size: f64) -> TextStyle<'static> {
    (FAMILY, size, FontStyle::Bold).into_font().color(&INK)
}

/// The same style anchored at `h`, `v`.
pub fn anchored(style: TextStyle<'static>, h: HPos, v: VPos) -> TextStyle<'static> {
    style.pos(Pos::new(h, v))
}

/// Pixel width of `text` in `style` (0 when the font cannot measure it).
pub fn text_width<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    text: &str,
    style: &TextStyle,
) -> u32 {
    area.estimate_text_size(text, style)
        .map(|s| s.0)
        .unwrap_or(0)
}

/// `text` shortened with an ellipsis so that it is at most `max` pixels wide.
pub fn fit<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    text: &str,
    style: &TextStyle,
    max: u32,
) -> String {
    if text_width(area, text, style) <= max {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut n = chars.len();
    while n > 1 {
        n -= 1;
        let s: String = chars[..n].iter().collect::<String>() + "…";
        if text_width(area, &s, style) <= max {
            return s;
        }
    }
    "…".to_string()
}

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
pub fn nice_ticks(lo: f64, hi: f64, max_count: usize, unit: Unit) -> (Vec<f64>, f64) {
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
pub fn tick_label(v: f64, step: f64, unit: Unit) -> String {
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

/// Starts a chart page: a white background and the header; returns the area below the header.
pub fn page<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    sc: &Scale,
) -> Result<DrawingArea<DB, plotters::coord::Shift>, String> {
    root.fill(&WHITE).map_err(err)?;
    let head = draw_header(root, title, sc)?;
    Ok(root.split_vertically(head).1)
}

/// Draws the title (bold) and optional subtitle centred at the top of `area`, shrinking or shortening
/// them to fit the width; returns the height used.
pub fn draw_header<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    sc: &Scale,
) -> Result<i32, String> {
    let mut lines = title.splitn(2, '\n');
    let main = lines.next().unwrap_or("").trim();
    let sub = lines.next().map(str::trim).unwrap_or("");
    let pad = sc.pad();
    let max_w = (sc.width as i32 - 2 * pad).max(10) as u32;
    let mut y = pad;
    if !main.is_empty() {
        let (style, text) = shrink_to_fit(area, main, sc.title(), true, max_w);
        area.draw(&Text::new(
            text,
            (sc.width as i32 / 2, y),
            anchored(style, HPos::Center, VPos::Top),
        ))
        .map_err(err)?;
        y += sc.title().round() as i32 + sc.ipx(8.0);
    }
    if !sub.is_empty() {
        let (style, text) = shrink_to_fit(area, sub, sc.subtitle(), false, max_w);
        let style = style.color(&NEUTRAL);
        area.draw(&Text::new(
            text,
            (sc.width as i32 / 2, y),
            anchored(style, HPos::Center, VPos::Top),
        ))
        .map_err(err)?;
        y += sc.subtitle().round() as i32 + sc.ipx(8.0);
    }
    Ok(y + sc.ipx(6.0))
}

/// The largest font from `size` down to 75 % of it at which `text` fits in `max` pixels; below that
/// the text is shortened with an ellipsis at 75 %.
fn shrink_to_fit<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    text: &str,
    size: f64,
    is_bold: bool,
    max: u32,
) -> (TextStyle<'static>, String) {
    let make = |px: f64| if is_bold { bold(px) } else { font(px) };
    for k in 0..=5 {
        let px = size * (1.0 - 0.05 * k as f64);
        let style = make(px);
        if text_width(area, text, &style) <= max {
            return (style, text.to_string());
        }
    }
    let style = make(size * 0.75);
    let text = fit(area, text, &style, max);
    (style, text)
}

/// A plotters drawing error as text.
pub fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_use_round_steps_and_stay_in_range() {
        let (t, step) = nice_ticks(0.0, 0.93, 8, Unit::Usd);
        assert_eq!(step, 0.2);
        assert_eq!(t, vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8]);
        let (t, step) = nice_ticks(1.0, 3.0, 10, Unit::Count);
        assert_eq!(step, 1.0);
        assert_eq!(t, vec![1.0, 2.0, 3.0]);
        let (t, _) = nice_ticks(1.0, 20.0, 10, Unit::Count);
        assert_eq!(t.first(), Some(&2.0));
        assert_eq!(t.last(), Some(&20.0));
    }

    #[test]
    fn tick_labels_match_their_unit() {
        assert_eq!(tick_label(0.4, 0.2, Unit::Usd), "$0.40");
        assert_eq!(tick_label(0.0025, 0.0025, Unit::Usd), "$0.0025");
        assert_eq!(tick_label(1500.0, 500.0, Unit::Usd), "$1,500");
        assert_eq!(tick_label(12000.0, 2000.0, Unit::Tokens), "12k");
        assert_eq!(tick_label(2500.0, 2500.0, Unit::Tokens), "2.5k");
        assert_eq!(tick_label(3_000_000.0, 1e6, Unit::Tokens), "3M");
        assert_eq!(tick_label(1234.0, 1.0, Unit::Count), "1,234");
        assert_eq!(tick_label(0.5, 0.5, Unit::Seconds), "0.5");
        assert_eq!(group(-1234567.891, 2), "-1,234,567.89");
        assert_eq!(tick_label(0.0, 2500.0, Unit::Tokens), "0");
        assert_eq!(tick_label(15000.0, 2500.0, Unit::Tokens), "15.0k");
        assert_eq!(tick_label(0.0, 0.05, Unit::Usd), "$0.00");
    }

    #[test]
    fn dash_patterns_run_on_across_vertices() {
        let sc = Scale::new(1600, 1000);
        let straight = DASHES[1].pieces(&[(0, 0), (100, 0)], &sc);
        assert_eq!(
            straight,
            vec![
                vec![(0, 0), (22, 0)],
                vec![(32, 0), (54, 0)],
                vec![(64, 0), (86, 0)],
                vec![(96, 0), (100, 0)]
            ]
        );
        // The same line as 100 one-pixel segments gives dashes at the same places.
        let fine: Vec<(i32, i32)> = (0..=100).map(|x| (x, 0)).collect();
        let pieces = DASHES[1].pieces(&fine, &sc);
        let ends: Vec<((i32, i32), (i32, i32))> =
            pieces.iter().map(|p| (p[0], *p.last().unwrap())).collect();
        let expected: Vec<((i32, i32), (i32, i32))> =
            straight.iter().map(|p| (p[0], p[1])).collect();
        assert_eq!(ends, expected);
        assert_eq!(DASHES[0].pieces(&fine, &sc), vec![fine.clone()]);
        // Every pattern differs from every other.
        for (i, a) in DASHES.iter().enumerate() {
            for b in &DASHES[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn small_images_keep_fonts_readable() {
        let big = Scale::new(1600, 1000);
        let half = Scale::new(800, 500);
        assert_eq!(big.label(), 21.0);
        // Half the size, but fonts shrink only by 1/sqrt(2).
        assert!(half.label() > 14.0 && half.label() < big.label());
    }
}

/// One row of a legend.
#[derive(Debug, Clone)]
pub enum LegendItem {
    /// A bold heading such as `Model`.
    Heading(String),
    /// A line sample in a colour and dash pattern.
    Line {
        /// Line colour.
        colour: RGBColor,
        /// Dash pattern.
        dash: Dash,
        /// Label.
        text: String,
    },
    /// A filled square (bars, bands).
    Swatch {
        /// Fill colour.
        colour: RGBAColor,
        /// Label.
        text: String,
    },
    /// Plain text without a sample (e.g. which lines coincide), wrapped over the panel's width.
    Note(String),
}

impl LegendItem {
    /// The label of this row (used by tests).
    #[cfg(test)]
    pub fn text_for_test(&self) -> &str {
        self.text()
    }

    fn text(&self) -> &str {
        match self {
            LegendItem::Heading(t) | LegendItem::Note(t) => t,
            LegendItem::Line { text, .. } | LegendItem::Swatch { text, .. } => text,
        }
    }
}

/// Width of the sample (line or square) in a legend row: long enough to show a dash pattern when
/// the legend has lines, just a square otherwise.
fn sample_len(items: &[LegendItem], sc: &Scale) -> i32 {
    if items.iter().any(|i| matches!(i, LegendItem::Line { .. })) {
        sc.ipx(80.0)
    } else {
        sc.label().round() as i32
    }
}

/// Width a legend panel needs for `items`, capped at `max` pixels (longer labels get shortened).
pub fn legend_width<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    items: &[LegendItem],
    sc: &Scale,
    max: u32,
) -> u32 {
    let body = font(sc.label());
    let head = bold(sc.label());
    let widest = items
        .iter()
        .map(|i| match i {
            LegendItem::Heading(t) => text_width(area, t, &head),
            // Notes wrap to whatever width the samples and labels need.
            LegendItem::Note(_) => 0,
            _ => text_width(area, i.text(), &body) + (sample_len(items, sc) + sc.ipx(12.0)) as u32,
        })
        .max()
        .unwrap_or(0);
    (widest + 2 * sc.pad() as u32).min(max)
}

/// Draws `items` as a column starting at `top` on `area` (a panel beside the plot, so the legend never
/// covers data). A legend too long for the panel gets a smaller font, and rows that still do not fit
/// are summarised as `+N more`.
pub fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    items: &[LegendItem],
    sc: &Scale,
    top: i32,
) -> Result<(), String> {
    // A long legend first gets a smaller font (down to 75 %) and only then a "+N more" note.
    let (_, h) = area.dim_in_pixel();
    let mut shrink = 1.0;
    for k in [1.0, 0.92, 0.84, 0.75] {
        shrink = k;
        if legend_height(area, items, sc, k) <= h as i32 - top - sc.pad() {
            break;
        }
    }
    draw_legend_at(area, items, sc, top, shrink)
}

/// Row layout of a legend: (row height, continuation line step, font size, text x, wrapped labels).
fn legend_layout<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    items: &[LegendItem],
    sc: &Scale,
    shrink: f64,
) -> (i32, i32, f64, i32, Vec<Vec<String>>) {
    let (w, _) = area.dim_in_pixel();
    let pad = sc.pad();
    let size = sc.label() * shrink;
    let row = (size * 1.6).round() as i32;
    // Continuation lines of a wrapped label sit closer than separate entries.
    let line_step = (size * 1.2).round() as i32;
    let sample = sample_len(items, sc);
    let text_x = pad + sample + sc.ipx(12.0);
    let max_text = (w as i32 - text_x - pad / 2).max(10) as u32;
    // Long labels (strategy specs) wrap at their own separators rather than being cut, so that two
    // labels never shorten to the same text.
    let lines = items
        .iter()
        .map(|i| match i {
            LegendItem::Heading(t) => {
                vec![fit(
                    area,
                    t,
                    &bold(size),
                    (w as i32 - 2 * pad).max(10) as u32,
                )]
            }
            LegendItem::Note(t) => {
                wrap(area, t, &font(size), (w as i32 - 2 * pad).max(10) as u32, 4)
            }
            _ => wrap(area, i.text(), &font(size), max_text, 3),
        })
        .collect();
    (row, line_step, size, text_x, lines)
}

fn legend_height<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    items: &[LegendItem],
    sc: &Scale,
    shrink: f64,
) -> i32 {
    let (row, step, _, _, lines) = legend_layout(area, items, sc, shrink);
    lines
        .iter()
        .map(|l| row + (l.len() as i32 - 1) * step)
        .sum()
}

fn draw_legend_at<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    items: &[LegendItem],
    sc: &Scale,
    top: i32,
    shrink: f64,
) -> Result<(), String> {
    let (_, h) = area.dim_in_pixel();
    let pad = sc.pad();
    let (row, line_step, size, text_x, lines) = legend_layout(area, items, sc, shrink);
    let sample = sample_len(items, sc);
    let body = font(size);
    let height = |l: &Vec<String>| row + (l.len() as i32 - 1) * line_step;
    let bottom = h as i32 - pad;
    let stroke = sc.stroke();
    let mut y = top;
    for (k, (item, text)) in items.iter().zip(&lines).enumerate() {
        // Keep a row for the "+N more" note unless this is the last item.
        let reserve = if k + 1 < items.len() { row } else { 0 };
        if y + height(text) + reserve > bottom {
            area.draw(&Text::new(
                format!("+{} more not listed", items.len() - k),
                (pad, y + row / 2),
                anchored(font(size).color(&NEUTRAL), HPos::Left, VPos::Center),
            ))
            .map_err(err)?;
            break;
        }
        let cy = y + row / 2;
        match item {
            LegendItem::Heading(_) => {
                area.draw(&Text::new(
                    text[0].clone(),
                    (pad, cy),
                    anchored(bold(size), HPos::Left, VPos::Center),
                ))
                .map_err(err)?;
                y += height(text);
                continue;
            }
            LegendItem::Line { colour, dash, .. } => {
                let style = colour.stroke_width(stroke);
                let pts = [(pad, cy), (pad + sample, cy)];
                for piece in dash.pieces(&pts, sc) {
                    area.draw(&PathElement::new(piece, style)).map_err(err)?;
                }
            }
            LegendItem::Swatch { colour, .. } => {
                let half = (size * 0.5).round() as i32;
                area.draw(&Rectangle::new(
                    [(pad, cy - half), (pad + sample, cy + half)],
                    colour.filled(),
                ))
                .map_err(err)?;
            }
            LegendItem::Note(_) => {
                for (j, l) in text.iter().enumerate() {
                    area.draw(&Text::new(
                        l.clone(),
                        (pad, cy + j as i32 * line_step),
                        anchored(body.clone(), HPos::Left, VPos::Center),
                    ))
                    .map_err(err)?;
                }
                y += height(text);
                continue;
            }
        }
        for (j, l) in text.iter().enumerate() {
            area.draw(&Text::new(
                l.clone(),
                (text_x, cy + j as i32 * line_step),
                anchored(body.clone(), HPos::Left, VPos::Center),
            ))
            .map_err(err)?;
        }
        y += height(text);
    }
    Ok(())
}

/// `text` broken into at most `max_lines` lines of at most `max` pixels, after separators
/// (`+ : / @ , -` and spaces); a piece that still does not fit is shortened with an ellipsis.
pub fn wrap<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    text: &str,
    style: &TextStyle,
    max: u32,
    max_lines: usize,
) -> Vec<String> {
    if text_width(area, text, style) <= max {
        return vec![text.to_string()];
    }
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for token in text.split_inclusive(['+', ':', '/', '@', ',', '-', ' ']) {
        let candidate = format!("{current}{token}");
        if current.is_empty() || text_width(area, &candidate, style) <= max {
            current = candidate;
        } else {
            lines.push(std::mem::take(&mut current));
            current = token.to_string();
        }
    }
    lines.push(current);
    if lines.len() > max_lines {
        let rest = lines[max_lines - 1..].concat();
        lines.truncate(max_lines - 1);
        lines.push(rest);
    }
    lines.iter().map(|l| fit(area, l, style, max)).collect()
}

/// Picks about as many ticks as fit along an axis of `length` pixels when each label needs its own
/// width plus a gap (so labels never overlap); `vertical` axes need one text height per label instead.
#[allow(clippy::too_many_arguments)]
pub fn fitting_ticks<DB: DrawingBackend>(
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
pub fn widest_label<DB: DrawingBackend>(
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
pub struct Ticked {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
    log: bool,
}

impl Ticked {
    /// The axis `lo..hi` with `ticks`.
    pub fn new(lo: f64, hi: f64, ticks: Vec<f64>) -> Self {
        Ticked {
            lo,
            hi,
            ticks,
            log: false,
        }
    }

    /// A logarithmic axis `lo..hi` (both > 0) with `ticks`; values at or below zero map to the
    /// bottom.
    pub fn log(lo: f64, hi: f64, ticks: Vec<f64>) -> Self {
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
pub fn log_ticks(lo: f64, hi: f64, max_count: usize) -> Vec<f64> {
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
pub fn house_mesh<'m, 'a, 'b, X, Y, DB>(
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
