/**
 * The variables a chat template sees, exactly as transformers' apply_chat_template passes them:
 * messages, tools, documents, add_generation_prompt, then the tokenizer's special tokens as
 * strings, then chat_template_kwargs spread on top (so a kwarg can shadow anything before it).
 */
export interface TemplateInputs {
  messages: readonly unknown[];
  tools?: readonly unknown[] | null | undefined;
  documents?: readonly unknown[] | null | undefined;
  add_generation_prompt: boolean;
  chat_template_kwargs?: Readonly<Record<string, unknown>> | null | undefined;
}

/** Keys transformers passes itself; a chat_template_kwargs entry with one of these names is rejected there too. */
export const RESERVED_TEMPLATE_KEYS: readonly string[] = ["messages", "tools", "documents", "add_generation_prompt"];

export function templateVariables(
  inputs: TemplateInputs,
  specialTokens: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return {
    messages: inputs.messages,
    tools: inputs.tools ?? null,
    documents: inputs.documents ?? null,
    add_generation_prompt: inputs.add_generation_prompt,
    ...specialTokens,
    ...(inputs.chat_template_kwargs ?? {}),
  };
}
