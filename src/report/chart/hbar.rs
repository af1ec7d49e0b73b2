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
    /// Sorted largest first.
    bars: Vec<(&'a str, f64)>,
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
    render(
        title,
        opts,
        &HBars {
            title,
            x,
            bars: sorted,
        },
    )
}

impl Draw for HBars<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        sc: &Scale,
    ) -> std::result::Result<(), String> {
        let body = style::page(root, self.title, sc)?;
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
            let rest: f64 = self.bars[shown..].iter().map(|b| b.1).sum();
            let hidden = self.bars.len() - shown;
            let unit = if self.x.unit == style::Unit::Tokens {
                " tokens"
            } else {
                ""
            };
            let text = format!(
                "showing the {shown} largest of {} bars; the other {hidden} add up to {}{unit}",
                self.bars.len(),
                value_text(rest, self.x)
            );
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
        let max_name = (sc.width as f64 * 0.38) as u32;
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
        let vmax = bars.first().map_or(0.0, |b| b.1);
        let xhi = if vmax > 0.0 { vmax } else { 1.0 };
        // Room right of the longest bar for its value label.
        let widest_value = bars
            .iter()
            .map(|(_, v)| style::text_width(&plot, &value_text(*v, self.x), &label_font))
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
        let colour = style::PALETTE[0];
        let half = 0.36;
        chart
            .draw_series(bars.iter().enumerate().map(|(rank, (_, v))| {
                let y = (n - 1 - rank) as f64;
                Rectangle::new([(0.0, y - half), (*v, y + half)], colour.filled())
            }))
            .map_err(err)?;
        let gap = xhi * sc.px(8.0) / plot_w.max(1) as f64;
        chart
            .draw_series(bars.iter().enumerate().map(|(rank, (_, v))| {
                let y = (n - 1 - rank) as f64;
                Text::new(
                    value_text(*v, self.x),
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
