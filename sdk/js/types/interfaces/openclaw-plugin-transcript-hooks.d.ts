declare module 'openclaw:plugin/transcript-hooks@0.2.3' {
  /**
   * The hooks of this family the plugin wants; called once after instantiation.
   */
  export function subscriptions(): Array<Subscription>;
  /**
   * Handle `before-compaction`.
   */
  export function beforeCompaction(event: BeforeCompactionEvent): BeforeCompactionOutcome;
  /**
   * Observe `after-compaction`.
   */
  export function afterCompaction(event: AfterCompactionEvent): void;
  /**
   * The hooks of this family.
   * # Variants
   * 
   * ## `"before-compaction"`
   * 
   * Older context is about to be summarized; may supply the summary (modifying).
   * ## `"after-compaction"`
   * 
   * Older context was summarized (observe).
   */
  export type TranscriptHook = 'before-compaction' | 'after-compaction';
  /**
   * A subscription to one hook of this family.
   */
  export interface Subscription {
    /**
     * The hook.
     */
    hook: TranscriptHook,
    /**
     * Higher runs first among modifying hooks; ties keep load order.
     */
    priority: number,
  }
  /**
   * The `before-compaction` event.
   */
  export interface BeforeCompactionEvent {
    /**
     * Session id.
     */
    sessionId?: string,
    /**
     * Messages in the context.
     */
    messageCount: number,
    /**
     * Estimated tokens in the context.
     */
    tokenCount: bigint,
    /**
     * Messages that would be summarized.
     */
    compactedCount: number,
    /**
     * Those messages, rendered as text.
     */
    transcript: string,
  }
  /**
   * What a `before-compaction` handler decides.
   */
  export type BeforeCompactionOutcome = BeforeCompactionOutcomeProceed | BeforeCompactionOutcomeSummary;
  /**
   * Let the host summarize with a model call.
   */
  export interface BeforeCompactionOutcomeProceed {
    tag: 'proceed',
  }
  /**
   * Use this summary.
   */
  export interface BeforeCompactionOutcomeSummary {
    tag: 'summary',
    val: string,
  }
  /**
   * The `after-compaction` event.
   */
  export interface AfterCompactionEvent {
    /**
     * Session id.
     */
    sessionId?: string,
    /**
     * Messages in the context before.
     */
    messageCount: number,
    /**
     * Estimated tokens before.
     */
    tokenCount: bigint,
    /**
     * Messages summarized.
     */
    compactedCount: number,
  }
}
