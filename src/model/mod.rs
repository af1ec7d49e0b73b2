//! Model layer: what is being priced. The catalog of models and their sourced numbers, caching
//! strategies and their resolution against a model, tool definitions and their rendering into
//! tokens per model family. Depends only on [`crate::base`] and [`crate::error`].

pub mod catalog;
pub mod pricing;
pub mod strategy;
pub mod tokens;
pub mod tools;
