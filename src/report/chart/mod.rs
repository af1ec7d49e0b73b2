//! Charts as PNG or SVG bytes, drawn with plotters in the embedded DejaVu Sans font.
//!
//! The API takes plain data (numbers and labels), so any command or library user can draw them:
//! [`line_chart`] (cumulative cost, sweeps, with optional percentile bands), [`stacked_bar_chart`]
//! (per-call cost breakdown) and [`horizontal_bar_chart`] (tool sizes). [`run_charts`],
//! `sweep_charts` and `tools_charts` turn the reports of `run`, `sweep` and `tools` into the files
//! their `--out` option writes. Output is byte-identical for
//! identical input: no system font, no timestamps, a deterministic PNG encoder.

mod advise;
mod hbar;
mod line;
mod run;
mod stacked;
#[doc(hidden)]
pub mod style;
mod text;
#[cfg(feature = "cli")]
mod tools;
mod whatif;

pub use advise::advise_charts;
#[doc(hidden)]
pub use hbar::{grouped_bar_chart, horizontal_bar_chart, Bar};
#[doc(hidden)]
pub use line::{line_chart, line_chart_with, LineExtras, LineSeries};
pub(crate) use run::sanitize_file_stem;
pub use run::{compare_charts, compare_totals_chart, percentile_series, run_charts, ChartFile};
#[doc(hidden)]
pub use stacked::stacked_bar_chart;
#[doc(hidden)]
pub use style::{Axis, ColourKey, Unit};
#[cfg(feature = "cli")]
pub(crate) use tools::{sweep_charts, tools_charts};
pub use whatif::whatif_charts;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::{Error, Result};
use style::Scale;

/// Smallest image that still has room for axes, legend and title.
pub(crate) const MIN_SIZE: (u32, u32) = (320, 200);
/// Largest image (keeps memory bounded: 8000 x 8000 x 3 bytes = 192 MB).
pub(crate) const MAX_SIZE: (u32, u32) = (8000, 8000);

/// Output format and size of a chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChartOptions {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// SVG text instead of PNG bytes.
    pub svg: bool,
    /// Cost axes of line charts on a logarithmic scale (`--log-scale`), for costs that span
    /// decades (a cheap model beside an expensive one). Charts of differences stay linear.
    pub log_scale: bool,
}

impl Default for ChartOptions {
    fn default() -> Self {
        ChartOptions {
            width: 1600,
            height: 1000,
            svg: false,
            log_scale: false,
        }
    }
}

impl ChartOptions {
    /// The file extension of this format (`png` or `svg`).
    pub(crate) fn extension(&self) -> &'static str {
        if self.svg {
            "svg"
        } else {
            "png"
        }
    }

    /// Parses a size such as `1600x1000`; `origin` names the flag or field in errors.
    pub(crate) fn parse_size(text: &str, origin: &str) -> Result<(u32, u32)> {
        let bad = |problem: String| Error::invalid("command line", origin, problem);
        let (w, h) = text
            .split_once(['x', 'X'])
            .ok_or_else(|| bad(format!("`{text}` is not WIDTHxHEIGHT, e.g. 1600x1000")))?;
        let parse = |s: &str| {
            s.trim()
                .parse::<u32>()
                .map_err(|_| bad(format!("`{text}`: `{s}` is not a whole number of pixels")))
        };
        let size = (parse(w)?, parse(h)?);
        check_size(size).map_err(|e| bad(format!("`{text}`: {e}")))?;
        Ok(size)
    }
}

fn check_size((w, h): (u32, u32)) -> std::result::Result<(), String> {
    if w < MIN_SIZE.0 || h < MIN_SIZE.1 || w > MAX_SIZE.0 || h > MAX_SIZE.1 {
        return Err(format!(
            "chart size {w}x{h} is outside {}x{} .. {}x{}",
            MIN_SIZE.0, MIN_SIZE.1, MAX_SIZE.0, MAX_SIZE.1
        ));
    }
    Ok(())
}

/// Something that can draw itself on any plotters backend (so one drawing routine serves PNG and
/// SVG).
pub(crate) trait Draw {
    /// Draws on `root`, already filled white.
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        sc: &Scale,
    ) -> std::result::Result<(), String>;
}

/// Renders `chart` as PNG or SVG bytes.
pub(crate) fn render(title: &str, opts: &ChartOptions, chart: &impl Draw) -> Result<Vec<u8>> {
    style::register_fonts();
    let size = (opts.width, opts.height);
    check_size(size).map_err(Error::Unsupported)?;
    let sc = Scale::new(opts.width, opts.height);
    let fail = |e: String| {
        let name = title.lines().next().unwrap_or("");
        Error::Internal(format!("cannot draw chart `{name}`: {e}"))
    };
    if opts.svg {
        let mut text = String::new();
        {
            let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
            root.fill(&WHITE).map_err(style::err).map_err(fail)?;
            chart.draw(&root, &sc).map_err(fail)?;
            root.present().map_err(style::err).map_err(fail)?;
        }
        // XML 1.0 allows no C0 control but tab and line breaks: a control character in a scenario,
        // model or tool name made the whole file invalid. Shown as `\u{1b}`, as on a terminal.
        Ok(crate::base::terminal::escape(&text)
            .into_owned()
            .into_bytes())
    } else {
        let mut pixels = vec![255u8; opts.width as usize * opts.height as usize * 3];
        {
            // Text goes through `Crisp` for even letter spacing (see text.rs); SVG keeps <text> elements.
            let root =
                text::Crisp(BitMapBackend::with_buffer(&mut pixels, size)).into_drawing_area();
            chart.draw(&root, &sc).map_err(fail)?;
            root.present().map_err(style::err).map_err(fail)?;
        }
        encode_png(&pixels, opts.width, opts.height)
    }
}

/// Encodes RGB pixels as a PNG with fixed settings (so the bytes depend only on the pixels).
fn encode_png(pixels: &[u8], width: u32, height: u32) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let fail = |e: png::EncodingError| Error::Internal(format!("cannot encode PNG: {e}"));
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        // zlib level 6 (png 0.17's `Compression::Default`) with a filter chosen per row, spelled
        // out rather than left to the crate's defaults so an update cannot change the bytes.
        enc.set_deflate_compression(png::DeflateCompression::Level(6));
        enc.set_filter(png::Filter::Adaptive);
        let mut w = enc.write_header().map_err(fail)?;
        w.write_image_data(pixels).map_err(fail)?;
        w.finish().map_err(fail)?;
    }
    Ok(out)
}

/// An error for a chart with nothing to draw.
pub(crate) fn nothing_to_draw(title: &str, what: &str) -> Error {
    let name = title.lines().next().unwrap_or("");
    Error::Unsupported(format!("chart `{name}` has nothing to draw: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_are_bounded() {
        assert_eq!(
            ChartOptions::parse_size("800x500", "--chart-size").unwrap(),
            (800, 500)
        );
        for bad in ["800", "800x", "axb", "10x10", "100000x500", "-5x300"] {
            let e = ChartOptions::parse_size(bad, "--chart-size")
                .unwrap_err()
                .to_string();
            assert!(e.contains("--chart-size") && e.contains(bad), "{e}");
        }
    }

    #[test]
    fn an_encoder_failure_is_an_internal_error_not_the_users() {
        // Too few pixels for the size: the PNG encoder refuses, and that is pcsim's bug (exit 1),
        // not bad input (exit 2).
        let e = encode_png(&[0u8; 3], 2, 2).unwrap_err();
        assert!(matches!(e, Error::Internal(_)), "{e:?}");
        assert!(!e.is_user_error());
        assert!(e.to_string().contains("cannot encode PNG"), "{e}");
    }
}
