/// <reference path="./openclaw-plugin-transcript-hooks.d.ts" />
declare module 'openclaw:plugin/compaction-provider@0.2.3' {
  /**
   * `some(priority)` when this plugin supplies summaries; called once
   * after instantiation.
   */
  export function offer(): number | undefined;
  /**
   * Summarize the messages described; `none`: let the next provider (or the host) do it.
   */
  export function summarize(event: BeforeCompactionEvent): string | undefined;
  export type BeforeCompactionEvent = import('openclaw:plugin/transcript-hooks@0.2.3').BeforeCompactionEvent;
}
