/// <reference path="./openclaw-plugin-types.d.ts" />
declare module 'openclaw:plugin/host@0.2.3' {
  /**
   * Write a log line into the host's log, tagged with the plugin id.
   */
  export function log(level: Level, message: string): void;
  /**
   * This plugin's own configuration (`plugins.entries.<id>.config`), as JSON
   * (`null` when the operator set none).
   */
  export function config(): Json;
  export type Json = import('openclaw:plugin/types@0.2.3').Json;
  /**
   * Log severity.
   * # Variants
   * 
   * ## `"trace"`
   * 
   * ## `"debug"`
   * 
   * ## `"info"`
   * 
   * ## `"warn"`
   * 
   * ## `"error"`
   */
  export type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';
}
