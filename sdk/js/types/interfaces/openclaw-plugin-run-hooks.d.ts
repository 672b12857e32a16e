/// <reference path="./openclaw-plugin-types.d.ts" />
declare module 'openclaw:plugin/run-hooks@0.2.3' {
  /**
   * The hooks of this family the plugin wants; called once after instantiation.
   */
  export function subscriptions(): Array<Subscription>;
  /**
   * Handle `before-model-resolve`.
   */
  export function beforeModelResolve(event: ModelResolveEvent): ModelResolveOutcome;
  /**
   * Handle `before-agent-start`.
   */
  export function beforeAgentStart(event: AgentStartEvent): AgentStartOutcome;
  /**
   * Observe `llm-input`.
   */
  export function llmInput(event: LlmInputEvent): void;
  /**
   * Observe `llm-output`.
   */
  export function llmOutput(event: LlmOutputEvent): void;
  /**
   * Observe `model-call-started`.
   */
  export function modelCallStarted(event: ModelCall): void;
  /**
   * Observe `model-call-ended`.
   */
  export function modelCallEnded(event: ModelCallEndedEvent): void;
  export type Message = import('openclaw:plugin/types@0.2.3').Message;
  export type Usage = import('openclaw:plugin/types@0.2.3').Usage;
  /**
   * The hooks of this family.
   * # Variants
   * 
   * ## `"before-model-resolve"`
   * 
   * Before the model of a run is resolved; may override provider or model (modifying).
   * ## `"before-agent-start"`
   * 
   * Before a run starts; may stop it (modifying).
   * ## `"llm-input"`
   * 
   * A run attempt is about to call the model (observe, fire-and-forget).
   * ## `"llm-output"`
   * 
   * A run attempt finished (observe, fire-and-forget).
   * ## `"model-call-started"`
   * 
   * One model call started (observe).
   * ## `"model-call-ended"`
   * 
   * One model call ended (observe).
   */
  export type RunHook = 'before-model-resolve' | 'before-agent-start' | 'llm-input' | 'llm-output' | 'model-call-started' | 'model-call-ended';
  /**
   * A subscription to one hook of this family.
   */
  export interface Subscription {
    /**
     * The hook.
     */
    hook: RunHook,
    /**
     * Higher runs first among modifying hooks; ties keep load order.
     */
    priority: number,
  }
  /**
   * The `before-model-resolve` event.
   */
  export interface ModelResolveEvent {
    /**
     * Session id.
     */
    sessionId?: string,
    /**
     * Agent id.
     */
    agentId: string,
    /**
     * The user's message.
     */
    prompt: string,
    /**
     * The configured provider.
     */
    provider: string,
    /**
     * The configured model.
     */
    model: string,
  }
  /**
   * A different provider and/or model for this run (one the host's catalog has).
   */
  export interface ModelOverride {
    /**
     * Provider id; `none`: keep.
     */
    provider?: string,
    /**
     * Model id; `none`: keep.
     */
    model?: string,
  }
  /**
   * What a `before-model-resolve` handler decides (the highest-priority
   * override wins).
   */
  export type ModelResolveOutcome = ModelResolveOutcomeKeep | ModelResolveOutcomeOverride;
  /**
   * Keep the model.
   */
  export interface ModelResolveOutcomeKeep {
    tag: 'keep',
  }
  /**
   * Use another.
   */
  export interface ModelResolveOutcomeOverride {
    tag: 'override',
    val: ModelOverride,
  }
  /**
   * The `before-agent-start` event.
   */
  export interface AgentStartEvent {
    /**
     * The run's id.
     */
    runId: string,
    /**
     * Session id.
     */
    sessionId?: string,
    /**
     * Agent id.
     */
    agentId: string,
    /**
     * The model the run will use (`provider/model`).
     */
    modelRef: string,
    /**
     * The user's message.
     */
    prompt: string,
  }
  /**
   * What a `before-agent-start` handler decides.
   */
  export type AgentStartOutcome = AgentStartOutcomeAllow | AgentStartOutcomeBlock;
  /**
   * Let the run start.
   */
  export interface AgentStartOutcomeAllow {
    tag: 'allow',
  }
  /**
   * Do not run; the reason is the run's error. Terminal.
   */
  export interface AgentStartOutcomeBlock {
    tag: 'block',
    val: string,
  }
  /**
   * The `llm-input` event.
   */
  export interface LlmInputEvent {
    /**
     * The run's id.
     */
    runId: string,
    /**
     * Attempt number within the run (1-based; a context overflow retries).
     */
    attempt: number,
    /**
     * Session id.
     */
    sessionId?: string,
    /**
     * Agent id.
     */
    agentId: string,
    /**
     * Model reference.
     */
    modelRef: string,
    /**
     * The system prompt sent.
     */
    system?: string,
    /**
     * The user's message as sent (with the prompt hooks' context).
     */
    prompt: string,
    /**
     * The history sent before it.
     */
    history: Array<Message>,
    /**
     * Names of the tools offered.
     */
    tools: Array<string>,
  }
  /**
   * The `llm-output` event.
   */
  export interface LlmOutputEvent {
    /**
     * The run's id.
     */
    runId: string,
    /**
     * Attempt number within the run.
     */
    attempt: number,
    /**
     * Session id.
     */
    sessionId?: string,
    /**
     * Agent id.
     */
    agentId: string,
    /**
     * Model reference.
     */
    modelRef: string,
    /**
     * The model's texts, one per reply, in order.
     */
    texts: Array<string>,
    /**
     * Token usage of the attempt.
     */
    usage: Usage,
  }
  /**
   * Which model call.
   */
  export interface ModelCall {
    /**
     * The run's id.
     */
    runId: string,
    /**
     * The call's id within the run.
     */
    callId: string,
    /**
     * Provider id.
     */
    provider: string,
    /**
     * Model id.
     */
    model: string,
    /**
     * Wire API name (`openai-completions`, `openai-responses`,
     * `anthropic-messages`, `scripted`, or a later one).
     */
    api: string,
  }
  /**
   * Why a model call failed (the case only: no message, no content).
   * # Variants
   * 
   * ## `"context-overflow"`
   * 
   * ## `"rate-limited"`
   * 
   * ## `"auth"`
   * 
   * ## `"timeout"`
   * 
   * ## `"refused"`
   * 
   * ## `"unavailable"`
   * 
   * ## `"other"`
   */
  export type ModelCallFailure = 'context-overflow' | 'rate-limited' | 'auth' | 'timeout' | 'refused' | 'unavailable' | 'other';
  /**
   * The `model-call-ended` event.
   */
  export interface ModelCallEndedEvent {
    /**
     * Which call.
     */
    call: ModelCall,
    /**
     * How long it took, in milliseconds.
     */
    durationMs: bigint,
    /**
     * Its usage, or why it failed.
     */
    outcome: Result<Usage, ModelCallFailure>,
  }
  export type Result<T, E> = { tag: 'ok', val: T } | { tag: 'err', val: E };
}
