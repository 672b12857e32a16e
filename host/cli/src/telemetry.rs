//! Optional OTLP traces. When `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, the host's spans — each
//! turn, model call, tool call and plugin call, with their agent, model,
//! tool and plugin — are exported over OTLP/HTTP (protobuf) by the
//! OpenTelemetry SDK, which reads the standard `OTEL_*` variables (headers,
//! timeout, service name). Unset, nothing is exported and nothing is paid.

use std::sync::OnceLock;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;

static PROVIDER: OnceLock<SdkTracerProvider> = OnceLock::new();

/// Whether the environment asks for traces.
fn wanted() -> bool {
    [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]
    .iter()
    .any(|v| std::env::var_os(v).is_some_and(|v| !v.is_empty()))
}

/// The layer that exports spans, when the environment asks for it.
pub fn layer<S>() -> Option<impl Layer<S>>
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    if !wanted() {
        return None;
    }
    let exporter = match opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .build()
    {
        Ok(exporter) => exporter,
        Err(e) => {
            crate::esay!("warning: OTLP traces are off: {e}");
            return None;
        }
    };
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name("clawhost")
        .build();
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build();
    let tracer = provider.tracer("clawhost");
    let _ = PROVIDER.set(provider);
    let spans = tracing_subscriber::filter::Targets::new()
        .with_target("clawhost_runner", tracing::Level::INFO)
        .with_target("clawhost_tools", tracing::Level::INFO)
        .with_target("clawhost_plugin_runtime", tracing::Level::INFO);
    Some(
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_filter(spans),
    )
}

/// Send the spans still buffered (before the process exits).
pub fn flush() {
    if let Some(provider) = PROVIDER.get() {
        if let Err(e) = provider.shutdown() {
            crate::esay!("warning: OTLP traces could not all be sent: {e}");
        }
    }
}
