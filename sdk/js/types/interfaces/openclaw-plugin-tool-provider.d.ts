/// <reference path="./openclaw-plugin-types.d.ts" />
declare module 'openclaw:plugin/tool-provider@0.2.3' {
  /**
   * The tools this plugin provides; called once after instantiation.
   */
  export function tools(): Array<ToolSpec>;
  /**
   * Run one of the plugin's tools; `ok` holds the result as JSON.
   */
  export function call(call: ToolCall): Json;
  export type Json = import('openclaw:plugin/types@0.2.3').Json;
  export type ToolSpec = import('openclaw:plugin/types@0.2.3').ToolSpec;
  export type CallContext = import('openclaw:plugin/types@0.2.3').CallContext;
  export type ToolError = import('openclaw:plugin/types@0.2.3').ToolError;
  /**
   * A request to run one tool.
   */
  export interface ToolCall {
    /**
     * The tool name.
     */
    tool: string,
    /**
     * The model's id for this call.
     */
    callId: string,
    /**
     * Parameters, already validated by the host against the tool's schema.
     */
    params: Json,
    /**
     * The run the call belongs to.
     */
    context: CallContext,
  }
}
