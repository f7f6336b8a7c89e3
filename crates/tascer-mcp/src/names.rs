//! Tool and server name normalisation (`mcp__<server>__<tool>`).

/// Replaces every character outside `[A-Za-z0-9_-]` with `_`.
pub fn sanitize_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The name the model sees for tool `tool` of server `server`.
pub fn mcp_tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{}__{}", sanitize_name(server), sanitize_name(tool))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizes() {
        assert_eq!(sanitize_name("my server.v2"), "my_server_v2");
        assert_eq!(mcp_tool_name("fs", "read-file"), "mcp__fs__read-file");
        assert_eq!(mcp_tool_name("a/b", "c d"), "mcp__a_b__c_d");
    }
}
