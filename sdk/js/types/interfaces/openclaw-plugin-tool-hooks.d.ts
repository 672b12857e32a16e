/// <reference path="./openclaw-plugin-types.d.ts" />
declare module 'openclaw:plugin/tool-hooks@0.2.3' {
  /**
   * The hooks of this family the plugin wants; called once after instantiation.
   */
  export function subscriptions(): Array<Subscription>;
  /**
   * Handle `before-tool-call`.
   */
  export function beforeToolCall(event: BeforeToolCallEvent): BeforeToolCallOutcome;
  /**
   * Observe `after-tool-call`.
   */
  export function afterToolCall(event: AfterToolCallEvent): void;
  /**
   * Handle `tool-result`.
   */
  export function toolResult(event: AfterToolCallEvent): ToolResultOutcome;
  export type Json = import('openclaw:plugin/types@0.2.3').Json;
  export type CallContext = import('openclaw:plugin/types@0.2.3').CallContext;
  /**
   * The hooks of this family.
   * # Variants
   * 
   * ## `"before-tool-call"`
   * 
   * Before a tool runs; may block it or rewrite its parameters (modifying).
   * ## `"after-tool-call"`
   * 
   * After a tool ran, with the result the model will see (observe).
   * ## `"tool-result"`
   * 
   * Tool-result middleware: may replace the result the model sees
   * (modifying; delivered only when the operator grants
   * `grants.toolResults`; a failure withholds the result).
   */
  export type ToolHook = 'before-tool-call' | 'after-tool-call' | 'tool-result';
  /**
   * A subscription to one hook of this family.
   */
  export interface Subscription {
    /**
     * The hook.
     */
    hook: ToolHook,
    /**
     * Higher runs first; ties keep load order.
     */
    priority: number,
    /**
     * The tools whose calls the hook receives: names or globs (`*`,
     * `?`, `[...]`), matched without regard to ASCII case. Empty: every call.
     */
    tools: Array<string>,
  }
  /**
   * The `before-tool-call` event.
   */
  export interface BeforeToolCallEvent {
    /**
     * The tool name.
     */
    tool: string,
    /**
     * The model's id for this call.
     */
    callId: string,
    /**
     * Parameters as they stand after earlier hooks.
     */
    params: Json,
    /**
     * The plugin providing the tool, or `none` for host tools.
     */
    toolPlugin?: string,
    /**
     * The run the call belongs to.
     */
    context: CallContext,
  }
  /**
   * What a `before-tool-call` handler decides.
   */
  export type BeforeToolCallOutcome = BeforeToolCallOutcomeAllow | BeforeToolCallOutcomeBlock | BeforeToolCallOutcomeRewrite;
  /**
   * Let the call go on unchanged.
   */
  export interface BeforeToolCallOutcomeAllow {
    tag: 'allow',
  }
  /**
   * Stop the call; the reason is shown to the model. Terminal.
   */
  export interface BeforeToolCallOutcomeBlock {
    tag: 'block',
    val: string,
  }
  /**
   * Go on with these parameters instead (re-validated by the host).
   */
  export interface BeforeToolCallOutcomeRewrite {
    tag: 'rewrite',
    val: Json,
  }
  /**
   * The `after-tool-call` and `tool-result` event.
   */
  export interface AfterToolCallEvent {
    /**
     * The tool name.
     */
    tool: string,
    /**
     * The model's id for this call.
     */
    callId: string,
    /**
     * The parameters the tool ran with.
     */
    params: Json,
    /**
     * The tool's output (`ok`) or error text (`err`), after earlier hooks.
     */
    outcome: Result<Json, string>,
    /**
     * How long the tool ran, in milliseconds.
     */
    durationMs: bigint,
    /**
     * The run the call belongs to.
     */
    context: CallContext,
  }
  /**
   * What a `tool-result` handler decides.
   */
  export type ToolResultOutcome = ToolResultOutcomeKeep | ToolResultOutcomeReplace;
  /**
   * Keep the result as it is.
   */
  export interface ToolResultOutcomeKeep {
    tag: 'keep',
  }
  /**
   * Replace the result (or error text) the model will see.
   */
  export interface ToolResultOutcomeReplace {
    tag: 'replace',
    val: Result<Json, string>,
  }
  export type Result<T, E> = { tag: 'ok', val: T } | { tag: 'err', val: E };
}
