//! Transport setup, apart from the tools: the stdio server.

use rmcp::model::ProtocolVersion;
use rmcp::ServiceExt;
use tokio::io::{AsyncRead, AsyncWrite};

use super::AfhttpMcp;
use crate::error::{AfError, ErrorCode};

/// The MCP protocol versions this server negotiates (rmcp's known versions).
pub fn protocol_versions() -> Vec<String> {
    ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .map(|v| v.as_str().to_string())
        .collect()
}

/// Serve `server` over a stdio pair until the client closes it.
pub async fn serve_stdio<R, W>(server: AfhttpMcp, stdin: R, stdout: W) -> Result<(), AfError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let running = server
        .serve((stdin, stdout))
        .await
        .map_err(|e| AfError::new(ErrorCode::InvalidArgument, format!("mcp handshake: {e}")))?;
    running
        .waiting()
        .await
        .map_err(|e| AfError::new(ErrorCode::IoError, format!("mcp server: {e}")))?;
    Ok(())
}
