//! `tracelight mcp`: a Model Context Protocol server over stdio (the official Rust SDK, `rmcp`),
//! so a coding agent asks questions of a trace and gets compact JSON instead of reading Chrome
//! JSON. The tools and what they answer are in [`crate::mcp_tools`]; this file is the protocol:
//! `tools/list` from the specs, `tools/call` to [`crate::mcp_tools::call`], whose errors become
//! MCP errors (invalid params for bad arguments, and for input that cannot be read, with the
//! message naming the file). The analysis runs on a blocking thread, off the protocol's.

use crate::input::CliError;
use crate::mcp_args::ToolError;
use crate::mcp_tools::{self, Cache};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use std::sync::Arc;

#[derive(Clone, Default)]
struct Tracelight {
    cache: Arc<Cache>,
}

impl ServerHandler for Tracelight {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("tracelight", env!("CARGO_PKG_VERSION")))
            .with_instructions(mcp_tools::instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = mcp_tools::specs()
            .into_iter()
            .map(|s| {
                let schema = match s.schema {
                    serde_json::Value::Object(o) => o,
                    _ => serde_json::Map::new(),
                };
                Tool::new(s.name, s.description, Arc::new(schema))
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let cache = Arc::clone(&self.cache);
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let answer =
            tokio::task::spawn_blocking(move || mcp_tools::call(&cache, &name, &args)).await;
        match answer {
            Ok(Ok(v)) => Ok(CallToolResponse::Complete(CallToolResult::success(vec![
                ContentBlock::text(v.to_string()),
            ]))),
            Ok(Err(ToolError::Params(m))) => Err(ErrorData::invalid_params(m, None)),
            Ok(Err(ToolError::Input(m))) => Err(ErrorData::invalid_params(
                format!("tracelight: {m}"),
                Some(serde_json::json!({"kind": "unreadable_input"})),
            )),
            Err(e) => Err(ErrorData::internal_error(
                format!("the analysis stopped: {e}"),
                None,
            )),
        }
    }
}

/// Serves MCP on stdin/stdout until the client closes stdin. Logs nothing to stdout (it is the
/// protocol's); `stop` is asked every quarter second (the Python console script's Ctrl-C).
pub fn mcp(args: &[String], stop: &dyn Fn() -> bool) -> Result<(), CliError> {
    if let Some(a) = args.first() {
        return Err(CliError::Usage(format!(
            "mcp takes no arguments, not {a:?}"
        )));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::Usage(format!("mcp: cannot start: {e}")))?;
    rt.block_on(async {
        let service = Tracelight::default()
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| CliError::Usage(format!("mcp: the client's initialize failed: {e}")))?;
        let ct = service.cancellation_token();
        let mut done = tokio::spawn(service.waiting());
        loop {
            tokio::select! {
                _ = &mut done => return Ok(()),
                _ = tokio::time::sleep(std::time::Duration::from_millis(250)) => {
                    if stop() {
                        ct.cancel();
                        let _ = done.await;
                        return Ok(());
                    }
                }
            }
        }
    })
}
