//! What an MCP `tools/call` result becomes on the host's dispatch path:
//!
//! | MCP result | tool result |
//! |---|---|
//! | text parts only | their text, joined by newlines (a JSON string) |
//! | with image parts | `{"content": [text…, image…]}` (the images reach the model, checked as every image is) |
//! | no text, `structuredContent` | the structured value |
//! | embedded resource | a text part: its text, or `[resource <uri>: <mime>, N bytes not shown]` for a blob |
//! | resource link, audio | a text part naming it (`[resource link <uri>]`, `[audio <mime>, N bytes not shown]`) |
//! | `isError: true` | a failed call whose message is the text |

use clawhost_agent_core::ToolError;
use serde_json::{json, Value};

/// One content part as the host keeps it.
enum Part {
    Text(String),
    Image(Value),
}

fn part(block: &Value) -> Part {
    let text = |s: &str| Part::Text(s.to_string());
    let size = |data: &Value| data.as_str().map_or(0, |d| d.len() / 4 * 3);
    match block["type"].as_str().unwrap_or_default() {
        "text" => text(block["text"].as_str().unwrap_or_default()),
        "image" => Part::Image(json!({
            "type": "image",
            "data": block["data"],
            "mimeType": block["mimeType"],
        })),
        "audio" => Part::Text(format!(
            "[audio {}, {} bytes not shown]",
            block["mimeType"].as_str().unwrap_or("?"),
            size(&block["data"])
        )),
        "resource" => {
            let r = &block["resource"];
            let uri = r["uri"].as_str().unwrap_or("?");
            match r["text"].as_str() {
                Some(t) => Part::Text(format!("[resource {uri}]\n{t}")),
                None => Part::Text(format!(
                    "[resource {uri}: {}, {} bytes not shown]",
                    r["mimeType"].as_str().unwrap_or("?"),
                    size(&r["blob"])
                )),
            }
        }
        "resource_link" => Part::Text(format!(
            "[resource link {}{}]",
            block["uri"].as_str().unwrap_or("?"),
            block["name"]
                .as_str()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        )),
        other => Part::Text(format!("[{other} content not shown]")),
    }
}

/// The tool result of an MCP `CallToolResult` (as JSON).
pub fn tool_result(result: &Value) -> Result<Value, ToolError> {
    let parts: Vec<Part> = result["content"]
        .as_array()
        .map(|blocks| blocks.iter().map(part).collect())
        .unwrap_or_default();
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t.as_str()),
            Part::Image(_) => None,
        })
        .collect();
    let text = texts.join("\n");
    if result["isError"] == json!(true) {
        let message = if text.is_empty() {
            "the MCP server reported an error without a message".to_string()
        } else {
            text
        };
        return Err(ToolError::failed(message));
    }
    if parts.iter().any(|p| matches!(p, Part::Image(_))) {
        let content: Vec<Value> = parts
            .into_iter()
            .map(|p| match p {
                Part::Text(t) => json!({"type": "text", "text": t}),
                Part::Image(image) => image,
            })
            .collect();
        return Ok(json!({ "content": content }));
    }
    match result.get("structuredContent") {
        Some(structured) if texts.is_empty() => Ok(structured.clone()),
        _ => Ok(Value::String(text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_content_type_maps_as_the_table_says() {
        let ok = |v: Value| tool_result(&v).unwrap();
        assert_eq!(
            ok(json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]})),
            json!("a\nb")
        );
        let with_image = ok(json!({"content": [
            {"type": "text", "text": "see"},
            {"type": "image", "data": "iVBO", "mimeType": "image/png", "annotations": {}}
        ]}));
        assert_eq!(with_image["content"][1]["mimeType"], "image/png");
        assert_eq!(with_image["content"][0]["text"], "see");
        assert_eq!(
            ok(json!({"content": [], "structuredContent": {"n": 3}})),
            json!({"n": 3})
        );
        assert_eq!(
            ok(json!({"content": [
                {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}},
                {"type": "resource", "resource": {"uri": "file:///b", "blob": "AAAA", "mimeType": "x/y"}},
                {"type": "resource_link", "uri": "file:///c", "name": "c"},
                {"type": "audio", "data": "AAAAAAAA", "mimeType": "audio/wav"}
            ]})),
            json!("[resource file:///a]\nbody\n[resource file:///b: x/y, 3 bytes not shown]\n[resource link file:///c (c)]\n[audio audio/wav, 6 bytes not shown]")
        );
        let err = tool_result(
            &json!({"content": [{"type": "text", "text": "no such file"}], "isError": true}),
        )
        .unwrap_err();
        assert_eq!(err.message(), "no such file");
        assert!(tool_result(&json!({"isError": true})).is_err());
    }
}
