//! `GET /metrics`: the Prometheus text format, written by the Prometheus
//! client library (`prometheus-client`). Per plugin, read from its counters
//! at each scrape: calls, failures by kind, cancellations, calls refused in
//! quarantine, quarantines, whether it is quarantined now, call latency, the
//! memory high-water mark. Per agent, recorded as turns run: turns by
//! outcome, turn latency, model-reply latency, tokens, tool calls.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use clawhost_agent_core::TurnEvent;
use clawhost_plugin_runtime::{PluginState, PluginStatus, LATENCY_BUCKETS};
use clawhost_runner::AgentHost;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use crate::Gateway;

/// Labels: name, value pairs.
type Labels = Vec<(&'static str, String)>;

/// A per-plugin metric: name, help, and how to read it from a status.
type PluginMetric<T> = (&'static str, &'static str, fn(&PluginStatus) -> T);

/// Latency buckets of turns and model replies, in seconds.
const TURN_BUCKETS: [f64; 10] = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0];

fn histogram() -> Histogram {
    Histogram::new(TURN_BUCKETS)
}

/// The gateway's metrics.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    turns: Family<Labels, Counter>,
    turn_seconds: Family<Labels, Histogram, fn() -> Histogram>,
    model_reply_seconds: Family<Labels, Histogram, fn() -> Histogram>,
    tokens: Family<Labels, Counter>,
    tool_calls: Family<Labels, Counter>,
}

impl Metrics {
    /// The metrics of a gateway over `host`.
    pub fn new(host: Arc<AgentHost>) -> Self {
        let mut registry = Registry::with_prefix("clawhost");
        let turns = Family::<Labels, Counter>::default();
        let turn_seconds =
            Family::<Labels, Histogram, fn() -> Histogram>::new_with_constructor(histogram);
        let model_reply_seconds =
            Family::<Labels, Histogram, fn() -> Histogram>::new_with_constructor(histogram);
        let tokens = Family::<Labels, Counter>::default();
        let tool_calls = Family::<Labels, Counter>::default();
        registry.register(
            "turns",
            "Turns run, by agent and outcome (ok, error)",
            turns.clone(),
        );
        registry.register(
            "turn_seconds",
            "Turn latency, by agent",
            turn_seconds.clone(),
        );
        registry.register(
            "model_reply_seconds",
            "Time from a turn's start or its last tool result to each model reply, by agent",
            model_reply_seconds.clone(),
        );
        registry.register(
            "tokens",
            "Model tokens, by agent and kind (input, output)",
            tokens.clone(),
        );
        registry.register(
            "tool_calls",
            "Tool calls models asked for, by agent",
            tool_calls.clone(),
        );
        registry.register_collector(Box::new(Plugins(host)));
        Self {
            registry,
            turns,
            turn_seconds,
            model_reply_seconds,
            tokens,
            tool_calls,
        }
    }

    /// What to record of one turn of `agent` as its events come.
    pub fn turn(self: &Arc<Self>, agent: &str) -> TurnRecorder {
        TurnRecorder {
            metrics: self.clone(),
            agent: agent.to_string(),
            started: Instant::now(),
            mark: std::sync::Mutex::new(Instant::now()),
        }
    }

    /// The text exposition.
    fn render(&self) -> Result<String, std::fmt::Error> {
        let mut text = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut text, &self.registry)?;
        Ok(text)
    }
}

/// One turn's recording.
#[derive(Debug)]
pub struct TurnRecorder {
    metrics: Arc<Metrics>,
    agent: String,
    started: Instant,
    /// The turn's start or its last tool result.
    mark: std::sync::Mutex<Instant>,
}

impl TurnRecorder {
    fn labels(&self) -> Labels {
        vec![("agent", self.agent.clone())]
    }

    /// Record what `event` tells.
    pub fn event(&self, event: &TurnEvent) {
        let mut mark = clawhost_agent_core::lock(&self.mark);
        match event {
            TurnEvent::ModelReply {
                tool_calls, usage, ..
            } => {
                let m = &self.metrics;
                m.model_reply_seconds
                    .get_or_create(&self.labels())
                    .observe(mark.elapsed().as_secs_f64());
                for (kind, n) in [
                    ("input", usage.input_tokens),
                    ("output", usage.output_tokens),
                ] {
                    let mut labels = self.labels();
                    labels.push(("kind", kind.into()));
                    m.tokens.get_or_create(&labels).inc_by(n);
                }
                m.tool_calls
                    .get_or_create(&self.labels())
                    .inc_by(tool_calls.len() as u64);
            }
            TurnEvent::ToolResult { .. } => *mark = Instant::now(),
            _ => {}
        }
    }

    /// The turn ended, well or not.
    pub fn end(&self, ok: bool) {
        let mut labels = self.labels();
        labels.push(("outcome", if ok { "ok" } else { "error" }.into()));
        self.metrics.turns.get_or_create(&labels).inc();
        self.metrics
            .turn_seconds
            .get_or_create(&self.labels())
            .observe(self.started.elapsed().as_secs_f64());
    }
}

/// The plugins' counters, read at each scrape.
struct Plugins(Arc<AgentHost>);

impl std::fmt::Debug for Plugins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Plugins")
    }
}

impl Collector for Plugins {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let statuses = self.0.runner().plugins().statuses();
        let counters: [PluginMetric<u64>; 4] = [
            ("plugin_calls", "Calls into the plugin that ran", |s| {
                s.stats.calls
            }),
            ("plugin_cancelled", "Calls whose caller gave up", |s| {
                s.stats.cancelled
            }),
            (
                "plugin_refused",
                "Calls refused while the plugin was quarantined",
                |s| s.stats.refused,
            ),
            (
                "plugin_quarantines",
                "Quarantines started or renewed",
                |s| s.stats.quarantines,
            ),
        ];
        for (name, help, value) in counters {
            let mut family = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
            for status in &statuses {
                let labels = [("plugin", status.id.as_str())];
                ConstCounter::new(value(status)).encode(family.encode_family(&labels)?)?;
            }
        }
        let mut family = encoder.encode_descriptor(
            "plugin_failures",
            "Failed calls by kind (timeout, memory, trap, stopped)",
            None,
            MetricType::Counter,
        )?;
        for status in &statuses {
            for (kind, n) in status.stats.failures.by_kind() {
                let labels = [("plugin", status.id.as_str()), ("kind", kind)];
                ConstCounter::new(n).encode(family.encode_family(&labels)?)?;
            }
        }
        let gauges: [PluginMetric<i64>; 2] = [
            (
                "plugin_quarantined",
                "1 while the plugin is quarantined",
                |s| i64::from(matches!(s.state, PluginState::Quarantined { .. })),
            ),
            (
                "plugin_memory_high_water_bytes",
                "The most memory an instance held at the end of a call",
                |s| i64::try_from(s.stats.memory_high_water_bytes).unwrap_or(i64::MAX),
            ),
        ];
        for (name, help, value) in gauges {
            let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
            for status in &statuses {
                let labels = [("plugin", status.id.as_str())];
                ConstGauge::new(value(status)).encode(family.encode_family(&labels)?)?;
            }
        }
        let mut family = encoder.encode_descriptor(
            "plugin_call_seconds",
            "Call latency",
            None,
            MetricType::Histogram,
        )?;
        for status in &statuses {
            let labels = [("plugin", status.id.as_str())];
            let stats = &status.stats;
            family
                .encode_family(&labels)?
                .encode_histogram::<prometheus_client::encoding::NoLabelSet>(
                    stats.latency_seconds,
                    stats.calls,
                    &stats.latency_buckets,
                    None,
                )?;
        }
        debug_assert_eq!(LATENCY_BUCKETS.last(), Some(&f64::MAX));
        Ok(())
    }
}

/// `GET /metrics`.
pub(crate) async fn metrics(State(gw): State<Arc<Gateway>>) -> axum::response::Response {
    match gw.metrics.render() {
        Ok(text) => (
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        Err(_) => crate::ApiError::internal("the metrics could not be written").into_response(),
    }
}
