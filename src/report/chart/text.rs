//! Text for PNG charts: a backend wrapper that rasterises text itself with ab_glyph.
//!
//! plotters 0.3.7's ab_glyph text drawing places every glyph at a whole pixel and ignores its left
//! side bearing, which makes letter spacing visibly uneven at small sizes (`$ 0.50`). [`Crisp`]
//! forwards everything to the wrapped backend except text, which it lays out with sub-pixel glyph
//! positions, kerning and the font's own ascent and descent. Widths agree with plotters' own
//! estimate (same advances and kerning), so layouts computed with `estimate_text_size` stay valid.

use ab_glyph::{point, Font, FontRef, PxScale, ScaleFont};
use plotters::style::text_anchor::{HPos, VPos};
use plotters::style::FontStyle;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

/// A backend whose text is drawn by [`draw_text`] instead of plotters' font code.
pub(crate) struct Crisp<DB>(pub DB);

// Not user data: the fonts are compiled into the binary, so a parse failure is a broken build.
#[allow(clippy::expect_used)]
fn fonts() -> &'static (FontRef<'static>, FontRef<'static>) {
    static FONTS: std::sync::OnceLock<(FontRef<'static>, FontRef<'static>)> =
        std::sync::OnceLock::new();
    FONTS.get_or_init(|| {
        // The embedded DejaVu fonts are valid TrueType files; a failure would be a broken build.
        let regular = FontRef::try_from_slice(dejavu::sans::regular()).expect("DejaVu Sans parses");
        let bold = FontRef::try_from_slice(dejavu::sans::bold()).expect("DejaVu Sans Bold parses");
        (regular, bold)
    })
}

/// Width in pixels of `text` at `size` (sum of advances and kerning, as plotters estimates it).
pub(crate) fn width(text: &str, size: f32, bold: bool) -> f32 {
    let (regular, b) = fonts();
    let font = if bold { b } else { regular }.as_scaled(PxScale::from(size));
    let mut x = 0.0;
    let mut prev = None;
    for c in text.chars() {
        let id = font.glyph_id(c);
        if let Some(p) = prev {
            x += font.kern(p, id);
        }
        x += font.h_advance(id);
        prev = Some(id);
    }
    x
}

/// Draws `text` anchored at `pos` through `pixel` (x, y, coverage 0..1).
fn draw_text<E>(
    text: &str,
    style: &impl BackendTextStyle,
    pos: BackendCoord,
    mut pixel: impl FnMut(i32, i32, f32) -> Result<(), E>,
) -> Result<(), E> {
    let size = style.size() as f32;
    let bold = matches!(style.style(), FontStyle::Bold);
    let (regular, b) = fonts();
    let font = if bold { b } else { regular };
    let scale = PxScale::from(size);
    let scaled = font.as_scaled(scale);
    let w = width(text, size, bold);
    let anchor = style.anchor();
    let x0 = match anchor.h_pos {
        HPos::Left => 0.0,
        HPos::Center => -w / 2.0,
        HPos::Right => -w,
    };
    // Baseline relative to the anchor: the box is ascent above and descent below it.
    let (asc, desc) = (scaled.ascent(), scaled.descent());
    let base = match anchor.v_pos {
        VPos::Top => asc,
        VPos::Center => (asc + desc) / 2.0,
        VPos::Bottom => desc,
    };
    let trans = style.transform();
    let mut caret = x0;
    let mut prev = None;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = prev {
            caret += scaled.kern(p, id);
        }
        prev = Some(id);
        let glyph = id.with_scale_and_position(scale, point(caret, base));
        caret += scaled.h_advance(id);
        let Some(outline) = font.outline_glyph(glyph) else {
            continue;
        };
        let bounds = outline.px_bounds();
        let mut result = Ok(());
        outline.draw(|gx, gy, cov| {
            if result.is_err() || cov <= 0.0 {
                return;
            }
            let dx = bounds.min.x as i32 + gx as i32;
            let dy = bounds.min.y as i32 + gy as i32;
            let (dx, dy) = trans.transform(dx, dy);
            result = pixel(pos.0 + dx, pos.1 + dy, cov.min(1.0));
        });
        result?;
    }
    Ok(())
}

impl<DB: DrawingBackend> DrawingBackend for Crisp<DB> {
    type ErrorType = DB::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.fill_polygon(vert, style)
    }

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let (w, h) = self.0.get_size();
        let inner = &mut self.0;
        draw_text(text, style, pos, |x, y, cov| {
            if x < 0 || y < 0 || x >= w as i32 || y >= h as i32 {
                return Ok(());
            }
            inner.draw_pixel(
                (x, y),
                BackendColor {
                    alpha: color.alpha * cov as f64,
                    rgb: color.rgb,
                },
            )
        })
    }

    fn estimate_text_size<TStyle: BackendTextStyle>(
        &self,
        text: &str,
        style: &TStyle,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        self.0.estimate_text_size(text, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.blit_bitmap(pos, size, src)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_grow_with_text_and_size() {
        let a = width("$0.50", 20.0, false);
        assert!(a > 0.0);
        assert!(width("$0.500", 20.0, false) > a);
        assert!((width("$0.50", 40.0, false) - 2.0 * a).abs() < 0.5);
        assert!(width("$0.50", 20.0, true) > a);
    }
}
