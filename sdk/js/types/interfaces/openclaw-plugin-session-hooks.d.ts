/// <reference path="./openclaw-plugin-types.d.ts" />
declare module 'openclaw:plugin/session-hooks@0.2.3' {
  /**
   * The hooks of this family the plugin wants; called once after instantiation.
   */
  export function subscriptions(): Array<Subscription>;
  /**
   * Observe `session-start`.
   */
  export function sessionStart(event: SessionStartEvent): void;
  /**
   * Observe `session-end`.
   */
  export function sessionEnd(event: SessionEndEvent): void;
  /**
   * Observe `agent-end`.
   */
  export function agentEnd(event: AgentEndEvent): void;
  /**
   * Observe `before-reset`.
   */
  export function beforeReset(event: BeforeResetEvent): void;
  export type SessionEndReason = import('openclaw:plugin/types@0.2.3').SessionEndReason;
  /**
   * The hooks of this family.
   * # Variants
   * 
   * ## `"session-start"`
   * 
   * A session started or was resumed.
   * ## `"session-end"`
   * 
   * A session ended.
   * ## `"agent-end"`
   * 
   * A turn ended.
   * ## `"before-reset"`
   * 
   * A session is about to be reset (`/reset`): its history is cleared next.
   */
  export type SessionHook = 'session-start' | 'session-end' | 'agent-end' | 'before-reset';
  /**
   * A subscription to one hook of this family.
   */
  export interface Subscription {
    /**
     * The hook.
     */
    hook: SessionHook,
    /**
     * Ordering hint (observe-only hooks run concurrently).
     */
    priority: number,
  }
  /**
   * The `session-start` event.
   */
  export interface SessionStartEvent {
    /**
     * Session id.
     */
    sessionId: string,
    /**
     * Agent id.
     */
    agentId: string,
    /**
     * Whether an existing session was resumed.
     */
    resumed: boolean,
  }
  /**
   * The `session-end` event.
   */
  export interface SessionEndEvent {
    /**
     * Session id.
     */
    sessionId: string,
    /**
     * Agent id.
     */
    agentId: string,
    /**
     * Why it ended.
     */
    reason: SessionEndReason,
  }
  /**
   * The `agent-end` event.
   */
  export interface AgentEndEvent {
    /**
     * Session id.
     */
    sessionId?: string,
    /**
     * Agent id.
     */
    agentId: string,
    /**
     * Whether the turn produced an answer.
     */
    success: boolean,
    /**
     * The answer, or the error.
     */
    text: string,
    /**
     * Model calls made.
     */
    iterations: number,
  }
  /**
   * The `before-reset` event.
   */
  export interface BeforeResetEvent {
    /**
     * Session id.
     */
    sessionId: string,
    /**
     * Agent id.
     */
    agentId: string,
    /**
     * Messages the session holds now (about to be cleared).
     */
    messageCount: number,
  }
}
