//! Input layer: what the user hands pcsim. Scenario files, tool-list trimming, live MCP capture,
//! client configuration files, price imports (LiteLLM) and usage logs. Builds model-layer values
//! from files; depends on [`crate::model`] and [`crate::base`], never on the simulation or anything
//! above it.

pub mod capture;
mod genai_check;
pub(crate) mod json_keys;
pub mod litellm;
pub mod litellm_check;
mod litellm_entry;
pub mod mcpconfig;
mod price_check;
pub mod scenario;
pub mod trace;
pub mod trim;
pub mod usagelog;
pub mod walk;
