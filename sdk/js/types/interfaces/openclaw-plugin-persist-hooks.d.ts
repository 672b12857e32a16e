/// <reference path="./openclaw-plugin-types.d.ts" />
declare module 'openclaw:plugin/persist-hooks@0.2.3' {
  /**
   * The hooks of this family the plugin wants; called once after instantiation.
   */
  export function subscriptions(): Array<Subscription>;
  /**
   * Handle `tool-result-persist`.
   */
  export function toolResultPersist(event: ToolResultPersistEvent): ToolResultPersistOutcome;
  /**
   * Handle `before-message-write`.
   */
  export function beforeMessageWrite(event: MessageWriteEvent): MessageWriteOutcome;
  export type CallContext = import('openclaw:plugin/types@0.2.3').CallContext;
  export type Message = import('openclaw:plugin/types@0.2.3').Message;
  /**
   * The hooks of this family.
   * # Variants
   * 
   * ## `"tool-result-persist"`
   * 
   * A tool result is about to be stored; may replace the stored text.
   * ## `"before-message-write"`
   * 
   * Any message is about to be stored; may replace it or keep it out.
   */
  export type PersistHook = 'tool-result-persist' | 'before-message-write';
  /**
   * A subscription to one hook of this family.
   */
  export interface Subscription {
    /**
     * The hook.
     */
    hook: PersistHook,
    /**
     * Higher runs first; ties keep load order.
     */
    priority: number,
  }
  /**
   * The `tool-result-persist` event.
   */
  export interface ToolResultPersistEvent {
    /**
     * The tool name.
     */
    tool: string,
    /**
     * The model's id for the call.
     */
    callId: string,
    /**
     * The text about to be stored, after earlier handlers.
     */
    content: string,
    /**
     * Whether the call failed or was blocked.
     */
    isError: boolean,
    /**
     * The run.
     */
    context: CallContext,
  }
  /**
   * What a `tool-result-persist` handler decides.
   */
  export type ToolResultPersistOutcome = ToolResultPersistOutcomeKeep | ToolResultPersistOutcomeReplace;
  /**
   * Store the text as it is.
   */
  export interface ToolResultPersistOutcomeKeep {
    tag: 'keep',
  }
  /**
   * Store this text instead.
   */
  export interface ToolResultPersistOutcomeReplace {
    tag: 'replace',
    val: string,
  }
  /**
   * The `before-message-write` event.
   */
  export interface MessageWriteEvent {
    /**
     * Session id.
     */
    sessionId: string,
    /**
     * Agent id.
     */
    agentId: string,
    /**
     * The message about to be stored, after earlier handlers.
     */
    message: Message,
  }
  /**
   * What a `before-message-write` handler decides.
   */
  export type MessageWriteOutcome = MessageWriteOutcomeKeep | MessageWriteOutcomeReplace | MessageWriteOutcomeBlock;
  /**
   * Store it as it is.
   */
  export interface MessageWriteOutcomeKeep {
    tag: 'keep',
  }
  /**
   * Store this instead: a message of the same kind (and, for a model
   * reply or a tool result, the same call ids).
   */
  export interface MessageWriteOutcomeReplace {
    tag: 'replace',
    val: Message,
  }
  /**
   * Do not store it; the reason is logged. Terminal.
   */
  export interface MessageWriteOutcomeBlock {
    tag: 'block',
    val: string,
  }
}
