//! Line charts: one line per series, colour by group (model), dash pattern by style (strategy), with
//! an optional shaded percentile band around each line.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{self, err, Axis, ColourKey, LegendItem, Scale, DASHES};
use super::{nothing_to_draw, render, ChartOptions, Draw};
use crate::error::{Error, Result};

/// One line of a [`line_chart`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LineSeries {
    /// What the colour stands for (a model id); groups take palette colours in order of first
    /// appearance, so pass series in catalog order for stable colours.
    pub group: String,
    /// What the dash pattern stands for (a strategy): `none` or empty is solid, other styles take
    /// dashed, dotted, long-dashed patterns in order of first appearance.
    pub style: String,
    /// The (x, y) points of the line (for Monte Carlo runs: the median), in x order.
    pub points: Vec<(f64, f64)>,
    /// Optional band `(x, low, high)`, e.g. the 5th and 95th percentiles, shaded behind the line.
    pub band: Option<Vec<(f64, f64, f64)>>,
}

/// What a line chart can show beyond its series.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LineExtras {
    /// Fixed colours by group (model id), shared by every chart of a report; groups not in the key
    /// take the next palette colours in order of first appearance.
    pub colours: ColourKey,
    /// Vertical markers: at x, with a label drawn at the top of the plot (e.g. the call of a
    /// tool-list change).
    pub markers: Vec<(f64, String)>,
    /// A logarithmic y axis (for costs spanning decades); needs positive values, so points at or
    /// below zero sit on the bottom edge.
    pub log_y: bool,
    /// A horizontal line at y = 0 (for differences that change sign).
    pub zero_line: bool,
    /// Styles drawn solid besides `none` and the empty style (e.g. `as it is` for a baseline).
    pub solid: Vec<String>,
}

struct LineChart<'a> {
    title: &'a str,
    x: &'a Axis,
    y: &'a Axis,
    series: &'a [LineSeries],
    extras: &'a LineExtras,
}

/// Draws a line chart: `title` (a second line after `\n` becomes a subtitle), axes `x` and `y`, and a
/// legend beside the plot listing models (colours), strategies (dash patterns) and the band.
///
/// Errors with [`Error::Unsupported`] when there is no point to draw or a value is not finite.
pub fn line_chart(
    title: &str,
    x: &Axis,
    y: &Axis,
    series: &[LineSeries],
    opts: &ChartOptions,
) -> Result<Vec<u8>> {
    line_chart_with(title, x, y, series, &LineExtras::default(), opts)
}

/// [`line_chart`] with fixed model colours, markers, a log scale or a zero line. Series whose points
/// are identical are listed in the legend under "Same line", since one hides the other.
pub fn line_chart_with(
    title: &str,
    x: &Axis,
    y: &Axis,
    series: &[LineSeries],
    extras: &LineExtras,
    opts: &ChartOptions,
) -> Result<Vec<u8>> {
    if series.iter().all(|s| s.points.is_empty()) {
        return Err(nothing_to_draw(title, "no series has any point"));
    }
    for s in series {
        let band = s.band.iter().flatten().flat_map(|b| [b.0, b.1, b.2]);
        let pts = s.points.iter().flat_map(|p| [p.0, p.1]);
        if let Some(v) = pts.chain(band).find(|v| !v.is_finite()) {
            return Err(Error::Unsupported(format!(
                "chart `{}`: series {}/{} has the value {v}",
                title.lines().next().unwrap_or(""),
                s.group,
                s.style
            )));
        }
    }
    render(
        title,
        opts,
        &LineChart {
            title,
            x,
            y,
            series,
            extras,
        },
    )
}

/// Whether two lines would be drawn on top of each other: same x values, and y values equal to a
/// millionth of the larger (sums of the same bills in another order differ in the last bits).
fn same_line(a: &LineSeries, b: &LineSeries) -> bool {
    a.points.len() == b.points.len()
        && !a.points.is_empty()
        && a.points.iter().zip(&b.points).all(|(p, q)| {
            p.0 == q.0 && (p.1 - q.1).abs() <= 1e-6 * p.1.abs().max(q.1.abs()).max(1e-12)
        })
}

/// Groups of series indices whose lines coincide (each group has at least two members).
fn coinciding(series: &[LineSeries]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut placed = vec![false; series.len()];
    for i in 0..series.len() {
        if placed[i] {
            continue;
        }
        let mut g = vec![i];
        for j in i + 1..series.len() {
            if !placed[j] && same_line(&series[i], &series[j]) {
                placed[j] = true;
                g.push(j);
            }
        }
        if g.len() > 1 {
            groups.push(g);
        }
    }
    groups
}

/// `model strategy` of a series for legend notes.
fn series_name(s: &LineSeries) -> String {
    match (s.group.is_empty(), s.style.is_empty()) {
        (false, false) => format!("{} {}", s.group, s.style),
        (false, true) => s.group.clone(),
        _ => s.style.clone(),
    }
}

/// Distinct values in order of first appearance.
fn distinct<'a>(it: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for v in it {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

fn is_solid(style: &str) -> bool {
    style.is_empty() || style == "none"
}

impl LineChart<'_> {
    fn groups(&self) -> Vec<&str> {
        distinct(self.series.iter().map(|s| s.group.as_str()))
    }

    fn styles(&self) -> Vec<&str> {
        distinct(self.series.iter().map(|s| s.style.as_str()))
    }

    /// Dash pattern of `style`: solid for no caching, then the patterns in order.
    fn is_solid(&self, style: &str) -> bool {
        is_solid(style) || self.extras.solid.iter().any(|s| s == style)
    }

    fn dash(&self, style: &str) -> style::Dash {
        if self.is_solid(style) {
            return DASHES[0];
        }
        let others: Vec<&str> = self
            .styles()
            .into_iter()
            .filter(|s| !self.is_solid(s))
            .collect();
        let i = others.iter().position(|s| *s == style).unwrap_or(0);
        DASHES[1 + i % (DASHES.len() - 1)]
    }

    fn colour(&self, group: &str) -> RGBColor {
        if let Some(c) = self.extras.colours.get(group) {
            return c;
        }
        // Groups outside the key continue the palette after it.
        let unkeyed: Vec<&str> = self
            .groups()
            .into_iter()
            .filter(|g| self.extras.colours.get(g).is_none())
            .collect();
        let i = unkeyed.iter().position(|g| *g == group).unwrap_or(0);
        style::colour(self.extras.colours.ids().count() + i)
    }

    fn legend(&self) -> Vec<LegendItem> {
        let mut items = Vec::new();
        let groups = self.groups();
        if groups.iter().any(|g| !g.is_empty()) {
            items.push(LegendItem::Heading("Model (colour)".into()));
            for g in &groups {
                items.push(LegendItem::Line {
                    colour: self.colour(g),
                    dash: DASHES[0],
                    text: g.to_string(),
                });
            }
        }
        let styles = self.styles();
        if styles.iter().any(|s| !s.is_empty()) {
            items.push(LegendItem::Heading("Strategy (line)".into()));
            for s in &styles {
                items.push(LegendItem::Line {
                    colour: style::NEUTRAL,
                    dash: self.dash(s),
                    text: if s.is_empty() { "(none)" } else { s }.to_string(),
                });
            }
        }
        let same = coinciding(self.series);
        if !same.is_empty() {
            items.push(LegendItem::Heading("Same line (hidden)".into()));
            for g in same {
                let names: Vec<String> = g.iter().map(|&i| series_name(&self.series[i])).collect();
                items.push(LegendItem::Note(names.join(" = ")));
            }
        }
        if !self.extras.markers.is_empty() {
            items.push(LegendItem::Heading("Marked".into()));
            for (_, text) in &self.extras.markers {
                items.push(LegendItem::Line {
                    colour: style::NEUTRAL,
                    dash: DASHES[8],
                    text: text.clone(),
                });
            }
        }
        if self.series.iter().any(|s| s.band.is_some()) {
            items.push(LegendItem::Heading("Spread".into()));
            items.push(LegendItem::Swatch {
                colour: style::NEUTRAL.mix(0.25),
                text: "5th–95th percentile".into(),
            });
            items.push(LegendItem::Line {
                colour: style::NEUTRAL,
                dash: DASHES[0],
                text: "median".into(),
            });
        }
        items
    }

    /// (min, max) of x and of y over all points and bands.
    fn bounds(&self) -> ((f64, f64), (f64, f64)) {
        let mut xs = (f64::INFINITY, f64::NEG_INFINITY);
        let mut ys = xs;
        let mut add = |x: f64, y: f64| {
            xs = (xs.0.min(x), xs.1.max(x));
            ys = (ys.0.min(y), ys.1.max(y));
        };
        for s in self.series {
            for &(x, y) in &s.points {
                add(x, y);
            }
            for &(x, lo, hi) in s.band.iter().flatten() {
                add(x, lo);
                add(x, hi);
            }
        }
        (xs, ys)
    }
}

impl Draw for LineChart<'_> {
    // Over 120 lines: the drawing of a line chart: bounds, axes, series, markers and notes all use
    // the same plot area and scales.
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        sc: &Scale,
    ) -> std::result::Result<(), String> {
        let body = style::page(root, self.title, sc)?;
        let items = self.legend();
        let lw = style::legend_width(&body, &items, sc, (sc.width as f64 * 0.3) as u32);
        let (plot, legend) = body.split_horizontally(sc.width as i32 - lw as i32);
        let margin_top = sc.ipx(12.0);
        style::draw_legend(&legend, &items, sc, margin_top)?;

        let ((xlo, xhi), (ymin, ymax)) = self.bounds();
        let (xlo, xhi) = if xhi > xlo {
            (xlo, xhi)
        } else {
            (xlo - 0.5, xhi + 0.5)
        };
        let log_y = self.extras.log_y && ymax > 0.0;
        let ylo = if log_y {
            // The smallest positive value, down to the power of ten below it.
            let min_pos = self
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1))
                .filter(|v| *v > 0.0)
                .fold(f64::INFINITY, f64::min);
            10f64.powf(min_pos.log10().floor())
        } else {
            ymin.min(0.0)
        };
        let yhi = if ymax > ylo { ymax } else { ylo + 1.0 };
        let (pw, ph) = plot.dim_in_pixel();
        let pad = sc.pad();
        let margin_right = sc.ipx(36.0);
        let x_area = (sc.label() + sc.axis() + sc.px(28.0)).round() as i32;
        let plot_h = ph as i32 - x_area - margin_top - pad;
        let (mut yt, ys) = style::fitting_ticks(&plot, ylo, yhi, self.y.unit, plot_h, true, sc);
        // End the axis on a tick so the top gridline is labelled.
        let mut ytop = (yhi / ys).ceil() * ys;
        if yt.last().is_none_or(|t| *t < ytop - ys * 1e-9) {
            yt.push(ytop);
        }
        // Below zero likewise: the lowest line sits above a labelled tick, not on an unlabelled edge.
        let ylo = if !log_y && ylo < 0.0 {
            let bottom = (ylo / ys).floor() * ys;
            if yt.first().is_none_or(|t| *t > bottom + ys * 1e-9) {
                yt.insert(0, bottom);
            }
            bottom
        } else {
            ylo
        };
        if log_y {
            let rows = (plot_h as f64 / (sc.label() * 2.2)).max(2.0) as usize;
            // The first 1, 2 or 5 times a power of ten at or above the highest value.
            let decade = 10f64.powf(yhi.log10().floor());
            ytop = [1.0, 2.0, 5.0, 10.0]
                .iter()
                .map(|m| m * decade)
                .find(|v| *v >= yhi * (1.0 - 1e-9))
                .unwrap_or(10.0 * decade);
            yt = style::log_ticks(ylo, ytop, rows);
        }
        let y_area = style::widest_label(&plot, &yt, ys, self.y.unit, sc)
            + (sc.axis() + sc.px(30.0)).round() as i32;
        let plot_w = pw as i32 - y_area - pad - margin_right;
        let (xt, xs) = style::fitting_ticks(&plot, xlo, xhi, self.x.unit, plot_w, false, sc);

        let mut chart = ChartBuilder::on(&plot)
            .margin_top(margin_top)
            .margin_right(margin_right)
            .margin_left(pad)
            .margin_bottom(pad)
            .x_label_area_size(x_area)
            .y_label_area_size(y_area)
            .build_cartesian_2d(
                style::Ticked::new(xlo, xhi, xt),
                if log_y {
                    style::Ticked::log(ylo, ytop, yt)
                } else {
                    style::Ticked::new(ylo, ytop, yt)
                },
            )
            .map_err(err)?;
        let (xu, yu) = (self.x.unit, self.y.unit);
        let fx = move |v: &f64| style::tick_label(*v, xs, xu);
        // On a log axis each tick is formatted at its own decade's precision.
        let fy = move |v: &f64| {
            let step = if log_y && *v > 0.0 {
                10f64.powf(v.log10().floor())
            } else {
                ys
            };
            style::tick_label(*v, step, yu)
        };
        style::house_mesh(&mut chart.configure_mesh(), sc)
            .x_desc(self.x.label.as_str())
            .y_desc(self.y.label.as_str())
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .draw()
            .map_err(err)?;

        if self.extras.zero_line && ylo < 0.0 {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(xlo, 0.0), (xhi, 0.0)],
                    style::INK.stroke_width(sc.stroke().div_ceil(2)),
                )))
                .map_err(err)?;
        }
        for (x, text) in &self.extras.markers {
            let area = chart.plotting_area();
            let top = area.map_coordinate(&(*x, ytop));
            let bottom = area.map_coordinate(&(*x, ylo));
            for piece in DASHES[8].pieces(&[top, bottom], sc) {
                root.draw(&PathElement::new(
                    piece,
                    style::NEUTRAL.stroke_width(sc.stroke()),
                ))
                .map_err(err)?;
            }
            // The short name (before any `:`) beside the line; the legend has the whole text.
            let short = text.split(':').next().unwrap_or(text).to_string();
            root.draw(&Text::new(
                short,
                (top.0 + sc.ipx(8.0), top.1 + sc.ipx(6.0)),
                style::anchored(
                    style::font(sc.label()).color(&style::NEUTRAL),
                    plotters::style::text_anchor::HPos::Left,
                    plotters::style::text_anchor::VPos::Top,
                ),
            ))
            .map_err(err)?;
        }
        // Bands first, so every line stays visible on top of every band.
        for s in self.series {
            let Some(band) = &s.band else { continue };
            if band.is_empty() {
                continue;
            }
            let mut pts: Vec<(f64, f64)> = band.iter().map(|b| (b.0, b.2)).collect();
            pts.extend(band.iter().rev().map(|b| (b.0, b.1)));
            let fill = self.colour(&s.group).mix(0.18).filled();
            chart
                .draw_series(std::iter::once(Polygon::new(pts, fill)))
                .map_err(err)?;
        }
        let stroke = sc.stroke();
        // At most a few points per 3-pixel column: thousands of sub-pixel segments would render
        // as a fuzzy, thickened stroke.
        let columns = (plot_w / 3).max(1) as usize;
        for s in self.series {
            let points = thin(&s.points, columns);
            let colour = self.colour(&s.group);
            let line = ShapeStyle {
                color: colour.to_rgba(),
                filled: false,
                stroke_width: stroke,
            };
            let dash = self.dash(&s.style);
            if points.len() == 1 {
                // A single point has no line to dash: mark it so it is visible.
                chart
                    .draw_series(std::iter::once(Circle::new(
                        points[0],
                        stroke * 2,
                        colour.filled(),
                    )))
                    .map_err(err)?;
            } else {
                // Dashes are laid out in pixels (after mapping) so every pattern keeps its look
                // whatever the axis ranges.
                let area = chart.plotting_area();
                let pixels: Vec<(i32, i32)> =
                    points.iter().map(|p| area.map_coordinate(p)).collect();
                for piece in dash.pieces(&pixels, sc) {
                    root.draw(&PathElement::new(piece, line)).map_err(err)?;
                }
            }
        }
        Ok(())
    }
}

/// `points` reduced to the first, lowest, highest and last point of each of `columns` equal x
/// intervals (in their original order), when there are more than four points per interval; the drawn
/// shape is unchanged at pixel resolution.
fn thin(points: &[(f64, f64)], columns: usize) -> Vec<(f64, f64)> {
    if points.len() <= 4 * columns.max(1) {
        return points.to_vec();
    }
    let (lo, hi) = points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.0), b.max(p.0))
        });
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let column = |x: f64| (((x - lo) / span) * columns as f64).min(columns as f64 - 1.0) as usize;
    let mut out = Vec::with_capacity(4 * columns);
    let mut start = 0;
    while start < points.len() {
        let c = column(points[start].0);
        let mut end = start + 1;
        while end < points.len() && column(points[end].0) == c {
            end += 1;
        }
        let run = &points[start..end];
        let min = (0..run.len()).min_by(|&a, &b| run[a].1.total_cmp(&run[b].1));
        let max = (0..run.len()).max_by(|&a, &b| run[a].1.total_cmp(&run[b].1));
        let mut keep: Vec<usize> = [Some(0), min, max, Some(run.len() - 1)]
            .into_iter()
            .flatten()
            .collect();
        keep.sort_unstable();
        keep.dedup();
        out.extend(keep.into_iter().map(|i| run[i]));
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::chart::Unit;

    fn series(group: &str, style: &str, k: f64) -> LineSeries {
        LineSeries {
            group: group.into(),
            style: style.into(),
            points: (1..=10).map(|i| (i as f64, k * i as f64)).collect(),
            band: None,
        }
    }

    fn chart(s: &[LineSeries]) -> LineChart<'_> {
        static X: std::sync::OnceLock<Axis> = std::sync::OnceLock::new();
        let x = X.get_or_init(|| Axis::new("call", Unit::Count));
        static E: std::sync::OnceLock<LineExtras> = std::sync::OnceLock::new();
        LineChart {
            title: "t",
            x,
            y: x,
            series: s,
            extras: E.get_or_init(LineExtras::default),
        }
    }

    #[test]
    fn none_is_solid_and_other_strategies_get_distinct_dashes() {
        let s = [
            series("a", "cached", 1.0),
            series("a", "none", 2.0),
            series("b", "explicit:tools", 3.0),
        ];
        let c = chart(&s);
        assert_eq!(c.dash("none"), DASHES[0]);
        assert_eq!(c.dash("cached"), DASHES[1]);
        assert_eq!(c.dash("explicit:tools"), DASHES[2]);
        assert_eq!(c.colour("a"), style::PALETTE[0]);
        assert_eq!(c.colour("b"), style::PALETTE[1]);
    }

    #[test]
    fn legend_lists_models_then_strategies_then_band() {
        let mut s = vec![series("m1", "none", 1.0), series("m2", "cached", 2.0)];
        s[0].band = Some(vec![(1.0, 0.5, 1.5)]);
        let texts: Vec<String> = chart(&s)
            .legend()
            .iter()
            .map(|i| i.text_for_test().to_string())
            .collect();
        assert_eq!(
            texts,
            [
                "Model (colour)",
                "m1",
                "m2",
                "Strategy (line)",
                "none",
                "cached",
                "Spread",
                "5th–95th percentile",
                "median"
            ]
        );
    }

    #[test]
    fn coinciding_lines_are_grouped_and_named() {
        let s = [
            series("a", "none", 1.0),
            series("a", "cached", 2.0),
            series("b", "none", 1.0),
            series("b", "cached", 1.0 + 1e-9),
            series("c", "none", 3.0),
        ];
        assert_eq!(coinciding(&s), vec![vec![0, 2, 3]]);
        let texts: Vec<String> = chart(&s)
            .legend()
            .iter()
            .map(|i| i.text_for_test().to_string())
            .collect();
        assert!(
            texts.contains(&"a none = b none = b cached".to_string()),
            "{texts:?}"
        );
        // A relative difference of a millionth is a different line.
        assert!(coinciding(&[series("a", "", 1.0), series("b", "", 1.00001)]).is_empty());
    }

    #[test]
    fn thinning_keeps_ends_and_extremes_per_column() {
        let pts: Vec<(f64, f64)> = (0..1000)
            .map(|i| (i as f64, if i == 501 { 99.0 } else { i as f64 / 100.0 }))
            .collect();
        let t = thin(&pts, 10);
        assert!(t.len() <= 40, "{}", t.len());
        assert_eq!(t.first(), pts.first());
        assert_eq!(t.last(), pts.last());
        assert!(t.contains(&(501.0, 99.0)));
        assert!(t.windows(2).all(|w| w[0].0 < w[1].0));
        let few = &pts[..30];
        assert_eq!(thin(few, 10), few.to_vec());
    }

    #[test]
    fn empty_and_non_finite_input_are_errors_not_panics() {
        let x = Axis::new("call", Unit::Count);
        let o = ChartOptions::default();
        let e = line_chart("Empty", &x, &x, &[], &o).unwrap_err();
        assert!(e.to_string().contains("nothing to draw"), "{e}");
        let e = line_chart("Empty", &x, &x, &[LineSeries::default()], &o).unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)));
        let mut s = series("m", "none", 1.0);
        s.points[3].1 = f64::NAN;
        let e = line_chart("NaN", &x, &x, &[s], &o).unwrap_err();
        assert!(e.to_string().contains("NaN"), "{e}");
    }
}
