// Example JavaScript plugin: a tool and a hook (clawhost SDK for JS).
//
// - tool `js_shout`: upper-cases a text, `times` times joined by spaces.
// - `beforeToolCall`: blocks calls whose parameters mention a word from the
//   config's `blockWords`; a parameter `"explode"` makes the hook throw
//   (the call is blocked, the plugin keeps serving).
// - observes `afterToolCall` and `sessionStart` into the log.
// - `toolResultPersist`: words in `hideInTranscript` are stored as `[hidden]`.
// - `beforeAgentStart`: a message containing `stopWord` does not run.
// - `beforeAgentReply`: a message in `cannedReplies` is answered without the
//   runtime; `beforeAgentFinalize`: an answer without `mustMention` goes back
//   for one more pass.
// - `agentTurnPrepare`: `turnContext` goes after the user's message as
//   `[<runtime>] <it>`; `resolveExecEnv`: `execEnv` (`{"NAME": "value"}`) is
//   set for the host's `exec` commands (`{command}` in a value is the command).

import { definePlugin, allow, block, config, log, ToolError } from '@clawhost/sdk';

export default definePlugin({
  tools: {
    js_shout: {
      description: 'Upper-cases a text, repeated `times` times.',
      parameters: {
        type: 'object',
        properties: { text: { type: 'string' }, times: { type: 'integer', minimum: 1 } },
        required: ['text'],
        additionalProperties: false,
      },
      run({ text, times = 1 }) {
        if (!text.trim()) throw new ToolError('text is empty', { invalid: true });
        if (text === 'crash') throw new TypeError('asked to crash');
        return { shout: Array(times).fill(text.toUpperCase()).join(' ') };
      },
    },
  },
  beforeToolCall: {
    priority: 30,
    handle(event) {
      const text = JSON.stringify(event.params).toLowerCase();
      /** @type {string[]} */
      const words = (config()?.blockWords ?? []).map((/** @type {unknown} */ w) => String(w).toLowerCase());
      const hit = words.find((w) => text.includes(w));
      if (hit) return block(`js-word-tools: parameters mention \`${hit}\``);
      if (text.includes('explode')) throw new Error('the hook itself failed');
      return allow();
    },
  },
  toolResultPersist: {
    handle(event) {
      /** @type {string[]} */
      const hide = config()?.hideInTranscript ?? [];
      const text = hide.reduce((t, w) => t.split(w).join('[hidden]'), event.content);
      return text === event.content ? undefined : text;
    },
  },
  beforeAgentStart: {
    handle(event) {
      const stop = config()?.stopWord;
      return stop && event.prompt.includes(stop) ? block(`js-word-tools: the message contains \`${stop}\``) : undefined;
    },
  },
  beforeAgentReply: {
    handle(event) {
      const reply = config()?.cannedReplies?.[event.prompt.trim()];
      return typeof reply === 'string' ? reply : undefined;
    },
  },
  beforeAgentFinalize: {
    handle(event) {
      const word = config()?.mustMention;
      return word && !event.answer.includes(word) ? { revise: `Please mention ${word}.` } : undefined;
    },
  },
  agentTurnPrepare: {
    handle(event) {
      const context = config()?.turnContext;
      return typeof context === 'string' ? { appendContext: `[${event.runtime}] ${context}` } : undefined;
    },
  },
  resolveExecEnv: {
    handle(event) {
      const env = config()?.execEnv ?? {};
      return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v).replace('{command}', event.command)]));
    },
  },
  observe: {
    afterToolCall(event) {
      log('info', `observed after_tool_call ${event.tool} ok=${event.error === undefined} ms=${typeof event.durationMs}`);
    },
    sessionStart(event) {
      log('info', `observed session_start ${event.sessionId}`);
    },
  },
});
