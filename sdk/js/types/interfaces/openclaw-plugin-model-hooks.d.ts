declare module 'openclaw:plugin/model-hooks@0.2.3' {
  /**
   * The hooks of this family the plugin wants; called once after instantiation.
   */
  export function subscriptions(): Array<Subscription>;
  /**
   * Observe `llm-input`.
   */
  export function llmInput(event: LlmInputEvent): void;
  /**
   * Observe `llm-output`.
   */
  export function llmOutput(event: LlmOutputEvent): void;
  /**
   * The hooks of this family.
   * # Variants
   * 
   * ## `"llm-input"`
   * 
   * A model request is about to be sent.
   * ## `"llm-output"`
   * 
   * A model reply arrived.
   */
  export type ModelHook = 'llm-input' | 'llm-output';
  /**
   * A subscription to one hook of this family.
   */
  export interface Subscription {
    /**
     * The hook.
     */
    hook: ModelHook,
    /**
     * Ordering hint (observe-only hooks run concurrently).
     */
    priority: number,
  }
  /**
   * The `llm-input` event.
   */
  export interface LlmInputEvent {
    /**
     * Model reference.
     */
    modelRef: string,
    /**
     * System prompt sent.
     */
    system?: string,
    /**
     * Messages sent.
     */
    messageCount: number,
    /**
     * Tools offered.
     */
    toolCount: number,
  }
  /**
   * The `llm-output` event.
   */
  export interface LlmOutputEvent {
    /**
     * Model reference.
     */
    modelRef: string,
    /**
     * Reply text.
     */
    text: string,
    /**
     * Tool calls requested.
     */
    toolCallCount: number,
    /**
     * Prompt tokens.
     */
    inputTokens: bigint,
    /**
     * Completion tokens.
     */
    outputTokens: bigint,
  }
}
