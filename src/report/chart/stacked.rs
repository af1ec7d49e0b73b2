//! Stacked bar charts: one bar per category (call), split into stacked parts (uncached input, cache
//! writes, cache reads, output).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{self, err, Axis, LegendItem, Scale};
use super::{nothing_to_draw, render, ChartOptions, Draw};
use crate::error::{Error, Result};

/// Colours of the parts, in order: chosen so that expensive parts are warm and cheap parts cool
/// (uncached = vermillion, writes = orange, reads = green, output = blue), all from the palette.
const PART_COLOURS: [RGBColor; 4] = [
    style::PALETTE[1],
    style::PALETTE[4],
    style::PALETTE[2],
    style::PALETTE[0],
];

/// Colours of the named parts of per-call cost charts, so a part keeps its colour whichever parts
/// a chart leaves out: base-rate storage in sky blue, apart from the orange write surcharge.
const NAMED_PARTS: [(&str, RGBColor); 6] = [
    ("uncached input", style::PALETTE[1]),
    ("stored in cache (base input rate)", style::PALETTE[5]),
    ("cache-write surcharge", style::PALETTE[4]),
    ("cache storage fee", style::PALETTE[3]),
    ("cache reads", style::PALETTE[2]),
    ("output", style::PALETTE[0]),
];

fn named_colour(name: &str) -> Option<RGBColor> {
    NAMED_PARTS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, c)| *c)
}

/// The colour of part `i` of `stacks`: a named part's own; the other parts, in stack order, the
/// first colour (by place, then the palette) that no named part of the chart and no earlier part
/// has (a chart of cache reads and causes never shows a cause in the reads' green).
fn part_colour(stacks: &[(String, Vec<f64>)], i: usize) -> RGBColor {
    if let Some(c) = named_colour(&stacks[i].0) {
        return c;
    }
    let mut taken: Vec<RGBColor> = stacks.iter().filter_map(|(n, _)| named_colour(n)).collect();
    let candidates: Vec<RGBColor> = PART_COLOURS
        .iter()
        .copied()
        .chain(style::PALETTE.iter().copied())
        .collect();
    let mut own = style::colour(i);
    for (k, (name, _)) in stacks.iter().enumerate().take(i + 1) {
        if named_colour(name).is_some() {
            continue;
        }
        let by_place = if k < PART_COLOURS.len() {
            PART_COLOURS[k]
        } else {
            style::colour(k)
        };
        let c = std::iter::once(by_place)
            .chain(candidates.iter().copied())
            .find(|c| !taken.contains(c))
            .unwrap_or(by_place);
        taken.push(c);
        own = c;
    }
    own
}

struct Stacked<'a> {
    title: &'a str,
    x_label: &'a str,
    y: &'a Axis,
    categories: &'a [String],
    stacks: &'a [(String, Vec<f64>)],
}

/// Draws stacked bars: one bar per entry of `categories` (labels along the x axis, e.g. call
/// numbers), each made of the parts in `stacks` (label, one value per category) from the bottom up.
///
/// Errors with [`Error::Unsupported`] when there are no categories or parts, a part has the wrong
/// number of values, or a value is negative or not finite.
pub fn stacked_bar_chart(
    title: &str,
    x_label: &str,
    y: &Axis,
    categories: &[String],
    stacks: &[(String, Vec<f64>)],
    opts: &ChartOptions,
) -> Result<Vec<u8>> {
    if categories.is_empty() {
        return Err(nothing_to_draw(title, "no bars (zero calls)"));
    }
    if stacks.is_empty() {
        return Err(nothing_to_draw(title, "no parts to stack"));
    }
    let name = title.lines().next().unwrap_or("");
    for (label, values) in stacks {
        if values.len() != categories.len() {
            return Err(Error::Unsupported(format!(
                "chart `{name}`: part `{label}` has {} values for {} bars",
                values.len(),
                categories.len()
            )));
        }
        if let Some(v) = values.iter().find(|v| !v.is_finite() || **v < 0.0) {
            return Err(Error::Unsupported(format!(
                "chart `{name}`: part `{label}` has the value {v} (bars need finite values >= 0)"
            )));
        }
    }
    render(
        title,
        opts,
        &Stacked {
            title,
            x_label,
            y,
            categories,
            stacks,
        },
    )
}

/// Indices of the categories to label: every k-th with k from 1, 2, 5, 10, 20, 50, ... so that the
/// labels fit in `length` pixels.
fn label_indices<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    categories: &[String],
    length: i32,
    sc: &Scale,
) -> Vec<usize> {
    let font = style::font(sc.label());
    let widest = categories
        .iter()
        .map(|c| style::text_width(area, c, &font))
        .max()
        .unwrap_or(0) as i32
        + sc.ipx(24.0);
    let n = categories.len();
    let mut k = 1usize;
    let mut step = 0u32;
    while (n.div_ceil(k) as i32) * widest > length && k < n {
        step += 1;
        k = [1usize, 2, 5][(step % 3) as usize] * 10usize.pow(step / 3);
    }
    // Label every k-th category (5, 10, 15, ...), plus the first one when the gap to the next label
    // leaves room (k >= 5), so the axis visibly starts at call 1.
    let mut idx: Vec<usize> = (0..n).filter(|i| (i + 1) % k == 0).collect();
    if k >= 5 && idx.first() != Some(&0) {
        idx.insert(0, 0);
    }
    idx
}

impl Draw for Stacked<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        sc: &Scale,
    ) -> std::result::Result<(), String> {
        let body = style::page(root, self.title, sc)?;
        // Legend top-down in the same order as the stack seen on screen (top part first).
        let mut items = vec![LegendItem::Heading("Part of each call".into())];
        for (i, (label, _)) in self.stacks.iter().enumerate().rev() {
            items.push(LegendItem::Swatch {
                colour: part_colour(self.stacks, i).to_rgba(),
                text: label.clone(),
            });
        }
        let lw = style::legend_width(&body, &items, sc, (sc.width as f64 * 0.3) as u32);
        let (plot, legend) = body.split_horizontally(sc.width as i32 - lw as i32);
        let margin_top = sc.ipx(12.0);
        style::draw_legend(&legend, &items, sc, margin_top)?;

        let n = self.categories.len();
        let totals: Vec<f64> = (0..n)
            .map(|i| self.stacks.iter().map(|(_, v)| v[i]).sum())
            .collect();
        let ymax = totals.iter().copied().fold(0.0, f64::max);
        let yhi = if ymax > 0.0 { ymax } else { 1.0 };
        let (pw, ph) = plot.dim_in_pixel();
        let pad = sc.pad();
        let margin_right = sc.ipx(24.0);
        let x_area = (sc.label() + sc.axis() + sc.px(28.0)).round() as i32;
        let plot_h = ph as i32 - x_area - margin_top - pad;
        let (mut yt, ys) = style::fitting_ticks(&plot, 0.0, yhi, self.y.unit, plot_h, true, sc);
        let ytop = (yhi / ys).ceil() * ys;
        if yt.last().is_none_or(|t| *t < ytop - ys * 1e-9) {
            yt.push(ytop);
        }
        let y_area = style::widest_label(&plot, &yt, ys, self.y.unit, sc)
            + (sc.axis() + sc.px(30.0)).round() as i32;
        let plot_w = pw as i32 - y_area - pad - margin_right;
        let xt: Vec<f64> = label_indices(&plot, self.categories, plot_w, sc)
            .into_iter()
            .map(|i| i as f64)
            .collect();

        let mut chart = ChartBuilder::on(&plot)
            .margin_top(margin_top)
            .margin_right(margin_right)
            .margin_left(pad)
            .margin_bottom(pad)
            .x_label_area_size(x_area)
            .y_label_area_size(y_area)
            .build_cartesian_2d(
                style::Ticked::new(-0.5, n as f64 - 0.5, xt),
                style::Ticked::new(0.0, ytop, yt),
            )
            .map_err(err)?;
        let cats = self.categories;
        let fx = move |v: &f64| {
            let i = v.round();
            if i >= 0.0 && (i as usize) < cats.len() {
                cats[i as usize].clone()
            } else {
                String::new()
            }
        };
        let yu = self.y.unit;
        let fy = move |v: &f64| style::tick_label(*v, ys, yu);
        style::house_mesh(&mut chart.configure_mesh(), sc)
            .disable_x_mesh()
            .x_desc(self.x_label)
            .y_desc(self.y.label.as_str())
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .draw()
            .map_err(err)?;

        // Bars keep a gap while they are wide enough to show one; dense charts become a histogram.
        let px_per_bar = plot_w as f64 / n as f64;
        let half = if px_per_bar >= 6.0 { 0.36 } else { 0.5 };
        for (p, (_, values)) in self.stacks.iter().enumerate() {
            let colour = part_colour(self.stacks, p);
            let rects = (0..n).filter(|&i| values[i] > 0.0).map(|i| {
                let base: f64 = self.stacks[..p].iter().map(|(_, v)| v[i]).sum();
                let x = i as f64;
                Rectangle::new(
                    [(x - half, base), (x + half, base + values[i])],
                    colour.filled(),
                )
            });
            chart.draw_series(rects).map_err(err)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::chart::Unit;

    #[test]
    fn bad_stacks_are_errors() {
        let y = Axis::new("cost per call (USD)", Unit::Usd);
        let o = ChartOptions::default();
        let cats: Vec<String> = vec!["1".into(), "2".into()];
        let e = stacked_bar_chart("T", "call", &y, &[], &[], &o).unwrap_err();
        assert!(e.to_string().contains("zero calls"), "{e}");
        let e =
            stacked_bar_chart("T", "call", &y, &cats, &[("a".into(), vec![1.0])], &o).unwrap_err();
        assert!(e.to_string().contains("has 1 values for 2 bars"), "{e}");
        let e = stacked_bar_chart("T", "call", &y, &cats, &[("a".into(), vec![1.0, -2.0])], &o)
            .unwrap_err();
        assert!(e.to_string().contains("-2"), "{e}");
    }

    #[test]
    fn a_part_without_a_name_never_takes_a_named_parts_colour() {
        // explain's chart: reads (named), causes and new tokens (not named).
        let stacks: Vec<(String, Vec<f64>)> = [
            "cache reads",
            "cold_start",
            "messages_changed",
            "unexplained",
            "new tokens (no cause)",
        ]
        .iter()
        .map(|n| (n.to_string(), vec![1.0]))
        .collect();
        let colours: Vec<RGBColor> = (0..stacks.len()).map(|i| part_colour(&stacks, i)).collect();
        for (i, c) in colours.iter().enumerate() {
            assert!(
                !colours[..i].contains(c),
                "part {i} repeats {c:?}: {colours:?}"
            );
        }
        assert_eq!(colours[0], style::PALETTE[2]);
    }
}
