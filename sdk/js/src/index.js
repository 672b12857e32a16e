// clawhost SDK for JavaScript and TypeScript plugins (plugin API 0.2.3).
//
// `export default definePlugin({...})` from your module; `clawhost-js build`
// turns it into a component. Errors your code throws become error results
// (a tool error the model sees, a blocked call, a kept result), never traps.
// 64-bit integers (BigInt in the bindings) reach your code as numbers.

import { log as hostLog, config as hostConfig } from 'openclaw:plugin/host@0.2.3';

/** Let the call go on. */
export const allow = () => ({ tag: 'allow' });
/** Stop the call; the model sees the reason. */
export const block = (reason) => ({ tag: 'block', val: String(reason) });
/** Go on with these parameters (shallow-merged over the originals). */
export const rewrite = (params) => ({ tag: 'rewrite', val: JSON.stringify(params) });
/** Ask the operator first (OpenClaw's requireApproval). */
export const requireApproval = ({
  title,
  description = '',
  severity = 'warning',
  timeoutMs,
  timeoutBehavior = 'deny',
}) => ({
  tag: 'require-approval',
  val: { title, description, severity, timeoutMs, timeoutBehavior },
});
/** Keep the tool result. */
export const keep = () => ({ tag: 'keep' });
/** Replace the tool result the model sees (`{ error }` makes it an error). */
export const replace = ({ result, error }) =>
  error !== undefined
    ? { tag: 'replace', val: { tag: 'err', val: String(error) } }
    : { tag: 'replace', val: { tag: 'ok', val: JSON.stringify(result ?? null) } };

/** Do not store the message (`beforeMessageWrite`). */
export const keepOut = (reason) => ({ keepOut: String(reason) });

/** A tool failure the model sees; `invalid: true` says the parameters cannot be used. */
export class ToolError extends Error {
  constructor(message, { invalid = false } = {}) {
    super(message);
    this.invalid = invalid;
  }
}

/** Write a line to the host's log (`trace`, `debug`, `info`, `warn`, `error`). */
export function log(level, message) {
  hostLog(level, String(message));
}

/** This plugin's configuration as the operator set it (`null` when unset). */
export function config() {
  return JSON.parse(hostConfig());
}

/** Declare a plugin: its tools and hooks. */
export function definePlugin(plugin) {
  return plugin;
}

// BigInt (WIT u64/s64) → number, recursively, so events are JSON-safe.
function plain(value) {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = plain(v);
    return out;
  }
  return value;
}

function parse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function describe(err) {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

function observer(plugin, hook) {
  return (event) => {
    const handler = plugin.observe?.[hook];
    if (!handler) return;
    try {
      handler(plain(event));
    } catch (err) {
      log('warn', `${hook} observer threw ${describe(err)}`);
    }
  };
}

function subscribed(plugin, kinds) {
  const out = [];
  for (const [hook, kind] of Object.entries(kinds)) {
    const h = hook in (plugin.observe ?? {}) ? { priority: 0 } : plugin[hook];
    if (h) out.push({ hook: kind, priority: h.priority ?? 0, tools: h.tools ?? [] });
  }
  return out;
}

// Events built field by field, with `params` and `result` parsed from JSON
// on first use (a hook that does not read them pays nothing).
function callEvent(e) {
  const c = e.context;
  let params;
  let parsed = false;
  return {
    tool: e.tool,
    callId: e.callId,
    toolPlugin: e.toolPlugin,
    agentId: c.agentId,
    sessionId: c.sessionId,
    modelRef: c.modelRef,
    get params() {
      if (!parsed) {
        params = parse(e.params);
        parsed = true;
      }
      return params;
    },
  };
}

function resultEvent(e) {
  const c = e.context;
  const ok = e.outcome.tag === 'ok';
  let params;
  let result;
  let parsedParams = false;
  let parsedResult = false;
  return {
    tool: e.tool,
    callId: e.callId,
    durationMs: Number(e.durationMs),
    error: ok ? undefined : e.outcome.val,
    agentId: c.agentId,
    sessionId: c.sessionId,
    modelRef: c.modelRef,
    get params() {
      if (!parsedParams) {
        params = parse(e.params);
        parsedParams = true;
      }
      return params;
    },
    get result() {
      if (ok && !parsedResult) {
        result = parse(e.outcome.val);
        parsedResult = true;
      }
      return result;
    },
  };
}

/** The component's exports for a plugin (used by the generated entry module). */
export function exportsOf(plugin) {
  const tools = plugin.tools ?? {};
  const gate = plugin.beforeToolCall;
  const middleware = plugin.toolResult;
  const prompt = plugin.beforePromptBuild;
  return {
    toolProvider: {
      tools() {
        return Object.entries(tools).map(([name, t]) => ({
          name,
          description: t.description ?? '',
          parameters: JSON.stringify(t.parameters ?? { type: 'object' }),
        }));
      },
      call(c) {
        const t = tools[c.tool];
        const fail = (tag, message) => {
          const err = new Error(message);
          err.payload = { tag, val: message };
          return err;
        };
        if (!t) throw fail('failed', `no tool \`${c.tool}\` in this plugin`);
        let result;
        try {
          result = t.run(parse(c.params), plain(c.context));
        } catch (err) {
          if (err instanceof ToolError) {
            throw fail(err.invalid ? 'invalid-params' : 'failed', err.message);
          }
          throw fail('failed', `${c.tool} failed: ${describe(err)}`);
        }
        return JSON.stringify(plain(result ?? null));
      },
    },
    toolGate: {
      subscription() {
        return gate ? { priority: gate.priority ?? 0, tools: gate.tools ?? [] } : undefined;
      },
      beforeToolCall(e) {
        if (!gate) return allow();
        try {
          return gate.handle(callEvent(e)) ?? allow();
        } catch (err) {
          return block(`before_tool_call threw ${describe(err)}`);
        }
      },
      approvalResolved(e) {
        log('info', `approval of ${e.tool} (${e.callId}): ${e.decision}`);
      },
    },
    toolHooks: {
      subscriptions() {
        return subscribed(plugin, { afterToolCall: 'after-tool-call', toolResult: 'tool-result' });
      },
      beforeToolCall() {
        return allow(); // not subscribed here: `tool-gate` carries it
      },
      afterToolCall(e) {
        const handler = plugin.observe?.afterToolCall;
        if (!handler) return;
        try {
          handler(resultEvent(e));
        } catch (err) {
          log('warn', `afterToolCall observer threw ${describe(err)}`);
        }
      },
      toolResult(e) {
        if (!middleware) return keep();
        try {
          return middleware.handle(resultEvent(e)) ?? keep();
        } catch (err) {
          return replace({ error: `result withheld: toolResult threw ${describe(err)}` });
        }
      },
    },
    promptHooks: {
      subscriptions() {
        return prompt ? [{ hook: 'before-prompt-build', priority: prompt.priority ?? 0 }] : [];
      },
      beforePromptBuild(e) {
        if (!prompt) return { tag: 'keep' };
        try {
          const edit = prompt.handle(plain(e));
          return edit ? { tag: 'edit', val: { ...edit } } : { tag: 'keep' };
        } catch (err) {
          log('warn', `beforePromptBuild threw ${describe(err)}`);
          return { tag: 'keep' };
        }
      },
    },
    modelHooks: {
      // The 0.2.0 summary forms: `runHooks` carries llm-input/llm-output in full.
      subscriptions: () => [],
      llmInput() {},
      llmOutput() {},
    },
    sessionHooks: {
      subscriptions() {
        return subscribed(plugin, {
          sessionStart: 'session-start',
          sessionEnd: 'session-end',
          agentEnd: 'agent-end',
          beforeReset: 'before-reset',
        }).map(({ hook, priority }) => ({ hook, priority }));
      },
      sessionStart: observer(plugin, 'sessionStart'),
      sessionEnd: observer(plugin, 'sessionEnd'),
      agentEnd: observer(plugin, 'agentEnd'),
      beforeReset: observer(plugin, 'beforeReset'),
    },
    transcriptHooks: {
      subscriptions() {
        return subscribed(plugin, {
          beforeCompaction: 'before-compaction',
          afterCompaction: 'after-compaction',
        }).map(({ hook, priority }) => ({ hook, priority }));
      },
      beforeCompaction(e) {
        observer(plugin, 'beforeCompaction')(e);
        return { tag: 'proceed' };
      },
      afterCompaction: observer(plugin, 'afterCompaction'),
    },
    runHooks: {
      subscriptions() {
        return subscribed(plugin, {
          beforeModelResolve: 'before-model-resolve',
          beforeAgentStart: 'before-agent-start',
          llmInput: 'llm-input',
          llmOutput: 'llm-output',
          modelCallStarted: 'model-call-started',
          modelCallEnded: 'model-call-ended',
        }).map(({ hook, priority }) => ({ hook, priority }));
      },
      beforeModelResolve(e) {
        const h = plugin.beforeModelResolve;
        if (!h) return { tag: 'keep' };
        try {
          const choice = h.handle(plain(e));
          return choice ? { tag: 'override', val: { provider: choice.provider, model: choice.model } } : { tag: 'keep' };
        } catch (err) {
          log('warn', `beforeModelResolve threw ${describe(err)}`);
          return { tag: 'keep' };
        }
      },
      beforeAgentStart(e) {
        const h = plugin.beforeAgentStart;
        if (!h) return { tag: 'allow' };
        try {
          const decision = h.handle(plain(e));
          return decision?.tag === 'block' ? { tag: 'block', val: decision.val } : { tag: 'allow' };
        } catch (err) {
          log('warn', `beforeAgentStart threw ${describe(err)}`);
          return { tag: 'allow' };
        }
      },
      llmInput: observer(plugin, 'llmInput'),
      llmOutput: observer(plugin, 'llmOutput'),
      modelCallStarted: observer(plugin, 'modelCallStarted'),
      modelCallEnded: observer(plugin, 'modelCallEnded'),
    },
    persistHooks: {
      subscriptions() {
        return subscribed(plugin, {
          toolResultPersist: 'tool-result-persist',
          beforeMessageWrite: 'before-message-write',
        }).map(({ hook, priority }) => ({ hook, priority }));
      },
      toolResultPersist(e) {
        const h = plugin.toolResultPersist;
        if (!h) return { tag: 'keep' };
        try {
          const text = h.handle({ ...plain(e), ...plain(e.context) });
          return typeof text === 'string' ? { tag: 'replace', val: text } : { tag: 'keep' };
        } catch (err) {
          // Fail closed: it may have been a redaction.
          return { tag: 'replace', val: `[withheld from the transcript: toolResultPersist threw ${describe(err)}]` };
        }
      },
      beforeMessageWrite(e) {
        const h = plugin.beforeMessageWrite;
        if (!h) return { tag: 'keep' };
        const m = e.message;
        const role = m.tag === 'user' ? 'user' : m.tag === 'assistant' ? 'assistant' : 'tool_result';
        const text = m.tag === 'user' ? m.val : m.tag === 'assistant' ? m.val.text : m.val.content;
        let decision;
        try {
          decision = h.handle({ sessionId: e.sessionId, agentId: e.agentId, role, text });
        } catch (err) {
          log('warn', `beforeMessageWrite threw ${describe(err)}`);
          return { tag: 'keep' };
        }
        if (decision && typeof decision === 'object' && 'keepOut' in decision) {
          return { tag: 'block', val: decision.keepOut };
        }
        if (typeof decision !== 'string') return { tag: 'keep' };
        // The same message (kind, call ids) with another text.
        const val =
          m.tag === 'user'
            ? decision
            : m.tag === 'assistant'
              ? { ...m.val, text: decision }
              : { ...m.val, content: decision };
        return { tag: 'replace', val: { tag: m.tag, val } };
      },
    },
    turnHooks: {
      subscriptions() {
        return subscribed(plugin, {
          beforeAgentRun: 'before-agent-run',
          beforeAgentReply: 'before-agent-reply',
          beforeAgentFinalize: 'before-agent-finalize',
        }).map(({ hook, priority }) => ({ hook, priority }));
      },
      beforeAgentRun(e) {
        const h = plugin.beforeAgentRun;
        if (!h) return { tag: 'allow' };
        // What it throws reaches the host as a failure (fail closed by default).
        const decision = h.handle(plain(e));
        return decision?.tag === 'block' ? { tag: 'block', val: decision.val } : { tag: 'allow' };
      },
      beforeAgentReply(e) {
        const h = plugin.beforeAgentReply;
        if (!h) return { tag: 'pass' };
        try {
          const reply = h.handle(plain(e));
          return typeof reply === 'string' ? { tag: 'reply', val: reply } : { tag: 'pass' };
        } catch (err) {
          log('warn', `beforeAgentReply threw ${describe(err)}`);
          return { tag: 'pass' };
        }
      },
      beforeAgentFinalize(e) {
        const h = plugin.beforeAgentFinalize;
        if (!h) return { tag: 'proceed' };
        try {
          const decision = h.handle(plain(e));
          if (decision?.revise !== undefined) return { tag: 'revise', val: String(decision.revise) };
          if (decision?.finalize) return { tag: 'finalize' };
          return { tag: 'proceed' };
        } catch (err) {
          log('warn', `beforeAgentFinalize threw ${describe(err)}`);
          return { tag: 'proceed' };
        }
      },
    },
    prepareHooks: {
      subscriptions() {
        return subscribed(plugin, {
          agentTurnPrepare: 'agent-turn-prepare',
          resolveExecEnv: 'resolve-exec-env',
        }).map(({ hook, priority }) => ({ hook, priority }));
      },
      agentTurnPrepare(e) {
        const h = plugin.agentTurnPrepare;
        if (!h) return undefined;
        try {
          const edit = h.handle(plain(e));
          if (!edit) return undefined;
          return { prependContext: edit.prependContext, appendContext: edit.appendContext };
        } catch (err) {
          log('warn', `agentTurnPrepare threw ${describe(err)}`);
          return undefined;
        }
      },
      resolveExecEnv(e) {
        const h = plugin.resolveExecEnv;
        if (!h) return [];
        const { context, ...command } = plain(e);
        // What it throws reaches the host as a failure (the operator's fail
        // policy decides whether the command runs without its variables).
        const env = h.handle({ ...command, ...context });
        if (!env || typeof env !== 'object') return [];
        return Object.entries(env).map(([name, value]) => ({ name, value: String(value) }));
      },
    },
    compactionProvider: {
      offer() {
        return plugin.compactionProvider ? plugin.compactionProvider.priority ?? 0 : undefined;
      },
      summarize(e) {
        const h = plugin.compactionProvider;
        if (!h) return undefined;
        try {
          const summary = h.summarize(plain(e));
          return typeof summary === 'string' ? summary : undefined;
        } catch (err) {
          log('warn', `compaction provider threw ${describe(err)}`);
          return undefined;
        }
      },
    },
  };
}
