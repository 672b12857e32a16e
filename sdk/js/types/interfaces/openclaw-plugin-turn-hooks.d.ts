declare module 'openclaw:plugin/turn-hooks@0.2.3' {
  /**
   * The hooks this plugin wants, with priorities.
   */
  export function subscriptions(): Array<Subscription>;
  /**
   * `before_agent_run`.
   */
  export function beforeAgentRun(event: TurnEvent): RunOutcome;
  /**
   * `before_agent_reply`.
   */
  export function beforeAgentReply(event: TurnEvent): ReplyOutcome;
  /**
   * `before_agent_finalize`.
   */
  export function beforeAgentFinalize(event: FinalizeEvent): FinalizeOutcome;
  /**
   * The hooks of this family.
   * # Variants
   * 
   * ## `"before-agent-run"`
   * 
   * Before a turn runs on its runtime: allow or block (gate; fails
   * closed unless the operator says otherwise).
   * ## `"before-agent-reply"`
   * 
   * Before the runtime runs: answer in its place (the first reply wins).
   * ## `"before-agent-finalize"`
   * 
   * The runtime is about to accept its final answer: go on, ask for
   * one more pass, or finalize (needs `hooks.allowConversationAccess`).
   */
  export type TurnHook = 'before-agent-run' | 'before-agent-reply' | 'before-agent-finalize';
  /**
   * A subscription to one hook of this family.
   */
  export interface Subscription {
    /**
     * The hook.
     */
    hook: TurnHook,
    /**
     * Higher runs first; ties keep load order.
     */
    priority: number,
  }
  /**
   * A turn about to run.
   */
  export interface TurnEvent {
    /**
     * Session id.
     */
    sessionId?: string,
    /**
     * Agent id.
     */
    agentId: string,
    /**
     * The runtime that will run it (`openclaw`, `codex`, `acp`, a plugin's).
     */
    runtime: string,
    /**
     * The model of the turn (`provider/model`).
     */
    modelRef: string,
    /**
     * The user's message.
     */
    prompt: string,
  }
  /**
   * What a `before-agent-run` handler decides.
   */
  export type RunOutcome = RunOutcomeAllow | RunOutcomeBlock;
  /**
   * Let the turn run.
   */
  export interface RunOutcomeAllow {
    tag: 'allow',
  }
  /**
   * Do not run it; the reason is the turn's error. Terminal.
   */
  export interface RunOutcomeBlock {
    tag: 'block',
    val: string,
  }
  /**
   * What a `before-agent-reply` handler decides.
   */
  export type ReplyOutcome = ReplyOutcomePass | ReplyOutcomeReply;
  /**
   * No opinion: the next handler is asked, then the runtime runs.
   */
  export interface ReplyOutcomePass {
    tag: 'pass',
  }
  /**
   * This is the turn's answer (empty: silence); the runtime does not run.
   */
  export interface ReplyOutcomeReply {
    tag: 'reply',
    val: string,
  }
  /**
   * The runtime's natural final answer.
   */
  export interface FinalizeEvent {
    /**
     * The turn.
     */
    turn: TurnEvent,
    /**
     * The answer.
     */
    answer: string,
    /**
     * Extra passes already asked for in this turn.
     */
    revisions: number,
  }
  /**
   * What a `before-agent-finalize` handler decides.
   */
  export type FinalizeOutcome = FinalizeOutcomeProceed | FinalizeOutcomeRevise | FinalizeOutcomeFinalize;
  /**
   * No opinion: the next handler is asked, then the answer stands.
   */
  export interface FinalizeOutcomeProceed {
    tag: 'proceed',
  }
  /**
   * Ask the runtime for one more pass; the reason is the turn's next
   * message (the host bounds the passes).
   */
  export interface FinalizeOutcomeRevise {
    tag: 'revise',
    val: string,
  }
  /**
   * Accept the answer now.
   */
  export interface FinalizeOutcomeFinalize {
    tag: 'finalize',
  }
}
