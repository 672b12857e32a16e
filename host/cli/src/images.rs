//! Images a user attaches on the command line (`run --image`, `/image`).

use std::io::Read;

use anyhow::Context;
use clawhost_agent_core::{Image, MAX_IMAGE_BYTES};

/// The image `arg` names: an `https:` or base64 `data:` URL, else a file
/// (read up to the size limit; its type comes from its bytes).
pub fn load(arg: &str) -> anyhow::Result<Image> {
    if arg.starts_with("https://") || arg.starts_with("data:") {
        return Image::from_url(arg).with_context(|| "image refused".to_string());
    }
    let file = std::fs::File::open(arg).with_context(|| format!("cannot open image {arg}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_IMAGE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read image {arg}"))?;
    Image::from_bytes(&bytes).with_context(|| format!("image {arg} refused"))
}

/// How an attached image is described to the user.
pub fn describe(image: &Image) -> String {
    match image {
        Image::Base64 { media_type, data } => {
            format!("{media_type}, {} KiB", data.len() / 4 * 3 / 1024)
        }
        Image::Url { url } => url.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_read_by_content_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("a.txt");
        std::fs::write(&png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
        assert_eq!(
            load(png.to_str().unwrap()).unwrap().media_type(),
            Some("image/png")
        );
        let big = dir.path().join("big.png");
        std::fs::write(&big, vec![0u8; MAX_IMAGE_BYTES + 10]).unwrap();
        let err = format!("{:#}", load(big.to_str().unwrap()).unwrap_err());
        assert!(err.contains("at most"), "{err}");
        let err = format!("{:#}", load("/nonexistent.png").unwrap_err());
        assert!(err.contains("cannot open image"), "{err}");
        assert!(load("http://example.com/a.png").is_err());
    }
}
