//! Line charts: one line per series, colour by group (model), dash pattern by style (strategy), with
//! an optional shaded percentile band around each line.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{self, err, Axis, LegendItem, Scale, DASHES};
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

struct LineChart<'a> {
    title: &'a str,
    x: &'a Axis,
    y: &'a Axis,
    series: &'a [LineSeries],
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
        },
    )
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
    fn dash(&self, style: &str) -> style::Dash {
        if is_solid(style) {
            return DASHES[0];
        }
        let others: Vec<&str> = self.styles().into_iter().filter(|s| !is_solid(s)).collect();
        let i = others.iter().position(|s| *s == style).unwrap_or(0);
        DASHES[1 + i % (DASHES.len() - 1)]
    }

    fn colour(&self, group: &str) -> RGBColor {
        let i = self.groups().iter().position(|g| *g == group).unwrap_or(0);
        style::colour(i)
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
        let ylo = ymin.min(0.0);
        let yhi = if ymax > ylo { ymax } else { ylo + 1.0 };
        let (pw, ph) = plot.dim_in_pixel();
        let pad = sc.pad();
        let margin_right = sc.ipx(36.0);
        let x_area = (sc.label() + sc.axis() + sc.px(28.0)).round() as i32;
        let plot_h = ph as i32 - x_area - margin_top - pad;
        let (mut yt, ys) = style::fitting_ticks(&plot, ylo, yhi, self.y.unit, plot_h, true, sc);
        // End the axis on a tick so the top gridline is labelled.
        let ytop = (yhi / ys).ceil() * ys;
        if yt.last().is_none_or(|t| *t < ytop - ys * 1e-9) {
            yt.push(ytop);
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
                style::Ticked::new(ylo, ytop, yt),
            )
            .map_err(err)?;
        let (xu, yu) = (self.x.unit, self.y.unit);
        let fx = move |v: &f64| style::tick_label(*v, xs, xu);
        let fy = move |v: &f64| style::tick_label(*v, ys, yu);
        style::house_mesh(&mut chart.configure_mesh(), sc)
            .x_desc(self.x.label.as_str())
            .y_desc(self.y.label.as_str())
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .draw()
            .map_err(err)?;

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
        LineChart {
            title: "t",
            x,
            y: x,
            series: s,
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
        let mut s = vec![series("m1", "none", 1.0), series("m2", "cached", 1.0)];
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
