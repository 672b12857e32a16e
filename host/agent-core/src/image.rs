//! Images in messages: what a user attaches and what a tool returns.
//!
//! An image is checked once, where it enters the host: its bytes must be a
//! PNG, JPEG, GIF or WebP (the formats every supported provider accepts; the
//! type is read from the bytes, never from a file name or a claimed type) and
//! at most [`MAX_IMAGE_BYTES`] long; a URL must be `https:`.

use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// The largest image accepted, decoded: Anthropic's per-image limit, the
/// smallest of the supported providers'.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// The most images one message may carry (Anthropic accepts 100 per request).
pub const MAX_IMAGES_PER_MESSAGE: usize = 20;

/// An image given to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum Image {
    /// The image's bytes, base64-encoded.
    Base64 {
        /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
        media_type: String,
        /// Standard base64 of the bytes.
        data: String,
    },
    /// An `https:` URL the provider fetches itself.
    Url {
        /// The URL.
        url: String,
    },
}

/// How a message's images show where only text does (transcripts, the
/// summarizer's input): ` [1 image]`, ` [3 images]`, or nothing.
pub fn images_note(images: &[Image]) -> String {
    match images.len() {
        0 => String::new(),
        1 => " [1 image]".into(),
        n => format!(" [{n} images]"),
    }
}

/// Why an image was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    /// The bytes are none of the accepted formats.
    #[error("not a PNG, JPEG, GIF or WebP image")]
    UnknownFormat,
    /// The image is larger than [`MAX_IMAGE_BYTES`].
    #[error("the image is {0} bytes; at most {MAX_IMAGE_BYTES} are accepted")]
    TooLarge(usize),
    /// The base64 text does not decode.
    #[error("the image data is not valid base64: {0}")]
    BadBase64(String),
    /// The declared media type is not the one the bytes show.
    #[error("the image is declared {declared} but its bytes are {actual}")]
    WrongType {
        /// What the sender said.
        declared: String,
        /// What the bytes are.
        actual: &'static str,
    },
    /// A URL that is not `https:` (or a `data:` URL that does not parse).
    #[error("an image URL must be https: or a base64 data: URL, not `{0}`")]
    BadUrl(String),
}

/// The media type of image bytes, from their signature.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

impl Image {
    /// An image from its bytes; the media type is read from them.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ImageError> {
        if bytes.len() > MAX_IMAGE_BYTES {
            return Err(ImageError::TooLarge(bytes.len()));
        }
        let media_type = sniff(bytes).ok_or(ImageError::UnknownFormat)?;
        Ok(Image::Base64 {
            media_type: media_type.to_string(),
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
        })
    }

    /// An image from base64 text and the type its sender declared (empty
    /// when none was); the bytes must be of that type.
    pub fn from_base64(declared: &str, data: &str) -> Result<Self, ImageError> {
        // Decoded length is at most 3/4 of the text: refuse before decoding.
        if data.len() / 4 * 3 > MAX_IMAGE_BYTES + 3 {
            return Err(ImageError::TooLarge(data.len() / 4 * 3));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|e| ImageError::BadBase64(e.to_string()))?;
        let image = Self::from_bytes(&bytes)?;
        let actual = image.media_type().unwrap_or_default();
        if !declared.is_empty() && !declared.eq_ignore_ascii_case(actual) {
            return Err(ImageError::WrongType {
                declared: declared.chars().take(64).collect(),
                actual: sniff(&bytes).unwrap_or_default(),
            });
        }
        Ok(image)
    }

    /// An image from a URL: `https:`, or a `data:<type>;base64,` URL.
    pub fn from_url(url: &str) -> Result<Self, ImageError> {
        let shown = || url.chars().take(80).collect::<String>();
        if let Some(rest) = url.strip_prefix("data:") {
            let (meta, data) = rest
                .split_once(',')
                .ok_or_else(|| ImageError::BadUrl(shown()))?;
            let media_type = meta
                .strip_suffix(";base64")
                .ok_or_else(|| ImageError::BadUrl(shown()))?;
            return Self::from_base64(media_type, data);
        }
        let https = url
            .get(..8)
            .is_some_and(|s| s.eq_ignore_ascii_case("https://"));
        if !https || url.len() > 8192 || url.chars().any(char::is_whitespace) {
            return Err(ImageError::BadUrl(shown()));
        }
        Ok(Image::Url {
            url: url.to_string(),
        })
    }

    /// The media type of an inline image.
    pub fn media_type(&self) -> Option<&str> {
        match self {
            Image::Base64 { media_type, .. } => Some(media_type),
            Image::Url { .. } => None,
        }
    }

    /// The image as one URL: the URL itself, or a `data:` URL of the bytes
    /// (how the OpenAI APIs take inline images).
    pub fn as_url(&self) -> String {
        match self {
            Image::Base64 { media_type, data } => format!("data:{media_type};base64,{data}"),
            Image::Url { url } => url.clone(),
        }
    }

    /// Characters the image takes in a stored transcript (for size estimates).
    pub fn stored_len(&self) -> usize {
        match self {
            Image::Base64 { data, .. } => data.len(),
            Image::Url { url } => url.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn the_type_comes_from_the_bytes() {
        let image = Image::from_bytes(PNG).unwrap();
        assert_eq!(image.media_type(), Some("image/png"));
        assert_eq!(
            Image::from_bytes(b"<svg onload=alert(1)>"),
            Err(ImageError::UnknownFormat)
        );
        let Image::Base64 { data, .. } = &image else {
            panic!()
        };
        assert!(matches!(
            Image::from_base64("image/jpeg", data),
            Err(ImageError::WrongType { .. })
        ));
        assert_eq!(Image::from_base64("image/png", data).unwrap(), image);
        assert_eq!(Image::from_url(&image.as_url()).unwrap(), image);
    }

    #[test]
    fn large_images_bad_base64_and_plain_urls_are_refused() {
        let big = vec![0u8; MAX_IMAGE_BYTES + 1];
        assert!(matches!(
            Image::from_bytes(&big),
            Err(ImageError::TooLarge(_))
        ));
        let text = "A".repeat((MAX_IMAGE_BYTES + 1024) / 3 * 4);
        assert!(matches!(
            Image::from_base64("", &text),
            Err(ImageError::TooLarge(_))
        ));
        assert!(matches!(
            Image::from_base64("", "!!!"),
            Err(ImageError::BadBase64(_))
        ));
        for url in ["http://x/a.png", "file:///etc/passwd", "data:image/png,abc"] {
            assert!(
                matches!(Image::from_url(url), Err(ImageError::BadUrl(_))),
                "{url}"
            );
        }
        assert!(Image::from_url("https://example.com/a.png").is_ok());
    }
}
