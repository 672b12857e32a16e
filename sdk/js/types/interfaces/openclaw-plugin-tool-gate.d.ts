/// <reference path="./openclaw-plugin-tool-hooks.d.ts" />
/// <reference path="./openclaw-plugin-types.d.ts" />
declare module 'openclaw:plugin/tool-gate@0.2.3' {
  /**
   * Called once after instantiation; `none`: the plugin does not gate calls.
   */
  export function subscription(): GateSubscription | undefined;
  /**
   * Handle `before-tool-call`.
   */
  export function beforeToolCall(event: BeforeToolCallEvent): GateOutcome;
  /**
   * Learn the answer to this plugin's approval request (OpenClaw's
   * `onResolution`); observe-only.
   */
  export function approvalResolved(event: ApprovalResolution): void;
  export type Json = import('openclaw:plugin/types@0.2.3').Json;
  export type CallContext = import('openclaw:plugin/types@0.2.3').CallContext;
  export type BeforeToolCallEvent = import('openclaw:plugin/tool-hooks@0.2.3').BeforeToolCallEvent;
  /**
   * The plugin's subscription to `before-tool-call` through this family.
   */
  export interface GateSubscription {
    /**
     * Higher runs first; ties keep load order.
     */
    priority: number,
    /**
     * The tools whose calls the hook receives: names or globs, matched
     * without regard to ASCII case. Empty: every call.
     */
    tools: Array<string>,
  }
  /**
   * How much the operator should worry.
   * # Variants
   * 
   * ## `"info"`
   * 
   * ## `"warning"`
   * 
   * ## `"critical"`
   */
  export type ApprovalSeverity = 'info' | 'warning' | 'critical';
  /**
   * What happens when the operator does not answer in time.
   * # Variants
   * 
   * ## `"deny"`
   * 
   * The call is denied (the default everywhere).
   * ## `"allow"`
   * 
   * The call goes on.
   */
  export type TimeoutBehavior = 'deny' | 'allow';
  /**
   * A request for the operator's approval of one call.
   */
  export interface ApprovalRequest {
    /**
     * One line shown to the operator.
     */
    title: string,
    /**
     * What the call will do.
     */
    description: string,
    /**
     * How much to worry.
     */
    severity: ApprovalSeverity,
    /**
     * How long to wait for an answer, in milliseconds; `none`: the host's
     * default (`approvals.timeoutMs`). The host caps it at 600000.
     */
    timeoutMs?: number,
    /**
     * What an unanswered request means.
     */
    timeoutBehavior: TimeoutBehavior,
  }
  /**
   * What a handler decides.
   */
  export type GateOutcome = GateOutcomeAllow | GateOutcomeBlock | GateOutcomeRewrite | GateOutcomeRequireApproval;
  /**
   * Let the call go on unchanged.
   */
  export interface GateOutcomeAllow {
    tag: 'allow',
  }
  /**
   * Stop the call; the reason is shown to the model. Terminal.
   */
  export interface GateOutcomeBlock {
    tag: 'block',
    val: string,
  }
  /**
   * Go on with these parameters (shallow-merged over the originals,
   * re-validated by the host).
   */
  export interface GateOutcomeRewrite {
    tag: 'rewrite',
    val: Json,
  }
  /**
   * Ask the operator. The first request wins and freezes the
   * parameters; a lower-priority handler may still block.
   */
  export interface GateOutcomeRequireApproval {
    tag: 'require-approval',
    val: ApprovalRequest,
  }
  /**
   * How the operator (or the timeout) answered.
   * # Variants
   * 
   * ## `"allow-once"`
   * 
   * Approved for this call.
   * ## `"allow-always"`
   * 
   * Approved for this call and, in this session, every later call of
   * the same tool this plugin asks about.
   * ## `"deny"`
   * 
   * Denied.
   * ## `"timeout"`
   * 
   * Nobody answered in time.
   * ## `"cancelled"`
   * 
   * The run ended (or no operator could be asked) before an answer.
   */
  export type ApprovalDecision = 'allow-once' | 'allow-always' | 'deny' | 'timeout' | 'cancelled';
  /**
   * The answer to a request this plugin made.
   */
  export interface ApprovalResolution {
    /**
     * The tool.
     */
    tool: string,
    /**
     * The model's id for the call.
     */
    callId: string,
    /**
     * The answer.
     */
    decision: ApprovalDecision,
    /**
     * The run.
     */
    context: CallContext,
  }
}
