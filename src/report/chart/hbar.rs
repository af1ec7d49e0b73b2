//! Horizontal bar charts: one named value per bar, largest at the top (tool sizes).

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::style::{self, err, Axis, Scale};
use super::{nothing_to_draw, render, ChartOptions, Draw};
use crate::error::{Error, Result};

struct HBars<'a> {
    title: &'a str,
    x: &'a Axis,
    /// In drawing order, top first.
    bars: Vec<(&'a str, f64)>,
    /// Fill of each bar.
    colours: Vec<RGBColor>,
    /// Text after each bar's value (may be empty).
    notes: Vec<&'a str>,
    /// Legend entries (colour, text), beside the bars; none for a single-colour chart.
    legend: Vec<(RGBColor, String)>,
    /// Bars sorted largest first (the hidden ones are the smallest, and their sum means
    /// something); otherwise in the caller's order.
    sorted: bool,
}

/// One bar of a [`grouped_bar_chart`].
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Label left of the bar.
    pub label: String,
    /// Length of the bar (finite, >= 0).
    pub value: f64,
    /// What the colour stands for (a model id, looked up in the key).
    pub group: String,
    /// Text after the value label, e.g. `-76.3% vs none`.
    pub note: String,
}

/// Draws `bars` as horizontal bars in the order given (top first), coloured by group through
/// `colours` (groups not in the key continue the palette), each labelled with its value and note,
/// with a legend of the groups. For totals side by side: `compare`'s strategies per model.
///
/// Errors with [`Error::Unsupported`] when `bars` is empty or a value is negative or not finite.
pub fn grouped_bar_chart(
    title: &str,
    x: &Axis,
    bars: &[Bar],
    colours: &style::ColourKey,
    opts: &ChartOptions,
) -> Result<Vec<u8>> {
    if bars.is_empty() {
        return Err(nothing_to_draw(title, "no bars"));
    }
    if let Some(b) = bars.iter().find(|b| !b.value.is_finite() || b.value < 0.0) {
        return Err(Error::Unsupported(format!(
            "chart `{}`: bar `{}` has the value {} (bars need finite values >= 0)",
            title.lines().next().unwrap_or(""),
            b.label,
            b.value
        )));
    }
    let mut groups: Vec<&str> = Vec::new();
    for b in bars {
        if !groups.contains(&b.group.as_str()) {
            groups.push(&b.group);
        }
    }
    let unkeyed: Vec<&str> = groups
        .iter()
        .copied()
        .filter(|g| colours.get(g).is_none())
        .collect();
    let colour = |g: &str| {
        colours.get(g).unwrap_or_else(|| {
            let i = unkeyed.iter().position(|u| *u == g).unwrap_or(0);
            style::colour(colours.ids().count() + i)
        })
    };
    render(
        title,
        opts,
        &HBars {
            title,
            x,
            bars: bars.iter().map(|b| (b.label.as_str(), b.value)).collect(),
            colours: bars.iter().map(|b| colour(&b.group)).collect(),
            notes: bars.iter().map(|b| b.note.as_str()).collect(),
            legend: groups.iter().map(|g| (colour(g), g.to_string())).collect(),
            sorted: false,
        },
    )
}

/// Draws horizontal bars of `bars` (name, value), sorted largest first (ties by name), each labelled
/// with its value; the value axis is `x`. When there are more bars than rows that fit, the largest
/// are shown and a note says how many were left out.
///
/// Errors with [`Error::Unsupported`] when `bars` is empty or a value is negative or not finite.
pub fn horizontal_bar_chart(
    title: &str,
    x: &Axis,
    bars: &[(String, f64)],
    opts: &ChartOptions,
) -> Result<Vec<u8>> {
    if bars.is_empty() {
        return Err(nothing_to_draw(title, "no bars"));
    }
    if let Some((name, v)) = bars.iter().find(|(_, v)| !v.is_finite() || *v < 0.0) {
        return Err(Error::Unsupported(format!(
            "chart `{}`: bar `{name}` has the value {v} (bars need finite values >= 0)",
            title.lines().next().unwrap_or("")
        )));
    }
    let mut sorted: Vec<(&str, f64)> = bars.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    sorted.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let n = sorted.len();
    render(
        title,
        opts,
        &HBars {
            title,
            x,
            bars: sorted,
            colours: vec![style::PALETTE[0]; n],
            notes: vec![""; n],
            legend: Vec::new(),
            sorted: true,
        },
    )
}

impl Draw for HBars<'_> {
    // Over 120 lines: the drawing of a horizontal bar chart: the layout figures (margins, rows that
    // fit, label widths) are computed once and used by every part drawn.
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        sc: &Scale,
    ) -> std::result::Result<(), String> {
        let page = style::page(root, self.title, sc)?;
        let body = if self.legend.is_empty() {
            page
        } else {
            let items: Vec<style::LegendItem> = self
                .legend
                .iter()
                .map(|(c, t)| style::LegendItem::Swatch {
                    colour: c.to_rgba(),
                    text: t.clone(),
                })
                .collect();
            let lw = style::legend_width(&page, &items, sc, (sc.width as f64 * 0.25) as u32);
            let (bars, legend) = page.split_horizontally(sc.width as i32 - lw as i32);
            style::draw_legend(&legend, &items, sc, sc.ipx(8.0))?;
            bars
        };
        let pad = sc.pad();
        let margin_top = sc.ipx(8.0);
        let x_area = (sc.label() + sc.axis() + sc.px(28.0)).round() as i32;
        let note_h = (sc.label() * 1.6).round() as i32;
        let (_, bh) = body.dim_in_pixel();
        // Each bar needs a row a bit taller than its label so labels never touch.
        let row = (sc.label() * 1.3).round() as i32;
        let rows_fit = ((bh as i32 - x_area - margin_top - pad - note_h) / row).max(1) as usize;
        let shown = self.bars.len().min(rows_fit);
        let bars = &self.bars[..shown];
        let (plot, note) = if shown < self.bars.len() {
            body.split_vertically(bh as i32 - note_h)
        } else {
            body.split_vertically(bh as i32)
        };
        if shown < self.bars.len() {
            let rest: f64 = self.bars[shown..].iter().map(|b| b.1).sum::<f64>();
            let hidden = self.bars.len() - shown;
            let unit = if self.x.unit == style::Unit::Tokens {
                " tokens"
            } else {
                ""
            };
            let text = if self.sorted {
                format!(
                    "showing the {shown} largest of {} bars; the other {hidden} add up to {}{unit}",
                    self.bars.len(),
                    value_text(rest, self.x)
                )
            } else {
                format!(
                    "showing the first {shown} of {} bars; {hidden} more do not fit (a larger --chart-size shows them)",
                    self.bars.len()
                )
            };
            note.draw(&Text::new(
                text,
                (pad, 0),
                style::anchored(
                    style::font(sc.label()).color(&style::NEUTRAL),
                    HPos::Left,
                    VPos::Top,
                ),
            ))
            .map_err(err)?;
        }

        let label_font = style::font(sc.label());
        let max_name = (sc.width as f64 * if self.legend.is_empty() { 0.38 } else { 0.5 }) as u32;
        let names: Vec<String> = bars
            .iter()
            .map(|(n, _)| style::fit(&plot, n, &label_font, max_name))
            .collect();
        let name_w = names
            .iter()
            .map(|n| style::text_width(&plot, n, &label_font))
            .max()
            .unwrap_or(0) as i32;
        let y_area = name_w + sc.ipx(18.0);
        let (pw, _) = plot.dim_in_pixel();
        let margin_right = sc.ipx(36.0);
        let plot_w = pw as i32 - y_area - pad - margin_right;
        let vmax = bars.iter().map(|b| b.1).fold(0.0, f64::max);
        let xhi = if vmax > 0.0 { vmax } else { 1.0 };
        // Room right of the longest bar for its value label.
        let label = |i: usize, v: f64| {
            let note = self.notes[i];
            if note.is_empty() {
                value_text(v, self.x)
            } else {
                format!("{}  {note}", value_text(v, self.x))
            }
        };
        // Room right of each bar for its label: the widest bar-plus-label sets the scale.
        let widest_value = bars
            .iter()
            .enumerate()
            .map(|(i, (_, v))| style::text_width(&plot, &label(i, *v), &label_font))
            .max()
            .unwrap_or(0) as f64
            + sc.px(16.0);
        let share = (widest_value / plot_w.max(1) as f64).min(0.5);
        let xhi = xhi / (1.0 - share);
        let (xt, xs) = style::fitting_ticks(&plot, 0.0, xhi, self.x.unit, plot_w, false, sc);
        let n = shown;
        let yt: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let mut chart = ChartBuilder::on(&plot)
            .margin_top(margin_top)
            .margin_right(margin_right)
            .margin_left(pad)
            .margin_bottom(pad)
            .x_label_area_size(x_area)
            .y_label_area_size(y_area)
            .build_cartesian_2d(
                style::Ticked::new(0.0, xhi, xt),
                style::Ticked::new(-0.5, n as f64 - 0.5, yt),
            )
            .map_err(err)?;
        // Rank 0 (largest) is drawn at the top: y = n - 1 - rank.
        let name_of = move |v: &f64| {
            let y = v.round();
            if y < 0.0 || y as usize >= n {
                return String::new();
            }
            names[n - 1 - y as usize].clone()
        };
        let xu = self.x.unit;
        let fx = move |v: &f64| style::tick_label(*v, xs, xu);
        style::house_mesh(&mut chart.configure_mesh(), sc)
            .disable_y_mesh()
            .x_desc(self.x.label.as_str())
            .x_label_formatter(&fx)
            .y_label_formatter(&name_of)
            .draw()
            .map_err(err)?;
        let half = 0.36;
        let colours = &self.colours;
        chart
            .draw_series(bars.iter().enumerate().map(|(rank, (_, v))| {
                let y = (n - 1 - rank) as f64;
                Rectangle::new([(0.0, y - half), (*v, y + half)], colours[rank].filled())
            }))
            .map_err(err)?;
        let gap = xhi * sc.px(8.0) / plot_w.max(1) as f64;
        chart
            .draw_series(bars.iter().enumerate().map(|(rank, (_, v))| {
                let y = (n - 1 - rank) as f64;
                Text::new(
                    label(rank, *v),
                    (*v + gap, y),
                    style::anchored(style::font(sc.label()), HPos::Left, VPos::Center),
                )
            }))
            .map_err(err)?;
        Ok(())
    }
}

/// The value printed at the end of a bar: whole tokens or full dollars.
fn value_text(v: f64, x: &Axis) -> String {
    match x.unit {
        style::Unit::Usd => crate::report::usd(v),
        style::Unit::Seconds | style::Unit::Plain => style::group(v, 2),
        _ => style::group(v, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::chart::Unit;

    #[test]
    fn bad_bars_are_errors() {
        let x = Axis::new("tokens", Unit::Tokens);
        let o = ChartOptions::default();
        let e = horizontal_bar_chart("Tools", &x, &[], &o).unwrap_err();
        assert!(e.to_string().contains("nothing to draw"), "{e}");
        let e = horizontal_bar_chart("Tools", &x, &[("a".into(), f64::INFINITY)], &o).unwrap_err();
        assert!(e.to_string().contains("`a`"), "{e}");
    }
}
