// Benchmark fixture: no-op `beforeToolCall` and `afterToolCall` handlers,
// to measure what the JS SDK and runtime cost per hook.
import { definePlugin, allow } from '@clawhost/sdk';

export default definePlugin({
  beforeToolCall: { handle: () => allow() },
  observe: { afterToolCall() {} },
});
