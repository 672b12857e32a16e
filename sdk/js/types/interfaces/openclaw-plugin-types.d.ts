declare module 'openclaw:plugin/types@0.2.3' {
  /**
   * A JSON document, serialized as UTF-8 text.
   */
  export type Json = string;
  /**
   * A tool as the model sees it.
   */
  export interface ToolSpec {
    /**
     * Unique tool name (`[A-Za-z0-9_-]`, at most 64 characters).
     */
    name: string,
    /**
     * What the tool does, shown to the model.
     */
    description: string,
    /**
     * JSON Schema of the tool's parameters (an object schema).
     */
    parameters: Json,
  }
  /**
   * The run that caused a call.
   */
  export interface CallContext {
    /**
     * Agent id.
     */
    agentId: string,
    /**
     * Session id, if the run belongs to one.
     */
    sessionId?: string,
    /**
     * Model reference (`provider/model`) of the run.
     */
    modelRef: string,
  }
  /**
   * Why a tool call failed. The message is what the model sees.
   */
  export type ToolError = ToolErrorInvalidParams | ToolErrorFailed;
  /**
   * The parameters passed the schema but cannot be used (e.g. a path
   * outside the tool's reach).
   */
  export interface ToolErrorInvalidParams {
    tag: 'invalid-params',
    val: string,
  }
  /**
   * The tool ran and failed.
   */
  export interface ToolErrorFailed {
    tag: 'failed',
    val: string,
  }
  /**
   * A tool call requested by the model.
   */
  export interface ToolRequest {
    /**
     * The model's id for this call.
     */
    id: string,
    /**
     * Tool name.
     */
    name: string,
    /**
     * Arguments.
     */
    arguments: Json,
  }
  /**
   * A model reply with text and/or tool calls, as kept in the conversation.
   */
  export interface AssistantMessage {
    /**
     * Reply text.
     */
    text: string,
    /**
     * Tool calls requested.
     */
    toolCalls: Array<ToolRequest>,
  }
  /**
   * The result of one tool call, as kept in the conversation.
   */
  export interface ToolResultMessage {
    /**
     * The call this answers.
     */
    callId: string,
    /**
     * Tool name.
     */
    tool: string,
    /**
     * Output text.
     */
    content: string,
    /**
     * Whether the call failed or was blocked.
     */
    isError: boolean,
  }
  /**
   * One conversation message.
   */
  export type Message = MessageUser | MessageAssistant | MessageToolResult;
  /**
   * From the user.
   */
  export interface MessageUser {
    tag: 'user',
    val: string,
  }
  /**
   * From the model.
   */
  export interface MessageAssistant {
    tag: 'assistant',
    val: AssistantMessage,
  }
  /**
   * A tool result.
   */
  export interface MessageToolResult {
    tag: 'tool-result',
    val: ToolResultMessage,
  }
  /**
   * Why the model stopped.
   * # Variants
   * 
   * ## `"end-turn"`
   * 
   * It finished its answer.
   * ## `"tool-use"`
   * 
   * It wants tool results.
   * ## `"max-tokens"`
   * 
   * It hit the output token limit.
   * ## `"other"`
   * 
   * A content filter or another provider reason.
   */
  export type StopReason = 'end-turn' | 'tool-use' | 'max-tokens' | 'other';
  /**
   * Token usage of a model call.
   */
  export interface Usage {
    /**
     * Prompt tokens.
     */
    inputTokens: bigint,
    /**
     * Completion tokens.
     */
    outputTokens: bigint,
  }
  /**
   * A complete model reply.
   */
  export interface ModelReply {
    /**
     * Reply text.
     */
    text: string,
    /**
     * Tool calls requested.
     */
    toolCalls: Array<ToolRequest>,
    /**
     * Why the model stopped.
     */
    stopReason: StopReason,
    /**
     * Token usage.
     */
    usage: Usage,
  }
  /**
   * Why a model call failed. Each case carries a message for people (it
   * never contains credentials); act on the case, not on the message.
   */
  export type ModelError = ModelErrorContextOverflow | ModelErrorRateLimited | ModelErrorAuth | ModelErrorTimeout | ModelErrorRefused | ModelErrorUnavailable | ModelErrorOther;
  /**
   * The prompt does not fit the model's context window.
   */
  export interface ModelErrorContextOverflow {
    tag: 'context-overflow',
    val: string,
  }
  /**
   * The provider rate-limited the call, after the host's retries.
   */
  export interface ModelErrorRateLimited {
    tag: 'rate-limited',
    val: string,
  }
  /**
   * Credentials are missing or were refused.
   */
  export interface ModelErrorAuth {
    tag: 'auth',
    val: string,
  }
  /**
   * The provider stopped answering within the idle timeout.
   */
  export interface ModelErrorTimeout {
    tag: 'timeout',
    val: string,
  }
  /**
   * The host refused the call (a hook or a per-turn bound).
   */
  export interface ModelErrorRefused {
    tag: 'refused',
    val: string,
  }
  /**
   * The provider is unreachable or failing, after the host's retries.
   */
  export interface ModelErrorUnavailable {
    tag: 'unavailable',
    val: string,
  }
  /**
   * Anything else (unknown model, malformed request or reply, configuration).
   */
  export interface ModelErrorOther {
    tag: 'other',
    val: string,
  }
  /**
   * Wire API of a provider route.
   * # Variants
   * 
   * ## `"openai-completions"`
   * 
   * OpenAI Chat Completions.
   * ## `"openai-responses"`
   * 
   * OpenAI Responses.
   * ## `"anthropic-messages"`
   * 
   * Anthropic Messages.
   * ## `"scripted"`
   * 
   * The host's offline scripted provider.
   */
  export type WireApi = 'openai-completions' | 'openai-responses' | 'anthropic-messages' | 'scripted';
  /**
   * Why a session ended.
   * # Variants
   * 
   * ## `"new"`
   * 
   * A new session replaced it.
   * ## `"reset"`
   * 
   * It was reset.
   * ## `"quit"`
   * 
   * The user quit.
   */
  export type SessionEndReason = 'new' | 'reset' | 'quit';
}
