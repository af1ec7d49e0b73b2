//! Loading a catalog: parsing and checking `models.toml` (in [`crate::model::catalog`]), then checking
//! that every model's `default_strategy` resolves on that model (which needs
//! [`crate::model::strategy`], itself built on the catalog's types).

use std::path::Path;

use crate::error::{Error, Result};
use crate::model::catalog::{Catalog, EMBEDDED_CATALOG};
use crate::model::strategy::Strategy;

impl Catalog {
    /// The catalog embedded in the binary.
    pub fn embedded() -> Result<Self> {
        Self::from_toml_str(EMBEDDED_CATALOG, crate::model::catalog::BUILTIN_ORIGIN)
    }

    /// Loads and validates a catalog file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = crate::base::files::read_toml_text(path)?;
        Self::from_toml_str(&text, &path.display().to_string())
    }

    /// Loads a catalog file as an overlay on the built-in catalog (`--catalog FILE`): its
    /// families, models and price sheets replace the built-in ones of the same id and add the
    /// others.
    pub fn load_overlay(path: &Path) -> Result<Self> {
        let text = crate::base::files::read_toml_text(path)?;
        Self::overlay_toml_str(&text, &path.display().to_string())
    }

    /// Parses catalog text as an overlay on the built-in catalog (see [`Catalog::load_overlay`]).
    pub fn overlay_toml_str(text: &str, origin: &str) -> Result<Self> {
        let catalog = Catalog::overlay_toml_str_unchecked_strategies(text, origin)?;
        catalog.check_default_strategies(text, origin)
    }

    /// Parses and validates catalog text; `origin` names it in errors. A file of families only is
    /// laid on the built-in catalog (what `pcsim calibrate` writes); any other file is the whole
    /// catalog (`--only-catalog`).
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Self> {
        let catalog = Catalog::from_toml_str_unchecked_strategies(text, origin)?;
        catalog.check_default_strategies(text, origin)
    }

    fn check_default_strategies(self, text: &str, origin: &str) -> Result<Self> {
        let catalog = self;
        for model in &catalog.models {
            Strategy::parse(&model.default_strategy)
                .and_then(|s| s.resolve(model).map(|_| ()))
                .map_err(|e| {
                    Error::invalid(
                        origin,
                        format!("model `{}`.default_strategy", model.id),
                        e.to_string(),
                    )
                    .located_in(text, origin)
                })?;
        }
        Ok(catalog)
    }
}
