import type { TemplateValidation } from "../engine/template-engine.js";
import { createTemplateEngine, type TemplateEngineOptions } from "../engine/template-engine.js";
import { type ComposedEmail, composeEmail, type MessageInput } from "../message-composer.js";

/**
 * What renders untrusted templates: syntax checks and email composition. The render pool runs them
 * on worker threads with a hard time limit; the inline renderer runs them here (engine tests,
 * tools). `accountId` lets the pool share its workers fairly between accounts.
 */
export interface TemplateRenderer {
  /** Parses `source` without rendering: the first syntax error with its line, or ok. */
  validate(source: string, accountId?: number): Promise<TemplateValidation>;
  /** Composes a notification email (TemplateError when the template cannot be rendered). */
  composeEmail(input: MessageInput, accountId?: number): Promise<ComposedEmail>;
  /** Stops the workers (no-op inline). */
  close(): Promise<void>;
}

/** A renderer on the calling thread. Never for requests of untrusted tenants: a render holds the thread. */
export function createInlineRenderer(options: TemplateEngineOptions = {}): TemplateRenderer {
  const engine = createTemplateEngine(options);
  return {
    validate: async (source) => engine.validate(source),
    composeEmail: (input) => composeEmail(engine, input),
    close: async () => {},
  };
}
