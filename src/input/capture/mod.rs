//! Live capture of an MCP server's tool list over stdio.
//!
//! Two layers, so the protocol can be tested without processes:
//! - the JSON-RPC side ([`capture_over`], [`classify`], the request builders): newline-delimited JSON
//!   messages, the handshake (`initialize`, `notifications/initialized`), `tools/list` with
//!   pagination, and minimal answers to requests the server sends us (`roots/list`, `ping`);
//! - the process side ([`capture_command`]): spawns the server, feeds it through a writer thread and
//!   reads its stdout on another (so no send and no wait outlives the deadline, whatever the server
//!   sends or fails to read), drains its stderr, bounds message and total sizes, and always kills and
//!   reaps its whole process tree (`ChildGuard`: the group, every descendant by parent links, and by
//!   an environment marker the orphans that left the group and session), on every path.
//!
//! One file per concept:
//! - `types.rs`: [`CaptureOptions`], [`ClientCapabilities`], the result [`Capture`].
//! - `json_text.rs`: `pretty_json_text`, the server's own JSON text re-indented.
//! - `protocol.rs`: JSON-RPC over a [`Transport`] ([`capture_over`], [`classify`], the requests).
//! - `process.rs`: `ChildGuard`, the end of the server's whole process tree.
//! - `transport.rs`: [`capture_command`], the spawned server behind a transport.

mod json_text;
mod process;
mod protocol;
mod transport;
mod types;

// The protocol steps, public for the fuzz harness and the integration tests only (not the API).
#[doc(hidden)]
pub use protocol::{
    capture_over, classify, initialize_request, initialized_notification, reply_to_server_request,
    tools_list_request, Incoming, Received, Transport,
};
pub use transport::capture_command;
pub use types::{Capture, CaptureOptions, ClientCapabilities, DEFAULT_PROTOCOL_VERSION};

#[cfg(test)]
mod tests;
