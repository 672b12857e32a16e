//! What a tool's JSON result becomes for the model: its JSON text, or —
//! when it has the content shape of OpenClaw's tools and MCP
//! (`{"content": [{"type": "text", "text"}, {"type": "image", "data",
//! "mimeType"}], …}`) with at least one image — the text parts and the
//! images, checked as every image entering the host is.

use clawhost_agent_core::{Image, ToolOutput, MAX_IMAGES_PER_MESSAGE};
use clawhost_hooks::SharedJson;
use serde_json::Value;

/// One part of a content-shaped result.
enum Part<'a> {
    Text(&'a str),
    Image { mime: &'a str, data: &'a str },
}

/// The parts of a content-shaped result, or `None` for any other JSON.
fn parts(value: &Value) -> Option<Vec<Part<'_>>> {
    value["content"]
        .as_array()?
        .iter()
        .map(|p| match p["type"].as_str()? {
            "text" => Some(Part::Text(p["text"].as_str()?)),
            "image" => Some(Part::Image {
                mime: p["mimeType"].as_str()?,
                data: p["data"].as_str()?,
            }),
            _ => None,
        })
        .collect()
}

/// The model's view of a successful tool result.
pub(crate) fn tool_output(tool: &str, value: SharedJson) -> ToolOutput {
    // Its JSON text, made once however many hooks read it too.
    let text_only = |value: SharedJson| ToolOutput {
        content: value.into_text(),
        is_error: false,
        images: Vec::new(),
    };
    let Some(parts) = parts(&value) else {
        return text_only(value);
    };
    if !parts.iter().any(|p| matches!(p, Part::Image { .. })) {
        return text_only(value);
    }
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for part in parts {
        match part {
            Part::Text(t) => texts.push(t),
            Part::Image { mime, data } => {
                if images.len() == MAX_IMAGES_PER_MESSAGE {
                    return refused(
                        tool,
                        format!("more than {MAX_IMAGES_PER_MESSAGE} images in one result"),
                    );
                }
                match Image::from_base64(mime, data) {
                    Ok(image) => images.push(image),
                    Err(e) => return refused(tool, e.to_string()),
                }
            }
        }
    }
    ToolOutput {
        content: texts.join("\n"),
        is_error: false,
        images,
    }
}

fn refused(tool: &str, why: String) -> ToolOutput {
    ToolOutput {
        content: format!("`{tool}` returned an image the host refused: {why}"),
        is_error: true,
        images: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const PNG_B64: &str = "iVBORw0KGgoAAAANSUhEUg==";

    #[test]
    fn content_with_an_image_becomes_text_and_images() {
        let out = tool_output(
            "shot",
            json!({"content": [{"type": "text", "text": "a"}, {"type": "image", "data": PNG_B64, "mimeType": "image/png"}, {"type": "text", "text": "b"}], "details": {"x": 1}}).into(),
        );
        assert_eq!(out.content, "a\nb");
        assert!(!out.is_error);
        assert_eq!(out.images[0].media_type(), Some("image/png"));
    }

    #[test]
    fn other_json_stays_json() {
        for v in [
            json!({"content": [{"type": "text", "text": "only text"}]}),
            json!({"content": "a string"}),
            json!({"content": [{"type": "image", "data": PNG_B64}]}),
            json!([1, 2]),
        ] {
            let out = tool_output("t", v.clone().into());
            assert_eq!(out.content, v.to_string());
            assert!(out.images.is_empty());
        }
    }

    #[test]
    fn a_false_or_oversized_image_is_an_error_result() {
        let svg = "PHN2Zz4=";
        let out = tool_output(
            "t",
            json!({"content": [{"type": "image", "data": svg, "mimeType": "image/svg+xml"}]})
                .into(),
        );
        assert!(out.is_error && out.content.contains("refused"), "{out:?}");
        let many: Vec<Value> = (0..=MAX_IMAGES_PER_MESSAGE)
            .map(|_| json!({"type": "image", "data": PNG_B64, "mimeType": "image/png"}))
            .collect();
        let out = tool_output("t", json!({ "content": many }).into());
        assert!(out.is_error && out.content.contains("more than"), "{out:?}");
    }
}
