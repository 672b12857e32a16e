/// <reference path="./interfaces/openclaw-plugin-compaction-provider.d.ts" />
/// <reference path="./interfaces/openclaw-plugin-host.d.ts" />
/// <reference path="./interfaces/openclaw-plugin-model-hooks.d.ts" />
/// <reference path="./interfaces/openclaw-plugin-persist-hooks.d.ts" />
/// <reference path="./interfaces/openclaw-plugin-prepare-hooks.d.ts" />
/// <reference path="./interfaces/openclaw-plugin-prompt-hooks.d.ts" />
/// <reference path="./interfaces/openclaw-plugin-run-hooks.d.ts" />
/// <reference path="./interfaces/openclaw-plugin-session-hooks.d.ts" />
/// <reference path="./interfaces/openclaw-plugin-tool-gate.d.ts" />
/// <reference path="./interfaces/openclaw-plugin-tool-hooks.d.ts" />
/// <reference path="./interfaces/openclaw-plugin-tool-provider.d.ts" />
/// <reference path="./interfaces/openclaw-plugin-transcript-hooks.d.ts" />
/// <reference path="./interfaces/openclaw-plugin-turn-hooks.d.ts" />
/// <reference path="./interfaces/openclaw-plugin-types.d.ts" />
declare module 'openclaw:plugin/plugin@0.2.3' {
  export type * as OpenclawPluginHost023 from 'openclaw:plugin/host@0.2.3'; // import openclaw:plugin/host@0.2.3
  export type * as OpenclawPluginTypes023 from 'openclaw:plugin/types@0.2.3'; // import openclaw:plugin/types@0.2.3
  export * as toolProvider from 'openclaw:plugin/tool-provider@0.2.3'; // export openclaw:plugin/tool-provider@0.2.3
  export * as toolHooks from 'openclaw:plugin/tool-hooks@0.2.3'; // export openclaw:plugin/tool-hooks@0.2.3
  export * as promptHooks from 'openclaw:plugin/prompt-hooks@0.2.3'; // export openclaw:plugin/prompt-hooks@0.2.3
  export * as modelHooks from 'openclaw:plugin/model-hooks@0.2.3'; // export openclaw:plugin/model-hooks@0.2.3
  export * as sessionHooks from 'openclaw:plugin/session-hooks@0.2.3'; // export openclaw:plugin/session-hooks@0.2.3
  export * as transcriptHooks from 'openclaw:plugin/transcript-hooks@0.2.3'; // export openclaw:plugin/transcript-hooks@0.2.3
  export * as toolGate from 'openclaw:plugin/tool-gate@0.2.3'; // export openclaw:plugin/tool-gate@0.2.3
  export * as persistHooks from 'openclaw:plugin/persist-hooks@0.2.3'; // export openclaw:plugin/persist-hooks@0.2.3
  export * as runHooks from 'openclaw:plugin/run-hooks@0.2.3'; // export openclaw:plugin/run-hooks@0.2.3
  export * as compactionProvider from 'openclaw:plugin/compaction-provider@0.2.3'; // export openclaw:plugin/compaction-provider@0.2.3
  export * as turnHooks from 'openclaw:plugin/turn-hooks@0.2.3'; // export openclaw:plugin/turn-hooks@0.2.3
  export * as prepareHooks from 'openclaw:plugin/prepare-hooks@0.2.3'; // export openclaw:plugin/prepare-hooks@0.2.3
}
