declare module 'openclaw:plugin/prompt-hooks@0.2.3' {
  /**
   * The hooks of this family the plugin wants; called once after instantiation.
   */
  export function subscriptions(): Array<Subscription>;
  /**
   * Handle `before-prompt-build`.
   */
  export function beforePromptBuild(event: BeforePromptBuildEvent): BeforePromptBuildOutcome;
  /**
   * The hooks of this family.
   * # Variants
   * 
   * ## `"before-prompt-build"`
   * 
   * Before a turn's prompt is sent; may add context or set the system
   * prompt (modifying). Every handler sees the original prompt.
   */
  export type PromptHook = 'before-prompt-build';
  /**
   * A subscription to one hook of this family.
   */
  export interface Subscription {
    /**
     * The hook.
     */
    hook: PromptHook,
    /**
     * Higher runs first; ties keep load order.
     */
    priority: number,
  }
  /**
   * The `before-prompt-build` event.
   */
  export interface BeforePromptBuildEvent {
    /**
     * Session id.
     */
    sessionId?: string,
    /**
     * Agent id.
     */
    agentId: string,
    /**
     * The system prompt as it stands.
     */
    system?: string,
    /**
     * The user's message as it stands.
     */
    prompt: string,
  }
  /**
   * Edits to the prompt (OpenClaw's `before_prompt_build` result). Context
   * added here reaches the model with this turn's message; it is not
   * stored as what the user said.
   */
  export interface PromptEdit {
    /**
     * Context put before the user's message (pieces from several
     * handlers are joined with a blank line, highest priority first).
     */
    prependContext?: string,
    /**
     * Context put after the user's message (joined the same way).
     */
    appendContext?: string,
    /**
     * A replacement system prompt (the highest-priority one wins).
     */
    systemPrompt?: string,
    /**
     * Text put before the system prompt (joined the same way).
     */
    prependSystemContext?: string,
    /**
     * Text put after the system prompt (joined the same way).
     */
    appendSystemContext?: string,
  }
  /**
   * What a `before-prompt-build` handler decides.
   */
  export type BeforePromptBuildOutcome = BeforePromptBuildOutcomeKeep | BeforePromptBuildOutcomeEdit;
  /**
   * No change.
   */
  export interface BeforePromptBuildOutcomeKeep {
    tag: 'keep',
  }
  /**
   * Apply these edits.
   */
  export interface BeforePromptBuildOutcomeEdit {
    tag: 'edit',
    val: PromptEdit,
  }
}
