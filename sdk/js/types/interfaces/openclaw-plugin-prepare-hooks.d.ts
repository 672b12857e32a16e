/// <reference path="./openclaw-plugin-types.d.ts" />
declare module 'openclaw:plugin/prepare-hooks@0.2.3' {
  /**
   * The hooks this plugin wants, with priorities.
   */
  export function subscriptions(): Array<Subscription>;
  /**
   * `agent_turn_prepare` (`none`: nothing to add).
   */
  export function agentTurnPrepare(event: TurnEvent): TurnContext | undefined;
  /**
   * `resolve_exec_env`: variables to set (a higher-priority handler's
   * value of a name wins).
   */
  export function resolveExecEnv(event: ExecEvent): Array<EnvVar>;
  export type CallContext = import('openclaw:plugin/types@0.2.3').CallContext;
  /**
   * The hooks of this family.
   * # Variants
   * 
   * ## `"agent-turn-prepare"`
   * 
   * Before the prompt hooks, on any runtime: context added to the
   * turn's message (needs `hooks.allowPromptInjection`, on by default).
   * ## `"resolve-exec-env"`
   * 
   * Before the host's `exec` runs a command: environment variables
   * for it (only the names the operator granted in `grants.execEnv`).
   */
  export type PrepareHook = 'agent-turn-prepare' | 'resolve-exec-env';
  /**
   * A subscription to one hook of this family.
   */
  export interface Subscription {
    /**
     * The hook.
     */
    hook: PrepareHook,
    /**
     * Higher runs first; ties keep load order.
     */
    priority: number,
  }
  /**
   * A turn about to run (the fields of `turn-hooks`' `turn-event`).
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
   * Context an `agent-turn-prepare` handler adds to the turn's message.
   */
  export interface TurnContext {
    /**
     * Put before the user's message.
     */
    prependContext?: string,
    /**
     * Put after it.
     */
    appendContext?: string,
  }
  /**
   * A command the host's `exec` tool is about to run.
   */
  export interface ExecEvent {
    /**
     * The command (run by `/bin/sh -c`).
     */
    command: string,
    /**
     * Its working directory, relative to the workspace.
     */
    cwd: string,
    /**
     * The tool call's id.
     */
    callId: string,
    /**
     * The run.
     */
    context: CallContext,
  }
  /**
   * An environment variable for the command.
   */
  export interface EnvVar {
    /**
     * Its name.
     */
    name: string,
    /**
     * Its value.
     */
    value: string,
  }
}
