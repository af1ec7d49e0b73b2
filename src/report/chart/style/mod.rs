//! Shared look of every chart: the embedded font, the colour palette, dash patterns, font sizes that
//! scale with the image, tick choice and tick-label formatting.
//!
//! - here: font, palette, dashes, the image scale, text fitting, the page and its header;
//! - `ticks`: axes, tick choice and tick-label formatting, the shared mesh;
//! - `legend`: legends (rows, layout, drawing).

use std::sync::Once;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

mod legend;
mod ticks;

pub(crate) use legend::*;
pub use ticks::*;

/// The font family every chart uses; it is registered from the embedded DejaVu Sans so no system
/// font or fontconfig is ever consulted and PNG output is identical on every machine. The name is
/// also a CSS font list, written as is into SVG `font-family`, so SVG viewers use DejaVu Sans when
/// they have it (the metrics the layout was computed with) and another sans-serif otherwise.
pub(crate) const FAMILY: &str = "DejaVu Sans, sans-serif";

static FONTS: Once = Once::new();

/// Registers the embedded font once per process (plotters keeps a global font table).
pub(crate) fn register_fonts() {
    FONTS.call_once(|| {
        // The bytes are a valid TrueType font shipped in the `dejavu` crate; a failure here would be
        // a broken dependency, and every text draw would then report it as a drawing error.
        let _ = plotters::style::register_font(FAMILY, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FAMILY, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// Okabe–Ito colour-blind-safe palette, reordered for a white background (the pale yellow is
/// replaced by a darker olive so that thin lines stay visible). Models take colours in order.
pub(crate) const PALETTE: [RGBColor; 8] = [
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
pub(crate) fn colour(i: usize) -> RGBColor {
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
    pub(crate) fn get(&self, id: &str) -> Option<RGBColor> {
        self.0.iter().find(|(k, _)| k == id).map(|(_, c)| *c)
    }

    /// The ids in the key, in colour order.
    pub(crate) fn ids(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }
}

/// Text colour (near-black) and grid colour.
pub(crate) const INK: RGBColor = RGBColor(0x20, 0x20, 0x20);
/// Light grey of grid lines.
pub(crate) const GRID: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);
/// Grey used for legend samples of line styles (the colour there means nothing).
pub(crate) const NEUTRAL: RGBColor = RGBColor(0x55, 0x55, 0x55);

/// How a line is stroked: solid (empty pattern), or alternating on/off lengths in pixels at
/// 1600x1000 (scaled with the image), repeated along the whole line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Dash(pub &'static [f64]);

/// Solid first (for the uncached baseline), then eight patterns that stay distinct in grey print:
/// dashed, dotted, long dash, dash-dot, short dash, long dash-dot-dot, dash-dot-dot, dense dots.
pub(crate) const DASHES: [Dash; 9] = [
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
    pub(crate) fn is_solid(&self) -> bool {
        self.0.is_empty()
    }

    /// The "on" pieces of the pixel polyline `points` under this pattern scaled by `sc`; the pattern
    /// continues across vertices so dashes stay even along a line of many short segments.
    pub(crate) fn pieces(&self, points: &[(i32, i32)], sc: &Scale) -> Vec<Vec<(i32, i32)>> {
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
pub(crate) struct Scale {
    /// Image width in pixels.
    pub width: u32,
    factor: f64,
}

impl Scale {
    /// The scale of a `width` x `height` image.
    pub(crate) fn new(width: u32, height: u32) -> Self {
        let raw = (width as f64 / 1600.0).min(height as f64 / 1000.0);
        // Text shrinks with the square root of the image below the design size: at half size fonts
        // are ~70 %, which keeps 800x500 labels at 16-17 px.
        let factor = if raw < 1.0 { raw.sqrt() } else { raw };
        Scale { width, factor }
    }

    /// `base` pixels at the design size, scaled (at least 1).
    pub(crate) fn px(&self, base: f64) -> f64 {
        (base * self.factor).max(1.0)
    }

    /// Pixels as an integer.
    pub(crate) fn ipx(&self, base: f64) -> i32 {
        self.px(base).round() as i32
    }

    /// Font size of the title.
    pub(crate) fn title(&self) -> f64 {
        self.px(36.0)
    }
    /// Font size of the subtitle.
    pub(crate) fn subtitle(&self) -> f64 {
        self.px(24.0)
    }
    /// Font size of axis descriptions.
    pub(crate) fn axis(&self) -> f64 {
        self.px(24.0)
    }
    /// Font size of tick labels and the legend.
    pub(crate) fn label(&self) -> f64 {
        self.px(21.0)
    }
    /// Stroke width of data lines.
    pub(crate) fn stroke(&self) -> u32 {
        self.px(3.0).round().max(2.0) as u32
    }
    /// Outer padding.
    pub(crate) fn pad(&self) -> i32 {
        self.ipx(20.0)
    }
}

/// A text style of `size` pixels in the embedded font.
pub(crate) fn font(size: f64) -> TextStyle<'static> {
    (FAMILY, size).into_font().color(&INK)
}

/// A bold text style.
pub(crate) fn bold(size: f64) -> TextStyle<'static> {
    (FAMILY, size, FontStyle::Bold).into_font().color(&INK)
}

/// The same style anchored at `h`, `v`.
pub(crate) fn anchored(style: TextStyle<'static>, h: HPos, v: VPos) -> TextStyle<'static> {
    style.pos(Pos::new(h, v))
}

/// Pixel width of `text` in `style` (0 when the font cannot measure it).
pub(crate) fn text_width<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    text: &str,
    style: &TextStyle,
) -> u32 {
    area.estimate_text_size(text, style)
        .map(|s| s.0)
        .unwrap_or(0)
}

/// `text` shortened with an ellipsis so that it is at most `max` pixels wide.
pub(crate) fn fit<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    text: &str,
    style: &TextStyle,
    max: u32,
) -> String {
    if text_width(area, text, style) <= max {
        return text.to_string();
    }
    // The longest prefix that fits, by bisection (a prefix's width grows with its length): a
    // 5,000-character id costs a dozen measurements, not 5,000.
    let chars: Vec<char> = text.chars().collect();
    let with_ellipsis = |n: usize| chars[..n].iter().collect::<String>() + "…";
    let (mut lo, mut hi) = (0usize, chars.len().saturating_sub(1));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if text_width(area, &with_ellipsis(mid), style) <= max {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    if lo == 0 {
        "…".to_string()
    } else {
        with_ellipsis(lo)
    }
}

/// `text` broken into at most `max_lines` lines of at most `max` pixels, after separators
/// (`+ : / @ , -` and spaces); a piece that still does not fit is shortened with an ellipsis.
pub(crate) fn wrap<DB: DrawingBackend>(
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

/// Starts a chart page: a white background and the header; returns the area below the header.
pub(crate) fn page<DB: DrawingBackend>(
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
pub(crate) fn draw_header<DB: DrawingBackend>(
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
pub(crate) fn err<E: std::fmt::Debug>(e: E) -> String {
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
